"""Rich tables and files (CSV/JSON/Parquet) from the result records (analysis/records.py)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from jalapeno.analysis.power_cost import usd_text
from jalapeno.analysis.records import band_span, bound_cell
from jalapeno.errors import SpecError
from jalapeno.report.cell_notes import (BELOW_START_NOTE, ESTIMATE_MARK, below_start_flag, bound_caption, end_flag,
                                       estimate_caption, frontier_peaks, unreachable_tier)

if TYPE_CHECKING:
    from jalapeno.analysis.records import ComparisonRecord, FrontierRecord, PointRecord


#: what the two concurrency columns mean (docs/metrics.md §1)
CONCURRENCY_CAPTION = ("conc. cap: requests the closed-loop client keeps outstanding (InferenceX conc; on the batch "
                       "grid, the cap that sustains the point); in flight: requests admitted to a batch, Little's law "
                       "λ·(E2E − queue) — below the cap only when the excess queues for admission; steady state "
                       "(`predict` prices a whole InferenceX run, its idle start included: lower throughput, "
                       "higher mean TTFT)")


#: a band whose high / low reaches this factor is flagged as wide in the headline (its figure spans the named
#: assumptions more than any calibrated system's error: docs/validation.md's LOSO errors are tens of percent)
WIDE_BAND = 2.0
#: what a ratios table's band row is (analysis/ratio_bands.BAND_PAIRING, docs/metrics.md §6)
BAND_ROW_CAPTION = ("<system> band: each ratio with both systems at their low efficiency sets and with both at their "
                    "high sets, lower first (a system without a band, e.g. a user file, at its calibrated set at "
                    "both ends; the headline's (low to high)); where either side's band is its measured error "
                    "(validate p10/p90) the ends cross: the system's worse end over the baseline's better end and "
                    "the reverse (docs/metrics.md §6); [wide band: Nx]: the ends "
                    f"{WIDE_BAND:g}x or more apart — the ratio is an assumption's, not a prediction to quote alone")
#: the legend of the headline's (low to high) cells with --bands (terminal and report page)
HEADLINE_BAND_CAPTION = ("(low to high): a derived system's efficiency band (with its software stack's: Jalapeño spans "
                         "GPU-like to compiled, docs/stacks.md); a system fitted on its own kernels: its measured "
                         "error band, the prediction over 1 + its p90 and p10 signed error in `jalapeno validate` "
                         "(data/validation/measured_bands.toml), on a model validated there; min E2E's band "
                         "(E2E = TTFT + (OSL - 1) TPOT) is in compare --json only; "
                         f"[wide band: Nx]: high / low of {WIDE_BAND:g}x or more — the figure is an assumption's, "
                         "not a prediction to quote alone")
#: the headline's throughput column: InferenceX's throughput per GPU counts input and output tokens
PEAK_COLUMN = "peak tok/s/chip (in+out)"
#: what the headline's token counts are (docs/metrics.md §2)
TOKENS_CAPTION = ("tok/s/chip, tok/s/kW and $/M tok count input + output tokens (InferenceX's throughput per GPU); "
                  "out tok/s/chip at peak: output tokens only, at the same point; $/M tok: the system's cost per "
                  "chip-hour (total cost of ownership, cost.usd_per_chip_hour: its source and whether it is an "
                  "estimate in `jalapeno hardware show NAME`) over the tokens one chip serves in that hour")


def power_caption(d: ComparisonRecord) -> str:
    """One line naming the power figure each system's tok/s/kW divides by under the comparison's convention, with
    its watts per chip (newuser49: a variant's extra power, ``--set chip.hbm_bandwidth_tb_per_s=20`` adding ~129 W
    all-in, moved tok/s/kW unseen), e.g. ``power (sustained): jalapeno chip sustained, 550 W per chip; gb300-nvl72
    chip TDP (no sustained figure published), 1,400 W per chip``. The watts are the headline's own divisor: peak
    tok/s/chip / peak tok/s/kW x 1,000."""
    conv = d.power_convention

    def watts(h) -> str:
        kw = h.peak_tok_s_per_kw.get(conv, 0.0)
        return f", {h.peak_throughput_per_chip / kw * 1e3:,.0f} W per chip" if kw > 0 else ""

    return f"power ({conv}): " + "; ".join(f"{n} {s.headline.power_labels.get(conv, conv)}{watts(s.headline)}"
                                          for n, s in d.systems.items())


def band_text(lo: float, hi: float, fmt: str) -> str:
    """A headline cell's band suffix: `` (lo to hi)`` (analysis/records.band_span, every command's band format),
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


