"""``jalapeno plan``: capacity planning on one system, with the arithmetic shown."""

from __future__ import annotations

import math

import typer

from jalapeno.cli.common import (
    FIXED_WORKLOAD_HELP,
    console,
    efficiency_option,
    isl_option,
    model_option,
    osl_option,
    print_json,
)
from jalapeno.analysis.plan_inputs import MAX_TTFT_HELP
from jalapeno.cli.chip_opts import refuse_die_sets
from jalapeno.cli.system_opts import SET_OPTION, system_pricer


def plan(
    system: str = typer.Option(
        ...,
        "--system",
        "-s",
        help="System name or TOML path; A,B,C plans one --target or --users on each, a row per system.",
    ),
    model: str = model_option(),
    workload: str = typer.Option(
        None,
        "--workload",
        "-w",
        help=FIXED_WORKLOAD_HELP[:-1] + ", or agentic:PRESET "
        "(coding-agent, research-agent, long-memory-chat, chat-agent) / agentic:FILE.toml.",
    ),
    isl: int = isl_option(),
    osl: int = osl_option(),
    precision: str = typer.Option(
        None, "--precision", "-p", help="Precision preset (default: every preset the chip runs natively)."
    ),
    target: float = typer.Option(
        None,
        "--target",
        help="Tokens per second the fleet must serve, e.g. 1e6 (--target-kind tasks: agent tasks per hour; "
        "or --chips: the fleet you have).",
    ),
    users: int = typer.Option(
        None,
        "--users",
        help="Concurrent users the fleet must hold, e.g. 20000 (instead of --target): closed loop, each keeps one "
        "request in flight; instances = ceil(users / the point's concurrency). Fixed-length workloads.",
    ),
    chips: int = typer.Option(
        None,
        "--chips",
        help="Fleet size you have, chips (instead of --target): what it serves at >= --min-interactivity.",
    ),
    racks: int = typer.Option(
        None,
        "--racks",
        help="Fleet size in racks (instead of --chips): racks x the system "
        "file's chips per rack (systems with a rack level: the NVL72s, Jalapeño).",
    ),
    power_mw: float = typer.Option(
        None,
        "--power-mw",
        help="Fleet size as a power budget, MW (instead of --chips): "
        "the whole racks/nodes it feeds at --power's W per chip.",
    ),
    power: str = typer.Option(
        "all-in",
        "--power",
        help="Power convention of --power-mw: chip, sustained or all-in "
        "(default: all-in provisioned, a facility's budget).",
    ),
    target_kind: str = typer.Option(
        "output",
        "--target-kind",
        help="What the target counts: output (output tokens) or total (input + output); "
        "agentic workloads: output or tasks (agent tasks per hour).",
    ),
    utilisation: float = typer.Option(
        1.0,
        "--utilisation",
        help="The fleet's average load as a share of the point's rate, 0 < U <= 1: $/M tok scales 1/U (default 1).",
    ),
    min_interactivity: float = typer.Option(
        0.0,
        "--min-interactivity",
        help="Per-user speed floor, tok/s/user: the decode speed, 1 / TPOT (0 = none: peak throughput); a user's "
        "mean rate over a whole request, TTFT included, is lower (the plan's users line).",
    ),
    max_ttft_ms: float = typer.Option(None, "--max-ttft-ms", help=MAX_TTFT_HELP),
    max_task_min: float = typer.Option(
        None,
        "--max-task-min",
        help="Agentic workloads: the longest mean time to "
        "finish one agent task, minutes (their speed floor; default none).",
    ),
    serving: str = typer.Option("both", "--serving", help="agg, disagg or both."),
    efficiency: str = efficiency_option(),
    sets: list[str] = SET_OPTION,
    json_out: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
) -> None:
    """Chips, racks/nodes, power (each convention), $/hour and the deployment that serve a token
    rate at a per-user speed (agentic workloads: agent tasks per hour), or what a fleet you have serves
    (--chips, --racks, --power-mw), with the arithmetic shown."""
    from jalapeno.analysis.capacity import lengths_text, n_chips, plan_capacity
    from jalapeno.analysis.fleet import fleet_throughput
    from jalapeno.cli.plan_many import plan_many_cmd, split_systems, sweep_for_plan
    from jalapeno.cli.serving_opts import _setup
    from jalapeno.errors import SpecError, choice_hint

    given = [
        o
        for o, v in (
            ("--target", target),
            ("--users", users),
            ("--chips", chips),
            ("--racks", racks),
            ("--power-mw", power_mw),
        )
        if v is not None
    ]
    if len(given) != 1:
        raise SpecError(
            "--target/--chips",
            "give exactly one: a token rate (or --users) to size a fleet for, or a fleet size"
            + (f" (got {' and '.join(given)})" if given else ""),
            "write --target 1e6 (tokens/s to serve), --users 20000 (concurrent users) or --chips 1152 (the chips you "
            "have; or --racks 16, --power-mw 20)",
        )
    if power != "all-in" and power_mw is None:
        raise SpecError(
            "--power",
            "sets the convention of --power-mw only (the plan prints every convention)",
            "drop --power, or give --power-mw",
        )
    if serving not in ("agg", "disagg", "both"):
        raise SpecError(
            "--serving",
            f"unknown mode {serving!r}{choice_hint(serving, ('agg', 'disagg', 'both'))}",
            "use agg, disagg or both",
        )
    from jalapeno.analysis.plan_costs import check_utilisation, utilisation_line
    from jalapeno.cli.compare_lines import MTOK_BASIS

    check_utilisation(utilisation)  # before any sweep, as every plan input (newuser55)
    if (many := split_systems(system)) is not None:  # one target on several systems, side by side (newuser55)
        return plan_many_cmd(many, locals())
    if workload and workload.startswith("agentic:"):  # sessions: sized on compare -w agentic:…'s frontier
        if users is not None:  # an agent session is not a closed-loop user of one request at a time
            raise SpecError(
                "--users",
                "counts a fixed-length workload's closed-loop users; an agentic fleet is sized by tasks per hour",
                "give --target N --target-kind tasks (the plan prints the agent sessions in flight), or drop --users",
            )
        if max_ttft_ms is not None:  # a task's time is its turns' TTFTs and decodes together
            raise SpecError(
                "--max-ttft-ms",
                "is a fixed-length workload's ceiling; an agentic task's time counts every turn's TTFT",
                "give --max-task-min (the mean time to finish one agent task, minutes), or drop --max-ttft-ms",
            )
        if isl is not None or osl is not None:
            raise SpecError("--isl/--osl", "an agentic workload sets its own turn lengths", "drop --isl/--osl")
        from jalapeno.cli.agentic_cmd import agentic_plan_cmd

        return agentic_plan_cmd(
            system=system,
            model=model,
            workload=workload,
            precision=precision,
            target=target,
            target_kind=target_kind,
            chips=chips,
            racks=racks,
            power_mw=power_mw,
            power=power,
            min_interactivity=min_interactivity,
            serving=serving,
            max_task_min=max_task_min,
            efficiency=efficiency,
            sets=sets,
            json_out=json_out,
            utilisation=utilisation,
        )
    if max_task_min is not None:
        raise SpecError(
            "--max-task-min",
            "is the task-time ceiling of an agentic workload",
            "give --workload agentic:PRESET, or --min-interactivity for a fixed-length one",
        )
    from jalapeno.analysis.measured_bands import band_of
    from jalapeno.analysis.plan_costs import bought_text, chips_band, chips_band_line, money_dict, money_lines
    from jalapeno.analysis.price_reason import (
        BASIS_FIELD,
        POWER_BASIS_FIELD,
        basis_lines,
        power_basis,
        power_basis_lines,
        system_basis,
    )

    _refuse_agentic(workload, system)
    m, wl, prec = _setup(model, workload, isl, osl, precision)
    pr = system_pricer(system, efficiency, sets)
    refuse_die_sets(pr, "plan")
    s = pr.system
    one_set = _one_set(pr, system, efficiency, sets)
    if (note := tdp_moved_note(s, sets)) is not None:  # the variant's TDP moved the power and $ figures, unsaid
        from jalapeno.cli.engine_opts import note_lines

        note_lines([note])
    # the plan's own inputs before the sweep: a typo (--target-kind out, --chips 0, --racks on an 8-GPU node)
    # was refused only after every precision's frontier was swept
    from jalapeno.analysis.plan_inputs import check_floor, check_target
    from jalapeno.analysis.fleet import check_fleet_chips, fleet_chips
    from jalapeno.analysis.plan_inputs import ceiling_text, check_ttft_ceiling, check_users, within_ttft

    check_target(target, target_kind)
    check_users(users)
    check_floor(min_interactivity)
    check_ttft_ceiling(max_ttft_ms)
    how = None
    if chips is not None:
        check_fleet_chips(chips)
    elif target is None and users is None:
        chips, how = fleet_chips(s, racks, power_mw, power)
    sf = sweep_for_plan(m, pr, wl, prec, precision, serving, sets)
    if target is None and users is None:
        # every instance size's own frontier, not only the system's: a 72-chip GB300 fleet got a 4-chip
        # instance (the larger ones dominate the rest), and a 1-chip one was told the smallest needs 4, not 2
        fleet_rec = within_ttft(sf.fleet_record(), max_ttft_ms, min_interactivity)
        ft = fleet_throughput(fleet_rec, s, chips, target_kind, min_interactivity)
        lines = ([how] if how else []) + ft.arithmetic()
        if json_out:
            print_json(
                {
                    "system": s.name,
                    "model": m.name,
                    "workload": wl.as_dict(),
                    "min_interactivity": min_interactivity,
                    "max_ttft_ms": max_ttft_ms,
                    **ft.as_dict(),
                    BASIS_FIELD: system_basis(s),
                    POWER_BASIS_FIELD: power_basis(s),  # where its watts come from, as compare --json (ux53)
                    **money_dict(s.usd_per_chip_hour, ft.power_w, chips),
                    "utilisation": utilisation,
                    "usd_per_mtok_at_utilisation": ft.usd_per_mtok / utilisation,
                    "usd_per_mtok_basis": MTOK_BASIS[target_kind],  # compare's: input + output (newuser55)
                    "arithmetic": lines,
                }
            )
            return
        console.print(
            f"{m.name} on {s.name} · ISL {wl.isl} / OSL {wl.osl} · {n_chips(chips)} at >= "
            f"{min_interactivity:g} tok/s/user{ceiling_text(max_ttft_ms)}"
        )
        console.print(f"lengths: {lengths_text(wl)}", soft_wrap=True)
        console.print(f"deployment: {ft.point.deployment.label} ({n_chips(ft.point.deployment.chips)} per instance)")
        money = money_lines(s.usd_per_chip_hour, ft.power_w, chips, "in the fleet")
        per_chip = ft.delivered_tok_per_s / chips  # per fleet chip, idle ones included: its $/M tok's basis
        money.append(utilisation_line(utilisation, ft.usd_per_mtok, ft.power_w["all-in"][0], per_chip, target_kind))
        for line in lines + money + basis_lines([s]) + power_basis_lines([s]):
            console.print("  " + line, soft_wrap=True)
        _closing_notes(ft.point, min_interactivity, system, model, wl, isl, sets, efficiency, _uncalibrated(s), one_set)
        return
    # fewest / fewest_boxes search every instance size's own frontier (as --chips): the system's frontier drops
    # a small instance a larger one dominates, the one a target of a few instances fits in fewest chips
    # --max-ttft-ms: only the points at or under the ceiling, on the system's frontier and every instance size's
    rec = within_ttft(sf.record(), max_ttft_ms, min_interactivity)
    alts = within_ttft(sf.fleet_record(), max_ttft_ms, min_interactivity)
    cp = plan_capacity(rec, s, target, target_kind, min_interactivity, alternatives=alts, users=users)
    _check_fleet_size(cp.provisioned_chips, target, users)
    if json_out:
        p = cp.point
        print_json(
            {
                "system": s.name,
                "model": m.name,
                "workload": wl.as_dict(),
                "target_tok_per_s": cp.target_tok_per_s,
                "target_users": users,
                "target_kind": target_kind,
                "min_interactivity": min_interactivity,
                "max_ttft_ms": max_ttft_ms,
                "deployment": p.deployment.as_dict(),
                "point": p.as_dict(),
                "tok_per_s_per_chip": cp.tok_per_s_per_chip,
                "instances": cp.instances,
                "chips": cp.chips,
                "packaging": {name: n for name, _, n in cp.packaging},
                "power_kw": {c: v[2] / 1e3 for c, v in cp.power_w.items()},
                "usd_per_hour": cp.usd_per_hour,
                "usd_per_mtok": cp.usd_per_mtok,
                "utilisation": utilisation,
                "usd_per_mtok_at_utilisation": cp.usd_per_mtok / utilisation,
                "usd_per_mtok_basis": MTOK_BASIS[target_kind],
                "usd_estimate": cp.usd_estimate,
                BASIS_FIELD: system_basis(s),
                POWER_BASIS_FIELD: power_basis(s),
                "delivered_tok_per_s": cp.delivered_tok_per_s,
                "provisioned": cp.provisioned(),
                "count_basis": cp.basis_text(),  # chips in use vs whole racks bought, the text's line (ux54)
                "mean_isl": wl.mean_isl,
                "mean_osl": wl.mean_osl,
                "users_per_instance": cp.users_per_instance,
                "users": cp.users_per_instance * cp.instances,
                "output_tok_per_s_per_user": cp.output_tok_per_s_per_user,
                "lead": "fewest chips (ties: higher tok/s/chip, then fewer outermost boxes)",
                "highest_rate": None if cp.highest_rate is None else cp.highest_rate.as_dict(),
                "fewest_boxes": None
                if cp.fewest_boxes is None
                else {"level": cp.packaging[-1][0], **cp.fewest_boxes.as_dict()},
                **money_dict(cp.usd_per_chip_hour, cp.power_w, cp.provisioned_chips),
                "chips_band": chips_band(cp, band_of(pr, m.name)),
                "arithmetic": cp.arithmetic(),
            }
        )
        return
    console.print(
        f"{m.name} on {s.name} · ISL {wl.isl} / OSL {wl.osl} · target "
        + (f"{cp.target_text()} {target_kind} tok/s" if users is None else f"{users:,} users (closed loop)")
        + f" at >= {min_interactivity:g} tok/s/user{ceiling_text(max_ttft_ms)}"
    )  # console markup is off
    console.print(f"lengths: {lengths_text(wl)}", soft_wrap=True)
    console.print(f"deployment: {cp.point.deployment.label} ({n_chips(cp.chips_per_instance)} per instance)")
    money = money_lines(cp.usd_per_chip_hour, cp.power_w, cp.provisioned_chips, bought_text(cp.packaging))
    money.append(
        utilisation_line(utilisation, cp.usd_per_mtok, cp.power_w["all-in"][0], cp.tok_per_s_per_chip, target_kind)
    )
    for line in cp.arithmetic() + money + basis_lines([s]) + power_basis_lines([s]):
        console.print("  " + line, soft_wrap=True)
    if (sure := chips_band_line(cp, band_of(pr, m.name), m.name)) is not None:
        console.print(sure, soft_wrap=True)
    _closing_notes(cp.point, min_interactivity, system, model, wl, isl, sets, efficiency, _uncalibrated(s), one_set)


