"""Interactive Plotly HTML of the frontiers of a comparison (or of one system).

Three panels share the interactivity axis (tok/s/user): throughput per chip, tokens/s per kW
(the comparison's power convention) and tokens per dollar-hour per chip. Every marker's hover
shows the deployment, bound, concurrency, TTFT and TPOT. The file embeds plotly.js, so it opens
offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from jalapeno.errors import SpecError

if TYPE_CHECKING:
    from jalapeno.analysis.records import ComparisonRecord, PointRecord


def _hover(p: PointRecord) -> str:
    d = p.deployment
    mtp = d.mtp
    return (f"{d.label}<br>chips {p.chips:.0f} · concurrency {p.concurrency:.0f}"
            f"<br>bound: {p.bound}{(' · limit: ' + p.limit) if p.limit else ''}"
            f"<br>TTFT {p.ttft_s * 1e3:.0f} ms · TPOT {p.tpot_s * 1e3:.1f} ms"
            f"<br>{p.throughput_per_chip:.0f} tok/s/chip · {p.interactivity:.1f} tok/s/user"
            + (f"<br>MTP k={mtp.draft_tokens} α={mtp.acceptance}" if mtp else ""))


def frontier_figure(result: ComparisonRecord):
    """A plotly Figure of a comparison's frontiers."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    conv = result.power_convention
    fig = make_subplots(rows=1, cols=3, subplot_titles=(
        "throughput per chip (tok/s)", f"tok/s per kW ({conv} power)", "tok/s per $/h per chip"))
    for name, s in result.systems.items():
        pts = s.frontier
        x = [p.interactivity for p in pts]
        hover = [_hover(p) for p in pts]
        usd = s.headline.usd_per_mtok_at_peak * s.headline.peak_throughput_per_chip * 3600 / 1e6
        series = ([p.throughput_per_chip for p in pts], [p.tok_s_per_kw for p in pts],
                  [p.throughput_per_chip / usd for p in pts])
        for col, y in enumerate(series, start=1):
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=name, legendgroup=name,
                                     showlegend=col == 1, hovertext=hover, hoverinfo="text+name"),
                          row=1, col=col)
    for col in (1, 2, 3):
        fig.update_xaxes(title_text="interactivity (tok/s/user)", type="log", row=1, col=col)
        fig.update_yaxes(type="log", row=1, col=col)
    wl = result.workload
    fig.update_layout(title=f"{result.model} · ISL {wl.isl} / OSL {wl.osl} · {result.precision}"
                      f" · baseline {result.baseline}", height=520, width=1500,
                      hovermode="closest")
    return fig


def write_figure(fig, path: str | Path) -> Path:
    """Write a plotly figure as a self-contained HTML file (plotly.js embedded, opens offline).

    Raises:
        SpecError: the file cannot be written.
    """
    p = Path(path)
    try:
        fig.write_html(str(p), include_plotlyjs=True, full_html=True)
    except OSError as e:
        raise SpecError("--html", f"cannot write {p}: {e.strerror or e}", "give a writable file path") from None
    return p


def write_html(result: ComparisonRecord, path: str | Path) -> Path:
    """Write the frontier chart of ``result`` to ``path`` (:func:`write_figure`)."""
    return write_figure(frontier_figure(result), path)
