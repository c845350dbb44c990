"""Parity plot of a validation: predicted against measured, one panel per metric, log-log."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def write_parity(rows: pd.DataFrame, path: str | Path) -> Path:
    """Write an interactive parity plot (hover: id, deployment, mapping, error).

    Raises:
        SpecError: the file cannot be written.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    metrics = ["throughput_per_chip", "interactivity", "ttft_s", "tpot_s"]
    fig = make_subplots(rows=1, cols=4, subplot_titles=metrics)
    ok = rows.dropna(subset=["predicted"])
    for col, m in enumerate(metrics, 1):
        d = ok[ok.metric == m]
        for (src, system), g in d.groupby(["source", "system"]):
            hover = [f"{r.id}<br>{r.deployment or r.mapping}<br>err {r.error:+.0%}" + (" (kernels calibrated)"
                     if r.kernels_calibrated else "") for r in g.itertuples()]
            fig.add_trace(go.Scatter(x=g.measured, y=g.predicted, mode="markers", name=f"{src} {system}",
                                     legendgroup=f"{src} {system}", showlegend=col == 1, hovertext=hover,
                                     hoverinfo="text"), row=1, col=col)
        if not d.empty:
            lo, hi = float(min(d.measured.min(), d.predicted.min())), float(max(d.measured.max(), d.predicted.max()))
            fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line={"dash": "dash", "color": "grey"},
                                     showlegend=False), row=1, col=col)
        fig.update_xaxes(type="log", title_text="measured", row=1, col=col)
        fig.update_yaxes(type="log", title_text="predicted", row=1, col=col)
    fig.update_layout(title="jalapeno validation: predicted vs measured", height=520, width=1700)
    from jalapeno.report.html import write_figure

    return write_figure(fig, path)