def efficiency_label(source: str) -> str:
    """A short name of an efficiency set from its ``source`` (specs/calibration.py,
    specs/variants.py): ``calibrated: derived from gb300-nvl72``, ``spec (documented defaults)``,
    with ``+ overrides`` when a variant or ``--set`` changed it.

    >>> efficiency_label("calibrated (measured kernels; aic 1.3; set low; data/calibration/b200.toml)")
    'low: measured kernels'
    """
    if source.startswith("calibrated ("):
        inner = source[len("calibrated ("):]
        what = inner.split(";")[0].strip()
        m = re.search(r"; set (\w+);", inner)
        label = f"{m.group(1) if m else 'calibrated'}: {what}"
    elif source.startswith("jalapeno defaults"):
        label = "spec (documented defaults)"
    else:
        label = source if len(source) <= 48 else source[:45] + "..."
    return label + (" + overrides" if "overrides:" in source else "")


def comparison_tables(d: ComparisonRecord, estimated: Collection[str] = (), width: int | None = None) -> list[Table]:
    """Headline table, ratio table and tier table of a comparison; the $ figures of the systems named in
    ``estimated`` (report/cell_notes.estimated_prices) carry cell_notes.ESTIMATE_MARK, explained in a caption.
    With ``width`` (the terminal's characters) each of the three that would cut a word there is printed transposed
    (report/narrow.fit_width: one column per system, as many tables as fit), so the list can be longer: at 80
    characters the ratios table's five speed columns folded ``tok/s/use`` / ``r`` and ``[at`` / ``frontier`` /
    ``end:`` / ``baseline]`` over four lines."""
    conv = d.power_convention
    wl = d.workload
    title = (f"{d.model} · ISL {wl.isl} / OSL {wl.osl} · {d.precision} · "
             f"power: {conv} · baseline {d.baseline}")
    head = Table(title=title)
    head.add_column("system", no_wrap=True, min_width=16)
    for col in (PEAK_COLUMN, "out tok/s/chip at peak", f"peak tok/s/kW ({conv})", "$/M tok at peak", "bound at peak",
                "conc. cap / in flight at peak", "max tok/s/user", "bound at max", "min E2E s", "deployment at peak"):
        head.add_column(col, overflow="fold")
    band = headline_band

    def est(name: str) -> str:
        return ESTIMATE_MARK if name in estimated else ""

    for name, s in d.systems.items():
        h = s.headline
        head.add_row(name, _f(h.peak_throughput_per_chip, ",.0f") + band(h, "peak_throughput_per_chip", ",.0f"),
                     _f(h.peak_output_throughput_per_chip, ",.0f"),
                     _f(h.peak_tok_s_per_kw[conv], ",.0f") + band(h, "peak_tok_s_per_kw", ",.0f", conv),
                     usd_text(h.usd_per_mtok_at_peak) + est(name), bound_cell(h.bound_at_peak, h.prefill_bound_at_peak,
                                                                  h.prefill_chip_share_at_peak), peak_load(s.frontier),
                     _f(h.max_interactivity, ",.1f") + band(h, "max_interactivity", ",.1f"),
                     bound_cell(h.bound_at_max_interactivity, h.prefill_bound_at_max_interactivity,
                                h.prefill_chip_share_at_max_interactivity), _f(h.min_e2e_s, ".2f"), h.deployment_at_peak)
    for name, why in getattr(d, "infeasible", {}).items():  # compared without them, each with its reason
        head.add_row(name, "infeasible", "-", "-", "-", "-", "-", "-", "-", "-", f"cannot run the model: {why}",
                     style="dim")
    ratios = Table(title=f"ratios vs {d.baseline} (throughput per chip; per kW and per $ in brackets)")
    first = next(iter(d.comparisons.values()))
    xs = [r["x"] for r in first.iso_interactivity["throughput_per_chip"]]
    for i, col in enumerate(ratio_columns(xs)):
        ratios.add_column(col, **({"no_wrap": True, "min_width": 16} if i == 0 else {"overflow": "fold"}))
    for name, c in d.comparisons.items():
        pk, peaks = c.peak_ratio, frontier_peaks(d, name)
        cells = [f"{pk['throughput_per_chip']:.2f}x ({pk['tok_s_per_kw']:.2f}x, {peak_usd_cell(pk)})",
                 f"{c.max_interactivity_ratio:.2f}x"]
        for rt, rk, ru in iso_rows(c.iso_interactivity):
            (cell, flag), kw, usd = _ratio(rt, peaks, name == d.baseline), _ratio(rk)[0], _ratio(ru)[0] if ru else "-"
            if cell.endswith("x") and kw.endswith("x"):  # both sides a number (not n/a, not unreachable)
                cell += f" ({kw}, {usd})"
            cells.append(cell + (f" [{flag}]" if flag else ""))
        ratios.add_row(name, *cells)
        if name != d.baseline and getattr(c, "bands", None) and band_moves(c.bands):
            ratios.add_row(f"{name} band", *band_cells(c.bands, band_peaks(d, name)), style="dim")
    # the row label whole: a band row's "vera-rubin-nvl72 band" printed "vera-rubin-nvl7…" in a 16-wide column
    ratios.columns[0].min_width = max([16, *(len(str(x)) for x in ratios.columns[0].cells)])
    ratios.caption = ("[at frontier end: who]: the speed is within 10% of that frontier's last point or in its tail "
                      "below 10% of its peak, where ratios swing; who: this (the row's system), baseline or both; " + BELOW_START_NOTE + "; "
                      "unreachable (who): that frontier never reaches the speed")
    if estimated:  # the per-$ ratios divide by the same estimated price
        ratios.caption += f"\nper $ of {', '.join(sorted(estimated))}: at an estimated $/chip-hour (est. in the tables)"
    if any(getattr(c, "bands", None) and band_moves(c.bands) for n, c in d.comparisons.items() if n != d.baseline):
        ratios.caption += "\n" + BAND_ROW_CAPTION
    tiers = Table(title="operating tiers: best throughput per chip at or above a per-user speed floor, with its "
                        "tok/s/kW and $/M tok", caption=TIERS_CAPTION.format(conv=conv) + (
                      "\n" + estimate_caption(estimated) if estimated else ""))
    tiers.add_column("system", no_wrap=True, min_width=16)
    tier_names = list(first.tiers)
    for t in tier_names:
        fl = first.tiers[t].get("floor_tok_per_s_per_user")
        tiers.add_column(t + (f" (>= {fl:g} tok/s/user)" if fl else " (peak)"), overflow="fold")
    for name, c in d.comparisons.items():
        cells = []
        for t in tier_names:
            v = c.tiers[t]
            if v["status"] == "unreachable":
                cells.append(unreachable_tier(d.systems[name].headline))
            else:
                cells.append(f"{_f(v['throughput'], ',.0f')} @ {_f(v['interactivity'], '.0f')} "
                             f"({tier_energy_cost(v, c.tiers_tok_s_per_kw[t], d.systems[name].frontier)}{est(name)}): "
                             + tier_deployments(v, d.systems[name].frontier))
        tiers.add_row(name, *cells)
    sets = "efficiency sets: " + "; ".join(f"{n}: {efficiency_label(s.headline.efficiency_source)}"
                                           for n, s in d.systems.items())
    head.caption = sets + "\n" + TOKENS_CAPTION + "\n" + power_caption(d) + "\n" + CONCURRENCY_CAPTION
    head.caption += "\n" + estimate_caption(estimated) if estimated else ""
    if any(s.headline.prefill_bound_at_peak or s.headline.prefill_bound_at_max_interactivity for s in d.systems.values()):
        head.caption += "\n" + PREFILL_BOUND_CAPTION
    head.caption += "\n" + bound_caption(headline_bounds(d))
    if any(s.headline.bands is not None for s in d.systems.values()):
        head.caption += "\n" + HEADLINE_BAND_CAPTION + "".join("\n" + x for x in uncovered_lines(d))
    from jalapeno.report.narrow import fit_width

    return [*fit_width(head, width), *fit_width(ratios, width), *fit_width(tiers, width)]


