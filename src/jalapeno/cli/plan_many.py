"""``jalapeno plan -s A,B,C``: one target sized on several systems, side by side (newuser55).

A capacity planner's first question is "how many GB200 NVL72, GB300 NVL72 or Jalapeño racks for 2 M output tok/s at
>= 50 tok/s/user, at what power and cost"; ``plan`` took one system (a comma list was refused, pointing to
``compare``, whose per-rack line gives a rack's users, not a fleet). Each system here is planned exactly as
``jalapeno plan -s NAME`` plans it (the same sweep, :func:`sweep_for_plan`, and ``analysis/capacity.plan_capacity``:
the fewest chips in whole instances, ties to the higher tok/s/chip), and one row per system gives its figures: the
whole outermost boxes bought (racks; nodes for an 8-GPU system) with their all-in provisioned power, the chips in use
with their $/hour and $ per M tokens (the plan's own bases), the estimated capex of the boxes bought
(``analysis/plan_costs.capex``) and, on a system validate measured, the boxes at its throughput error's p10/p90
(``analysis/plan_costs.chips_band``). Each system's arithmetic: the single-system plan the table's caption names.
"""

from __future__ import annotations

from jalapeno.cli.common import console, print_json


def sweep_for_plan(m, pr, wl, prec, precision, serving: str, sets):
    """The frontier ``plan`` sizes on (model ``m``, pricer ``pr``, workload ``wl``): every precision the chip runs natively unless ``precision`` (``-p``) names
    one (``prec``: the resolved preset), with the notes ``plan`` says about efficiency keys the sweep never reads.
    Returns ``analysis/comparison.system_frontier``'s SystemFrontier."""
    from jalapeno.analysis.comparison import system_frontier
    from jalapeno.cli.common import resolve_precision
    from jalapeno.cli.serving_opts import _options
    from jalapeno.cli.system_notes import note_unread_efficiency
    from jalapeno.deploy.checkpoints import available_precisions
    from jalapeno.specs.formats import get_precision

    s = pr.system
    precs = (
        None
        if precision is not None
        else [
            resolve_precision(m, q).name
            for q in available_precisions(m.name, m.default_precision, s.chip.formats, m, s.chip)
        ]
    )
    note_unread_efficiency(sets, m, [get_precision(q) for q in precs] if precs else prec, pr)
    return system_frontier(m, pr, wl, None if precs else prec, _options(serving, None, None, None), precisions=precs)


def split_systems(system: str) -> list[str] | None:
    """The systems of ``-s A,B,C`` (None for one system).

    Raises:
        SpecError: an empty entry (``-s gb200-nvl72,``) or a system named twice.
    """
    from jalapeno.errors import SpecError

    if "," not in system:
        return None
    names = [x.strip() for x in system.split(",")]
    if any(not x for x in names):
        raise SpecError("--system", f"{system!r} has an empty entry", "write e.g. -s gb200-nvl72,gb300-nvl72,jalapeno")
    if len(set(names)) < len(names):
        raise SpecError("--system", f"{system!r} names a system twice", "name each system once")
    return names


def plan_many_cmd(names: list[str], opts: dict) -> None:
    """``plan -s A,B,C``: a target or users, fixed-length, on each system; the plan's own input
    checks first (before any sweep).

    Raises:
        SpecError: a fleet size (--chips/--racks/--power-mw) or an agentic workload with several systems;
            --max-task-min on a fixed-length workload."""
    from jalapeno.analysis.plan_inputs import check_floor, check_target, check_ttft_ceiling, check_users
    from jalapeno.errors import SpecError

    if opts["target"] is None and opts["users"] is None:
        raise SpecError(
            "--system",
            "several systems size one --target or --users side by side; a fleet you have (--chips, --racks, "
            "--power-mw) is one system's",
            f"give one system (e.g. -s {names[0]}), or --target / --users",
        )
    if (opts["workload"] or "").startswith("agentic:"):
        raise SpecError("--system", "an agentic plan takes one system", f"give one system, e.g. -s {names[0]}")
    if opts["max_task_min"] is not None:  # as plan -s NAME says it: a fixed-length workload has no task time
        raise SpecError(
            "--max-task-min",
            "is the task-time ceiling of an agentic workload",
            "give --workload agentic:PRESET (one system), or --min-interactivity for a fixed-length one",
        )
    check_target(opts["target"], opts["target_kind"])
    check_users(opts["users"])
    check_floor(opts["min_interactivity"])
    check_ttft_ceiling(opts["max_ttft_ms"])
    keys = ("model", "workload", "isl", "osl", "precision", "target", "users", "target_kind", "min_interactivity")
    keys += ("max_ttft_ms", "serving", "efficiency", "sets", "json_out", "utilisation")
    plan_many(names, **{k: opts[k] for k in keys})


