"""The cells of ``compare``'s three tables (headline, ratios, operating tiers), shared by the terminal's tables
(report/tables.comparison_tables) and the report page (report/page.py): number formats (:func:`_f`, :func:`_small`),
a headline figure's band (:func:`band_text`, :func:`headline_band`, :data:`WIDE_BAND`), a ratio cell and its flags
(:func:`_ratio`, :func:`_merged_flags`), a ratio band row (:func:`band_moves`, :func:`band_range`, :func:`band_cells`),
the ratios table's headers and rows (:func:`ratio_columns`, :func:`iso_rows`, :func:`peak_usd_cell`), the peak's load
(:func:`peak_load`) and a tier's cost and deployments (:func:`tier_usd_per_mtok`, :func:`tier_energy_cost`,
:func:`tier_deployments`).

Split from report/tables.py (round 50, module budget), which re-exports every name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from jalapeno.analysis.power_cost import usd_text
from jalapeno.analysis.bound_words import band_span
from jalapeno.report.cell_notes import below_start_flag, end_flag

if TYPE_CHECKING:
    from jalapeno.analysis.records import PointRecord


#: a band whose high / low reaches this factor is flagged as wide in the headline (its figure spans the named
#: assumptions more than any calibrated system's error: docs/validation.md's LOSO errors are tens of percent)
WIDE_BAND = 2.0


def band_text(lo: float, hi: float, fmt: str) -> str:
    """A headline cell's band suffix: `` (lo to hi)`` (analysis/bound_words.band_span, every command's band format),
    lower end first whichever way the two come (a band of a figure that falls as efficiency rises has its "low"
    set's end above its "high" set's), flagged `` [wide band: Nx]`` when high / low reaches :data:`WIDE_BAND`;
    ``""`` for a point band. An infinite end prints ``-`` (as :func:`_f` prints one) and, beside a finite
    positive end, flags the band ``[wide band: unbounded]`` (it printed ``infx``); an undefined (NaN) end
    prints ``-`` unflagged. The spaces let a narrow table column wrap between the two ends: without them the
    terminal folded ``(74,333-97,416)`` inside a number, printing ``(74,333-97,`` over ``416)``.

    >>> band_text(118.8, 511.9, ".1f"), band_text(511.9, 118.8, ".1f")
    (' (118.8 to 511.9) [wide band: 4.3x]', ' (118.8 to 511.9) [wide band: 4.3x]')
    >>> band_text(12449, 17012, ",.0f"), band_text(12.5, float("inf"), ".1f")
    (' (12,449 to 17,012)', ' (12.5 to -) [wide band: unbounded]')
    """
    if lo == hi:
        return ""
    nums = [v for v in (lo, hi) if v is not None and v == v]
    if len(nums) == 2:
        lo, hi = sorted(nums)
    text = f" ({band_span(_f(lo, fmt), _f(hi, fmt))})"
    if len(nums) == 2 and lo > 0:
        if math.isinf(hi):
            return text + " [wide band: unbounded]"
        if hi / lo >= WIDE_BAND:
            return text + f" [wide band: {hi / lo:.1f}x]"
    return text


def headline_band(h, key: str, fmt: str, sub: str | None = None) -> str:
    """A headline cell's band suffix (:func:`band_text`) for ``key`` of headline ``h`` (``sub``: the power
    convention of a per-kW figure); ``""`` without bands. The terminal's table and the report page's both."""
    if h.bands is None:
        return ""
    b = getattr(h.bands, key)
    lo, hi = (b["low"][sub], b["high"][sub]) if sub else (b.low, b.high)
    return band_text(lo, hi, fmt)


def _f(x, fmt: str = ".3g") -> str:
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "-"
    return format(x, fmt)


def _small(x, fmt: str) -> str:
    """``x`` in ``fmt``, or to two significant figures where it is below 10 and ``fmt`` would print 0 or
    lose most of it (a decode batch of 0.04 printed 0.0, 1.3 tok/s per kW printed 1)."""
    if x is not None and isinstance(x, (int, float)) and math.isfinite(x) and 0 < abs(x) < 10:
        return format(x, ".2g")
    return _f(x, fmt)


def _ratio(r: dict, peaks: tuple[float, float] | None = None, baseline_row: bool = False) -> tuple[str, str]:
    """(the ratio cell's value, its flag or ""): the flag goes after the per-kW bracket, in square brackets, so
    that ``2.78x (1.96x) [at frontier end]`` does not read as two flags. Below a frontier's start (its slowest
    point is faster than the speed asked) that side reads its peak, flagged cell_notes.below_start_flag (naming the side): a system
    serves at least its peak's throughput at a lower per-user speed (its peak deployment meets the speed with
    room to spare), so the cell is the best throughput at or above the speed, as the tiers table and ``audit``'s
    ``throughput_per_chip@X`` read it (docs/model.md, iso-interactivity ratio)."""
    if r["ratio"] is None or (isinstance(r["ratio"], float) and math.isnan(r["ratio"])):
        a, b = r["status_a"] == "unreachable", r["status_b"] == "unreachable"
        who = "both" if a and b else "this" if a else "baseline"
        return f"unreachable ({who})", ""
    if below := below_start_flag(r):
        return f"{r['ratio']:.2f}x", below
    return f"{r['ratio']:.2f}x", end_flag(r, peaks, baseline_row)


def band_moves(b: Mapping) -> bool:
    """Whether a ratio band (``Ratios.bands``) has two different ends anywhere (against a measured baseline a
    measured system's is a point: no band row)."""
    pairs = [b["peak_ratio"]["throughput_per_chip"], b["max_interactivity_ratio"]]
    pairs += [
        {w: r["ratio"] for w, r in zip(("low", "high"), rows)}
        for rows in zip(
            b["iso_interactivity"]["throughput_per_chip"]["low"], b["iso_interactivity"]["throughput_per_chip"]["high"]
        )
    ]
    return any(p["low"] != p["high"] and not (p["low"] != p["low"] and p["high"] != p["high"]) for p in pairs)


def band_range(lo: float | None, hi: float | None, flag: bool = True) -> str:
    """A ratio band's cell text: ``0.62 to 0.95x`` (analysis/bound_words.band_span), lower end first, flagged as :func:`band_text` flags a
    headline's (unless ``flag`` is False: the per-kW bracket, whose ends are the per-chip ones times one
    constant); ``-`` for an end that is undefined.

    >>> band_range(0.95, 0.62), band_range(0.95, 4.16), band_range(None, 1.1)
    ('0.62 to 0.95x', '0.95 to 4.16x [wide band: 4.4x]', '- to 1.10x')
    """
    ok = [v for v in (lo, hi) if v is not None and v == v and not math.isinf(v)]
    if len(ok) < 2:
        return band_span(*("-" if v is None or v != v or math.isinf(v) else f"{v:.2f}x" for v in (lo, hi)))
    a, b = sorted(ok)
    wide = flag and a > 0 and b / a >= WIDE_BAND
    return band_span(f"{a:.2f}", f"{b:.2f}x") + (f" [wide band: {b / a:.1f}x]" if wide else "")


def ratio_columns(xs: Sequence[float]) -> list[str]:
    """The ratios table's headers (terminal and page alike): system, peak, max tok/s/user and one per
    iso-interactivity speed ``xs`` (tok/s/user); each ratio cell is per chip with the per-kW and per-$ ratios of
    the same point in brackets (tokens per $: the per-chip ratio x the baseline's $/chip-hour over the system's,
    the question "per $" the headline's $/M tok and the tiers' $/M tok answer by hand).

    >>> ratio_columns([50.0])
    ['system', 'peak (kW, $)', 'max tok/s/user', '@50 tok/s/user (kW, $)']
    """
    return ["system", "peak (kW, $)", "max tok/s/user", *(f"@{x:g} tok/s/user (kW, $)" for x in xs)]


def iso_rows(iso: Mapping) -> list[tuple]:
    """(per chip, per kW, per $) rows of ``Ratios.iso_interactivity`` at each speed; the per-$ one None where a
    record stored before round 44 has none."""
    t, k = iso["throughput_per_chip"], iso["tok_s_per_kw"]
    return list(zip(t, k, iso.get("tokens_per_usd") or [None] * len(t)))


def peak_usd_cell(pk: Mapping) -> str:
    """``1.31x``: the peak tokens-per-$ ratio (``Ratios.peak_ratio['tokens_per_usd']``), "-" where absent."""
    v = pk.get("tokens_per_usd")
    return "-" if v is None or not math.isfinite(v) else f"{v:.2f}x"


def band_cells(b: Mapping, peaks: Mapping[str, tuple[float, float]] | None = None) -> list[str]:
    """The band row of one system in the ratios table (``Ratios.bands``): peak per chip (per kW and per $ in
    brackets), max tok/s/user and each iso-interactivity speed (per kW and per $ in brackets: each the per-chip
    band times one constant); a speed where either end's ratio is not iso-interactivity (unreachable, below a
    frontier's start) names which end, as the calibrated cell does. ``peaks``: report/tables.band_peaks, so an end
    flagged by a frontier's tail names its side (None: by status alone)."""
    pk = b["peak_ratio"]
    usd = pk.get("tokens_per_usd")
    cells = [
        f"{band_range(pk['throughput_per_chip']['low'], pk['throughput_per_chip']['high'])} "
        f"({band_range(pk['tok_s_per_kw']['low'], pk['tok_s_per_kw']['high'], False)}, "
        f"{band_range(usd['low'], usd['high'], False) if usd else '-'})",
        band_range(b["max_interactivity_ratio"]["low"], b["max_interactivity_ratio"]["high"]),
    ]
    it, ik = b["iso_interactivity"]["throughput_per_chip"], b["iso_interactivity"]["tok_s_per_kw"]
    iu = b["iso_interactivity"].get("tokens_per_usd") or {w: [None] * len(it[w]) for w in ("low", "high")}
    for lt, ht, lk, hk, lu, hu in zip(it["low"], it["high"], ik["low"], ik["high"], iu["low"], iu["high"]):
        (cl, fl), (ch, fh) = _ratio(lt, peaks and peaks["low"]), _ratio(ht, peaks and peaks["high"])
        if not (cl.endswith("x") and ch.endswith("x")):
            same = (cl, fl) == (ch, fh)
            cells.append(cl + (f" [{fl}]" if fl else "") if same else f"low: {cl}; high: {ch}")
            continue
        u = band_range(lu["ratio"], hu["ratio"], False) if lu and hu else "-"
        cell = f"{band_range(lt['ratio'], ht['ratio'])} ({band_range(lk['ratio'], hk['ratio'], False)}, {u})"
        cells.append(cell + "".join(f" [{f}]" for f in _merged_flags(fl, fh)))
    return cells


def _merged_flags(*flags: str) -> list[str]:
    """A band cell's flags, one each: the two ends' "at frontier end" flags as one, naming every side either end
    names (the band row printed ``[at frontier end] [at frontier end: this]``: its ends are read without the
    frontiers' peaks, so one end could be flagged by its status alone).

    >>> _merged_flags("at frontier end", "at frontier end: this"), _merged_flags("at frontier end: this", "")
    (['at frontier end: this'], ['at frontier end: this'])
    >>> _merged_flags("at frontier end: this", "at frontier end: baseline")
    ['at frontier end: both']
    """
    end = "at frontier end"
    ends = [f for f in flags if f.startswith(end)]
    rest = sorted({f for f in flags if f and not f.startswith(end)})
    if not ends:
        return rest
    who = {f.split(": ", 1)[1] for f in ends if ": " in f}
    side = "both" if "both" in who or len(who) > 1 else next(iter(who), "")
    return [end + (f": {side}" if side else ""), *rest]  # first, as the sorted flags had it


def peak_load(frontier: Sequence[PointRecord]) -> str:
    """``cap / in flight`` of a frontier's peak-throughput point (docs/metrics.md §1), "-" when empty."""
    if not frontier:
        return "-"
    p = max(frontier, key=lambda q: q.throughput_per_chip)
    return f"{_f(p.concurrency, ',.0f')} / {_f(p.in_flight, ',.0f')}"


def tier_usd_per_mtok(throughput: float, frontier: Sequence[PointRecord]) -> float:
    """$ per million tokens (input + output) at a tier's throughput per chip (tok/s), at the frontier's system's
    $/chip-hour (docs/metrics.md §3: $/M tok = $/chip-hour / (tok/s/chip x 3600 / 10^6)). Every point of one
    frontier carries that one price, so ``usd_per_mtok x throughput_per_chip`` of any point is
    $/chip-hour x 10^6 / 3600. NaN for an empty frontier or a throughput that is not positive and finite.

    >>> from types import SimpleNamespace as P
    >>> round(tier_usd_per_mtok(2000.0, [P(usd_per_mtok=0.5, throughput_per_chip=1000.0)]), 6)
    0.25
    """
    if not frontier or not (throughput > 0 and math.isfinite(throughput)):
        return math.nan
    p = frontier[0]
    return p.usd_per_mtok * p.throughput_per_chip / throughput


def tier_energy_cost(tier: Mapping, tier_kw: Mapping, frontier: Sequence[PointRecord]) -> str:
    """``3,618 tok/s/kW, $0.0955/M tok``: a tier's point on the per-kW frontier (``Ratios.tiers_tok_s_per_kw``,
    the same point: per kW is per chip over one constant) and its $ per M tokens (:func:`tier_usd_per_mtok`)."""
    return (
        f"{_f(tier_kw['throughput'], ',.0f')} tok/s/kW, "
        f"${usd_text(tier_usd_per_mtok(tier['throughput'], frontier))}/M tok"
    )


def tier_deployments(tier: dict, frontier: Sequence[PointRecord]) -> str:
    """The deployment behind an operating tier (analysis/compare.tiers): the frontier point's, or,
    where the tier is interpolated at its floor, "interpolated between A and B" (the frontier
    points either side of the floor, by interactivity; "interpolated between two points of A" when
    one deployment runs both)."""
    i = tier.get("frontier_index")
    if i is not None and 0 <= i < len(frontier):
        return frontier[i].deployment.label
    floor = tier.get("floor_tok_per_s_per_user")
    if tier.get("status") != "unreachable" and floor is not None:  # interpolated (or so at a frontier's end)
        j = next((k for k, p in enumerate(frontier) if p.interactivity >= floor), None)
        if j is not None and j > 0:
            a, b = frontier[j - 1].deployment.label, frontier[j].deployment.label
            return f"interpolated between two points of {a}" if a == b else f"interpolated between {a} and {b}"
    return "interpolated"
