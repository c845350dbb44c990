"""The lines under ``explore``'s designs table that say what its scores rest on: the base's own figure per case
(with its unit and how the space's ``[sweep]`` read it), how far that sweep stands from ``compare``'s, and what the
designs' $/chip-hour rests on. Text from a run's summary (``cli/explore_cmd._summary``); computes no figure."""

from __future__ import annotations

from jalapeno.analysis.price_reason import system_basis

#: the unit each objective metric's base figure prints in (analysis/explore.case_metrics: tokens count input +
#: output, as compare's tok/s/chip, tok/s/kW and $/M tok): 'tok_s_per_kw 1,113' read with no unit or token kind
METRIC_UNITS = {
    "tok_s_per_kw": "tok/s per kW (in+out)",
    "tok_s_per_chip": "tok/s/chip (in+out)",
    "usd_per_mtok": "$ per M tokens (in+out)",
    "max_interactivity": "tok/s/user",
}


def fig(x: float) -> str:
    """A figure as audit's tables write one: thousands separators from 1,000 up, four significant digits below
    (a kernel launch 2.5e-07 s stays so). ``.4g`` wrote gpt-oss-120b's base 48,706 tok/s per kW as '4.871e+04' and
    a design's FP4 peak 12,330 TFLOP/s as '1.233e+04', beside '2,228' and '1697' (newuser52)."""
    return f"{x:,.0f}" if 1e3 <= abs(x) < 1e15 else f"{x:,.4g}"


#: what a base's max_interactivity figure is, beside it: the sweep's fastest feasible point, at no per-user floor
FASTEST = " (the sweep's fastest point, at no floor)"


def base_lines(out: dict, est: str = "") -> list[str]:
    """The base's own figures, per case, that the scores are ratios of, and how they were swept: a
    user comparing with another system read '2.58 (x base)' with no base value anywhere but
    meta.json, and that value (agg only, a coarse batch grid, no TBO; its frontier interpolated at the floor
    since round 42, ``[sweep] at_floor``) is below compare's frontier (disagg and TBO too): 1,493.8 against 4,161
    tok/s/chip for Jalapeño on Kimi K2.5 8K/1K at 50 tok/s/user (docs/explore.md §2, step 6). A run stored
    before round 42 has no ``at_floor``: it read the best point at or above the floor, and says so."""
    obj, sw = out.get("objective") or {}, out.get("sweep") or {}
    floor = obj.get("min_interactivity", 0)
    how = (
        "the sweep's frontier interpolated at" if sw.get("at_floor") == "interpolated" else "the best sweep point at >="
    )
    lines = []
    # max_interactivity is the sweep's fastest feasible point, read at no floor (analysis/explore.case_result): the
    # line's closing '(the sweep's frontier interpolated at 50 tok/s/user)' read as if 135.1 tok/s/user were taken at
    # 50 (newuser52); it says so beside its figure, and the closing names the floor for the floor-read metrics only
    floored = [m for m in out.get("metrics") or () if m != "max_interactivity"]
    for b in out.get("base_metrics") or []:
        vals = ", ".join(
            f"{m} {fig(b[m])}"
            + (f" {METRIC_UNITS[m]}" if m in METRIC_UNITS else "")
            + (est if m == "usd_per_mtok" else "")
            + (FASTEST if m == "max_interactivity" else "")
            for m in out["metrics"]
            if m in b
        )
        read = f"{how} {floor:g} tok/s/user; " if floored else ""
        lines.append(
            f"base {out['base']} on {b['model']} {b['workload']}: {vals} ({read}power {obj.get('power', 'chip')})"
        )
    if lines and sw:
        lines.append(
            f"sweep: serving {sw.get('serving')}, decode batches {sw.get('batches')}, no TBO, "
            + (
                "every native precision"
                if sw.get("precisions") == "native"
                else "the case's precision or the model's default only"
            )
            + ": a coarse ranking sweep, not compare's figure at the same floor (that one sweeps "
            + beyond(sw, bool(out.get("compare")))
            + "); a design's figure on one case = its score x the base's"
        )
    return lines


