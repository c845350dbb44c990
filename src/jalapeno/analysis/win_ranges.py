"""Where one system's frontier beats another's, and what bounds each at a speed (``compare``; ux51).

The ratios table reads a comparison at three speeds; an analyst asks *over which per-user speeds* a system wins.
Both frontiers are interpolated log-log (:func:`jalapeno.analysis.frontier.interp_frontier`): a power law between
neighbouring points, the peak below the first one. So the log of the ratio y_a(x) / y_b(x) is linear in log x
between consecutive points of *either* frontier, and where it crosses 0 (the ratio crosses 1) is solved exactly on
its piece — no grid, no tolerance beyond float rounding.

:func:`win_ranges` gives those speed ranges for the three ratios the comparison takes (per chip, per kW, per $: the
same frontiers times one constant each), with where the ratios enter a frontier's tail (analysis/ratio_bands:
within ``END_RTOL`` of a frontier's last point, or below ``TAIL_FRACTION`` of its peak, where ratios swing) and
which system alone runs past the other's fastest point. :func:`nearest_points` names the frontier point nearest
each queried speed, whose bound says *why* a system stands where it does there (docs/metrics.md §6).

Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from jalapeno.analysis.compare import Frontier

#: a ratio within this fraction of 1 (1/1.05 to 1.05) reads ``even``: a presentation convention, not a fit. The model's
#: held-out median error on throughput per chip and on per-user speed is 5-6% (docs/validation.md, "Results against
#: the goals"; InferenceX 5.3%, aiconfigurator 5.8% at round 50), so a 5% lead is within one system's typical
#: error and is not called a win; it also keeps a ratio that wanders around 1 from reading as many short wins.
EVEN_BAND = 0.05
#: a stretch that crosses an edge of the even band by no more than this (relative) and comes back takes its
#: neighbours' result: a ratio wandering along 0.95 would otherwise read as a run of one-point wins and losses
#: (Kimi K2.5 8K/1K, GB200 against GB300 per chip: eight stretches between 32 and 78 tok/s/user). A presentation
#: convention; each segment's ratio_min / ratio_max still give the true extremes.
HYSTERESIS = 0.01
#: ... and so does a stretch narrower than this (relative speed, to / from - 1) between two like ones: where a
#: frontier drops steeply at one speed (GB300 NVL72's two points at 62.8 tok/s/user on Kimi K2.5) the ratio
#: crosses and recrosses within a fraction of a tok/s/user, far inside the model's 5-6% error on per-user speed
MIN_STRETCH = 0.01


def _tail_x(f: Frontier, end_rtol: float, tail_fraction: float) -> float:
    """The lowest speed, tok/s/user, from which ``f`` is in its tail: ``(1 - end_rtol)`` of its last point's x,
    or where its throughput falls below ``tail_fraction`` of its peak (solved on the log-log piece), the lower.

    >>> round(_tail_x(Frontier(np.array([10.0, 100.0]), np.array([100.0, 1.0])), 0.1, 0.1), 6)  # 10 * 10 ** 0.5
    31.622777
    """
    x_end = float(f.x[-1]) * (1.0 - end_rtol)
    t = tail_fraction * float(f.y[0])
    below = np.nonzero(f.y < t)[0]
    if below.size == 0:
        return x_end
    j = int(below[0])  # j >= 1: y[0] is the peak, never below a fraction of itself
    x0, x1, y0, y1 = (float(v) for v in (f.x[j - 1], f.x[j], f.y[j - 1], f.y[j]))
    x_t = x0 * math.exp(math.log(t / y0) * math.log(x1 / x0) / math.log(y1 / y0))
    return min(x_end, x_t)


def _sorted_distinct(v: np.ndarray) -> np.ndarray:
    """``np.unique(v)`` of a 1-D float array: its values sorted, each once (NaNs, sorted last, kept once, as
    np.unique's ``equal_nan``), the same array. np.unique first asks ``np.ma.is_masked``, whose first call imports
    numpy.ma (~10-30 ms); in ``compare`` these knots were its only caller, on the serial path after the sweeps
    (round 55, code55). Equal floats have equal bits here (speeds and bounds > 0: no -0.0 beside 0.0), so which
    duplicate is kept does not matter.

    >>> _sorted_distinct(np.array([3.0, 1.0, 3.0, 2.0, 1.0])).tolist()
    [1.0, 2.0, 3.0]
    >>> _sorted_distinct(np.array([np.nan, 2.0, np.nan])).tolist()
    [2.0, nan]
    """
    s = np.sort(v)
    keep = np.empty(s.shape, dtype=bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    if s.size and np.isnan(s[-1]):  # NaNs sort last: keep the first
        keep[int(np.searchsorted(s, s[-1], side="left")) + 1 :] = False
    return s[keep]


def _segments(a: Frontier, b: Frontier, scale: float, lo: float, hi: float, even: float) -> list[dict]:
    """The speed ranges of ``lo``-``hi`` over which ``scale * y_a / y_b`` is above ``1 + even`` (wins), below
    ``1 / (1 + even)`` (loses) or between (even), merged where consecutive ranges agree."""
    knots = _sorted_distinct(np.concatenate(([lo, hi], a.x[(a.x > lo) & (a.x < hi)], b.x[(b.x > lo) & (b.x < hi)])))
    lk = np.log(knots)  # interp_frontier's log-log rule (the peak below the first point), without its per-call checks:
    la = np.interp(lk, np.log(a.x), np.log(a.y))  # a Frontier's arrays are checked when it is built
    lb = np.interp(lk, np.log(b.x), np.log(b.y))
    lr = math.log(scale) + la - lb  # log ratio, linear in log x between knots
    e = math.log1p(even)

    def side(l_mid: float) -> str:
        return "wins" if l_mid > e else ("loses" if l_mid < -e else "even")

    xs, ls = [float(knots[0])], [float(lr[0])]
    for i in range(len(knots) - 1):
        l0, l1 = float(lr[i]), float(lr[i + 1])
        lx0, lx1 = math.log(knots[i]), math.log(knots[i + 1])
        cuts = sorted((lev - l0) / (l1 - l0) for lev in (-e, e) if l0 != l1 and 0 < (lev - l0) / (l1 - l0) < 1)
        for t in cuts:  # where the ratio crosses an edge of the even band inside this piece
            xs.append(math.exp(lx0 + t * (lx1 - lx0)))
            ls.append(l0 + t * (l1 - l0))
        xs.append(float(knots[i + 1]))
        ls.append(l1)
    if len(xs) == 1:  # the two frontiers share one speed
        r = math.exp(ls[0])
        return [{"from": xs[0], "to": xs[0], "result": side(ls[0]), "ratio_min": r, "ratio_max": r}]
    out: list[dict] = []
    for i in range(len(xs) - 1):
        res = side(0.5 * (ls[i] + ls[i + 1]))
        r0, r1 = math.exp(ls[i]), math.exp(ls[i + 1])
        if out and out[-1]["result"] == res:
            seg = out[-1]
            seg["to"] = xs[i + 1]
            seg["ratio_min"], seg["ratio_max"] = min(seg["ratio_min"], r0, r1), max(seg["ratio_max"], r0, r1)
        elif xs[i + 1] > xs[i]:
            out.append(
                {"from": xs[i], "to": xs[i + 1], "result": res, "ratio_min": min(r0, r1), "ratio_max": max(r0, r1)}
            )
    return _settle(out, e)


def _past_edge(seg: Mapping, into: str, e: float) -> float:
    """How far (in log ratio) ``seg`` reaches past the edge of the even band that separates it from ``into``."""
    lo, hi = math.log(seg["ratio_min"]), math.log(seg["ratio_max"])
    return {
        ("loses", "even"): -e - lo,
        ("wins", "even"): hi - e,
        ("even", "loses"): hi + e,
        ("even", "wins"): e - lo,
    }.get((seg["result"], into), math.inf)


def _settle(segs: list[dict], e: float) -> list[dict]:
    """``segs`` with each stretch that crosses an edge of the even band by no more than :data:`HYSTERESIS` and back,
    or is narrower than :data:`MIN_STRETCH` (both its neighbours alike, or its one neighbour at an end), given its
    neighbours' result, and like neighbours merged: a ratio wandering along 0.95 read 'loses 37-38 (0.95-0.95x);
    even 38-48; loses 48-49'."""
    h = math.log1p(HYSTERESIS)
    changed = True
    while changed and len(segs) > 1:
        changed = False
        for i, seg in enumerate(segs):
            near = {x["result"] for x in (segs[i - 1] if i else None, segs[i + 1] if i + 1 < len(segs) else None) if x}
            if (
                len(near) == 1
                and seg["result"] not in near
                and (_past_edge(seg, into := next(iter(near)), e) <= h or seg["to"] <= seg["from"] * (1 + MIN_STRETCH))
            ):
                seg["result"] = into
                changed = True
        merged: list[dict] = []
        for seg in segs:
            if merged and merged[-1]["result"] == seg["result"]:
                m = merged[-1]
                m["to"] = seg["to"]
                m["ratio_min"], m["ratio_max"] = (
                    min(m["ratio_min"], seg["ratio_min"]),
                    max(m["ratio_max"], seg["ratio_max"]),
                )
            else:
                merged.append(seg)
        segs = merged
    return segs


def win_ranges(
    a: Frontier,
    b: Frontier,
    scales: Mapping[str, float],
    end_rtol: float = 0.10,
    tail_fraction: float = 0.10,
    even: float = EVEN_BAND,
) -> dict:
    """Over which per-user speeds system A's frontier beats B's, for each ratio kind.

    Args:
        a, b: the two systems' frontiers in throughput per chip (tok/s/chip against tok/s/user).
        scales: ratio kind -> the constant the per-chip ratio is multiplied by for that kind (1 per chip; B's W per
            chip over A's for tok/s per kW; B's $/chip-hour over A's for tokens per $), e.g.
            ``{"throughput_per_chip": 1.0, "tok_s_per_kw": 2100 / 1150}``; each finite and > 0.
        end_rtol, tail_fraction: the tail rules of the ratios table (analysis/ratio_bands ``END_RTOL``,
            ``TAIL_FRACTION``).
        even: a ratio between ``1 / (1 + even)`` and ``1 + even`` reads ``even`` (:data:`EVEN_BAND`).

    Returns:
        ``from`` / ``to``: the speeds compared, tok/s/user — from the slower of the two first points (below its first
        point a frontier reads its peak, as the ratios table does) to the slower of the two last points;
        ``tail_from``: the speed from which either frontier is in its tail (ratios there swing), or null when that
        lies past ``to``; ``only``: null, or ``{"who": "this"|"baseline", "from": to, "to": x}`` when one frontier
        runs on alone past the other's last point; and per kind in ``scales`` a list of segments, speeds
        ascending, each ``{"from", "to", "result": "wins"|"loses"|"even"|"tail", "ratio_min", "ratio_max"}`` (A
        over B; ``wins`` above ``1 + even``, ``loses`` below its inverse; past ``tail_from`` one ``tail`` segment
        with the ratio's span there, where its crossings are noise); ``even_within``: ``even``.

    >>> a = Frontier(np.array([10.0, 40.0]), np.array([100.0, 25.0]))   # y = 1000 / x
    >>> b = Frontier(np.array([10.0, 40.0]), np.array([200.0, 12.5]))   # y = 20000 / x**2: ratio x / 20
    >>> w = win_ranges(a, b, {"throughput_per_chip": 1.0})
    >>> [(round(s["from"], 3), round(s["to"], 3), s["result"]) for s in w["throughput_per_chip"]]
    [(10.0, 19.048, 'loses'), (19.048, 21.0, 'even'), (21.0, 31.623, 'wins'), (31.623, 40.0, 'tail')]
    >>> round(w["tail_from"], 6)  # b falls below 10% of its peak (20 tok/s/chip) at sqrt(1000) tok/s/user
    31.622777
    """
    lo = float(min(a.x[0], b.x[0]))
    hi = float(min(a.x[-1], b.x[-1]))
    tail = min(_tail_x(a, end_rtol, tail_fraction), _tail_x(b, end_rtol, tail_fraction))
    only = None
    if a.x[-1] != b.x[-1]:
        only = {"who": "this" if a.x[-1] > b.x[-1] else "baseline", "from": hi, "to": float(max(a.x[-1], b.x[-1]))}
    cut = min(max(tail, lo), hi)  # segments up to the tail; one tail span past it
    out: dict = {"from": lo, "to": hi, "tail_from": tail if tail < hi else None, "only": only, "even_within": even}
    for kind, s in scales.items():
        segs = _segments(a, b, float(s), lo, cut, even) if cut > lo or tail >= hi else []
        if tail < hi:
            rest = _segments(a, b, float(s), cut, hi, even)
            segs.append(
                {
                    "from": cut,
                    "to": hi,
                    "result": "tail",
                    "ratio_min": min(r["ratio_min"] for r in rest),
                    "ratio_max": max(r["ratio_max"] for r in rest),
                }
            )
        out[kind] = segs
    return out


def nearest_points(x: Sequence[float] | np.ndarray, xq: Sequence[float]) -> list[int | None]:
    """For each queried speed, the index of the frontier point nearest it in log speed (the first point below the
    frontier's start; None past its last point: unreachable). ``x``: the frontier's speeds, tok/s/user, ascending.

    >>> nearest_points([10.0, 40.0, 100.0], [5.0, 19.0, 21.0, 100.0, 150.0])
    [0, 0, 1, 2, None]
    """
    lx = np.log(np.asarray(x, dtype=np.float64))
    out: list[int | None] = []
    for q in xq:
        if q > x[-1] * (1 + 1e-9):
            out.append(None)
            continue
        out.append(int(np.argmin(np.abs(lx - math.log(q)))))
    return out


def iso_bounds(rows: Mapping[str, list[dict]], a, b) -> None:
    """Add to each iso-interactivity row (analysis/compare.iso_interactivity_ratio's, per ratio kind) the frontier
    point of each side nearest its speed and that point's bound: ``point_a`` / ``point_b`` (index into the system's
    frontier, null when that side never reaches the speed) and ``bound_a`` / ``bound_b`` (``compute``,
    ``hbm_bandwidth``, ... or ``decode X; prefill Y (S of chips)`` disaggregated: analysis/bound_words.bound_cell; ``""``
    when unreachable), and ``limit_a`` / ``limit_b``: what capped that point's decode batch (``kv_capacity``,
    ``max_running``, ...: PointRecord.limit, analysis/bound_words.cap_text; ``""`` when none binds or unreachable; cap53).
    ``a``, ``b``: the two systems' :class:`~jalapeno.analysis.system_frontier.SystemFrontier`.
    Changes ``rows`` in place. The nearest point is one side of the log-log interpolation the ratio reads, the one
    closer in log speed: its bound says which spec moves that side there (docs/metrics.md §4, §6)."""
    from jalapeno.analysis.bound_words import bound_cell, prefill_chip_share

    first = next(iter(rows.values()), [])
    xq = [r["x"] for r in first]
    picks = {}
    for side, sf in (("a", a), ("b", b)):
        idx = nearest_points(sf.x, xq)
        pts, cells, caps = (
            sf.sweep.points,
            [],
            [],
        )  # the point's fields as its PointRecord reads them (records._point_fields)
        for i in idx:
            j = None if i is None else int(sf.frontier[i])
            caps.append("" if j is None else str(pts.limit[j]))
            cells.append(
                ""
                if j is None
                else bound_cell(
                    str(pts.bound[j]), str(pts.prefill_bound[j]), prefill_chip_share(pts.prefill_chips[j], pts.chips[j])
                )
            )
        picks[side] = (idx, cells, caps)
    for kind_rows in rows.values():
        for j, r in enumerate(kind_rows):
            for side in ("a", "b"):
                r[f"point_{side}"] = picks[side][0][j]
                r[f"bound_{side}"] = picks[side][1][j]
                r[f"limit_{side}"] = picks[side][2][j]
