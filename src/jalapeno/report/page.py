"""``jalapeno report``: one self-contained HTML page for a model × workload × systems question.

The page holds plotly.js inline (opens offline), the comparison's data as JSON, and a small
script that draws it. Controls: metric (throughput per chip, tokens/s per kW, tokens/s per
($/chip-hour)), power convention (chip TDP, sustained, all-in; for the per-kW metric) and x axis
(interactivity in tok/s/user, or E2E latency in s). Each system has one colour
(report/colors.py); its efficiency band (``--bands``) is a shaded region; tier floors are dashed
vertical lines on the interactivity axis; measured points (InferenceX, shipped with the package or
a user CSV of the same columns) are drawn as open markers in the system's colour, one legend entry
per configuration (precision · agg/disagg · MTP): circles where the system's frontier models that
configuration, diamonds marked "not like for like" where it does not (an MTP run over a frontier
without MTP; ``--like-for-like`` keeps only the matching ones). Hover: the deployment, bound,
concurrency cap and requests in flight, TTFT, TPOT and E2E. Below the chart: the headline table and the
ratio table with its flags (at a frontier's end, below its start, unreachable), then the tiers.
Buttons export the current view as PNG or SVG (plotly.js renders them in the browser).

The page's data (the frontiers, bands and measured points as JSON) is report/page_data.py's.

Every user string (system, model and deployment names, CSV text) is HTML-escaped in the tables
and the hover text, and the embedded JSON escapes ``<``, ``>`` and ``&`` so no string can close
the script element.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jalapeno.analysis.bound_words import bound_cell, with_cap
from jalapeno.errors import SpecError
from jalapeno.report.cell_notes import (
    BELOW_START,
    ESTIMATE_MARK,
    below_start_flag,
    bound_caption,
    cap_caption,
    end_flag,
    estimate_caption,
    frontier_peaks,
    unreachable_tier,
)
from jalapeno.report.win_tables import bound_parts, power_ratio_line, where_wins_parts
from jalapeno.report.html import _esc
from jalapeno.report.tables import (
    BAND_ROW_CAPTION,
    CONCURRENCY_CAPTION,
    HEADLINE_BAND_CAPTION,
    TOKENS_CAPTION,
    headline_columns,
    uncovered_lines,
    band_peaks,
    headline_bounds,
    headline_limits,
    power_caption,
    usd_text,
)
from jalapeno.report.page_data import (  # noqa: F401 (re-exported: split from here, round 53)
    frontier_config,
    measured_config,
    measured_warning,
    report_data,
)
from jalapeno.report.compare_cells import (
    band_cells,
    band_moves,
    headline_band,
    iso_rows,
    peak_load,
    peak_usd_cell,
    ratio_columns,
    tier_deployments,
    tier_energy_cost,
)

if TYPE_CHECKING:
    from jalapeno.analysis.records import ComparisonRecord

#: the metric selector's labels; per $: a chip's tok/s over its $/chip-hour, i.e. tokens per $ / 3,600 ('tok/s per $/h
#: per chip' read as if something were per chip twice, newuser50)
USD_METRIC = "tok/s per ($/chip-hour)"
METRICS = {"chip": "throughput per chip (tok/s)", "kw": "tok/s per kW", "usd": USD_METRIC}
XAXES = {"interactivity": "interactivity (tok/s/user)", "e2e": "E2E latency (s)"}
#: what each power convention's watts are, in the y axis's title under "tok/s per kW" (analysis/power_cost.
#: power_w_per_chip's labels): a chart exported alone named the convention but not what it counts (report54)
POWER_WORDS = {
    "chip": "each chip's TDP",
    "sustained": "each chip's sustained W, its TDP where none is published",
    "all-in": "all-in provisioned W per chip, each system's basis in the notes",
}
#: the tokens every y metric counts (the tables' "in+out"; InferenceX's throughput per GPU)
Y_BASIS = " · input + output tokens"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], cls: str) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _fmt(x, fmt: str) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, fmt)


def _ratio_cell(
    r: Mapping,
    kw: Mapping | None = None,
    usd: Mapping | None = None,
    peaks: tuple | None = None,
    baseline_row: bool = False,
) -> str:
    """A ratio with its flag, as table HTML (the flag in a <span class="flag">); ``kw`` and ``usd``, the per-kW and
    per-$ ratios at the same speed, in brackets where the per-chip and per-kW ones are numbers ("-" for a per-$
    one absent or not finite), as the terminal's table (report/tables.comparison_tables) prints them; the end flag
    names its side (report/cell_notes.end_flag: ``peaks``, the two frontiers' peak tok/s/chip; ``baseline_row``, the
    baseline's own row)."""
    if r["ratio"] is None or (isinstance(r["ratio"], float) and math.isnan(r["ratio"])):
        a, b = r["status_a"] == "unreachable", r["status_b"] == "unreachable"
        return f'<span class="flag">unreachable ({"both" if a and b else "this" if a else "baseline"})</span>'
    cell = f"{r['ratio']:.2f}×"
    if kw is not None and isinstance(kw["ratio"], (int, float)) and math.isfinite(kw["ratio"]):
        u = usd["ratio"] if usd is not None else None
        cell += f" ({kw['ratio']:.2f}×, " + (f"{u:.2f}×)" if isinstance(u, (int, float)) and math.isfinite(u) else "-)")
    if below := below_start_flag(r):  # that side reads its peak (report/compare_cells._ratio)
        return cell + f' <span class="flag">{_esc(below)}</span>'
    flag = end_flag(r, peaks, baseline_row)
    return cell + (f' <span class="flag">{_esc(flag)}</span>' if flag else "")


def tables_html(rec: ComparisonRecord, estimated: Collection[str] = ()) -> str:
    """Headline, ratio and tier tables of a comparison as escaped HTML; the $ figures of the systems named in
    ``estimated`` (report/cell_notes.estimated_prices) carry cell_notes.ESTIMATE_MARK, explained under the
    headline and the tiers, as the terminal's tables (report/tables.comparison_tables) do."""
    conv = rec.power_convention
    e = html.escape

    def est(name: str) -> str:
        return ESTIMATE_MARK if name in estimated else ""

    caption = f'<p class="note">{e(estimate_caption(estimated))}.</p>' if estimated else ""
    band = headline_band  # each figure's (low to high) with --bands, as the terminal's headline gives it
    head_rows = [
        [
            e(n),
            _fmt(h.peak_throughput_per_chip, ",.0f") + e(band(h, "peak_throughput_per_chip", ",.0f")),
            _fmt(h.peak_output_throughput_per_chip, ",.0f"),
            _fmt(h.peak_tok_s_per_kw[conv], ",.0f") + e(band(h, "peak_tok_s_per_kw", ",.0f", conv)),
            e(usd_text(h.usd_per_mtok_at_peak) + est(n)),
            e(
                with_cap(
                    bound_cell(h.bound_at_peak, h.prefill_bound_at_peak, h.prefill_chip_share_at_peak), h.limit_at_peak
                )
            ),
            e(peak_load(fr.frontier)),
            _fmt(h.max_interactivity, ",.1f") + e(band(h, "max_interactivity", ",.1f")),
            e(
                with_cap(
                    bound_cell(
                        h.bound_at_max_interactivity,
                        h.prefill_bound_at_max_interactivity,
                        h.prefill_chip_share_at_max_interactivity,
                    ),
                    h.limit_at_max_interactivity,
                )
            ),
            _fmt(h.min_e2e_s, ".2f"),
            e(h.deployment_at_peak),
        ]
        for n, fr in rec.systems.items()
        for h in [fr.headline]
    ]
    head_rows += [
        [e(n), "infeasible", *["-"] * 8, e(f"cannot run the model: {why}")]  # as the terminal's table: the
        for n, why in getattr(rec, "infeasible", {}).items()
    ]  # page dropped them, silently
    out = [
        "<h2>Headline</h2>",
        _table(
            ["system", *headline_columns(conv)],
            head_rows,
            "headline",
        ),
        f'<p class="note">{e(TOKENS_CAPTION)}. {e(power_caption(rec))}.</p>'
        + (f'<p class="note">{e(line)}.</p>' if (line := power_ratio_line(rec)) else ""),
        f'<p class="note">{e(CONCURRENCY_CAPTION)}.</p>' + caption,
        f'<p class="note">{e(bound_caption(headline_bounds(rec)))}.</p>'
        + (f'<p class="note">{e(cap)}.</p>' if (cap := cap_caption(headline_limits(rec))) else ""),
    ]
    if any(fr.headline.bands is not None for fr in rec.systems.values()):  # the terminal's band legend and its
        out += [f'<p class="note">{e(x)}.</p>' for x in (HEADLINE_BAND_CAPTION, *uncovered_lines(rec))]  # no-band lines
    first = next(iter(rec.comparisons.values()))
    xs = [r["x"] for r in first.iso_interactivity["throughput_per_chip"]]
    rows, banded = [], False
    for n, c in rec.comparisons.items():
        pk = c.peak_ratio
        rows.append(
            [
                e(n),
                f"{pk['throughput_per_chip']:.2f}× ({pk['tok_s_per_kw']:.2f}×, "
                + e(peak_usd_cell(pk)).replace("x", "×")
                + ")",
                f"{c.max_interactivity_ratio:.2f}×",
            ]
            + [
                _ratio_cell(r, k, u, frontier_peaks(rec, n), n == rec.baseline)
                for r, k, u in iso_rows(c.iso_interactivity)
            ]
        )
        if n != rec.baseline and getattr(c, "bands", None) and band_moves(c.bands):
            rows.append([e(f"{n} band"), *(e(x) for x in band_cells(c.bands, band_peaks(rec, n)))])
            banded = True
    out += [
        f"<h2>Ratios vs {e(rec.baseline)}</h2>",
        "<p>Throughput per chip (per kW, "
        + e(conv)
        + " power, and per $, in brackets). Flags: <i>at frontier end: who</i> — "
        "the speed is within 10% of that frontier's last point or in its tail below 10% of its peak, where ratios "
        "swing (who: this, the row's system; baseline; or both); "
        "<i>" + e(BELOW_START) + ": who</i> — slower than that frontier's first (slowest) point, where that side reads "
        "its peak throughput: at a lower per-user speed a system serves at least its peak's (who: this, baseline or "
        "both); <i>unreachable</i> — that frontier "
        "never reaches the speed."
        + (" " + e(BAND_ROW_CAPTION) if banded else "")
        + (
            f" Per $ of {e(', '.join(sorted(estimated)))}: at an estimated $/chip-hour (est. in the tables)."
            if estimated
            else ""
        )
        + "</p>",
        _table(ratio_columns(xs), rows, "ratios"),
    ]
    for parts, cls in ((where_wins_parts(rec), "where-wins"), (bound_parts(rec), "bounds")):  # where, why (ux51)
        if parts is not None:
            out += [
                f"<h2>{e(parts[0][0].upper() + parts[0][1:])}</h2>",
                _table(parts[1], [[e(c) for c in r] for r in parts[2]], cls),
                f'<p class="note">{e(parts[3])}.</p>',
            ]
    tiers = list(first.tiers)
    trows = [
        [e(n)]
        + [
            (
                e(unreachable_tier(rec.systems[n].headline))
                if c.tiers[t]["status"] == "unreachable"
                else f"{_fmt(c.tiers[t]['throughput'], ',.0f')} @ {_fmt(c.tiers[t]['interactivity'], '.0f')}"
                f" ({e(tier_energy_cost(c.tiers[t], c.tiers_tok_s_per_kw[t], rec.systems[n].frontier) + est(n))})"
                f"<br><small>{e(tier_deployments(c.tiers[t], rec.systems[n].frontier))}</small>"
            )
            for t in tiers
        ]
        for n, c in rec.comparisons.items()
    ]
    heads = [
        t
        + (
            f" (≥ {first.tiers[t]['floor_tok_per_s_per_user']:g} tok/s/user)"
            if first.tiers[t].get("floor_tok_per_s_per_user")
            else " (peak)"
        )
        for t in tiers
    ]
    out += [
        (
            "<h2>Operating tiers</h2><p>Best throughput per chip (tok/s, input + output) at or above a per-user "
            "speed floor (@ its tok/s/user), with the same point's tok/s per kW (" + e(conv) + " power) and $ per "
            "M tokens (input + output) at the system's $/chip-hour.</p>"
        ),
        _table(["system", *heads], trows, "tiers") + caption,
    ]
    return "\n".join(out)


_SCRIPT = r"""
const D = JSON.parse(document.getElementById('report-data').textContent);
const gd = document.getElementById('plot');
const ctl = id => document.getElementById(id);
function yOf(s, metric, conv) { return metric === 'kw' ? s.kw[conv] : s[metric]; }
function draw() {
  const metric = ctl('metric').value, conv = ctl('convention').value, xk = ctl('xaxis').value;
  const traces = [];
  for (const s of D.systems) {
    if (s.band) {
      const hi = s.band.high, lo = s.band.low;
      traces.push({x: hi[xk].concat(lo[xk].slice().reverse()),
                   y: yOf(hi, metric, conv).concat(yOf(lo, metric, conv).slice().reverse()),
                   fill: 'toself', fillcolor: s.fill, mode: 'lines', line: {width: 0, color: s.color},
                   name: s.name + ' band', legendgroup: s.name, showlegend: false, hoverinfo: 'skip'});
    }
    traces.push({x: s.frontier[xk], y: yOf(s.frontier, metric, conv), mode: 'lines+markers', name: s.name,
                 legendgroup: s.name, line: {color: s.color}, marker: {color: s.color},
                 hovertext: s.frontier.hover, hoverinfo: 'text+name'});
    const mine = D.measured.filter(p => p.system === s.name && p[xk] !== null);
    for (const cfg of [...new Set(mine.map(p => p.config + (p.like ? '' : ' (not like for like)')))]) {
      const m = mine.filter(p => p.config + (p.like ? '' : ' (not like for like)') === cfg);
      traces.push({x: m.map(p => p[xk]), y: m.map(p => metric === 'kw' ? p.kw[conv] : p[metric]),
                   mode: 'markers', name: s.name + ' measured · ' + cfg, legendgroup: s.name,
                   marker: {color: s.color, symbol: m[0].like ? 'circle-open' : 'diamond-open', size: 10,
                            line: {width: 2, color: s.color}},
                   hovertext: m.map(p => p.hover), hoverinfo: 'text+name'});
    }
  }
  const shapes = [], notes = [];
  if (xk === 'interactivity') {
    for (const [tier, f] of D.floors.filter(tf => tf[1] > 0)) {  // a 0 floor has no place on a log axis
      shapes.push({type: 'line', xref: 'x', yref: 'paper', x0: f, x1: f, y0: 0, y1: 1,
                   line: {dash: 'dash', color: '#555', width: 1}});
      notes.push({x: Math.log10(f), y: 0.01, xref: 'x', yref: 'paper', text: ' ' + tier + ' ≥ ' + f,
                  showarrow: false, xanchor: 'left', yanchor: 'bottom', font: {size: 11, color: '#555'}});
    }
  }
  const ylab = (metric === 'kw' ? D.labels.kw + ' (' + conv + ' power: ' + D.power_words[conv] + ')'
                                : D.labels[metric]) + D.y_basis;
  Plotly.react(gd, traces, {
    title: {text: D.title_html}, autosize: true, height: 600, hovermode: 'closest',
    xaxis: {type: 'log', title: {text: D.xlabels[xk]}}, yaxis: {type: 'log', title: {text: ylab}},
    shapes: shapes, annotations: notes, margin: {l: 70, r: 20, t: 60, b: 60},
    legend: {orientation: 'h', x: 0, y: -0.15}}, D.config);
}
for (const id of ['metric', 'convention', 'xaxis']) ctl(id).addEventListener('change', draw);
for (const fmt of ['png', 'svg']) ctl('export-' + fmt).addEventListener('click',
  () => Plotly.downloadImage(gd, {format: fmt, filename: 'jalapeno-report', width: 1400, height: 700}));
draw();
"""

_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
.controls{display:flex;flex-wrap:wrap;gap:1.2em;align-items:center;margin:.5em 0}
#plot{width:100%;min-height:600px}table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}th:first-child,td:first-child{text-align:left}
.flag{color:#b03000;font-size:.85em}p{max-width:70em}.note{color:#555;font-size:.9em}"""


def _options(values: Mapping[str, str], selected: str) -> str:
    return "".join(
        f'<option value="{html.escape(k)}"{" selected" if k == selected else ""}>{html.escape(v)}</option>'
        for k, v in values.items()
    )


def render_report(
    rec: ComparisonRecord,
    data: dict,
    notes: Sequence[str] = (),
    estimated: Collection[str] = (),
    reproduce: Sequence[str] = (),
) -> str:
    """The page's HTML text (plotly.js inline); ``estimated``: the systems priced at an estimated $/chip-hour
    (:func:`tables_html`); ``reproduce``: the closing lines, the command that wrote the page and the versions it ran
    on (cli/report_cmd.reproduce_lines), each a ``<p class="reproduce">`` under a "Reproduce" heading."""
    from plotly.offline import get_plotlyjs

    from jalapeno.report.html import PLOT_CONFIG, reproduce_html

    data = {
        **data,
        "labels": METRICS,
        "xlabels": XAXES,
        "power_words": POWER_WORDS,
        "y_basis": Y_BASIS,
        "config": PLOT_CONFIG,
        "title_html": _esc(data["title"]),
    }
    blob = json.dumps(data, allow_nan=False).replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    conv = {c: c for c in data["conventions"]}
    note_html = "".join(f'<p class="note">{html.escape(n)}</p>' for n in notes)
    repro_html = reproduce_html(reproduce)  # the chart compare writes closes with the same section
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(data["title"])} · jalapeno report</title>
<style>{_STYLE}</style><script>{get_plotlyjs()}</script></head>
<body><h1>{html.escape(data["title"])}</h1>
<p>Baseline {html.escape(rec.baseline)}. Lines: each system's Pareto frontier; shaded: its band
(a derived system's frontiers under its low and high efficiency sets; a system fitted on its own kernels: its
frontier at its validate p10/p90 error, docs/audit.md §3.1); open circles: measured points whose
configuration (precision · agg/disagg · MTP, in the legend) the frontier models; open diamonds: measured points
it does not (not like for like); dashed lines: tier floors.</p>
<div class="controls">
<label>metric <select id="metric">{_options(METRICS, "chip")}</select></label>
<label>power convention <select id="convention">{_options(conv, data["convention"])}</select></label>
<label>x axis <select id="xaxis">{_options(XAXES, "interactivity")}</select></label>
<button id="export-png">export PNG</button> <button id="export-svg">export SVG</button>
</div>
<div id="plot"></div>
{note_html}
{tables_html(rec, estimated)}
{repro_html}
<script type="application/json" id="report-data">{blob}</script>
<script>{_SCRIPT}</script>
</body></html>
"""


def write_report(
    rec: ComparisonRecord,
    data: dict,
    path: str | Path,
    notes: Sequence[str] = (),
    estimated: Collection[str] = (),
    option: str = "--html",
    reproduce: Sequence[str] = (),
) -> Path:
    """Write the report page to ``path`` (``estimated``, ``reproduce``: as :func:`render_report`'s; ``option``: the
    option that gave the path, named in an error: ``--html``, or ``--out``, its old spelling).

    Raises:
        SpecError: the path does not end in .html or cannot be written.
    """
    p = Path(path)
    if p.suffix.lower() not in (".html", ".htm"):
        raise SpecError(option, f"{str(p)!r} is not an .html file", "give a path ending in .html")
    try:
        p.write_text(render_report(rec, data, notes, estimated, reproduce), encoding="utf-8")
    except OSError as e:  # named "--out" whatever was typed: `report --html /proc/x.html` (break46)
        raise SpecError(option, f"cannot write {p}: {e.strerror or e}", "give a writable file path") from None
    return p
