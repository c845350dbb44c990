"""Interactive Plotly HTML of the frontiers of a comparison (or of one system).

Three panels share the interactivity axis (tok/s/user): throughput per chip, tokens/s per kW
(the comparison's power convention) and tokens per dollar-hour per chip. Each system has one
colour on every panel (report/colors.py); its band (``--bands``: efficiency sets, or a measured
system's validate error, analysis/measured_bands.py) is a shaded region between the low and high
frontiers; tier floors are dashed vertical lines. Every marker's hover shows the deployment, bound,
concurrency, TTFT and TPOT. The page fills the browser window (no fixed width) and embeds plotly.js, so it opens offline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jalapeno.analysis.bound_words import point_bound_capped
from jalapeno.errors import SpecError
from jalapeno.report.colors import rgba, system_color

if TYPE_CHECKING:
    from jalapeno.analysis.records import ComparisonRecord, FrontierRecord, PointRecord

#: plotly.js config of every page: resizes with the window; the camera button saves a PNG
PLOT_CONFIG = {
    "responsive": True,
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "filename": "jalapeno", "scale": 2},
}


def hover_text(p: PointRecord) -> str:
    """Hover of one frontier point: deployment, chips, concurrency cap and requests in flight
    (docs/metrics.md §1), bound, TTFT/TPOT, throughput."""
    d = p.deployment
    mtp = d.mtp
    return (
        f"{_esc(d.label)}<br>chips {p.chips:.0f} · conc. cap {p.concurrency:,.0f} · in flight {p.in_flight:,.0f}"
        f"<br>bound: {_esc(point_bound_capped(p))}"
        f"<br>TTFT {p.ttft_s * 1e3:.0f} ms · TPOT {p.tpot_s * 1e3:.1f} ms · E2E {p.e2e_s:.1f} s"
        f"<br>{p.throughput_per_chip:.0f} tok/s/chip · {p.interactivity:.1f} tok/s/user"
        + (f"<br>MTP k={mtp.draft_tokens} α={mtp.acceptance}" if mtp else "")
    )


def _esc(s: str) -> str:
    """Escape a user string for plotly's HTML-like hover/legend text."""
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _usd_per_hour(fr: FrontierRecord) -> float:
    h = fr.headline
    return h.usd_per_mtok_at_peak * h.peak_throughput_per_chip * 3600 / 1e6


def frontier_figure(
    result: ComparisonRecord, bands: Mapping[str, Mapping] | None = None, floors: Sequence[tuple[str, float]] = ()
):
    """A plotly Figure of a comparison's frontiers.

    Args:
        result: the comparison record.
        bands: system → {"low": FrontierRecord | None, "high": FrontierRecord | None}
            (analysis.comparison.Comparison.band_frontiers); None entries are the calibrated frontier.
        floors: (tier name, floor in tok/s/user) drawn as dashed vertical lines.
    """
    import plotly.graph_objects as go

    conv = result.power_convention
    fig = _panels(conv)

    def series(pts, usd):
        return (
            [p.throughput_per_chip for p in pts],
            [p.tok_s_per_kw_by_convention[conv] for p in pts],
            [p.throughput_per_chip / usd for p in pts],
        )

    for name, s in result.systems.items():
        color = system_color(name)
        usd = _usd_per_hour(s)
        pts = s.frontier
        x = [p.interactivity for p in pts]
        band = (bands or {}).get(name)
        if band:
            lo, hi = band.get("low") or s, band.get("high") or s
            for col, (y_lo, y_hi) in enumerate(zip(series(lo.frontier, usd), series(hi.frontier, usd)), start=1):
                xs = [p.interactivity for p in hi.frontier] + [p.interactivity for p in reversed(lo.frontier)]
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=list(y_hi) + list(reversed(y_lo)),
                        fill="toself",
                        mode="lines",
                        line={"width": 0, "color": color},
                        fillcolor=rgba(color, 0.15),
                        name=f"{name} band",
                        legendgroup=name,
                        showlegend=False,
                        hoverinfo="skip",
                    ),
                    row=1,
                    col=col,
                )
        for col, y in enumerate(series(pts, usd), start=1):
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=y,
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    line={"color": color},
                    marker={"color": color},
                    showlegend=col == 1,
                    hovertext=[hover_text(p) for p in pts],
                    hoverinfo="text+name",
                ),
                row=1,
                col=col,
            )
    for tier, floor in (
        tf for tf in floors if tf[1] > 0
    ):  # a 0 floor (--tiers slow=0, the peak) has no place on a log axis
        for col in (1, 2, 3):
            _vline(fig, floor, col)
        fig.add_annotation(
            x=_log10(floor),
            y=0.01,
            xref="x",
            yref="y domain",
            text=_esc(f" {tier} ≥ {floor:g}"),
            showarrow=False,
            xanchor="left",
            yanchor="bottom",
            font={"size": 10, "color": "#555"},
        )
    if bands:
        fig.add_annotation(
            x=0,
            y=-0.4,
            xref="paper",
            yref="paper",
            showarrow=False,
            xanchor="left",
            text=(
                "shaded: the system's band (a derived system's frontiers under its low and high efficiency "
                "sets; a measured one's frontier at its validate p10/p90 error)"
            ),
            font={"size": 11, "color": "#555"},
        )
    for col in (1, 2, 3):
        fig.update_xaxes(title_text="interactivity (tok/s/user)", type="log", row=1, col=col)
        fig.update_yaxes(type="log", row=1, col=col)
    wl = result.workload
    fig.update_layout(
        title=_esc(f"{result.model} · ISL {wl.isl} / OSL {wl.osl} · {result.precision} · baseline {result.baseline}"),
        height=560,
        autosize=True,
        hovermode="closest",
        margin={"l": 60, "r": 20, "t": 90, "b": 150},
        legend={"orientation": "h", "x": 0, "y": -0.22, "xanchor": "left"},
    )
    return fig


