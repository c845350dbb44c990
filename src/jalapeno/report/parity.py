"""Parity plot of a validation: predicted against measured, one panel per metric, log-log.

Colour = system (report/colors.py, the same as on the compare chart), marker = source
(InferenceX measured runs, aiconfigurator kernel tables); every (source, system) group is in the
legend at its first panel, whichever metrics it has. The page fills the browser window.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jalapeno.report.colors import system_color

#: (metric of the validation rows, its unit): panel titles name the metric as the rows and tables do
METRICS = (("throughput_per_chip", "tok/s"), ("interactivity", "tok/s/user"), ("ttft_s", "s"), ("tpot_s", "s"))
#: marker per data source; others get "diamond"
SYMBOLS = {"inferencex": "circle", "aiconfigurator": "x"}


def write_parity(rows: pd.DataFrame, path: str | Path) -> Path:
    """Write an interactive parity plot (hover: id, deployment, mapping, error).

    Raises:
        SpecError: the file cannot be written.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from jalapeno.report.html import _esc, write_figure

    fig = make_subplots(rows=2, cols=2, subplot_titles=[f"{m} ({u})" for m, u in METRICS], vertical_spacing=0.14)
    ok = rows.dropna(subset=["predicted"])
    shown: set[tuple[str, str]] = set()
    for k, (m, unit) in enumerate(METRICS):
        row, col = k // 2 + 1, k % 2 + 1
        d = ok[ok.metric == m]
        for (src, system), g in d.groupby(["source", "system"]):
            hover = [
                f"{_esc(r.id)}<br>{_esc(r.deployment or r.mapping)}<br>err {r.error:+.0%}"
                + (" (kernels calibrated)" if r.kernels_calibrated else "")
                for r in g.itertuples()
            ]
            color = system_color(str(system))
            fig.add_trace(
                go.Scatter(
                    x=g.measured,
                    y=g.predicted,
                    mode="markers",
                    name=_esc(f"{src} {system}"),
                    legendgroup=f"{src} {system}",
                    showlegend=(src, system) not in shown,
                    marker={
                        "color": color,
                        "symbol": SYMBOLS.get(str(src).lower(), "diamond"),
                        "size": 8,
                        "line": {"width": 1, "color": color},
                    },
                    hovertext=hover,
                    hoverinfo="text",
                ),
                row=row,
                col=col,
            )
            shown.add((src, system))
        if not d.empty:
            lo, hi = float(min(d.measured.min(), d.predicted.min())), float(max(d.measured.max(), d.predicted.max()))
            fig.add_trace(
                go.Scatter(
                    x=[lo, hi],
                    y=[lo, hi],
                    mode="lines",
                    line={"dash": "dash", "color": "grey"},
                    name="parity (y = x)",
                    showlegend=k == 0,
                    hoverinfo="skip",
                ),
                row=row,
                col=col,
            )
        fig.update_xaxes(type="log", title_text=f"measured ({unit})", row=row, col=col)
        fig.update_yaxes(type="log", title_text=f"predicted ({unit})", row=row, col=col)
    fig.update_layout(
        title="jalapeno validation: predicted vs measured",
        height=900,
        autosize=True,
        margin={"l": 60, "r": 20, "t": 70, "b": 60},
        legend={"orientation": "v", "x": 1.01, "y": 1, "xanchor": "left"},
    )
    return write_figure(fig, path)
