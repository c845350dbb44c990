"""Rich tables and files (CSV/JSON/Parquet) from the result records (analysis/records.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from jalapeno.analysis.power_cost import usd_text
from jalapeno.analysis.bound_words import bound_cell, point_bound_capped, with_cap
from jalapeno.errors import SpecError
from jalapeno.report.compare_cells import (  # noqa: F401 (re-exported: split from here, round 50)
    WIDE_BAND,
    _f,
    _merged_flags,
    _ratio,
    _small,
    band_cells,
    band_moves,
    band_range,
    band_text,
    headline_band,
    iso_rows,
    peak_load,
    peak_usd_cell,
    ratio_columns,
    tier_deployments,
    tier_energy_cost,
    tier_usd_per_mtok,
)
from jalapeno.report.win_tables import bound_table, power_ratio_line, where_wins_table
from jalapeno.report.cell_notes import (
    BELOW_START_NOTE,
    ESTIMATE_MARK,
    bound_caption,
    cap_caption,
    estimate_caption,
    frontier_peaks,
    unreachable_tier,
)

if TYPE_CHECKING:
    from jalapeno.analysis.records import ComparisonRecord, FrontierRecord, PointRecord


#: what the two concurrency columns mean (docs/metrics.md §1)
CONCURRENCY_CAPTION = (
    "conc. cap: requests the closed-loop client keeps outstanding (InferenceX conc; on the batch "
    "grid, the cap that sustains the point); in flight: requests admitted to a batch, Little's law "
    "λ·(E2E − queue) — below the cap only when the excess queues for admission; steady state "
    "(`predict` prices a whole InferenceX run, its idle start included: lower throughput, "
    "higher mean TTFT)"
)


#: what a ratios table's band row is (analysis/ratio_bands.BAND_PAIRING, docs/metrics.md §6)
BAND_ROW_CAPTION = (
    "<system> band: each ratio with both systems at their low efficiency sets and with both at their "
    "high sets, lower first (a system without a band, e.g. a user file, at its calibrated set at "
    "both ends; the headline's (low to high)); where either side's band is its measured error "
    "(validate p10/p90) the ends cross: the system's worse end over the baseline's better end and "
    "the reverse (docs/metrics.md §6); [wide band: Nx]: the ends "
    f"{WIDE_BAND:g}x or more apart — the ratio is an assumption's, not a prediction to quote alone"
)
#: the legend of the headline's (low to high) cells with --bands (terminal and report page)
HEADLINE_BAND_CAPTION = (
    "(low to high): a derived system's efficiency band (with its software stack's: Jalapeño spans "
    "GPU-like to compiled, docs/stacks.md); a system fitted on its own kernels: its measured "
    "error band, the prediction over 1 + its p90 and p10 signed error in `jalapeno validate` "
    "(data/validation/measured_bands.toml), on a model validated there; min E2E's band "
    "(E2E = TTFT + (OSL - 1) TPOT) is in compare --json only; "
    f"[wide band: Nx]: high / low of {WIDE_BAND:g}x or more — the figure is an assumption's, "
    "not a prediction to quote alone"
)
#: the headline's throughput column: InferenceX's throughput per GPU counts input and output tokens
PEAK_COLUMN = "peak tok/s/chip (in+out)"


def headline_columns(conv: str) -> list[str]:
    """The headline table's columns after "system", one list for the terminal table (:func:`comparison_tables`) and the
    HTML report's (report/page.py); ``conv``: the power convention the tok/s/kW column is per."""
    return [
        PEAK_COLUMN,
        "out tok/s/chip at peak",
        f"peak tok/s/kW ({conv})",
        "$/M tok (in+out) at peak",  # its basis in the label: plan's $/M counts output tokens (newuser55)
        "bound at peak",
        "conc. cap / in flight at peak",
        "max tok/s/user",
        "bound at max",
        "min E2E s",
        "deployment at peak",
    ]


#: what the headline's token counts are (docs/metrics.md §2)
TOKENS_CAPTION = (
    "tok/s/chip, tok/s/kW and $/M tok count input + output tokens (InferenceX's throughput per GPU); "
    "out tok/s/chip at peak: output tokens only, at the same point; $/M tok: the system's cost per "
    "chip-hour (total cost of ownership, cost.usd_per_chip_hour: its source and whether it is an "
    "estimate in `jalapeno hardware show NAME`) over the tokens one chip serves in that hour"
)


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

    return f"power ({conv}): " + "; ".join(
        f"{n} {s.headline.power_labels.get(conv, conv)}{watts(s.headline)}" for n, s in d.systems.items()
    )