def beyond(sw: dict, own: bool = False) -> str:
    """What compare's sweep adds to a space's ``[sweep]`` (``sw``) and how far apart the two figures stand
    (docs/explore.md §3 and §4.1, Jalapeño at 100 tok/s/user): on agg at each model's default precision compare's
    DeepSeek-R1 8K/1K figure is 2.2x (FP8 -> FP4 and disagg); with ``serving = "both"`` and ``precisions =
    "native"`` (the shipped examples since ux46) 1.00x on the base (1,730 against 1,721 tok/s/chip) and 1.10x on
    the example's best design (the full batch grid, stages, TBO). ``own``: the run priced its own base and best
    design on compare's sweep (analysis/explore_full.compare_lines prints them under this line), so the line points
    there instead of quoting the 200-trial example's: a 16-trial run printed '1.10x on the example's best design'
    above its own best design's 'compare / coarse 1.04' (newuser50).

    >>> beyond({"serving": "both", "precisions": "native"})[:40]
    'the full batch grid, stages, TBO and EPL'
    >>> beyond({"serving": "both", "precisions": "native"}, own=True).endswith("this run's base and best design: compare / coarse below")
    True
    """
    if sw.get("precisions") == "native" and sw.get("serving") == "both":
        if own:
            return (
                "the full batch grid, stages, TBO and EPLB too: a little higher; this run's base and best design: "
                "compare / coarse below"
            )
        return (
            "the full batch grid, stages, TBO and EPLB too: a little higher, 1.00x on Jalapeño's DeepSeek-R1 "
            "8K/1K and 1.10x on the example's best design"
        )
    return (
        "every native precision, agg and disagg, the full batch grid and TBO: usually higher, 2.2x on Jalapeño's "
        "DeepSeek-R1 8K/1K, FP8 -> FP4 and disagg"
    )


def price_estimated(base: str) -> bool:
    """Whether the space's base system prices its chip-hour at an estimate (the catalog's ``estimate = true``,
    analysis/capacity.is_price_estimate): its designs' $/chip-hour follow the base's (specs/power.follow_variant)
    and carry report/cell_notes.ESTIMATE_MARK. False where the base no longer loads (a stored run's moved file)."""
    from jalapeno.analysis.capacity import is_price_estimate
    from jalapeno.errors import JalapenoError
    from jalapeno.specs.catalog import load_system

    try:
        return is_price_estimate(load_system(base))
    except JalapenoError:
        return False


def base_basis(base: str) -> str:
    """What the designs' $/chip-hour (the table's column, ``usd_per_mtok``) rests on: the base system's price
    basis (analysis/price_reason.system_basis), which each design's follows by its changed components
    (specs/power.follow_variant); "" where the base no longer loads (a stored run's moved file)."""
    from jalapeno.errors import JalapenoError
    from jalapeno.specs.catalog import load_system

    try:
        basis = system_basis(load_system(base))
    except JalapenoError:
        return ""
    return f"{basis}; each design's follows the base's by its changed HBM and power (specs/power.follow_variant)"


def moved_together_note(space, where: str) -> str | None:
    """The note ``explore`` prints where its trials move a key the space does not set along with one it searches
    (analysis/explore.Evaluator.design, specs/variants.moved_together): a searched level reached through its inner
    level's ports moves those ports with it where faster (their link power priced, specs/power.py: the example space
    derives ``levels.tray`` from ``levels.rack`` itself, so it gets none), a searched nominal HBM capacity the usable
    one the base states. None when no key moves (each parameter taken at the top of its range). ``where``: the space
    file, as the note names it."""
    from jalapeno.specs.catalog import load_system
    from jalapeno.specs.variants import moved_together

    top = {k: (max(p.choices) if p.choices is not None else p.high) for k, p in space.params.items()}
    try:
        ov = dict(space.overrides(top))
    except ValueError:  # a derived expression the loader refused already; nothing to say here
        return None
    moved = moved_together(load_system(space.base), ov)
    if not moved:
        return None
    return (
        f"note: {where}: each trial moves {', '.join(moved)} with the key it follows (a level's shared ports "
        "where the level is set faster than them, so their link power is priced, as audit's spec search does; "
        "usable HBM at the base's usable/nominal ratio with a searched capacity); derive the key in [derived] to "
        "set it otherwise (specs/variants.moved_together)"
    )