def _uncalibrated(s) -> bool:
    """Whether system ``s`` is a file with no calibration to price (no ``base``, no ``calibration``): every set
    name then prices the documented defaults (specs/variants.efficiency_note)."""
    return s.origin is not None and s.origin.calibration is None


def _one_set(pr, system: str, efficiency: str, sets) -> bool:
    """Whether ``--efficiency low|high`` priced ``system`` with its calibrated set: a system fitted on its own kernels
    has one set (system_notes.note_no_band says so on stderr), and 'how sure' then named 'the efficiency set low'
    and passed --efficiency low to the audit (newuser53)."""
    import dataclasses

    if efficiency not in ("low", "high"):
        return False
    mid = system_pricer(system, "calibrated", sets)
    return dataclasses.replace(pr.efficiency, source="") == dataclasses.replace(mid.efficiency, source="")


def _closing_notes(
    point,
    min_interactivity: float,
    system: str,
    model: str,
    wl,
    isl,
    sets,
    efficiency: str = "calibrated",
    uncalibrated: bool = False,
    one_set: bool = False,
) -> None:
    """The lines after a plan's arithmetic (``--target`` and ``--chips`` alike): the no-floor note when there is
    no floor, and 'how sure', the audit command that gives the plan's point its band. ``efficiency``: the set the plan
    priced (``--efficiency``), named in the line and passed to the audit: ``plan --efficiency spec`` said "this plan
    prices the calibrated efficiencies only", and its audit priced another point; so did a system file of its own
    (``uncalibrated``), priced with the documented defaults (newuser51)."""
    from jalapeno.analysis.capacity import n_chips

    if min_interactivity <= 0:  # the default plan sized a fleet at 7.5 tok/s/user (2-minute requests) without a word
        _no_floor_note(point)
    # the plan is the calibrated point only; say where its uncertainty is (a planner asks "how sure?")
    wl_args = f"-w {wl.name}" if isl is None else f"--isl {wl.isl} --osl {wl.osl}"
    dep = point.deployment
    at, prec_name = math.floor(point.interactivity * 10) / 10, dep.precision.name
    sets_args = "".join(f" --set {x}" for x in sets or ())
    # the audit of the deployment shown first (ux50): its size and mode pinned; the system's frontier at the same
    # speed was another deployment since plan49 led with the fewest chips (Kimi K2.5 on Jalapeño, 1k8k, 1e6 tok/s
    # at >= 50: the 132-chip lead, where the frontier there is 524-chip disagg)
    mode = "disagg" if dep.prefill is not None else "agg"
    priced = "the calibrated efficiencies" if efficiency == "calibrated" else f"the efficiency set {efficiency}"
    if uncalibrated and efficiency in ("calibrated", "low", "high"):
        priced = f"the documented default efficiencies (set spec: {system} has no calibration)"
    if one_set:  # --efficiency low|high on a system with one set: it priced the calibrated one (note_no_band)
        priced = f"the calibrated efficiencies only ({system} has no {efficiency} set: its band is its measured error)"
    sets_args += "" if efficiency == "calibrated" or one_set else f" --efficiency {efficiency}"
    console.print(
        f"how sure: this plan prices {priced}{'' if one_set else ' only'}; the band of the deployment it leads "
        f"with ({dep.label}, {n_chips(dep.chips)} per instance; the efficiency band, or a measured system's "
        "validate error) and what would have to hold for another figure: "
        f"`jalapeno audit --system {system} -m {model} {wl_args} -p {prec_name}{sets_args} --serving {mode} "
        f"--instance-chips {dep.chips} --claim throughput_per_chip@{at:g}={point.throughput_per_chip:.0f}` (the "
        "claim: this point's predicted in+out tok/s/chip, its band in the audit's band column; put a figure of your own "
        "to test it; docs/audit.md)",
        soft_wrap=True,
    )