def efficiency_sets_line(sources) -> str:
    """The ``efficiency sets: NAME: LABEL; ...`` line compare's headline caption, the report page's notes and the
    agentic compare print: ``sources`` maps each system's name to its efficiency set's ``source``
    (:func:`efficiency_label` shortens each)."""
    return "efficiency sets: " + "; ".join(f"{n}: {efficiency_label(src)}" for n, src in sources.items())


def efficiency_label(source: str) -> str:
    """A short name of an efficiency set from its ``source`` (specs/calibration.py,
    specs/variants.py): ``calibrated: derived from gb300-nvl72``, ``spec (documented defaults)``,
    with ``+ overrides`` when a variant or ``--set`` changed it.

    >>> efficiency_label("calibrated (measured kernels; aic 1.3; set low; data/calibration/b200.toml)")
    'low: measured kernels'
    """
    if source.startswith("calibrated ("):
        inner = source[len("calibrated (") :]
        what = inner.split(";")[0].strip()
        m = re.search(r"; set (\w+);", inner)
        label = f"{m.group(1) if m else 'calibrated'}: {what}"
    elif source.startswith("jalapeno defaults"):
        label = "spec (documented defaults)"
    else:
        label = source if len(source) <= 48 else source[:45] + "..."
    return label + (" + overrides" if "overrides:" in source else "")


def serving_words(options) -> str:
    """`` · agg + disagg · no MTP``: the serving modes a comparison swept and its MTP, for the headline's title (analyst55:
    the title named the precision and power and not the other two assumptions a claim rests on — whether a
    disaggregated deployment may win, and that no system drafts tokens; compare --mtp K and --serving set them). Empty
    under --as-deployed, where each recipe sets its own (its label in the deployment column).

    >>> serving_words({"serving": "both", "mtp": None})
    ' · agg + disagg · no MTP'
    >>> serving_words({"serving": "agg", "mtp": {"draft_tokens": 3, "acceptance": 0.75}})
    ' · agg · MTP 3 drafts at 0.75 acceptance'
    >>> serving_words({"serving": "both", "mtp": None, "as_deployed": {"b200": "..."}}), serving_words({})
    ('', '')
    """
    if not options or "serving" not in options or options.get("as_deployed"):
        return ""
    mode = {"both": "agg + disagg"}.get(options["serving"], options["serving"])
    m = options.get("mtp")
    mtp = f"MTP {m['draft_tokens']} drafts at {m['acceptance']:g} acceptance" if m else "no MTP"
    return f" · {mode} · {mtp}"