def uncovered_lines(d) -> list[str]:
    """A line per measured system shown without a band because validate has no points of the compared model on
    it (analysis/measured_bands.uncovered), so an empty band does not read as an exact figure: under the terminal's
    headline and the report page's (report/page.tables_html)."""
    from jalapeno.analysis.measured_bands import uncovered, validated_set

    lines = []
    for n, s in d.systems.items():
        band = uncovered(n, d.model) if validated_set(s.headline.efficiency_source) else None
        if band is not None:
            lines.append(f"no band for {n}: its measured error band is validate's on {', '.join(band.models)}; "
                         f"validate has no {d.model} points on it")
    return lines


def band_moves(b: Mapping) -> bool:
    """Whether a ratio band (``Ratios.bands``) has two different ends anywhere (against a measured baseline a
    measured system's is a point: no band row)."""
    pairs = [b["peak_ratio"]["throughput_per_chip"], b["max_interactivity_ratio"]]
    pairs += [{w: r["ratio"] for w, r in zip(("low", "high"), rows)}
              for rows in zip(b["iso_interactivity"]["throughput_per_chip"]["low"],
                              b["iso_interactivity"]["throughput_per_chip"]["high"])]
    return any(p["low"] != p["high"] and not (p["low"] != p["low"] and p["high"] != p["high"]) for p in pairs)