def _no_floor_note(point) -> None:
    """Say that a plan without --min-interactivity sized the batch (peak-throughput) point, at its speed."""
    console.print(
        f"no per-user speed floor: this is the batch (peak-throughput) point, "
        f"{point.interactivity:,.1f} tok/s/user, {point.e2e_s:,.0f} s per request end to end; "
        "for an interactive service give its floor, e.g. --min-interactivity 50",
        soft_wrap=True,
    )


def _check_fleet_size(chips: int, target: float | None, users: int | None = None) -> None:
    """Refuse a ``--target`` (or ``--users``) whose fleet is above the chip plausibility bound that ``--chips``,
    ``--racks`` and ``--power-mw`` are held to (analysis/fleet.MAX_FLEET_CHIPS): ``--target 1e12`` planned 1.77
    billion H200s, where ``--chips`` of as many is refused (break46).

    Raises:
        SpecError: naming ``--target`` (or ``--users``).
    """
    from jalapeno.analysis.fleet import MAX_FLEET_CHIPS
    from jalapeno.errors import SpecError

    if chips > MAX_FLEET_CHIPS and users is not None:
        raise SpecError(
            "--users",
            f"{users:,} users need {chips:,} chips, above the {MAX_FLEET_CHIPS:,}-chip plausibility bound "
            "(~100x all AI accelerators installed by 2025)",
            "give the concurrent users of one fleet, e.g. --users 20000",
        )
    if chips > MAX_FLEET_CHIPS:
        raise SpecError(
            "--target",
            f"{target:.3g} tok/s needs {chips:,} chips, above the {MAX_FLEET_CHIPS:,}-chip "
            "plausibility bound (~100x all AI accelerators installed by 2025)",
            "give one fleet's tokens per SECOND (a daily total / 86,400), e.g. --target 1e6",
        )