def comparison_tables(d: ComparisonRecord, estimated: Collection[str] = (), width: int | None = None) -> list[Table]:
    """Headline table, ratio table and tier table of a comparison, then (report/win_tables) where each system wins
    over the speeds and the bound at each ``--at`` speed; the $ figures of the systems named in
    ``estimated`` (report/cell_notes.estimated_prices) carry cell_notes.ESTIMATE_MARK, explained in a caption.
    With ``width`` (the terminal's characters) each of the three that would cut a word there is printed transposed
    (report/narrow.fit_width: one column per system, as many tables as fit), so the list can be longer: at 80
    characters the ratios table's five speed columns folded ``tok/s/use`` / ``r`` and ``[at`` / ``frontier`` /
    ``end:`` / ``baseline]`` over four lines."""
    conv = d.power_convention
    wl = d.workload
    title = (
        f"{d.model} · ISL {wl.isl} / OSL {wl.osl} · {d.precision}{serving_words(d.options)} · power: {conv} · "
        f"baseline {d.baseline}"
    )
    head = Table(title=title)
    head.add_column("system", no_wrap=True, min_width=16)
    for col in headline_columns(conv):
        head.add_column(col, overflow="fold")
    band = headline_band

    def est(name: str) -> str:
        return ESTIMATE_MARK if name in estimated else ""

    for name, s in d.systems.items():
        h = s.headline
        head.add_row(
            name,
            _f(h.peak_throughput_per_chip, ",.0f") + band(h, "peak_throughput_per_chip", ",.0f"),
            _f(h.peak_output_throughput_per_chip, ",.0f"),
            _f(h.peak_tok_s_per_kw[conv], ",.0f") + band(h, "peak_tok_s_per_kw", ",.0f", conv),
            usd_text(h.usd_per_mtok_at_peak) + est(name),
            with_cap(
                bound_cell(h.bound_at_peak, h.prefill_bound_at_peak, h.prefill_chip_share_at_peak), h.limit_at_peak
            ),
            peak_load(s.frontier),
            _f(h.max_interactivity, ",.1f") + band(h, "max_interactivity", ",.1f"),
            with_cap(
                bound_cell(
                    h.bound_at_max_interactivity,
                    h.prefill_bound_at_max_interactivity,
                    h.prefill_chip_share_at_max_interactivity,
                ),
                h.limit_at_max_interactivity,
            ),
            _f(h.min_e2e_s, ".2f"),
            h.deployment_at_peak,
        )
    for name, why in getattr(d, "infeasible", {}).items():  # compared without them, each with its reason
        head.add_row(
            name, "infeasible", "-", "-", "-", "-", "-", "-", "-", "-", f"cannot run the model: {why}", style="dim"
        )
    ratios = Table(title=f"ratios vs {d.baseline} (throughput per chip; per kW and per $ in brackets)")
    first = next(iter(d.comparisons.values()))
    xs = [r["x"] for r in first.iso_interactivity["throughput_per_chip"]]
    for i, col in enumerate(ratio_columns(xs)):
        ratios.add_column(col, **({"no_wrap": True, "min_width": 16} if i == 0 else {"overflow": "fold"}))
    for name, c in d.comparisons.items():
        pk, peaks = c.peak_ratio, frontier_peaks(d, name)
        cells = [
            f"{pk['throughput_per_chip']:.2f}x ({pk['tok_s_per_kw']:.2f}x, {peak_usd_cell(pk)})",
            f"{c.max_interactivity_ratio:.2f}x",
        ]
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
    ratios.caption = (
        "[at frontier end: who]: the speed is within 10% of that frontier's last point or in its tail "
        "below 10% of its peak, where ratios swing; who: this (the row's system), baseline or both; "
        + BELOW_START_NOTE
        + "; "
        "unreachable (who): that frontier never reaches the speed"
    )
    if estimated:  # the per-$ ratios divide by the same estimated price
        ratios.caption += f"\nper $ of {', '.join(sorted(estimated))}: at an estimated $/chip-hour (est. in the tables)"
    if any(getattr(c, "bands", None) and band_moves(c.bands) for n, c in d.comparisons.items() if n != d.baseline):
        ratios.caption += "\n" + BAND_ROW_CAPTION
    tiers = Table(
        title="operating tiers: best throughput per chip at or above a per-user speed floor, with its "
        "tok/s/kW and $/M tok (input + output)",
        caption=TIERS_CAPTION.format(conv=conv) + ("\n" + estimate_caption(estimated) if estimated else ""),
    )
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
                cells.append(
                    f"{_f(v['throughput'], ',.0f')} @ {_f(v['interactivity'], '.0f')} "
                    f"({tier_energy_cost(v, c.tiers_tok_s_per_kw[t], d.systems[name].frontier)}{est(name)}): "
                    + tier_deployments(v, d.systems[name].frontier)
                )
        tiers.add_row(name, *cells)
    sets = efficiency_sets_line({n: s.headline.efficiency_source for n, s in d.systems.items()})
    head.caption = sets + "\n" + TOKENS_CAPTION + "\n" + power_caption(d) + "\n" + CONCURRENCY_CAPTION
    if (line := power_ratio_line(d)) is not None:  # per kW under every convention, not only --power's (ux51)
        head.caption += "\n" + line
    head.caption += "\n" + estimate_caption(estimated) if estimated else ""
    if any(
        s.headline.prefill_bound_at_peak or s.headline.prefill_bound_at_max_interactivity for s in d.systems.values()
    ):
        head.caption += "\n" + PREFILL_BOUND_CAPTION
    head.caption += "\n" + bound_caption(headline_bounds(d))
    if cap_line := cap_caption(headline_limits(d)):
        head.caption += "\n" + cap_line
    if any(s.headline.bands is not None for s in d.systems.values()):
        head.caption += "\n" + HEADLINE_BAND_CAPTION + "".join("\n" + x for x in uncovered_lines(d))
    from jalapeno.report.narrow import fit_width

    # after the three (callers index them): where each system wins over the speeds, and why there (ux51)
    extra = [t for t in (where_wins_table(d), bound_table(d)) if t is not None]
    return [
        *fit_width(head, width),
        *fit_width(ratios, width),
        *fit_width(tiers, width),
        *(x for t in extra for x in fit_width(t, width)),
    ]


def uncovered_lines(d) -> list[str]:
    """A line per measured system shown without a band because validate has no points of the compared model on
    it (analysis/measured_bands.uncovered), so an empty band does not read as an exact figure: under the terminal's
    headline and the report page's (report/page.tables_html)."""
    from jalapeno.analysis.measured_bands import uncovered, validated_set

    lines = []
    for n, s in d.systems.items():
        band = uncovered(n, d.model) if validated_set(s.headline.efficiency_source) else None
        if band is not None:
            lines.append(
                f"no band for {n}: its measured error band is validate's on {', '.join(band.models)}; "
                f"validate has no {d.model} points on it"
            )
    return lines


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


