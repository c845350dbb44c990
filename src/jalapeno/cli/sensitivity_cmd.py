"""``jalapeno sensitivity``: each uncertain parameter moved across its band, one at a time (analysis/sensitivity.py):
a table, a tornado page with ``--html``, ``--json``. Its claim context and power check are audit's
(cli/audit_cmds.py, which registers both commands). Split from cli/audit_cmds.py (round 54, module budget)."""

from __future__ import annotations

import typer
from rich.table import Table

from jalapeno.analysis.bound_words import band_span
from jalapeno.cli.audit_cmds import CLAIM_HELP, _context, refuse_unread_power
from jalapeno.cli.audit_tables import _f, _swing_text
from jalapeno.cli.chip_opts import (
    chip_model_json,
    chip_model_lines,
    chip_model_option,
    chip_model_pricers,
    placement_option,
)
from jalapeno.cli.common import (
    console,
    efficiency_option,
    isl_option,
    model_option,
    osl_option,
    precision_option,
    print_json,
    say_written,
)
from jalapeno.cli.out_paths import check_html_out
from jalapeno.cli.system_notes import note_unread_efficiency
from jalapeno.cli.system_opts import SET_OPTION, system_pricer
from jalapeno.cli.serving_decls import (
    claim_json_option,
    claim_power_option,
    claim_serving_option,
    claim_workload_option,
)


def sensitivity(
    system: str = typer.Option(..., "--system", "-s", help="System name or TOML path."),
    metric: str = typer.Option(
        "max_interactivity",
        "--metric",
        help="METRIC[@X]: " + CLAIM_HELP.split(": ", 1)[1].split(";")[0].split(" <metric>")[0],
    ),
    model: str = model_option(),
    workload: str = claim_workload_option(),
    isl: int = isl_option(),
    osl: int = osl_option(),
    precision: str = precision_option(),
    power: str = claim_power_option(),
    serving: str = claim_serving_option(),
    efficiency: str = efficiency_option(),
    sets: list[str] = SET_OPTION,
    chip_model: str = chip_model_option(),
    placement: str = placement_option(),
    html: str = typer.Option(None, "--html", help="Write the tornado chart to this HTML file (none without it)."),
    json_out: bool = claim_json_option(),
) -> None:
    """Each uncertain parameter moved across its band, one at a time: a table, and with --html a tornado page."""
    from jalapeno.analysis.sensitivity import parse_metric
    from jalapeno.analysis.sensitivity import sensitivity as run

    mt = parse_metric(metric)
    # a page only where --html names one (ux50: it wrote jalapeno-sensitivity.html into the working directory
    # unasked); '' stays "none", as before
    check_html_out(html, "--html")
    ctx = _context(model, workload, isl, osl, precision, power, serving)
    refuse_unread_power(power, mt.metric, "--metric")
    pr, _ = chip_model_pricers([system_pricer(system, efficiency, sets)], chip_model, placement)
    note_unread_efficiency(sets, ctx.model, ctx.precision, pr)
    res = run(ctx, pr, mt)
    d = res.as_dict()
    if html:
        from jalapeno.report.tornado import write_tornado

        write_tornado(d, html)
        if json_out:
            say_written("tornado chart:", html, json_out=True)
    if json_out:  # the chip model that priced it, as the terminal's lines say (ux53)
        print_json(d | chip_model_json([pr], [r["parameter"] for r in d["rows"]]))
        return
    # the precision and power as audit's title gives them: 'max_interactivity = 135.1' beside compare's 138.9 for
    # the same system read as a disagreement, with nothing saying it is the fp8 frontier's and compare's the fp4's
    t = Table(
        title=(
            f"{res.system} · {ctx.model.name} · {ctx.workload.name} · {ctx.precision.name} · power "
            f"{ctx.convention}: {res.metric} = {_f(res.value)} {res.unit} as priced; one parameter at a time "
            "across its band"
        )
    )
    for col in ("parameter", "kind", "current", "band", f"{res.metric} at low", "at high", "swing", "band from"):
        t.add_column(col, overflow="fold")
    for r in d["rows"]:  # the swing as the figures beside it (9,219, not 9.22e+03 beside 75,523 and 84,742)
        t.add_row(
            r["parameter"],
            r["kind"],
            _f(r["current"]),
            band_span(_f(r["low"]), _f(r["high"])),
            _f(r["metric_at_low"]),
            _f(r["metric_at_high"]),
            _swing_text(r),
            (r["band_source"]),
        )
    from jalapeno.report.narrow import label_first

    console.print(label_first(t, console.width))
    from jalapeno.specs.precision_checks import priced_as

    for line in priced_as(
        ctx.precision, ctx.model, pr.system.chip, pr.efficiency
    ):  # moe.fp8 rows of MXFP4 experts: W4A8 (ux50)
        console.print("formats: " + line, markup=False, soft_wrap=True)
    for line in chip_model_lines([pr], [r["parameter"] for r in d["rows"]]):
        console.print(line, markup=False, soft_wrap=True)
    if html:
        say_written("tornado chart:", html)
