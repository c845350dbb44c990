"""``compare`` / ``frontier`` with ``--workload agentic:PRESET`` (or ``agentic:file.toml``).

Thin: parse, call analysis/agentic.compare_agentic (or agentic_frontier), render
report/agentic_tables or ``--json``. Options of the fixed-length comparison that have no
meaning for sessions are refused by name (``refuse``).
"""

from __future__ import annotations

from jalapeno.cli.common import console, list_items, print_json, resolve_precision
from jalapeno.errors import SpecError

#: Sweep defaults of the agentic comparison (speed choices, documented in docs/agentic.md §3):
#: instances up to the scale-up domain and no two-batch overlap unless --overlap asks for it (in
#: a check on the four default systems neither moved the frontier by more than 1.5%).
AGENTIC_STAGE_FACTOR = 1


#: Outputs the agentic comparison does not write (problem, fix): an option that applies but is not supported
#: yet, not one that has no meaning for sessions (compare --html read "does not apply ... (sessions, not fixed
#: lengths)", as if the page were about fixed lengths). Empty since round 49: --html is noted, not refused
#: (:func:`html_note`).
UNSUPPORTED: dict[str, tuple[str, str]] = {}


def html_note(html: str | None) -> None:
    """Say once, on stderr, that an agentic comparison writes no chart when ``--html`` names a file (None or "": not
    given, or the documented no-chart value: nothing to say).

    Why a note, not a refusal (plan49): the agentic comparison has no frontier chart (its frontier is tasks/h per chip
    against task time, printed as tables), and without --html it wrote nothing without a word, while an explicit
    --html was refused (newuser49): the same missing chart gave an error or silence depending on the flag. A script
    that passes --html to every comparison now gets its tables, and the note says the file was not written.
    """
    if html:
        from jalapeno.cli.engine_opts import note_lines

        note_lines(
            [
                f"--html: compare -w agentic:… draws no chart, so {html} is not written; its results print as "
                "tables (--json > FILE.json keeps them; a fixed-length workload charts: compare -w 8k1k --html "
                "FILE.html)"
            ]
        )


def refuse(given: dict) -> None:
    """Raise for options the agentic comparison does not take (``given``: option → value or None).

    Raises:
        SpecError: naming the first option given.
    """
    bad = [k for k, v in given.items() if v not in (None, False)]
    if bad and bad[0] in UNSUPPORTED:
        raise SpecError(bad[0], *UNSUPPORTED[bad[0]])
    if bad:
        raise SpecError(
            bad[0],
            "does not apply to --workload agentic:… (sessions, not fixed lengths)",
            f"drop {', '.join(bad)}; the agentic comparison runs aggregated instances with a prefix cache",
        )


def _setup(
    model, workload, precision, kv_dtype, attention_dtype, compute_fallback, routing, overlap, eplb, memory_fraction
):
    from dataclasses import replace

    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.cli.engine_opts import note_lines
    from jalapeno.cli.serving_opts import note_idle_eplb, refuse_dense_eplb, refuse_dense_overlap, sweep_eplb
    from jalapeno.deploy.deployment import check_memory_fraction
    from jalapeno.specs.agentic import get_agentic
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.routing import with_routing

    m = with_routing(load_model(model), routing)
    refuse_dense_eplb(eplb, m)  # an explicit --eplb on a dense model was silently ignored
    if note := note_idle_eplb(eplb, m):  # and one under uniform routing made no layout (newuser50)
        note_lines([note])
    refuse_dense_overlap(overlap, m)  # so was --overlap tbo (break47)
    spec = get_agentic(workload)
    # the analytic model runs the mean lengths: the last turn's prompt + reply must fit
    m.check_context(
        spec.final_context_tokens,
        "--workload",
        f"{spec.name}'s last turns ({spec.final_context_tokens:,} tokens)",
        agentic_context_fix(m.max_context),
    )
    opts = SweepOptions(
        serving="agg", eplb=sweep_eplb(eplb), overlap=overlap or "none", max_stage_factor=AGENTIC_STAGE_FACTOR
    )
    if memory_fraction is not None:
        opts = replace(opts, memory_fraction=check_memory_fraction(memory_fraction))
    pinned = resolve_precision(m, precision, kv_dtype, attention_dtype, compute_fallback) if precision else None
    return m, spec, opts, pinned


