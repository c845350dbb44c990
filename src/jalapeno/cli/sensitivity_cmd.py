"""``jalapeno sensitivity``: each uncertain parameter moved across its band, one at a time (analysis/sensitivity.py):
a table, a tornado page with ``--html``, ``--json``. Its claim context and power check are audit's
(cli/audit_cmds.py, which registers both commands). Split from cli/audit_cmds.py (round 54, module budget)."""

from __future__ import annotations

import typer
from rich.table import Table

from jalapeno.analysis.bound_words import band_span
from jalapeno.cli.audit_cmds import CLAIM_HELP, _context, refuse_unread_power
from jalapeno.cli.audit_tables import _f, _swing_text, _with_unit
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


#: The line under the stated specs' table: what the elasticity is and how to read it (ux55).
ELASTICITY_NOTE = (
    "elasticity: d ln(metric) / d ln(parameter), ln(at high / at low) over ln(high / low) — +1: the metric moves in "
    "proportion to the spec (a purely HBM-bound decode step: interactivity +1, TPOT -1, in HBM bandwidth), 0: the "
    "spec does not bind at the points that decide it; stated specs are the system file's, each moved ±10% as a "
    "what-if (not an uncertainty), its power following it as under --set (specs/power.py: a faster chip's "
    "components draw more, so a per-kW metric carries both); an estimated spec is in the table above with its band"
)


def _elasticity_text(x: float) -> str:
    """An elasticity to two decimals, '-' where undefined, with no '-0.00' for a rounding-small negative.

    >>> _elasticity_text(0.9999), _elasticity_text(-0.001), _elasticity_text(float("nan"))
    ('1.00', '0.00', '-')
    """
    t = _f(x, ".2f")
    return "0.00" if t == "-0.00" else t


def stated_table(res, rows: list[dict]) -> Table:
    """The stated specs' table: each spec with its unit, the value stated, the metric at -/+ the step, elasticity."""
    from jalapeno.analysis.sensitivity import STATED_STEP

    t = Table(title=f"{res.system} stated specs: {res.metric} with each moved ±{STATED_STEP:.0%}, the others as stated")
    for col in (
        "spec",
        "unit",
        "stated",
        f"{res.metric} at -{STATED_STEP:.0%}",
        f"at +{STATED_STEP:.0%}",
        "elasticity",
    ):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(
            r["parameter"],
            r["unit"] or "-",
            _f(r["current"]),
            _f(r["metric_at_low"]),
            _f(r["metric_at_high"]),
            _elasticity_text(r["elasticity"]),
        )
    return t


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
    cols = (
        "parameter",
        "kind",
        "current",
        "band",
        f"{res.metric} at low",
        "at high",
        "swing",
        "elasticity",
        "band from",
    )
    for col in cols:
        t.add_column(col, overflow="fold")
    for r in d["rows"]:  # the swing as the figures beside it (9,219, not 9.22e+03 beside 75,523 and 84,742)
        t.add_row(
            r["parameter"],
            r["kind"],
            _with_unit(_f(r["current"]), r["unit"]),
            band_span(_f(r["low"]), _f(r["high"])),
            _f(r["metric_at_low"]),
            _f(r["metric_at_high"]),
            _swing_text(r),
            _elasticity_text(r["elasticity"]),
            (r["band_source"]),
        )
    from jalapeno.report.narrow import label_first

    console.print(label_first(t, console.width))
    if d["stated"]:  # the stated specs an architect asks d(metric)/d(spec) of (ux55): no band, a what-if step
        console.print(label_first(stated_table(res, d["stated"]), console.width))
        console.print(ELASTICITY_NOTE, markup=False, soft_wrap=True)
    from jalapeno.specs.precision_checks import priced_as

    for line in priced_as(
        ctx.precision, ctx.model, pr.system.chip, pr.efficiency
    ):  # moe.fp8 rows of MXFP4 experts: W4A8 (ux50)
        console.print("formats: " + line, markup=False, soft_wrap=True)
    for line in chip_model_lines([pr], [r["parameter"] for r in d["rows"]]):
        console.print(line, markup=False, soft_wrap=True)
    if html:
        say_written("tornado chart:", html)
