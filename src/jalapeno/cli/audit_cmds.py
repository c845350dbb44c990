"""``jalapeno audit`` (hold a claim against the model), and the registration of ``jalapeno sensitivity`` (a tornado:
cli/sensitivity_cmd.py). Its figures and tables are written by cli/audit_tables.py (both split from here in round
54, module budget)."""

from __future__ import annotations

import math

import typer
from rich.table import Table

from jalapeno.cli.common import (
    console,
    efficiency_option,
    isl_option,
    model_option,
    osl_option,
    precision_option,
    print_json,
)
from jalapeno.cli.audit_lines import borrowed_fits_line, spec_search_notes
from jalapeno.cli.audit_tables import (  # noqa: F401  (re-exported: they lived here)
    VERDICT_MEANING,
    _changes_table,
    _f,
    _joint_reaches,
    _reaching,
    _swing_text,
    _with_unit,
    estimated_spec_line,
    verdict_caption,
)
from jalapeno.cli.chip_opts import chip_model_lines, chip_model_option, chip_model_pricers, placement_option
from jalapeno.cli.chip_opts import chip_model_json  # sensitivity's and audit's --json fields (ux53)
from jalapeno.cli.system_opts import SET_OPTION, system_pricer
from jalapeno.cli.serving_decls import (
    CLAIM_POWER_HELP,
    claim_json_option,
    claim_power_option,
    claim_serving_option,
    claim_workload_option,
)
from jalapeno.cli.system_notes import note_unread_efficiency
from jalapeno.analysis.bound_words import band_span
from jalapeno.errors import SpecError, choice_hint

POWER_HELP = CLAIM_POWER_HELP  # audit's and sensitivity's --power help, now with their shared declarations
CLAIM_HELP = (
    "METRIC[@X]=VALUE: peak_throughput_per_chip, peak_tok_s_per_kw, peak_tokens_per_usd, "
    "max_interactivity, min_e2e_s, throughput_per_chip@X, tok_s_per_kw@X (X in tok/s/user); "
    "<metric>_ratio against --baseline, the _ratio before any @X (throughput_per_chip_ratio@50=1.0; "
    "throughput_per_chip@50_ratio is read the same)."
)


def _context(
    model: str, workload: str | None, isl: int | None, osl: int | None, precision: str | None, power: str, serving: str
):
    from jalapeno.analysis.claims import ClaimContext
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.cli.common import resolve_precision
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.workload import get_workload

    if serving not in ("agg", "disagg", "both"):
        raise SpecError(
            "--serving",
            f"unknown serving mode {serving!r}{choice_hint(serving, ('agg', 'disagg', 'both'))}",
            "use agg, disagg or both",
        )
    from jalapeno.cli.serving_opts import check_workload_context

    m = load_model(model)
    wl = get_workload(workload, isl, osl)
    # audit and sensitivity priced 128k1k on llama-3.1-405b (131,072-token context) where plan and compare refuse it
    check_workload_context(m, wl, isl is not None)
    return ClaimContext(m, wl, resolve_precision(m, precision), SweepOptions(serving=serving), power or "all-in")


def refuse_unread_power(power: str | None, metric: str, option: str) -> None:
    """Refuse an explicit ``--power`` beside a metric no power convention enters (break47: ``audit --claim
    max_interactivity=100 --power chip`` ran, its title saying "power chip", and the option changed nothing).

    Args:
        power: the option as given (None: not given; a convention :class:`~jalapeno.analysis.claims.ClaimContext`
            has already accepted).
        metric: the metric's key (analysis/claims.METRICS); only ``*_per_kw`` metrics read the convention.
        option: ``--claim`` or ``--metric``, for the fix.

    Raises:
        SpecError: field ``--power``, naming the metric and the fix (drop --power, or a per-kW metric).
    """
    if power is None or "per_kw" in metric:
        return
    raise SpecError(
        "--power",
        f"sets the power convention of per-kW metrics, and {metric} is not one: it would be ignored",
        f"drop --power, or give {option} peak_tok_s_per_kw (or tok_s_per_kw@X)",
    )


def _price_basis(claim, pr, base) -> dict:
    """``{"price_basis": ...}`` for a claim on a $ figure (its metric names ``usd``: ``peak_tokens_per_usd``), the
    system's and, with a baseline, ``{"price_basis": sys, "baseline_price_basis": base}`` (analysis/price_reason);
    {} for a claim with no $ in it."""
    if "usd" not in claim.metric:
        return {}
    from jalapeno.analysis.price_reason import BASIS_FIELD, system_basis

    out = {BASIS_FIELD: system_basis(pr.system)}
    if base is not None:
        out["baseline_" + BASIS_FIELD] = system_basis(base.system)
    return out