def _precisions(m, pricer, pinned, kv_dtype, attention_dtype, compute_fallback) -> list[str]:
    from jalapeno.deploy.checkpoints import available_precisions

    if pinned is not None:
        return [pinned.name]
    names = available_precisions(m.name, m.default_precision, pricer.system.chip.formats, m, pricer.system.chip)
    return [resolve_precision(m, p, kv_dtype, attention_dtype, compute_fallback).name for p in names]


def agentic_context_fix(max_context: int) -> str:
    """The agentic presets whose last turn fits ``max_context`` tokens, as the remedy to name."""
    from jalapeno.specs.agentic import AGENTIC_PRESETS, get_agentic

    fits = [n for n in AGENTIC_PRESETS if get_agentic(n).final_context_tokens <= max_context]
    return (
        (
            f"use a preset whose turns fit (-w {', '.join('agentic:' + n for n in fits)}) or a model with a longer "
            "context"
        )
        if fits
        else "use a model with a longer context"
    )


#: Largest --at task time accepted, minutes: one day. A named assumption: an agentic session is a
#: coding/tool-use task of minutes (the presets' defaults are 5, 10 and 20 min), and a task time past a
#: day is a slip (seconds typed as minutes, ``1e9``), not a task to compare systems at.
MAX_TASK_MIN = 24 * 60


def check_task_minutes(values: list[float], field: str = "--at", example: str = "--at 5,10,20") -> None:
    """Refuse a task time above :data:`MAX_TASK_MIN` (1,440 minutes, one day): ``--at``, and with ``field`` and
    ``example`` the task-time ceilings of ``--tiers`` and ``plan --max-task-min``, which took ``1e9`` without a word
    where ``--at`` refused it (break48).

    Raises:
        SpecError: naming ``field``, the value, the bound and why.
    """
    import math

    big = next((v for v in values if math.isfinite(v) and v > MAX_TASK_MIN), None)
    if big is not None:
        raise SpecError(
            field,
            f"task time {big:g} minutes is past the bound of {MAX_TASK_MIN:,} minutes (one day): "
            "an agentic task runs minutes (defaults 5, 10, 20), so a time that long is a slip",
            f"give task times in minutes, e.g. {example}",
        )


