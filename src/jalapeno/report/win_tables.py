"""compare's "where it wins" and "why there" tables, and its per-kW ratio under each power convention (ux51).

The ratios table reads a comparison at a few speeds; these answer the analyst's next three questions from the same
record (analysis/records.ComparisonRecord): over which per-user speeds each system beats the baseline, per chip, per
kW and per $ (``Ratios.where_wins``, analysis/win_ranges.win_ranges); what bounds each system at each ``--at`` speed
(the iso rows' ``bound_a``, analysis/win_ranges.iso_bounds); and what the per-kW peak ratio is under each power
convention, not just the one compared under (the headlines' ``peak_tok_s_per_kw``): docs/metrics.md §3, §6.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.table import Table

from jalapeno.report.cell_notes import cap_caption

from jalapeno.analysis.bound_words import with_cap
from jalapeno.analysis.power_cost import CONVENTIONS  # chip, sustained, all-in: the order the per-kW line names them

if TYPE_CHECKING:
    from jalapeno.analysis.records import ComparisonRecord

#: the ratio kinds of a where-wins cell, in the table's column order, with their headers
WIN_KINDS = (("throughput_per_chip", "per chip"), ("tok_s_per_kw", "per kW ({conv})"), ("tokens_per_usd", "per $"))


def _speed(x: float) -> str:
    """A per-user speed, tok/s/user, for a range: whole numbers from 10 up, one decimal below.

    >>> _speed(11.61), _speed(7.64), _speed(136.6)
    ('12', '7.6', '137')
    """
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"


def _range(lo: float, hi: float) -> str:
    """A speed range, tok/s/user, ``lo-hi`` as :func:`_speed` writes them, with one decimal where that would print
    the two ends alike (a sliver between two crossings).

    >>> _range(11.6, 72.6), _range(83.9, 84.2)
    ('12-73', '83.9-84.2')
    """
    a, b = _speed(lo), _speed(hi)
    return f"{lo:.1f}-{hi:.1f}" if a == b and lo != hi else f"{a}-{b}"


def segments_text(segments: Sequence[Mapping]) -> str:
    """One where-wins cell: each speed range with its result and the ratio's span over it (A over B).

    >>> segments_text([{"from": 11.6, "to": 72.6, "result": "loses", "ratio_min": 0.76, "ratio_max": 0.952},
    ...                {"from": 72.6, "to": 76.1, "result": "even", "ratio_min": 0.952, "ratio_max": 1.05},
    ...                {"from": 76.1, "to": 84.2, "result": "wins", "ratio_min": 1.05, "ratio_max": 1.31},
    ...                {"from": 84.2, "to": 136.6, "result": "tail", "ratio_min": 1.2, "ratio_max": 3.52}])
    'loses 12-73 (0.76-0.95x); even 73-76; wins 76-84 (1.05-1.31x); in the tail 84-137 (1.20-3.52x)'
    """
    parts = []
    for s in segments:
        span = "" if s["result"] == "even" else f" ({s['ratio_min']:.2f}-{s['ratio_max']:.2f}x)"
        what = "in the tail" if s["result"] == "tail" else s["result"]
        parts.append(f"{what} {_range(s['from'], s['to'])}{span}")
    return "; ".join(parts)


def _reach_text(w: Mapping, name: str, baseline: str) -> str:
    """The where-wins table's last cell: where ratios enter a frontier's tail, and who runs on alone."""
    out = []
    only = w.get("only")
    if only:
        who = name if only["who"] == "this" else baseline
        out.append(f"above {_speed(only['from'])} only {who} (to {_speed(only['to'])})")
    return "; ".join(out) or "both to the same speed"


def where_wins_parts(d: ComparisonRecord) -> tuple[str, list[str], list[list[str]], str] | None:
    """The where-it-wins table as text (the terminal's rich table and the report page alike): title, headers, rows
    (one per system compared with the baseline: its speeds compared and, per chip, per kW and per $, the speed ranges
    where it wins, loses or is even, analysis/win_ranges.EVEN_BAND) and caption; None when no system carries
    ``where_wins`` (the baseline alone)."""
    rows = [(n, c.where_wins) for n, c in d.comparisons.items() if getattr(c, "where_wins", None)]
    if not rows:
        return None
    even = rows[0][1].get("even_within", 0.05)
    heads = ["system", "speeds compared", *(h.format(conv=d.power_convention) for _, h in WIN_KINDS), "faster reach"]
    cells = []
    for n, w in rows:
        cells.append(
            [n, _range(w["from"], w["to"]), *(segments_text(w[k]) for k, _ in WIN_KINDS), _reach_text(w, n, d.baseline)]
        )
        ends = (getattr(d.comparisons[n], "bands", None) or {}).get("where_wins")
        if ends:  # with --bands: the same at the band's low and high ends (the ratios table's pairing)
            lo, hi = ends["low"], ends["high"]
            cells.append(
                [
                    f"{n} band",
                    f"low {_range(lo['from'], lo['to'])}; high {_range(hi['from'], hi['to'])}",
                    *(f"low: {segments_text(lo[k])} · high: {segments_text(hi[k])}" for k, _ in WIN_KINDS),
                    f"low: {_reach_text(lo, n, d.baseline)} · high: {_reach_text(hi, n, d.baseline)}",
                ]
            )
    caption = (
        f"wins: over that range the ratio (system over {d.baseline}) stays above {1 + even:.2f}x; loses: below "
        f"1/{1 + even:.2f}; even: between (within {even:.0%}, about the model's median error on throughput, "
        "docs/validation.md), each with the ratio's span (its true extremes: a stretch that crosses back by at most "
        "1%, or narrower than 1% of the speed, is read with its neighbours); in the tail: past there a frontier is within 10% of its "
        "last point or below 10% of its peak, where ratios swing (the ratios table's end flag): one span, "
        "its crossings not read; speeds compared: from the slower first frontier point (a frontier reads its peak "
        "below its first point) to the slower last one; faster reach: the speeds only one system reaches; "
        "crossings solved exactly on the log-log interpolation (analysis/win_ranges.py)"
    )
    if any(r[0].endswith(" band") for r in cells):
        caption += (
            "; <system> band (--bands): the same with both systems at their low efficiency sets (low) and at "
            "their high sets (high), crossed where a band is a measured error, as the ratios table's band rows"
        )
    return f"where it wins vs {d.baseline}: per-user speed ranges (tok/s/user) by ratio", heads, cells, caption


def bound_parts(d: ComparisonRecord) -> tuple[str, list[str], list[list[str]], str] | None:
    """Why each system stands where it does at each ``--at`` speed, as text (title, headers, rows, caption): the
    bound of its frontier point nearest the speed (the iso rows' ``bound_a``), with that point's speed; None when
    the record carries no bounds (an older record)."""
    first = next(iter(d.comparisons.values()), None)
    rows0 = first.iso_interactivity.get("throughput_per_chip", ()) if first is not None else ()
    if not rows0 or "bound_a" not in rows0[0]:
        return None
    heads = ["system", *(f"@{r['x']:g} tok/s/user" for r in rows0)]
    cells = []
    for n, c in d.comparisons.items():
        frontier = d.systems[n].frontier
        cells.append(
            [n]
            + [
                "unreachable"
                if r.get("point_a") is None
                else f"{with_cap(r['bound_a'], frontier[r['point_a']].limit)}, at {frontier[r['point_a']].interactivity:.0f}"
                for r in c.iso_interactivity["throughput_per_chip"]
            ]
        )
    caption = (
        "the bound of the frontier point nearest each speed in log tok/s/user (one end of the interpolation the "
        "ratios read), at S: that point's tok/s/user; decode X; prefill Y (S of chips): a disaggregated point's "
        "decode and prefill steps; the deployments are in the tiers table (--tiers NAME=SPEED)"
    )
    limits = {
        frontier[r["point_a"]].limit
        for n, c in d.comparisons.items()
        for frontier in [d.systems[n].frontier]
        for r in c.iso_interactivity["throughput_per_chip"]
        if r.get("point_a") is not None
    }
    if cap_line := cap_caption(limits):
        caption += "; " + cap_line
    return "why: the bound at each speed (the frontier point nearest it)", heads, cells, caption


def _rich(parts: tuple[str, list[str], list[list[str]], str] | None) -> Table | None:
    if parts is None:
        return None
    title, heads, rows, caption = parts
    t = Table(title=title, caption=caption)
    t.add_column(heads[0], no_wrap=True, min_width=16)
    for h in heads[1:]:
        t.add_column(h, overflow="fold")
    for r in rows:
        t.add_row(*r)
    return t


def where_wins_table(d: ComparisonRecord) -> Table | None:
    """:func:`where_wins_parts` as a rich table (compare's terminal output), or None."""
    return _rich(where_wins_parts(d))


def bound_table(d: ComparisonRecord) -> Table | None:
    """:func:`bound_parts` as a rich table (compare's terminal output), or None."""
    return _rich(bound_parts(d))


def _tdp(h, conv: str) -> str:
    """`` TDP`` where a system's sustained figure is its TDP (no sustained figure published: the power label says
    so, analysis/power_cost), else ``""``.

    >>> from types import SimpleNamespace as N
    >>> _tdp(N(power_labels={"sustained": "chip TDP (no sustained figure published)"}), "sustained")
    ' TDP'
    """
    return " TDP" if conv == "sustained" and "no sustained" in h.power_labels.get(conv, "") else ""


def power_ratio_line(d: ComparisonRecord) -> str | None:
    """Each system's peak tok/s/kW over the baseline's under every power convention, with the watts per chip each
    divides by (peak tok/s/chip / peak tok/s/kW): a per-kW ratio at any speed is the per-chip one times the
    baseline's watts over the system's under that convention. None with the baseline alone.

    e.g. ``per kW at peak vs gb300-nvl72 under each power convention (system W / baseline W per chip): jalapeno chip
    1.56x (700 / 1,400), sustained 1.98x (550 / 1,400), all-in 1.42x (1,150 / 2,100)``
    """
    base = d.systems[d.baseline].headline

    def watts(h, conv: str) -> float:
        kw = h.peak_tok_s_per_kw.get(conv, 0.0)
        return h.peak_throughput_per_chip / kw * 1e3 if kw > 0 else float("nan")

    parts = []
    for n, s in d.systems.items():
        if n == d.baseline:
            continue
        h = s.headline
        cells = []
        for conv in CONVENTIONS:
            a, b = h.peak_tok_s_per_kw.get(conv, 0.0), base.peak_tok_s_per_kw.get(conv, 0.0)
            if a > 0 and b > 0:
                cells.append(
                    f"{conv} {a / b:.2f}x ({watts(h, conv):,.0f}{_tdp(h, conv)} / "
                    f"{watts(base, conv):,.0f}{_tdp(base, conv)})"
                )
        if cells:
            parts.append(f"{n} " + ", ".join(cells))
    if not parts:
        return None
    return (
        f"per kW at peak vs {d.baseline} under each power convention (system W / baseline W per chip; TDP: no "
        "sustained figure published; --power picks the one the tables use; at any speed: the per-chip ratio x the "
        "baseline's W / the system's): " + "; ".join(parts)
    )


def _audit_precision(d: ComparisonRecord, n: str, r: Mapping) -> str | None:
    """The precision preset both sides' nearest frontier points run at the row's speed (compare sweeps each
    system's native precisions and keeps the best; audit prices one, the model's release unless ``-p``), or None
    where they differ, a point is missing or the name is no preset ``-p`` takes."""
    from jalapeno.errors import JalapenoError
    from jalapeno.specs.formats import get_precision

    names = set()
    for side, m in (("a", n), ("b", d.baseline)):
        i = r.get(f"point_{side}")
        fr = d.systems[m].frontier if m in d.systems else ()
        if i is None or i >= len(fr):
            return None
        names.add(fr[i].deployment.precision.name)
    if len(names) != 1:
        return None
    name = names.pop()
    try:
        get_precision(name)
    except (JalapenoError, KeyError, ValueError):
        return None
    return name


def audit_hints(d: ComparisonRecord, workload: str | None, model: str, typed: Mapping[str, str]) -> list[str]:
    """For each system that loses to the baseline per chip at an ``--at`` speed (below 1/1.05, not in a frontier's
    tail), the ``jalapeno audit`` command that asks what it would need to match there (each parameter and spec
    alone, docs/audit.md), at the speed of its lowest such ratio, with ``-p`` where both sides' nearest points run
    one precision (audit prices one). ``workload``: the named workload compared (``8k1k``, ...), or None
    (``--isl/--osl``: no hint, audit takes a named one); ``model``: the model as given; ``typed``: system name ->
    the name or path as given.

    >>> from types import SimpleNamespace as N
    >>> rows = [{"x": 35.0, "ratio": 0.78, "at_frontier_end": False}, {"x": 60.0, "ratio": 0.82,
    ...          "at_frontier_end": False}, {"x": 100.0, "ratio": 0.5, "at_frontier_end": True}]
    >>> d = N(baseline="gb300-nvl72", model="deepseek-r1", systems={},
    ...       comparisons={"jalapeno": N(iso_interactivity={"throughput_per_chip": rows})})
    >>> print(audit_hints(d, "8k1k", "deepseek-r1", {})[0])  # doctest: +NORMALIZE_WHITESPACE
    what jalapeno would need to match gb300-nvl72 per chip at 35 tok/s/user (0.78x here): jalapeno audit --system
    jalapeno --baseline gb300-nvl72 --model deepseek-r1 --workload 8k1k --claim throughput_per_chip_ratio@35=1.0
    """
    if not workload:
        return []
    out = []
    for n, c in d.comparisons.items():
        if n == d.baseline:
            continue
        rows = [
            r
            for r in c.iso_interactivity["throughput_per_chip"]
            if not r["at_frontier_end"] and r["ratio"] == r["ratio"] and r["ratio"] < 1 / (1 + 0.05)
        ]
        if not rows:
            continue
        r = min(rows, key=lambda r: r["ratio"])
        prec = _audit_precision(d, n, r)
        out.append(
            f"what {n} would need to match {d.baseline} per chip at {r['x']:g} tok/s/user ({r['ratio']:.2f}x here): "
            f"jalapeno audit --system {typed.get(n, n)} --baseline {typed.get(d.baseline, d.baseline)} "
            f"--model {model} --workload {workload}"
            + (f" -p {prec}" if prec else "")
            + f" --claim throughput_per_chip_ratio@{r['x']:g}=1.0"
        )
    return out


def rack_line(systems, d: ComparisonRecord, band_frontiers: Mapping | None = None) -> str | None:
    """A rack's all-in (facility, provisioned) power and what a rack's worth of chips serves at each system's peak
    and at each tier floor: chips per rack (the system file's ``rack`` level) x all-in W per chip, x the peak's and
    each reachable floor tier's tok/s per chip (input + output), and the users a rack serves there: its output tok/s
    over the tier's tok/s/user, the streams it decodes at once (output tok/s = in+out x the peak's output share, the
    workload's mean OSL / (ISL + OSL): one share for every point of a fixed-length workload). ``systems``: the compared
    :class:`~jalapeno.specs.hardware.System` objects; None when none has a rack level (8-GPU nodes). A capacity
    planner's racks for N users at a tier: N / users, rounded up (ux52). ``band_frontiers`` (``--bands``: system ->
    {"low", "high"} FrontierRecords, Comparison.band_frontiers; a derived system's low/high efficiency sets, a
    measured one's frontier at its validate p10/p90 error, None where that end is the calibrated frontier): each
    tier's tok/s and users also read on those frontiers, ``(LO to HI)``, the planner's uncertainty on racks.

    e.g. ``per rack (...): jalapeno 128 chips x 1,150 W = 147 kW, 1.86 M tok/s at peak, at need (>= 50 tok/s/user)
    1.48 M tok/s, 3,289 users at 50 tok/s/user; gb300-nvl72 72 chips x 2,100 W = 151 kW, 1.35 M tok/s at peak, ...``
    """
    parts = rack_parts(systems, d, band_frontiers)
    return f"{rack_caption(bool(band_frontiers))}: " + "; ".join(parts.values()) if parts else None


def rack_caption(bands: bool) -> str:
    """The words before :func:`rack_line`'s figures: ``per rack (how each figure is read)``; ``bands``: with the
    ``(LO to HI)`` reading of --bands."""
    return (
        "per rack (a whole rack bought: every chip of it, idle or not, at the all-in provisioned power, the "
        "facility's; a rack's chips at the peak's tok/s per chip and at each "
        "tier's, input + output; users: the rack's output tok/s over the tier's tok/s/user, the streams it decodes at "
        "once: racks for N users at a tier = N / users, rounded up; `jalapeno plan` sizes a fleet in whole instances, "
        "counts the users waiting for their first token too, and prints both bases: the chips in use and the whole "
        "racks bought; (instances of N chips): the deployment behind that figure runs instances larger than a "
        "rack, a smaller fleet runs another at a lower tok/s per chip (`jalapeno plan`)"
        + ("; (LO to HI): the same tier on the system's band frontiers, --bands" if bands else "")
        + ")"
    )


def rack_power(system) -> tuple[int, str] | None:
    """A rack of ``system`` and its all-in (facility, provisioned) power: ``(chips, "NAME C chips x W W = K kW")``,
    chips from the system file's ``rack`` level x :attr:`~jalapeno.specs.hardware.System.allin_power_w_per_chip`;
    None without a rack level (8-GPU nodes). The head of :func:`rack_parts`' and the agentic compare's rack lines.

    >>> from types import SimpleNamespace as N
    >>> rack_power(N(name="x", levels=[N(name="rack", chips=72)], allin_power_w_per_chip=2100.0))
    (72, 'x 72 chips x 2,100 W = 151 kW')
    """
    from jalapeno.analysis.power_cost import whole_boxes

    rack = [lv for lv in system.levels if lv.name == "rack"]
    if not rack:
        return None
    n, w = rack[0].chips, system.allin_power_w_per_chip
    kw = whole_boxes(n, n, 1, w)["all_in_power_kw"]  # plan's provisioned line counts a rack the same way (ux54)
    return n, f"{system.name} {n} chips x {w:,.0f} W = {kw:,.0f} kW"


def rack_parts(systems, d: ComparisonRecord, band_frontiers: Mapping | None = None) -> dict[str, str]:
    """:func:`rack_line`'s figures, one text per system with a rack level and a frontier, in ``systems``' order:
    ``{name: "NAME C chips x W W = K kW, T M tok/s at peak, at TIER ..."}`` (compare --json's ``per_rack``, and the
    multi-workload compare's per-workload rack lines, followup52)."""
    parts = {}
    for s in systems:
        rack = rack_power(s)
        fr = d.systems.get(s.name)
        if rack is None or fr is None:
            continue
        n, head = rack
        tput = fr.headline.peak_throughput_per_chip * n
        pts = getattr(fr, "frontier", ())
        peak = max(pts, key=lambda p: p.throughput_per_chip, default=None)
        parts[s.name] = (
            f"{head}, {tput / 1e6:,.2f} M tok/s at peak" + _larger_instance(peak.deployment.chips if peak else 0, n)
        ) + "".join(
            _rack_tier(t, v, n, fr.headline, _band_tiers((band_frontiers or {}).get(s.name), t, v), pts)
            for t, v in _floor_tiers(d, s.name)
        )
    return parts


def rack_json(systems, d: ComparisonRecord, band_frontiers: Mapping | None = None) -> dict | None:
    """compare --json's ``per_rack``: ``{"caption": rack_caption, "systems": rack_parts}``, the per-rack line's words
    and each system's figures as the terminal prints them; None when no system has a rack level (followup52)."""
    parts = rack_parts(systems, d, band_frontiers)
    return {"caption": rack_caption(bool(band_frontiers)), "systems": parts} if parts else None


def _floor_tiers(d: ComparisonRecord, name: str) -> list[tuple[str, Mapping]]:
    """The system's floor tiers (not ``batch``: the peak), in the tiers table's order; none without its ratios."""
    c = getattr(d, "comparisons", {}).get(name)
    return [] if c is None else [(t, v) for t, v in c.tiers.items() if t != "batch"]


def _band_tiers(ends: Mapping | None, tier: str, v: Mapping) -> list[Mapping]:
    """The tier ``tier`` (floor of ``v``) read on each band end's frontier (analysis/compare.tiers on its points'
    tok/s/user and tok/s/chip), the reachable ones; [] without a band (``ends`` None, or both ends the calibrated
    frontier)."""
    if not ends or v["floor_tok_per_s_per_user"] is None:
        return []
    from jalapeno.analysis.compare import build_frontier, tiers

    out = []
    for rec in (ends.get(w) for w in ("low", "high")):
        if rec is None or not rec.frontier:
            continue
        f = build_frontier([p.interactivity for p in rec.frontier], [p.throughput_per_chip for p in rec.frontier])
        t = tiers(f, {tier: v["floor_tok_per_s_per_user"]})[tier]
        if t["status"] != "unreachable":
            out.append(t)
    return out


def _instance_chips(frontier: Sequence, v: Mapping) -> int:
    """Chips of one instance of the deployment that runs tier ``v`` (analysis/compare.tiers) on ``frontier`` (its
    PointRecords), the larger of the two an interpolated tier reads; 0 when unknown (ux54)."""
    x = v["interactivity"]
    pts = sorted(frontier, key=lambda p: p.interactivity)
    above = [p for p in pts if p.interactivity >= x * (1 - 1e-9)][:1]
    below = [p for p in pts if p.interactivity < x][-1:] if v["status"] == "interpolated" else []
    return max((int(p.deployment.chips) for p in above + below), default=0)


def _rack_tier(tier: str, v: Mapping, chips: int, headline, band: Sequence[Mapping] = (), frontier=()) -> str:
    """``, at NAME (>= F tok/s/user) T M tok/s, U users at S tok/s/user`` for one tier of a rack of ``chips``
    (``v``: the tier's record, analysis/compare.tiers; ``headline``: the system's, for the output share); with
    ``band`` (the same tier on the band's frontiers, :func:`_band_tiers`), each figure's ``(LO to HI)`` over the
    calibrated value and the band's. With ``frontier`` (the system's points), a tier whose deployment's instance is
    larger than the rack says so, ``(instances of N chips)`` (:func:`rack_caption` says what it means): the rack's
    figures hold only for a fleet of whole such instances (ux54: compare read 3,289 DeepSeek-R1
    users a Jalapeño rack at 50 tok/s/user from 1,310-chip instances, where plan sizes 5,000 users on 290 chips).

    >>> from types import SimpleNamespace as N
    >>> h = N(peak_throughput_per_chip=9000.0, peak_output_throughput_per_chip=1000.0)
    >>> v = {"status": "interpolated", "throughput": 9000.0, "interactivity": 50.0, "floor_tok_per_s_per_user": 50.0}
    >>> _rack_tier("need", v, 10, h)
    ', at need (>= 50 tok/s/user) 0.09 M tok/s, 200 users at 50 tok/s/user'
    >>> _rack_tier("need", v, 10, h, [{**v, "throughput": 7200.0}, {**v, "throughput": 9900.0, "interactivity": 55.0}])
    ', at need (>= 50 tok/s/user) 0.09 M tok/s (0.07 to 0.10), 200 users (160 to 200) at 50 tok/s/user'
    """
    head = f", at {tier} (>= {v['floor_tok_per_s_per_user']:g} tok/s/user)"
    if v["status"] == "unreachable":
        return head + " unreachable"
    share = headline.peak_output_throughput_per_chip / headline.peak_throughput_per_chip
    tput, x = v["throughput"] * chips, v["interactivity"]
    tputs = [tput] + [b["throughput"] * chips for b in band]
    users = [tput * share / x] + [b["throughput"] * chips * share / b["interactivity"] for b in band]

    def span(vals: list[float], fmt) -> str:
        return f" ({fmt(min(vals))} to {fmt(max(vals))})" if band else ""

    return (
        head
        + f" {tput / 1e6:,.2f} M tok/s"
        + span(tputs, lambda t: f"{t / 1e6:,.2f}")
        + f", {users[0]:,.0f} users"
        + span(users, lambda u: f"{u:,.0f}")
        + f" at {x:.0f} tok/s/user"
        + _larger_instance(_instance_chips(frontier, v), chips)
    )


def _larger_instance(inst: int, chips: int) -> str:
    """`` (instances of N chips)`` when the deployment behind a rack figure runs instances of more chips than
    the rack's ``chips`` (a fleet smaller than one cannot run it at that tok/s/chip; ux54), else ""."""
    if inst <= chips:
        return ""
    return f" (instances of {inst:,} chips)"


def spec_line(systems) -> str | None:
    """The compared systems whose specs no vendor has verified (the system file's ``vendor_verified = false``: its
    figures as publicly reported or inferred, named assumptions each with its source), so that an analyst auditing a
    claim reads, beside the figures, which rest on unverified specs (ux52: only ``hardware show`` said so); None when
    every one is verified. ``systems``: :class:`~jalapeno.specs.hardware.System` objects.

    >>> from types import SimpleNamespace as N
    >>> spec_line([N(name="jalapeno", vendor_verified=False), N(name="b200", vendor_verified=True)])[:52]
    'specs not vendor-verified: jalapeno (the system file'
    """
    names = [s.name for s in systems if not s.vendor_verified]
    if not names:
        return None
    return (
        f"specs not vendor-verified: {', '.join(names)} (the system file marks vendor_verified = false: its figures "
        "as publicly reported or inferred, each a named assumption with its source in `jalapeno hardware show NAME`)"
    )