def plan_many(
    names: list[str],
    *,
    model,
    workload,
    isl,
    osl,
    precision,
    target,
    users,
    target_kind: str,
    min_interactivity: float,
    max_ttft_ms,
    serving: str,
    efficiency: str,
    sets,
    json_out: bool,
    utilisation: float = 1.0,
) -> None:
    """Plan ``target`` (or ``users``) on each of ``names`` and print one row per system (module docstring).

    Raises:
        SpecError: a fleet size (--chips/--racks/--power-mw) or an agentic workload with several systems, or any
            error the single-system plan raises for one of them (naming the option).
    """
    from jalapeno.analysis.capacity import plan_capacity
    from jalapeno.analysis.measured_bands import band_of
    from jalapeno.analysis.plan_costs import capex, chips_band, ratio_text
    from jalapeno.analysis.plan_inputs import ceiling_text, within_ttft
    from jalapeno.analysis.power_cost import usd_text
    from jalapeno.analysis.price_reason import basis_lines, power_basis_lines
    from jalapeno.cli.chip_opts import refuse_die_sets
    from jalapeno.cli.compare_lines import MTOK_BASIS
    from jalapeno.cli.serving_opts import _setup
    from jalapeno.cli.engine_opts import note_lines
    from jalapeno.cli.plan_cmd import tdp_moved_note
    from jalapeno.cli.system_opts import per_system_sets, system_pricer
    from jalapeno.cli.usage_errors import shared_sets_note

    m, wl, prec = _setup(model, workload, isl, osl, precision)
    # as compare: --set NAME:KEY=VALUE sets one system, a plain KEY=VALUE every one (and says so); plan -s A,B refused
    # 'jalapeno:' as "this command prices one system" (review55)
    per = per_system_sets(names, sets)
    rows = []
    for name in names:
        pr = system_pricer(name, efficiency, per[name])
        refuse_die_sets(pr, "plan")
        if (note := tdp_moved_note(pr.system, per[name])) is not None:  # as plan -s NAME notes it
            note_lines([note])
        sf = sweep_for_plan(m, pr, wl, prec, precision, serving, per[name])
        rec = within_ttft(sf.record(), max_ttft_ms, min_interactivity)
        alts = within_ttft(sf.fleet_record(), max_ttft_ms, min_interactivity)
        cp = plan_capacity(rec, pr.system, target, target_kind, min_interactivity, alternatives=alts, users=users)
        rows.append((pr, cp, chips_band(cp, band_of(pr, m.name)), capex(cp.usd_per_chip_hour, cp.provisioned_chips)))
    if (shared := shared_sets_note(names, sets)) is not None:  # a plain --set changed every system (compare's note)
        note_lines([shared.replace("compared system", "planned system").replace(", the baseline included", "")])
    if json_out:
        print_json(
            {
                "model": m.name,
                "workload": wl.as_dict(),
                "target_tok_per_s": target,
                "target_users": users,
                "target_kind": target_kind,
                "min_interactivity": min_interactivity,
                "max_ttft_ms": max_ttft_ms,
                "utilisation": utilisation,
                "usd_per_mtok_basis": MTOK_BASIS[target_kind],  # compare's: input + output (newuser55)
                "systems": [
                    {**_row_dict(cp, band, cx), "usd_per_mtok_at_utilisation": cp.usd_per_mtok / utilisation}
                    for _, cp, band, cx in rows
                ],
            }
        )
        return
    from rich.table import Table

    size = f"{target:,.0f} {target_kind} tok/s" if users is None else f"{users:,} users (closed loop)"
    t = Table(
        title=f"{m.name} · ISL {wl.isl} / OSL {wl.osl} · {size} at >= {min_interactivity:g} tok/s/user"
        f"{ceiling_text(max_ttft_ms)}"
    )
    for col in (
        "system",
        "instance (its deployment: the plan)",
        f"{target_kind} tok/s/chip @ tok/s/user (TTFT)",
        "instances x chips",
        "bought (whole boxes)",
        "all-in kW (bought)",
        "$/hour (in use)",
        f"$/M {target_kind} tok" + ("" if utilisation >= 1 else f" at utilisation {utilisation:g}"),
        "capex est. (bought)",
        "boxes at measured p10/p90",
    ):
        t.add_column(col)
    for pr, cp, band, cx in rows:
        p = cp.point
        prov = cp.provisioned()
        box = f"{cp.packaging[-1][2]:,} {cp.packaging[-1][0]}s" if cp.packaging else f"{cp.chips:,} chips"
        kw = cp.power_w["all-in"][0] * cp.provisioned_chips / 1e3 if cp.power_w["all-in"][0] else None
        t.add_row(
            cp.system,
            f"{'disagg' if p.deployment.prefill is not None else 'agg'} {p.deployment.precision.name}, "
            f"{p.deployment.chips:,} chips",
            f"{cp.tok_per_s_per_chip:,.1f} @ {p.interactivity:.1f} ({p.ttft_s * 1e3:,.0f} ms)",
            f"{cp.instances:,} x {cp.chips_per_instance:,} = {cp.chips:,}",
            box + ("" if prov is None else f" ({prov['idle_chips']:,} chips idle)"),
            "-" if kw is None else f"{kw:,.0f}",
            f"{cp.usd_per_hour:,.0f}" + (" est." if cp.usd_estimate else ""),
            usd_text(cp.usd_per_mtok / utilisation) + (" est." if cp.usd_estimate else ""),
            f"${cx['usd'] / 1e6:,.1f}M",
            "-" if band is None or band["box"] is None else f"{band['low']['boxes']:,} to {band['high']['boxes']:,}",
        )
    console.print(t)
    systems = [pr.system for pr, *_ in rows]
    wl_args = f"-w {wl.name}" if isl is None else f"--isl {wl.isl} --osl {wl.osl}"
    for line in (
        [
            "each row is `jalapeno plan -s NAME` (the fewest chips in whole instances at the floor; ties: the higher "
            "tok/s/chip): its arithmetic, users, alternatives and audit command there, e.g. "
            f"`jalapeno plan -s {names[0]} -m {m.name} {wl_args} "
            + (f"--target {target:.0f} --target-kind {target_kind}" if users is None else f"--users {users}")
            + f" --min-interactivity {min_interactivity:g}"
            + ("" if max_ttft_ms is None else f" --max-ttft-ms {max_ttft_ms:g}")
            + "`",
            "bought: whole outermost boxes (racks; nodes for a system without a rack level), every chip idle or not, at the "
            "all-in provisioned power (the facility's); $/hour and $/M tok: the chips in use at the system's $/chip-hour "
            "(TCO; est.: an estimated price), $/M tok at the point's rate every hour, x 1/U at an average load U "
            "(--utilisation); capex est.: the boxes bought at $/chip-hour x "
            f"{ratio_text()} (InferenceX's GB200 TCO over capex; its band and the electricity slope in each plan; "
            "docs/metrics.md §3)",
            "boxes at measured p10/p90: the same deployment at validate's throughput-per-chip error on that system "
            "(-: a system validate has no points for on this model; its band is `jalapeno audit`'s, named in its plan)",
        ]
        + basis_lines(systems)
        + power_basis_lines(systems)
    ):
        console.print(line, soft_wrap=True)


def _row_dict(cp, band, cx) -> dict:
    """One system's ``--json`` entry: the single plan's headline figures (exact)."""
    return {
        "system": cp.system,
        "deployment": cp.point.deployment.as_dict(),
        "point": cp.point.as_dict(),
        "tok_per_s_per_chip": cp.tok_per_s_per_chip,
        "instances": cp.instances,
        "chips": cp.chips,
        "packaging": {name: n for name, _, n in cp.packaging},
        "provisioned": cp.provisioned(),
        "power_kw": {c: v[2] / 1e3 for c, v in cp.power_w.items()},
        "usd_per_hour": cp.usd_per_hour,
        "usd_per_mtok": cp.usd_per_mtok,
        "usd_estimate": cp.usd_estimate,
        "delivered_tok_per_s": cp.delivered_tok_per_s,
        "capex": {**cx, "chips": cp.provisioned_chips, "estimate": True},
        "chips_band": band,
    }