def agentic_compare(
    *,
    model,
    workload,
    precision,
    kv_dtype,
    attention_dtype,
    compute_fallback,
    systems,
    baseline,
    power,
    efficiency,
    routing,
    eplb,
    overlap,
    memory_fraction,
    at,
    tiers,
    json_out,
    default_at: str,
    default_tiers: str,
    sets=None,
    chip_model="flat",
    placement="",
    stack=None,
    pricer="roofline",
) -> None:
    """``jalapeno compare --workload agentic:…``."""
    from jalapeno.analysis.agentic import DEFAULT_ISO_TASK_MIN, compare_agentic
    from jalapeno.cli.number_lists import _floats, _floors
    from jalapeno.cli.serving_opts import refuse_idle_ar_rms
    from jalapeno.cli.system_opts import baseline_name, systems_pricers
    from jalapeno.cli.usage_errors import note_shared_sets
    from jalapeno.cost.sliced import chip_model_pricer, refuse_idle_placement
    from jalapeno.report.agentic_tables import agentic_tables

    m, spec, opts, pinned = _setup(
        model, workload, precision, kv_dtype, attention_dtype, compute_fallback, routing, overlap, eplb, memory_fraction
    )
    names = list_items(systems, "--systems", "jalapeno,gb300-nvl72")
    if not names:
        raise SpecError("--systems", "no system given", "pass e.g. --systems jalapeno,gb300-nvl72")
    # --stack / --pricer as the fixed-length comparison takes them (they were dropped, silently)
    syss = [
        chip_model_pricer(p, chip_model, placement) for p in systems_pricers(names, efficiency, sets, stack, pricer)
    ]
    refuse_idle_placement(syss, placement)
    refuse_idle_ar_rms(stack, m, syss)  # +ar_rms that no system fuses a step with (break48)
    seen = [s.system.name for s in syss]
    if len(set(seen)) != len(seen):
        raise SpecError("--systems", "a system is named twice", "compare each system once")
    base = baseline_name(baseline, names, seen)
    note_shared_sets(names, sets)  # a plain --set changed the baseline too, with no word (newuser54)
    iso = (
        DEFAULT_ISO_TASK_MIN
        if at == default_at
        else tuple(_floats(at, "--at", "task times in minutes", "5,10,20", check=check_task_minutes))
    )
    ceil = None if tiers == default_tiers else _floors(tiers, "minutes", "fast=10,ultra_fast=5")
    if ceil:
        check_task_minutes(list(ceil.values()), "--tiers", "--tiers fast=10,ultra_fast=5")
    precs = {s.system.name: _precisions(m, s, pinned, kv_dtype, attention_dtype, compute_fallback) for s in syss}
    res = compare_agentic(
        m,
        syss,
        spec,
        precs,
        baseline=base,
        convention=power,
        options=opts,
        iso_task_min=iso,
        tier_ceilings_min=ceil,
        strict_baseline=bool(baseline),
    )
    d = res.as_dict()
    from jalapeno.analysis.price_reason import (
        BASIS_FIELD,
        POWER_BASIS_FIELD,
        basis_lines,
        power_basis,
        power_basis_lines,
        system_basis,
    )

    for s in syss:  # each system's $ per task with what its $/chip-hour rests on, and its watts (followup52)
        if s.system.name in d["systems"]:  # one that cannot run the model has no row, no $ figure
            d["systems"][s.system.name][BASIS_FIELD] = system_basis(s.system)
            d["systems"][s.system.name][POWER_BASIS_FIELD] = power_basis(s.system)
    if json_out:
        print_json(d)
        return
    from jalapeno.report.cell_notes import estimated_prices

    from jalapeno.report.narrow import fit_width

    for t in agentic_tables(d, estimated_prices(s.system for s in syss), {n: precs[n] for n in d["systems"]}):
        for part in fit_width(t, console.width):  # on its side where a word would be cut ('comput' / 'e' at 100)
            console.print(part)
    from jalapeno.report.agentic_tables import agentic_rack_lines

    for line in [
        *basis_lines(s.system for s in syss),
        *power_basis_lines(s.system for s in syss),
        *agentic_rack_lines([s.system for s in syss], d),
    ]:
        console.print(line, markup=False, soft_wrap=True)
    from jalapeno.cli.chip_opts import chip_model_line

    if (line := chip_model_line(syss)) is not None:
        console.print(line, markup=False)