#: what a tiers cell is (``{conv}``: the comparison's power convention); the per-kW and $ figures make the
#: planner's question "tok/s/kW and $/M tok at the speed I need" one command (README), not a division by hand
TIERS_CAPTION = (
    "each cell: throughput per chip (tok/s) @ per-user speed (tok/s/user) (the same point's tok/s per "
    "kW, {conv} power, and $ per M tokens at the system's $/chip-hour; tokens count input + output): the "
    "deployment that runs it; interpolated: the floor falls between two frontier points (log-log), run "
    "by the two deployments named; --tiers NAME=SPEED sets the floors (e.g. --tiers need=50)"
)


def headline_bounds(d: ComparisonRecord) -> set[str]:
    """The bound names compare's headline prints (at peak and at max tok/s/user, decode and prefill), for
    cell_notes.bound_caption."""
    return {
        b
        for s in d.systems.values()
        for h in [s.headline]
        for b in (
            h.bound_at_peak,
            h.prefill_bound_at_peak,
            h.bound_at_max_interactivity,
            h.prefill_bound_at_max_interactivity,
        )
        if b
    }


def headline_limits(d: ComparisonRecord) -> set[str]:
    """The caps compare's headline prints (at peak and at max tok/s/user), for cell_notes.cap_caption (cap53)."""
    return {
        x for s in d.systems.values() for x in (s.headline.limit_at_peak, s.headline.limit_at_max_interactivity) if x
    }


#: what a disaggregated point's bound cell says (docs/metrics.md §4)
PREFILL_BOUND_CAPTION = (
    "decode X; prefill Y (S of chips): a disaggregated point's decode step is X-bound and its "
    "prefill pool's full token-budget step Y-bound, that pool holding a share S of the point's chips"
)


def frontier_table(points: Sequence[PointRecord], title: str) -> Table:
    """One row per frontier point (the concurrency cap and the requests in flight both, labelled); the
    per-kW column names its power convention and the caption the power it divides by, as compare's
    headline does (``tok/s/kW (all-in)``, ``power (all-in): all-in provisioned, 1,150 W per chip``)."""
    kw_col, caption = "tok/s/kW", CONCURRENCY_CAPTION
    if points:
        p0 = points[0]
        kw_col = f"tok/s/kW ({p0.power_convention})"
        caption = (
            f"power ({p0.power_convention}): {p0.power_label}, {p0.power_w_per_chip:,.0f} W per chip; "
            + CONCURRENCY_CAPTION
        )
        if any(p.limit for p in points):
            caption += "; " + cap_caption({p.limit for p in points})
        if any(p.prefill_bound for p in points):
            caption += "; " + PREFILL_BOUND_CAPTION
        caption += "\n" + bound_caption({b for p in points for b in (p.bound, p.prefill_bound) if b})
    t = Table(title=title, caption=caption)
    for col in (
        "tok/s/user",
        "tok/s/chip",
        "out tok/s/chip",
        kw_col,
        "TTFT ms",
        "TPOT ms",
        "E2E s",
        "conc. cap",
        "in flight",
        "chips",
        "bound",
        "deployment",
    ):
        # a figure on one line ('79,85' over '2' at 100 characters); the bound and deployment wrap between words
        t.add_column(col, overflow="fold", no_wrap=col not in ("bound", "deployment"))
    for p in points:
        t.add_row(
            _f(p.interactivity, ".1f"),
            _f(p.throughput_per_chip, ",.0f"),
            _f(p.output_throughput_per_chip, ",.0f"),
            _f(p.tok_s_per_kw, ",.0f"),
            _f(p.ttft_s * 1e3, ",.0f"),
            _f(p.tpot_s * 1e3, ",.1f"),
            _f(p.e2e_s, ",.1f"),
            _f(p.concurrency, ",.0f"),
            _f(p.in_flight, ",.0f"),
            _f(p.chips, ",.0f"),
            point_bound_capped(p),
            p.deployment.label,
        )
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
                raise SpecError(
                    "--out", "writing Parquet needs pyarrow", "pip install pyarrow, or use .csv/.json"
                ) from None
            record.to_frame().to_parquet(p, index=False)
        else:
            raise SpecError("--out", f"unknown file type {ext!r}", "use a .csv, .json or .parquet file")
    except OSError as e:
        raise SpecError("--out", f"cannot write {p}: {e.strerror or e}", "give a writable path") from None
    return p