def _uncovered(res, model: str) -> str:
    """The audit's systems with a measured band that ``model`` lies outside (validate has no points for it
    there, analysis/measured_bands.band_of): `` (gb300-nvl72's measured band is validate's error on
    deepseek-r1 only: no llama-3.3-70b points on it)``, or ``""``."""
    from jalapeno.analysis.measured_bands import load_measured_bands

    bands = load_measured_bands()
    said = [
        f"{n}'s measured band is validate's error on {', '.join(bands[n].models)} only: no {model} points on it"
        for n in (res.system, res.baseline)
        if n in bands and model not in bands[n].models
    ]
    return f" ({'; '.join(said)})" if said else ""


def audit(
    ctx: typer.Context,
    system: str = typer.Option(None, "--system", "-s", help="System the claim is about (name or TOML path)."),
    claim: str = typer.Option(None, "--claim", help=CLAIM_HELP),
    baseline: str = typer.Option(None, "--baseline", "-b", help="Baseline system of a *_ratio claim."),
    model: str = model_option(),
    workload: str = claim_workload_option(),
    isl: int = isl_option(),
    osl: int = osl_option(),
    precision: str = precision_option(),
    power: str = claim_power_option(),
    serving: str = claim_serving_option(),
    efficiency: str = efficiency_option(),
    sets: list[str] = SET_OPTION,
    instance_chips: int = typer.Option(
        None,
        "--instance-chips",
        help="Hold the claim on the deployments of this "
        "many chips per instance only (prefill + decode workers of a disagg one): "
        "the deployment a plan leads with, not the system's frontier (default: "
        "every size).",
    ),
    chip_model: str = chip_model_option(),
    placement: str = placement_option(),
    json_out: bool = claim_json_option(),
    claims: str = typer.Option(
        None,
        "--claims",
        help="A TOML file of [[claim]] tables (claim, system, baseline, "
        "model, workload, precision, power, ...): audit each, one table of status, ratio, band, "
        "bound and what would flip it (docs/audit.md §7). Instead of --system/--claim.",
    ),
) -> None:
    """Hold a claim against the model: predicted value and band, what would make it hold, verdict.

    Verdicts: holds (the prediction meets it), plausible (changes inside the parameters' bands
    meet it), requires (only changes outside the bands do; named), impossible (not even zero
    fixed costs and peak efficiencies meet it under the stated specs). Method: docs/audit.md.
    """
    from jalapeno.analysis.audit import audit_claim
    from jalapeno.analysis.claims import parse_claim

    if claims is not None:
        from jalapeno.cli.audit_set import audit_claims_file

        audit_claims_file(ctx, claims, chip_model, placement, json_out)
        return
    for name, opt in ((system, "--system"), (claim, "--claim")):
        if not name:
            raise SpecError(opt, "is required", "give --system NAME --claim METRIC=VALUE, or --claims FILE")
    c = parse_claim(claim)
    ctx = _context(model, workload, isl, osl, precision, power, serving)
    refuse_unread_power(power, c.metric, "--claim")
    _check_instance_chips(instance_chips, baseline)
    if instance_chips is not None:
        from dataclasses import replace

        ctx = replace(ctx, instance_chips=instance_chips)
    pr, base = chip_model_pricers(
        [system_pricer(system, efficiency, sets)] + ([system_pricer(baseline, "calibrated")] if baseline else []),
        chip_model,
        placement,
    )
    note_unread_efficiency(sets, ctx.model, ctx.precision, pr)
    res = audit_claim(ctx, pr, c, base)
    if instance_chips is not None and not math.isfinite(res.predicted):
        raise SpecError(
            "--instance-chips",
            f"no {instance_chips}-chip deployment of {ctx.model.name} on "
            f"{res.system} gives {c.name} ({ctx.precision.name}, --serving {serving}): none of that size "
            "fits, or none reaches the claim's speed",
            "give a size `jalapeno frontier` lists (its deployment column), or drop --instance-chips for every size",
        )
    basis = _price_basis(c, pr, base)  # a $ claim says what its $/chip-hour rests on, as compare and plan do
    if json_out:  # the chip model that priced it, as the terminal's lines say (ux53)
        d = res.as_dict()
        pricers = [pr] + ([base] if base is not None else [])
        print_json(d | basis | chip_model_json(pricers, [ch["parameter"] for ch in d["changes"]]))
        return
    d = res.as_dict()
    vs = f" vs {res.baseline}" if res.baseline else ""
    value = f"{c.value:g}x" if c.unit == "x" else f"{c.value:g} {c.unit}"  # a ratio '1.7x', not '1.7 x'
    head = Table(
        title=(
            f"claim: {c.name} = {value} for {res.system}{vs} · {ctx.model.name} · "
            f"{ctx.workload.name} · {ctx.precision.name} · power {ctx.convention}"
        )
    )
    for col in ("predicted", "band (low to high)", "physical limit", "verdict"):
        head.add_column(col)
    ends = [math.isfinite(v) for v in (res.low, res.high)]
    # one format with compare's (analysis/bound_words.band_span); one end undefined: that setting never reaches @X
    band = _with_unit(band_span(_f(res.low), _f(res.high)), c.unit) if any(ends) else "-"
    from jalapeno.report.compare_cells import WIDE_BAND
    from jalapeno.report.tables import efficiency_label

    # flagged as compare --bands flags it: Jalapeño's max tok/s/user band 126.8-500.1 (GPU-like to compiled stacks)
    # carried a PLAUSIBLE with no word that its ends are 3.9x apart
    wide = all(ends) and res.low > 0 and res.high / res.low >= WIDE_BAND
    if wide:
        band += f" [wide band: {res.high / res.low:.1f}x]"
    # each figure with the claim's unit (newuser49: a ratio read '1.212', not '1.212x'; a rate carried no unit)
    head.add_row(
        _with_unit(_f(res.predicted), c.unit), band, _with_unit(_f(res.physical_limit), c.unit), res.verdict.upper()
    )

    sets = [f"{res.system}: {efficiency_label(res.context['efficiency_source'])}"]
    if res.baseline:
        sets.append(f"{res.baseline}: {efficiency_label(res.context['baseline_efficiency_source'])}")
    head.caption = (
        ("efficiency sets: " + "; ".join(sets))
        + "\n"
        + verdict_caption(res.verdict)
        + (
            f"\n[wide band: Nx]: high / low of {WIDE_BAND:g}x or more — a verdict inside it rests on an assumption's "
            "spread, not a prediction to quote alone (as compare --bands; docs/metrics.md §6)"
            if wide
            else ""
        )
    )
    console.print(head)
    if basis:
        from jalapeno.analysis.price_reason import basis_lines

        for line in basis_lines([pr.system] + ([base.system] if base is not None else [])):
            console.print(line, markup=False, soft_wrap=True)
    if all(ends) and res.low == res.high == res.predicted:  # '9694-9694' read as a zero-error prediction
        console.print(
            f"band: none for {res.system}: only derived efficiency parameters (no kernel tables of their own: "
            "Jalapeño, Vera Rubin, AMD's borrowed part) carry a low/high set, and only a catalog system "
            "fitted on its own measured kernels, priced as validated, on a model validated there, its measured "
            "error band (data/validation/measured_bands.toml); the documented defaults, a user file or a what-if set "
            "have neither (docs/validation.md, 'Bands of derived systems'; `jalapeno validate`)"
            + _uncovered(res, ctx.model.name)
            + ". The parameter bands below still apply",
            markup=False,
        )
    elif "measured error" in res.band_source:  # say what the band is: not an efficiency set's
        # a metric read @X moves along the frontier too: each end scales every point's tok/s/user by the interactivity
        # error, so it reads another point (GB200 8k1k throughput_per_chip@53.5: 6,115 to 10,828 where 10,297 over
        # 1 + p90 / 1 + p10 of throughput alone is 9,310 to 10,594; the line said only the latter, newuser53)
        at = (
            ""
            if c.at is None
            else f"; read @{c.at:g}, each end also scales every frontier point's tok/s/user by the "
            "interactivity error and reads the frontier at the speed, another point of it, so the band is wider than "
            "the metric's own error"
        )
        console.print(
            "band: " + res.band_source + "; the band is the prediction over 1 + p90 and 1 + p10 (a ratio: "
            f"the system's worse end over the baseline's better end and the reverse{at}; docs/audit.md §3.1)",
            markup=False,
        )
    elif uncovered := _uncovered(res, ctx.model.name):
        # the baseline's measured band does not cover the model: the band is the system's sets alone, over the
        # baseline's calibrated prediction (compare --bands says 'no band for <baseline>'; audit said nothing)
        console.print(
            f"band: {res.system}'s efficiency sets over {res.baseline}'s calibrated prediction alone"
            f"{uncovered[:-1]}; docs/audit.md §3.1)",
            markup=False,
        )
    from jalapeno.cli.audit_set import point_lines

    for line in point_lines(
        d, pr.system, ctx.convention, base.system if base is not None else None
    ):  # where it is read, its bound, what turns it (claims53)
        console.print(line, markup=False, soft_wrap=True)
    if c.at is not None and res.verdict == "impossible" and not math.isfinite(res.physical_limit):
        # the verdict stood alone over a row of '-': say why (sensitivity refuses the same @X)
        console.print(
            f"why: {c.metric}@{c.at:g} is undefined at every parameter value tried: no frontier reaches "
            f"{c.at:g} tok/s/user, not even the physical limit's (zero fixed costs, peak efficiencies). "
            f"`jalapeno audit --system {res.system} --claim max_interactivity=...` says how fast it can go",
            markup=False,
        )
        # the tables below would be rows of 'none in range' and '-': keep the rows that reach @X (a headline
        # spec can, where the stated chip cannot), and say so in one line when none does
        d = dict(
            d,
            changes=_reaching(d["changes"]),
            spec_changes=_reaching(d["spec_changes"]),
            joint_change=d["joint_change"] if _joint_reaches(d["joint_change"]) else None,
        )
        if not (d["changes"] or d["spec_changes"] or d["joint_change"]):
            console.print(
                f"no parameter alone, headline spec alone (0.5-4x) or joint change reaches {c.at:g} "
                "tok/s/user either: no tables of what the claim needs",
                markup=False,
            )
            return
    from jalapeno.analysis.audit import claim_gap
    from jalapeno.specs.precision_checks import priced_as

    # the parameter rows name compute formats: gpt-oss-120b's MXFP4 experts are the moe.fp8 rows, W4A8 (ux50)
    for line in priced_as(ctx.precision, ctx.model, pr.system.chip, pr.efficiency):
        console.print("formats: " + line, markup=False, soft_wrap=True)

    def closeness(v):
        return claim_gap(c, v)

    if d["changes"]:
        _changes_table(console, d["changes"], "each parameter alone: the value the claim needs", c.name, closeness)
    if d["spec_changes"]:
        _changes_table(
            console,
            d["spec_changes"],
            "what the chip would need: each stated headline spec alone "
            "(searched 0.5-4x; the verdict keeps the stated specs)",
            c.name,
            closeness,
        )
        for line in spec_search_notes(d["spec_changes"], pr.system):
            console.print(line, markup=False, soft_wrap=True)
        line = borrowed_fits_line(pr)
        if line:
            console.print(line, markup=False, soft_wrap=True)
    for line in chip_model_lines([pr] + ([base] if base is not None else []), [ch["parameter"] for ch in d["changes"]]):
        console.print(line, markup=False, soft_wrap=True)
    line = estimated_spec_line(d["changes"])
    if line:  # the chip specs the catalog only estimates sit in the first table, not in the headline one
        console.print(line, markup=False)
    j = d["joint_change"]
    if j:
        t = Table(title="joint changes (fixed costs and efficiencies together)")
        for col in ("move", "amount", "metric there", "in band"):
            t.add_column(col)
        t.add_row(
            "every parameter at its favourable band end",
            "-",
            _f(j["band_ends"]["value"]),
            "yes" if j["within_band"] else "no",
        )
        for name, label in (
            ("fixed_costs_factor", "fixed costs x k"),
            ("efficiency_toward_peak", "efficiencies a fraction s toward 1"),
            ("together", "both, by s"),
        ):
            v = j.get(name)
            t.add_row(
                label,
                _f(v["value"], ".3g") if v else "not reachable",
                _f(v["metric_at_change"]) if v else "-",
                ("yes" if v["within_band"] else "no") if v else "-",
            )
        console.print(t)


def _check_instance_chips(instance_chips: int | None, baseline: str | None) -> None:
    """Refuse an ``--instance-chips`` that is not a positive whole number, or one beside ``--baseline`` (the size
    is one system's deployment: a ratio claim would hold the baseline to it too).

    Raises:
        SpecError: field ``--instance-chips``.
    """
    if instance_chips is None:
        return
    if instance_chips < 1:
        raise SpecError(
            "--instance-chips",
            f"{instance_chips} is not a number of chips",
            "give the chips per instance of the deployment to audit, e.g. --instance-chips 8",
        )
    if baseline:
        raise SpecError(
            "--instance-chips",
            "pins one system's deployment size, and a ratio claim against --baseline would hold the baseline to it too",
            "drop --instance-chips, or --baseline",
        )


def register(app: typer.Typer) -> None:
    """Add ``audit`` and ``sensitivity`` to ``app``."""
    from jalapeno.cli.sensitivity_cmd import sensitivity

    app.command("audit")(audit)
    app.command("sensitivity")(sensitivity)