def agentic_frontier_cmd(
    *,
    system,
    model,
    workload,
    precision,
    kv_dtype,
    attention_dtype,
    compute_fallback,
    power,
    efficiency,
    routing,
    eplb,
    overlap,
    memory_fraction,
    json_out,
    out,
    sets=None,
    chip_model="flat",
    placement="",
    stack=None,
    pricer="roofline",
) -> None:
    """``jalapeno frontier --workload agentic:…``: every frontier point of one system."""
    import json
    from pathlib import Path

    from jalapeno.analysis.agentic import agentic_frontier
    from jalapeno.cli.serving_opts import refuse_idle_ar_rms
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.cost.sliced import chip_model_pricer, refuse_idle_placement
    from jalapeno.report.agentic_tables import agentic_frontier_table

    m, spec, opts, pinned = _setup(
        model, workload, precision, kv_dtype, attention_dtype, compute_fallback, routing, overlap, eplb, memory_fraction
    )
    if out and not out.lower().endswith((".json", ".csv")):  # before the sweep, not after it
        raise SpecError("--out", f"{out!r}: agentic frontiers are written as .json or .csv", "use a .json or .csv path")
    pr = chip_model_pricer(system_pricer(system, efficiency, sets, stack, pricer), chip_model, placement)
    refuse_idle_placement(pr, placement)
    refuse_idle_ar_rms(stack, m, pr)  # +ar_rms that fuses no step of this model here (break48)
    af = agentic_frontier(m, pr, spec, _precisions(m, pr, pinned, kv_dtype, attention_dtype, compute_fallback), opts)
    pts = af.points(power)
    if out:
        if out.lower().endswith(".json"):
            Path(out).write_text(json.dumps(pts, indent=1), encoding="utf-8")
        else:
            import pandas as pd

            pd.DataFrame(pts).to_csv(out, index=False)
    from jalapeno.analysis.price_reason import BASIS_FIELD, POWER_BASIS_FIELD, power_basis, power_basis_lines

    if json_out:
        from jalapeno.analysis.price_reason import system_basis

        print_json(
            {
                "system": pr.system.name,
                "model": m.name,
                "workload": spec.as_dict(),
                "frontier": pts,
                BASIS_FIELD: system_basis(pr.system),
                POWER_BASIS_FIELD: power_basis(pr.system),  # and its watts, as compare's (ux53)
            }
        )  # its points' usd_per_task rest on it
        return
    from jalapeno.report.narrow import fit_width

    for part in fit_width(
        agentic_frontier_table(pts, f"{m.name} on {pr.system.name} · agentic:{spec.name}"), console.width
    ):
        console.print(part)
    for line in power_basis_lines([pr.system]):  # where the per-kW columns' watts come from (ux53)
        console.print(line, markup=False, soft_wrap=True)
    from jalapeno.cli.chip_opts import chip_model_line

    if (line := chip_model_line([pr])) is not None:
        console.print(line, markup=False)
    if out:
        console.print(f"wrote {out}")