def band_range(lo: float | None, hi: float | None, flag: bool = True) -> str:
    """A ratio band's cell text: ``0.62 to 0.95x`` (analysis/records.band_span), lower end first, flagged as :func:`band_text` flags a
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


def band_peaks(d: ComparisonRecord, name: str) -> dict[str, tuple[float, float]] | None:
    """The peak tok/s/chip of the two frontiers behind each end of ``name``'s band row (``low``, ``high``: the
    system's and the baseline's, as analysis/ratio_bands.band_ratios pairs them: like ends, or crossed where either
    side's band is its measured error), read off each headline's band (a system without one: its frontier's peak);
    for cell_notes.end_flag, so a band cell's ``[at frontier end]`` names its side as the calibrated row's does
    (the tail rule, below 10% of a frontier's peak, flagged it with no side: newuser50). None without a band row."""
    from jalapeno.analysis.ratio_bands import BAND_PAIRING_MEASURED

    b = getattr(d.comparisons[name], "bands", None)
    if not b:
        return None
    cross = b.get("pairing") == BAND_PAIRING_MEASURED
    fallback = dict(zip((name, d.baseline), frontier_peaks(d, name)))

    def peak(n: str, which: str) -> float:
        hb = d.systems[n].headline.bands
        return fallback[n] if hb is None else getattr(hb.peak_throughput_per_chip, which)

    other = {"low": "high", "high": "low"} if cross else {"low": "low", "high": "high"}
    return {w: (peak(name, w), peak(d.baseline, other[w])) for w in ("low", "high")}


def band_cells(b: Mapping, peaks: Mapping[str, tuple[float, float]] | None = None) -> list[str]:
    """The band row of one system in the ratios table (``Ratios.bands``): peak per chip (per kW and per $ in
    brackets), max tok/s/user and each iso-interactivity speed (per kW and per $ in brackets: each the per-chip
    band times one constant); a speed where either end's ratio is not iso-interactivity (unreachable, below a
    frontier's start) names which end, as the calibrated cell does. ``peaks``: :func:`band_peaks`, so an end
    flagged by a frontier's tail names its side (None: by status alone)."""
    pk = b["peak_ratio"]
    usd = pk.get("tokens_per_usd")
    cells = [f"{band_range(pk['throughput_per_chip']['low'], pk['throughput_per_chip']['high'])} "
             f"({band_range(pk['tok_s_per_kw']['low'], pk['tok_s_per_kw']['high'], False)}, "
             f"{band_range(usd['low'], usd['high'], False) if usd else '-'})",
             band_range(b["max_interactivity_ratio"]["low"], b["max_interactivity_ratio"]["high"])]
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


#: what a tiers cell is (``{conv}``: the comparison's power convention); the per-kW and $ figures make the
#: planner's question "tok/s/kW and $/M tok at the speed I need" one command (README), not a division by hand
TIERS_CAPTION = ("each cell: throughput per chip (tok/s) @ per-user speed (tok/s/user) (the same point's tok/s per "
                 "kW, {conv} power, and $ per M tokens at the system's $/chip-hour; tokens count input + output): the "
                 "deployment that runs it; interpolated: the floor falls between two frontier points (log-log), run "
                 "by the two deployments named; --tiers NAME=SPEED sets the floors (e.g. --tiers need=50)")


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
    return (f"{_f(tier_kw['throughput'], ',.0f')} tok/s/kW, "
            f"${usd_text(tier_usd_per_mtok(tier['throughput'], frontier))}/M tok")


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
            return (f"interpolated between two points of {a}" if a == b
                    else f"interpolated between {a} and {b}")
    return "interpolated"


def headline_bounds(d: ComparisonRecord) -> set[str]:
    """The bound names compare's headline prints (at peak and at max tok/s/user, decode and prefill), for
    cell_notes.bound_caption."""
    return {b for s in d.systems.values() for h in [s.headline]
            for b in (h.bound_at_peak, h.prefill_bound_at_peak, h.bound_at_max_interactivity,
                      h.prefill_bound_at_max_interactivity) if b}


#: what a disaggregated point's bound cell says (docs/metrics.md §4)
PREFILL_BOUND_CAPTION = ("decode X; prefill Y (S of chips): a disaggregated point's decode step is X-bound and its "
                         "prefill pool's full token-budget step Y-bound, that pool holding a share S of the point's chips")


def frontier_table(points: Sequence[PointRecord], title: str) -> Table:
    """One row per frontier point (the concurrency cap and the requests in flight both, labelled); the
    per-kW column names its power convention and the caption the power it divides by, as compare's
    headline does (``tok/s/kW (all-in)``, ``power (all-in): all-in provisioned, 1,150 W per chip``)."""
    kw_col, caption = "tok/s/kW", CONCURRENCY_CAPTION
    if points:
        p0 = points[0]
        kw_col = f"tok/s/kW ({p0.power_convention})"
        caption = (f"power ({p0.power_convention}): {p0.power_label}, {p0.power_w_per_chip:,.0f} W per chip; "
                   + CONCURRENCY_CAPTION)
        if any(p.limit for p in points):
            caption += ("; bound · X: the binding constraint, then what capped the decode batch (kv_capacity, "
                        "max_running, prefill_budget, ...: docs/metrics.md §4)")
        if any(p.prefill_bound for p in points):
            caption += "; " + PREFILL_BOUND_CAPTION
        caption += "\n" + bound_caption({b for p in points for b in (p.bound, p.prefill_bound) if b})
    t = Table(title=title, caption=caption)
    for col in ("tok/s/user", "tok/s/chip", "out tok/s/chip", kw_col, "TTFT ms", "TPOT ms", "E2E s",
                "conc. cap", "in flight", "chips", "bound", "deployment"):
        # a figure on one line ('79,85' over '2' at 100 characters); the bound and deployment wrap between words
        t.add_column(col, overflow="fold", no_wrap=col not in ("bound", "deployment"))
    for p in points:
        t.add_row(_f(p.interactivity, ".1f"), _f(p.throughput_per_chip, ",.0f"),
                  _f(p.output_throughput_per_chip, ",.0f"), _f(p.tok_s_per_kw, ",.0f"),
                  _f(p.ttft_s * 1e3, ",.0f"), _f(p.tpot_s * 1e3, ",.1f"), _f(p.e2e_s, ",.1f"),
                  _f(p.concurrency, ",.0f"), _f(p.in_flight, ",.0f"), _f(p.chips, ",.0f"),
                  bound_cell(p.bound, p.prefill_bound, p.prefill_chip_share) + (f" · {p.limit}" if p.limit else ""),
                  p.deployment.label)
    return t


def write_frontier(record: FrontierRecord, path: str) -> Path:
    """Write a frontier's points to CSV, JSON or Parquet (by extension; Parquet needs pyarrow).

    CSV and Parquet hold :meth:`FrontierRecord.to_frame`; JSON the list of the points' ``as_dict()``.

    Raises:
        SpecError: unknown extension, missing pyarrow, or an unwritable path.
    """
    p = Path(path)
    ext = p.suffix.lower()
    try:
        if ext == ".csv":
            record.to_frame().to_csv(p, index=False)
        elif ext == ".json":
            p.write_text(json.dumps([pt.as_dict() for pt in record.frontier], indent=2, default=float))
        elif ext == ".parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise SpecError("--out", "writing Parquet needs pyarrow", "pip install pyarrow, or use .csv/.json") from None
            record.to_frame().to_parquet(p, index=False)
        else:
            raise SpecError("--out", f"unknown file type {ext!r}", "use a .csv, .json or .parquet file")
    except OSError as e:
        raise SpecError("--out", f"cannot write {p}: {e.strerror or e}", "give a writable path") from None
    return p