#: how specs/power.follow_variant opens the source of a TDP it moved (the variant's component power model)
_FOLLOWED_TDP = "follows the variant's components"


def tdp_moved_note(system, sets) -> str | None:
    """The note ``plan`` prints when a ``--set`` variant's TDP follows its components (specs/power.follow_variant:
    more HBM bandwidth or stacks, faster links cost watts), as ``hardware show`` states it in its TDP row: the
    new TDP in W and why; its all-in power and $/chip-hour follow it. None when the TDP is the file's own."""
    src = system.sources.get("chip.tdp_w", "")
    if _FOLLOWED_TDP not in src:
        return None
    how = src.split("(specs/power.py): ", 1)[-1]
    given = " ".join(f"--set {x}" for x in sets or ())
    return (
        f"the TDP moved to {system.chip.tdp_w:,.0f} W ({given}): it follows the variant's component power "
        f"model (specs/power.py): {how}; the power and $ figures below use it "
        f"(`jalapeno hardware show` with the same --set shows each)"
    )


def _refuse_agentic(workload: str | None, system: str) -> None:
    """Refuse an agentic preset named without its ``agentic:`` prefix (``coding-agent``, or bare ``agentic``):
    plan sizes agent fleets only through ``--workload agentic:PRESET`` (cli/agentic_cmd.agentic_plan_cmd, on
    compare's agentic frontier), so the fix names that spelling (newuser47, ux47).

    Raises:
        SpecError: ``--workload`` names an agentic preset without the ``agentic:`` prefix.
    """
    from jalapeno.errors import SpecError
    from jalapeno.specs.agentic import AGENTIC_PRESETS

    if workload is None or not (workload == "agentic" or workload in AGENTIC_PRESETS):
        return
    name = "coding-agent" if workload == "agentic" else workload
    raise SpecError(
        "--workload",
        f"{workload!r} is an agentic (multi-turn) workload; plan sizes agent fleets through its agentic: spelling",
        f"write --workload agentic:{name} (e.g. `jalapeno plan --system {system} --workload "
        f"agentic:{name} --target 10000 --target-kind tasks --max-task-min 10`; docs/agentic.md), or plan a "
        "fixed-length workload (--workload 8k1k)",
    )