def agentic_plan_cmd(
    *,
    system,
    model,
    workload,
    precision,
    target,
    target_kind,
    chips,
    racks,
    power_mw,
    power,
    min_interactivity,
    serving,
    max_task_min,
    efficiency,
    sets,
    json_out,
    utilisation: float = 1.0,
) -> None:
    """``jalapeno plan --workload agentic:…``: the fleet that finishes a task rate (``--target``, tasks/h or
    output tok/s by ``--target-kind``) or what a fleet finishes, on the frontier ``compare -w agentic:…`` reads
    (analysis/agentic_plan).

    Raises:
        SpecError: ``--min-interactivity`` (a tok/s/user floor: give ``--max-task-min``), ``--serving disagg``
            (sessions run on aggregated instances), a bad target or ceiling.
    """
    from jalapeno.analysis.agentic import agentic_frontier
    from jalapeno.analysis.agentic_plan import (
        agentic_fleet,
        check_task_ceiling,
        output_tokens_per_task,
        plan_agentic,
        target_tasks_per_hour,
        tasks_text,
    )
    from jalapeno.analysis.capacity import n_chips
    from jalapeno.analysis.fleet import check_fleet_chips, fleet_chips
    from jalapeno.analysis.price_reason import BASIS_FIELD, POWER_BASIS_FIELD, basis_lines, power_basis, system_basis
    from jalapeno.analysis.price_reason import power_basis_lines
    from jalapeno.cli.system_opts import system_pricer

    if min_interactivity:
        raise SpecError(
            "--min-interactivity",
            "an agentic plan's speed is its task time, not a tok/s/user floor",
            "give --max-task-min MINUTES (mean time to finish one agent task), e.g. --max-task-min 10",
        )
    if serving == "disagg":
        raise SpecError(
            "--serving",
            "agentic sessions are modelled on aggregated instances (a prefix cache per instance; serve/sessions.py)",
            "drop --serving, or use agg",
        )
    m, spec, opts, pinned = _setup(model, workload, precision, None, None, None, "uniform", None, None, None)
    target_tasks_per_hour(1.0, target_kind, spec)  # the kind and the ceiling before the sweep, with --chips too
    check_task_ceiling(max_task_min)
    if max_task_min is not None:
        check_task_minutes([max_task_min], "--max-task-min", "--max-task-min 10")
    demand = None if target is None else target_tasks_per_hour(target, target_kind, spec)
    pr = system_pricer(system, efficiency, sets)
    how = None
    if chips is not None:
        check_fleet_chips(chips)
    elif target is None:
        chips, how = fleet_chips(pr.system, racks, power_mw, power)
    af = agentic_frontier(m, pr, spec, _precisions(m, pr, pinned, None, None, None), opts)
    if demand is not None:
        plan = plan_agentic(af, spec, demand, max_task_min)
    else:
        plan = agentic_fleet(af, spec, chips, max_task_min)
    conv = (
        None
        if target is None or target_kind != "output"
        else (
            f"target: {target:,.0f} output tok/s x 3600 / {output_tokens_per_task(spec):,} output tokens per task "
            f"({spec.turns} turns x {spec.reply_tokens:,}) = {tasks_text(demand)} tasks/h"
        )
    )
    lines = ([how] if how else []) + plan.arithmetic(conv)
    from jalapeno.analysis.capacity import whole_box_chips
    from jalapeno.analysis.plan_costs import bought_text, money_dict, money_lines

    # capex of the whole boxes bought (a fleet given in chips: its chips) and the electricity slope, as plan's (newuser55)
    bought = plan.fleet_chips or whole_box_chips(plan.chips, plan.packaging)
    what = "in the fleet" if plan.fleet_chips else bought_text(plan.packaging)
    money = money_lines(plan.usd_per_chip_hour, plan.power_w, bought, what)
    from jalapeno.analysis.plan_costs import utilisation_line

    out_rate = plan.point["tasks_per_hour_per_chip"] * plan.output_tokens_per_task / 3600  # output tok/s/chip
    money.append(
        utilisation_line(utilisation, plan.usd_per_m_output_tokens, plan.power_w["all-in"][0], out_rate, "output")
    )
    if json_out:
        print_json(
            {
                "system": pr.system.name,
                "model": m.name,
                "workload": spec.as_dict(),
                **plan.as_dict(),
                BASIS_FIELD: system_basis(pr.system),
                POWER_BASIS_FIELD: power_basis(pr.system),  # and its watts, as compare's (ux53)
                **money_dict(plan.usd_per_chip_hour, plan.power_w, bought),
                "utilisation": utilisation,
                "usd_per_m_output_tokens_at_utilisation": plan.usd_per_m_output_tokens / utilisation,
                "arithmetic": lines,
            }
        )
        return
    size = f"target {tasks_text(demand)} tasks/h" if demand is not None else f"{chips:,} chips"
    ceiling = "" if max_task_min is None else f" at mean task time <= {max_task_min:g} min"
    console.print(
        f"{m.name} on {pr.system.name} · agentic:{spec.name} ({spec.description}) · {size}{ceiling}",
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"deployment: {plan.point['deployment']} ({n_chips(plan.chips_per_instance)} per instance), "
        "sized on the frontier of `jalapeno compare --workload agentic:…` (docs/agentic.md)",
        markup=False,
        soft_wrap=True,
    )
    for line in lines + money + basis_lines([pr.system]) + power_basis_lines([pr.system]):
        console.print("  " + line, markup=False, soft_wrap=True)
    from jalapeno.analysis.measured_bands import band_of
    from jalapeno.analysis.plan_costs import agentic_sure_line

    sure = agentic_sure_line(plan, band_of(pr, m.name), pr.system.name, efficiency)
    console.print(sure, markup=False, soft_wrap=True)  # as the fixed-length plan's 'how sure' (newuser55)
    if max_task_min is None:
        console.print(
            "no task-time ceiling: every frontier point is eligible, the most-tasks-per-chip (batch) one included; for an interactive "
            "agent give --max-task-min, e.g. 10",
            markup=False,
            soft_wrap=True,
        )
