"""The lines ``jalapeno plan`` prints about a plan's point and fleet: its latencies and bound, its users, the
workload's lengths, power per convention and energy per token, and the figures inside them printed so that
each ``n x X = total`` line checks by hand (:func:`factor_text`). Shared by the ``--target`` plan
(analysis/capacity.py), the ``--chips`` fleet (analysis/fleet.py) and the agentic plan (analysis/agentic_plan.py).

Split from analysis/capacity.py in round 49 (module line budget); analysis/capacity.py re-exports every name.
Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from jalapeno.analysis.records import PointRecord
from jalapeno.analysis.bound_words import bound_cell
from jalapeno.specs.hardware import System


def point_conditions(p: PointRecord) -> str:
    """A plan point's latencies and bound as ``plan`` prints them after its rate (``--target`` and ``--chips`` alike):
    ``(TTFT 688 ms, TPOT 17.8 ms, bound decode overhead; prefill compute (67% of chips))``."""
    return (
        f"(TTFT {p.ttft_s * 1e3:,.0f} ms, TPOT {p.tpot_s * 1e3:.1f} ms, bound "
        f"{bound_cell(p.bound, p.prefill_bound, p.prefill_chip_share)})"
    )


def output_rate_per_user(p: PointRecord) -> float:
    """One closed-loop user's mean output rate over whole requests at ``p``, tok/s: mean OSL / E2E (TTFT and
    queue included) = an instance's output tok/s / its users (concurrency); below the point's interactivity."""
    return p.output_throughput_per_chip * p.deployment.chips / max(p.concurrency, 1e-30)


def users_line(p: PointRecord, instances: int) -> str:
    """The users ``instances`` whole instances at ``p`` hold: the concurrency per instance (closed loop,
    InferenceX's conc) x instances, and one user's mean output rate (``output_rate_per_user``)."""
    u, r = float(p.concurrency), output_rate_per_user(p)
    return (
        f"users: {factor_text(u, instances, 0)} concurrent per instance (closed loop: each sends its next "
        f"request when one ends) x {instances:,} = {u * instances:,.0f}; one user averages {r:.1f} output tok/s "
        f"(mean OSL / E2E {p.e2e_s:,.1f} s, TTFT included)"
    )


def lengths_text(wl) -> str:
    """The workload's request lengths as a plan prints them: ISL/OSL are maxima when lengths are drawn
    uniformly in [r·L, L] (InferenceX's --random-range-ratio r = 0.8, docs/metrics.md §1), and every
    token rate counts the mean lengths.

    >>> from jalapeno.specs.workload import get_workload
    >>> lengths_text(get_workload("8k1k"))
    'uniform in [0.8·L, L] (InferenceX --random-range-ratio 0.8): mean ISL 7,373 / OSL 921.6 tokens per request; token rates count these means'
    """
    if wl.spread is None and wl.range_ratio == 1.0:
        return f"fixed: ISL {wl.isl:,} / OSL {wl.osl:,} tokens per request"
    shape = (
        "the trace's length spread"
        if wl.spread is not None
        else f"uniform in [{wl.range_ratio:g}·L, L] (InferenceX --random-range-ratio {wl.range_ratio:g})"
    )
    return (
        f"{shape}: mean ISL {wl.mean_isl:,.0f} / OSL {wl.mean_osl:,.1f} tokens per request; "
        "token rates count these means"
    )


def factor_text(x: float, n: float | Sequence[float], d0: int = 1, total_d: int = 0, per: float = 1.0) -> str:
    """``x`` as a plan line prints it in ``n x X = total`` (the total ``x·n/per`` printed to ``total_d``
    decimals): ``d0`` decimals, more (up to 6) while the printed figure times ``n`` would print another total,
    so the line checks by hand ('562.0 tok/s/chip x 732 chips = 411,360 tok/s' was 411,384 by hand: the rate
    is 561.967; '8,625 users per instance x 3 = 25,874'). ``n`` a sequence: the decimals every one of those
    products needs, so a figure that several lines multiply reads the same on each (plan printed one rate as
    1,173.6, 1,173.55 and 1,173.552 in one plan).

    >>> factor_text(562.0, 732), factor_text(561.967, 732), factor_text(8624.7, 3, 0), factor_text(64.0, 3, 0)
    ('562.0', '561.967', '8,624.7', '64')
    >>> factor_text(1234.5, 2196, 0, 1, 1e3)   # W per chip in 'chips x W = kW' (1,234 W x 2,196 = 2,709.9 kW)
    '1,234.5'
    >>> factor_text(1173.552, 196), factor_text(1173.552, 980), factor_text(1173.552, (196, 980))
    ('1,173.55', '1,173.552', '1,173.552')
    """
    d = d0
    for m in (n,) if isinstance(n, (int, float)) else n:
        shown = round(x * m / per, total_d)
        while d < 6 and round(round(x, d) * m / per, total_d) != shown:
            d += 1
    return f"{x:,.{d}f}"


def n_chips(n: int) -> str:
    """``n`` chips as a plan line counts them, one chip singular: a one-chip instance read "(1 chips per instance)"
    and "(1 chips at 29,412.4 tok/s/chip)" (newuser51; predict's '1 chips' went in round 47).

    >>> n_chips(1), n_chips(1152)
    ('1 chip', '1,152 chips')
    """
    return f"{n:,} chip" if n == 1 else f"{n:,} chips"


def n_instances(n: int) -> str:
    """``n`` instances as a plan's delivered line counts them, one singular: a one-instance plan read "delivered:
    1 instances x ..." (newuser55).

    >>> n_instances(1), n_instances(1152)
    ('1 instance', '1,152 instances')
    """
    return f"{n:,} instance" if n == 1 else f"{n:,} instances"


def rate_text(tok_per_s_per_chip: float) -> str:
    """A throughput per chip as a plan's text prints it: one decimal from 100 up, four significant figures below
    (plan printed ``1,155.9742`` tok/s/chip, the decimals its products needed, newuser49); the products are carried
    by whole-instance figures and ``--json`` holds the exact rate.

    >>> rate_text(1155.9742), rate_text(912.664), rate_text(45.6789), rate_text(0.5)
    ('1,156.0', '912.7', '45.68', '0.5000')
    """
    x = tok_per_s_per_chip
    return f"{x:,.1f}" if abs(x) >= 100 else f"{x:#.4g}"


def format_rate(tok_per_s: float) -> str:
    """A token rate for a plan line: ``1,000,000`` from 1,000 up, ``7.5`` or ``1e-30`` below.

    >>> format_rate(1e6), format_rate(7.5), format_rate(1e-30)
    ('1,000,000', '7.5', '1e-30')
    """
    return f"{tok_per_s:,.0f}" if tok_per_s >= 1000 else f"{tok_per_s:.4g}"


def estimate_mark(system: str, show: str, estimate: bool, source: str = "") -> str:
    """The mark a cost line carries after ``$X/chip-hour`` when the system's price is a derived estimate
    (``estimate = true`` on its file's ``cost.usd_per_chip_hour``), worded from that ``source``
    (analysis/price_reason.estimate_reason), else ""; the ``--target`` plan's cost line and the ``--chips`` fleet's.
    ``show`` is the ``jalapeno hardware show`` command that shows the system as priced
    (specs/catalog.hardware_show_command: a ``--set`` variant's options carried, as the power and price basis
    lines do, mend54); "" points at ``jalapeno hardware show SYSTEM``.
    Not the JSON ``price_basis`` field (analysis/price_reason.basis_text, every price's basis, published too).

    >>> estimate_mark("mi350x", "jalapeno hardware show mi350x", True, "assumption: as MI355X (InferenceX constants.ts)")
    ' (an estimate: as MI355X; `jalapeno hardware show mi350x`, cost.usd_per_chip_hour)'
    >>> estimate_mark("gb200-nvl72", "", False)
    ''
    """
    from jalapeno.analysis.price_reason import estimate_reason

    return (
        f" (an estimate: {estimate_reason(system, source)}; `{show or f'jalapeno hardware show {system}'}`, "
        "cost.usd_per_chip_hour)"
        if estimate
        else ""
    )


def is_price_estimate(system: System) -> bool:
    """Whether the system's $/chip-hour is a derived estimate (its source says ``(estimate)``)."""
    return "(estimate)" in system.sources.get("cost.usd_per_chip_hour", "")


def power_lines(chips: int, power_w: dict) -> list[str]:
    """One line per power convention: chips × W per chip = the fleet's kW (``power_w``: convention →
    (W per chip, its label, fleet W)); the ``--target`` plan's chips and the ``--chips`` fleet alike."""
    return [
        f"power ({c}: {label}): {chips:,} x {factor_text(w, chips, 0, 1, 1e3)} W = {total / 1e3:,.1f} kW"
        for c, (w, label, total) in power_w.items()
    ]


def per_kw_line(
    tok_per_s_per_chip: float, power_w: dict, kind: str, unit: str = "tok/s/chip", shown: str | None = None
) -> str:
    """The plan's energy line: tok/s per kW and J per token of its point under each power convention, all-in
    first (``power_w``: convention → (W per chip, its label, fleet W); tok/s per kW = tok/s/chip / kW per chip,
    J/token = W per chip / tok/s/chip, docs/metrics.md §3), for the ``kind`` of tokens the plan counts; ``unit``
    names the rate (a fleet's: per fleet chip, idle ones included); ``shown``: the rate's text where the plan's
    other lines print it (:func:`factor_text`), else one decimal.

    >>> per_kw_line(500.0, {"chip": (1400.0, "TDP", 0.0), "all-in": (2100.0, "all-in", 0.0)}, "output")
    'per kW (output tokens): 500.0 tok/s/chip / 2.10 kW all-in = 238.1 tok/s per kW (4.20 J/token); chip 1.40 kW: 357.1 (2.80 J/token)'
    """
    order = sorted(power_w, key=lambda c: c != "all-in")
    t = tok_per_s_per_chip
    first, rest = order[0], order[1:]
    w = power_w[first][0]
    line = (
        f"per kW ({kind} tokens): {shown or f'{t:,.1f}'} {unit} / {w / 1e3:.2f} kW {first} = {t / (w / 1e3):,.1f} tok/s "
        f"per kW ({_sig3(w / t)} J/token)"
    )
    return line + "".join(
        f"; {c} {power_w[c][0] / 1e3:.2f} kW: {t / (power_w[c][0] / 1e3):,.1f} ({_sig3(power_w[c][0] / t)} J/token)"
        for c in rest
    )


def _sig3(x: float) -> str:
    """Three significant figures (whole numbers from 100): plan printed 0.05 J/token to two decimals (newuser45).

    >>> _sig3(0.05123), _sig3(4.2), _sig3(1234.5)
    ('0.0512', '4.20', '1,234')
    """
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:#.3g}"


def count_basis(chips: int, packaging, bought_chips: int) -> str:
    """plan's one line saying what its figures count (ux54): the power, cost and per-kW lines the ``chips`` in use;
    whole boxes of the outermost packaging level (``packaging[-1]``: (name, chips per box, boxes)) hold
    ``bought_chips``, the provisioned line's (or the same chips, the boxes full), the basis of compare's per-rack
    line (analysis/power_cost.whole_boxes). "" without a packaging level.

    >>> count_basis(108, (("tray", 8, 14), ("rack", 128, 1)), 128)
    "basis: the power, cost and per-kW lines count the 108 chips in use; whole racks bought: the provisioned line's 1 rack x 128 = 128 chips (compare's per-rack basis)"
    >>> count_basis(288, (("rack", 72, 4),), 288)
    "basis: the power, cost and per-kW lines count the 288 chips in use; whole racks bought: the same 288 chips (4 racks full; compare's per-rack basis)"
    """
    if not packaging:
        return ""
    name, size, n = packaging[-1]
    box = name if n == 1 else f"{name}s"
    compare = "compare's per-rack basis" if name == "rack" else ""
    if bought_chips > chips:
        bought = f"the provisioned line's {n:,} {box} x {size:,} = {bought_chips:,} chips" + (
            f" ({compare})" if compare else ""
        )
    else:
        bought = f"the same {chips:,} chips ({n:,} {box} full" + (f"; {compare})" if compare else ")")
    return f"basis: the power, cost and per-kW lines count the {chips:,} chips in use; whole {name}s bought: {bought}"


def packaging_lines(chips: int, packaging, group_sizes: Sequence[int]) -> list[str]:
    """One line per packaging level (``packaging``: (name, chips per box, boxes), innermost first): ``racks: ceil(187 /
    72) = 3`` when the instances' worker groups tile the level, else the boxes that hold each group whole
    (``group_sizes``: one instance's worker groups, chips; analysis/packing.instance_groups) and why ceil(chips /
    size) is not the count. Shared by the fixed-length and the agentic plans (newuser55: the agentic plan printed
    'racks: 3 of 72 chips').

    >>> packaging_lines(187, (("rack", 72, 3),), [11])
    ['racks: ceil(187 / 72) = 3']
    """
    lines = []
    for name, size, n in packaging:
        if n == math.ceil(chips / size):
            lines.append(f"{name}s: ceil({chips:,} / {size}) = {n:,}")
        else:  # the groups do not tile the level: ceil(chips / size) would split one across two
            sizes = "/".join(f"{g}" for g in sorted(group_sizes, reverse=True))
            lines.append(
                f"{name}s: {n:,} (each worker's {sizes}-chip group whole in a {name} of {size}, where "
                f"its collectives are priced; ceil({chips:,} / {size}) = "
                f"{math.ceil(chips / size):,} would split groups across {name}s)"
            )
    return lines


def provisioned_lines(chips: int, packaging, power_w: dict, usd_per_chip_hour: float) -> list[str]:
    """The provisioned line (whole outermost boxes when they hold idle chips: their chips, $/hour at the per-chip
    price, all-in kW; analysis/power_cost.whole_boxes, the rule compare's per-rack line uses) and the basis line
    (:func:`count_basis`), for ``chips`` in use in ``packaging`` (innermost first); [] without a packaging level.
    Shared by the fixed-length and the agentic plans (newuser55).

    Hand check (GB200 NVL72, 187 chips in use, 3 racks; $2.21/chip-hour, 2,100 W all-in): 216 chips bought, 29 idle,
    216 x $2.21 = $477.36/hour, 216 x 2,100 W = 453.6 kW.

    >>> provisioned_lines(187, (("rack", 72, 3),), {"all-in": (2100.0, "all-in", 0.0)}, 2.21)[0]
    'provisioned (whole racks): 3 x 72 = 216 chips, 29 idle; cost 216 x $2.21 = $477.36/hour; all-in power 216 x 2,100 W = 453.6 kW'
    """
    from jalapeno.analysis.power_cost import whole_boxes

    if not packaging:
        return []
    name, size, n = packaging[-1]
    w = power_w.get("all-in", (None,))[0]
    prov = whole_boxes(chips, size, n, w)
    lines = []
    if prov["chips"] > chips:
        power = (
            ""
            if prov["all_in_power_kw"] is None
            else f"; all-in power {prov['chips']:,} x {factor_text(w, prov['chips'], 0, 1, 1e3)} "
            f"W = {prov['all_in_power_kw']:,.1f} kW"
        )
        lines.append(
            f"provisioned (whole {name}s): {n:,} x {size} = {prov['chips']:,} chips, {prov['idle_chips']:,} idle; "
            f"cost {prov['chips']:,} x ${factor_text(usd_per_chip_hour, prov['chips'], 2, 2)} = "
            f"${prov['chips'] * usd_per_chip_hour:,.2f}/hour{power}"
        )
    return lines + [count_basis(chips, packaging, prov["chips"])]
