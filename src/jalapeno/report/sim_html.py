"""Interactive HTML of a simulation: latency CDFs (TTFT, TPOT, E2E) and the time series of
running and waiting requests and KV-cache occupancy.

Every axis is titled with its unit; KV occupancy is drawn as a percentage of the KV capacity
on a 0-100% axis (a fraction of a per-cent stays visibly small rather than filling the panel).
The legend sits above the plots, horizontal, and the page fills the browser window.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def simulation_figure(result):
    """A plotly Figure from a :class:`jalapeno.serve.sim.simulation.SimResult`."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from jalapeno.report.html import _esc
    from jalapeno.serve.sim.metrics import downsample

    fig = make_subplots(
        rows=2,
        cols=3,
        specs=[[{}, {}, {}], [{"colspan": 2}, None, {}]],
        vertical_spacing=0.16,
        subplot_titles=("TTFT CDF", "TPOT CDF", "E2E latency CDF", "running / waiting requests", "KV-cache occupancy"),
    )
    df = result.requests
    for col, (name, scale, label) in enumerate(
        (("ttft_s", 1e3, "TTFT (ms)"), ("tpot_s", 1e3, "TPOT (ms)"), ("e2e_s", 1, "E2E latency (s)")), 1
    ):
        x = np.sort(df[name].to_numpy() * scale)
        y = np.arange(1, x.size + 1) / max(x.size, 1)
        fig.add_trace(
            go.Scatter(x=x, y=y, mode="lines", name=label, showlegend=False, line={"color": "#0072B2"}), row=1, col=col
        )
        fig.update_xaxes(title_text=label, row=1, col=col)
        fig.update_yaxes(title_text="fraction of requests ≤ x", range=[0, 1.02], row=1, col=col)
    ts = downsample(result.timeseries, 3000)
    fig.add_trace(
        go.Scatter(x=ts.t_s, y=ts.running, name="running requests", mode="lines", line={"color": "#009E73"}),
        row=2,
        col=1,
    )
    fig.add_trace(
        go.Scatter(x=ts.t_s, y=ts.waiting, name="waiting requests", mode="lines", line={"color": "#D55E00"}),
        row=2,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=ts.t_s, y=ts.kv_occupancy * 100, name="KV-cache occupancy", mode="lines", line={"color": "#CC79A7"}
        ),
        row=2,
        col=3,
    )
    fig.update_xaxes(title_text="simulated time (s)", row=2, col=1)
    fig.update_yaxes(title_text="requests", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text="simulated time (s)", row=2, col=3)
    fig.update_yaxes(title_text="KV cache used (% of capacity)", range=[0, 100], row=2, col=3)
    c = result.config
    fig.update_layout(
        title=_esc(f"{c.get('model')} on {c.get('system')} · {c.get('deployment', {}).get('label', '')}"),
        height=820,
        autosize=True,
        margin={"l": 70, "r": 20, "t": 100, "b": 70},
        legend={"orientation": "h", "x": 1, "y": 1.04, "xanchor": "right", "yanchor": "bottom"},
    )
    return fig


def write_sim_html(result, path: str | Path) -> Path:
    """Write the simulation chart (:func:`jalapeno.report.html.write_figure`)."""
    from jalapeno.report.html import write_figure

    return write_figure(simulation_figure(result), path)