def _panels(conv: str):
    """The figure's three empty panels (plotly make_subplots), titled for power convention ``conv``."""
    from plotly.subplots import make_subplots

    return make_subplots(
        rows=1,
        cols=3,
        horizontal_spacing=0.07,
        subplot_titles=("throughput per chip (tok/s)", f"tok/s per kW ({conv} power)", "tok/s per ($/chip-hour)"),
    )


def warm_chart() -> None:
    """Do, ahead of time, the first chart's fixed work: import plotly and make the panels once, which loads
    plotly's property validators (its ~0.1 s JSON table, cached for the process). About 0.15 s CPU that
    :func:`frontier_figure` then skips, the same page either way (validators check values, they do not change
    them). ``compare`` runs it while its sweeps run in worker processes (analysis/workers.meanwhile)."""
    _panels("all-in")


def _vline(fig, x: float, col: int) -> None:
    """A dashed vertical line at ``x`` across panel ``col``'s height: the shape ``fig.add_vline(x, row=1, col=col)``
    adds (x0 = x1 = x on the panel's x axis, y0 = 0 to y1 = 1 of its y axis's domain; the same page JSON, checked
    in tests/unit/test_html_vline.py), without add_vline's per-call search of every panel for traces and
    re-validation of every shape (about 2 ms a line, 6 a default comparison, round 39). Like add_vline, a panel
    with no trace gets no line."""
    sub = fig.get_subplot(1, col)
    xref, yref = (ax.plotly_name.replace("axis", "") for ax in (sub.xaxis, sub.yaxis))
    if not any((t.xaxis or "x", t.yaxis or "y") == (xref, yref) for t in fig.data):  # add_vline skips an empty panel
        return
    fig.add_shape(
        type="line",
        x0=x,
        x1=x,
        y0=0,
        y1=1,
        xref=xref,
        yref=f"{yref} domain",
        line={"dash": "dash", "color": "#555", "width": 1},
    )


def _log10(x: float) -> float:
    import math

    return math.log10(x)


def page_title(fig) -> str:
    """The browser-tab title of a figure's page: its layout title as plain text (markup such as
    ``<br>`` and HTML entities resolved), ``· jalapeno`` appended; ``jalapeno`` when it has none."""
    import html
    import re

    text = fig.layout.title.text or ""
    text = html.unescape(re.sub(r"<[^>]*>", " ", text))
    text = " ".join(text.split())
    return f"{text} · jalapeno" if text else "jalapeno"


def reproduce_html(lines: Sequence[str]) -> str:
    """A page's closing Reproduce section: a "Reproduce" heading and each line (the command that wrote the page and
    the versions it ran on, cli/report_cmd.reproduce_lines) as a ``<p class="reproduce">``, HTML-escaped; ``""``
    without lines. The report page and compare's chart write the same section.

    >>> reproduce_html(["reproduce: jalapeno compare -s 'a<b'"])
    '<h2>Reproduce</h2><p class="reproduce">reproduce: jalapeno compare -s &#x27;a&lt;b&#x27;</p>'
    >>> reproduce_html([])
    ''
    """
    import html

    return "<h2>Reproduce</h2>" + "".join(f'<p class="reproduce">{html.escape(r)}</p>' for r in lines) if lines else ""


def write_figure(fig, path: str | Path, reproduce: Sequence[str] = ()) -> Path:
    """Write a plotly figure as a self-contained HTML file (plotly.js embedded, opens offline),
    sized to the browser window, with the figure's title as the page title (:func:`page_title`;
    plotly's own page has an empty one, so a browser tab showed only the file name), and ``reproduce``'s lines under
    the chart (:func:`reproduce_html`; none by default).

    Raises:
        SpecError: the file cannot be written.
    """
    import html

    p = Path(path)
    page = fig.to_html(
        include_plotlyjs=True,
        full_html=True,
        config=PLOT_CONFIG,
        default_width="100%",
        default_height=f"{fig.layout.height or 600}px",
    )
    page = page.replace("</head>", f"<title>{html.escape(page_title(fig))}</title></head>", 1)
    if reproduce:
        page = page.replace("</body>", reproduce_html(reproduce) + "</body>", 1)
    try:
        p.write_text(page, encoding="utf-8")
    except OSError as e:
        raise SpecError("--html", f"cannot write {p}: {e.strerror or e}", "give a writable file path") from None
    return p


def write_html(
    result: ComparisonRecord,
    path: str | Path,
    bands: Mapping[str, Mapping] | None = None,
    floors: Sequence[tuple[str, float]] = (),
    reproduce: Sequence[str] = (),
) -> Path:
    """Write the frontier chart of ``result`` to ``path`` (:func:`write_figure`), with ``reproduce``'s lines (the
    command and data versions, cli/report_cmd.reproduce_lines) under it."""
    return write_figure(frontier_figure(result, bands, floors), path, reproduce)
