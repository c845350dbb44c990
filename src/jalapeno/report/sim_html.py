"""Interactive HTML of a simulation: latency CDFs (TTFT, TPOT, E2E) and the time series of
running and waiting requests and KV-cache occupancy."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def simulation_figure(result):
    """A plotly Figure from a :class:`jalapeno.serve.sim.simulation.SimResult`."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from jalapeno.serve.sim.metrics import downsample

    fig = make_subplots(rows=2, cols=3, specs=[[{}, {}, {}], [{"colspan": 2}, None, {}]],
                        subplot_titles=("TTFT CDF", "TPOT CDF", "E2E CDF", "running / waiting requests",
                                        "KV-cache occupancy"))
    df = result.requests
    for col, (name, scale, unit) in enumerate((("ttft_s", 1e3, "ms"), ("tpot_s", 1e3, "ms"), ("e2e_s", 1, "s")), 1):
        x = np.sort(df[name].to_numpy() * scale)
        y = np.arange(1, x.size + 1) / max(x.size, 1)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name, showlegend=False), row=1, col=col)
        fig.update_xaxes(title_text=f"{name[:-2]} ({unit})", row=1, col=col)
    ts = downsample(result.timeseries, 3000)
    fig.add_trace(go.Scatter(x=ts.t_s, y=ts.running, name="running", mode="lines"), row=2, col=1)
    fig.add_trace(go.Scatter(x=ts.t_s, y=ts.waiting, name="waiting", mode="lines"), row=2, col=1)
    fig.add_trace(go.Scatter(x=ts.t_s, y=ts.kv_occupancy, name="KV occupancy", mode="lines"), row=2, col=3)
    fig.update_xaxes(title_text="simulated time (s)", row=2, col=1)
    fig.update_xaxes(title_text="simulated time (s)", row=2, col=3)
    c = result.config
    fig.update_layout(title=f"{c.get('model')} on {c.get('system')} · {c.get('deployment', {}).get('label', '')}",
                      height=760, width=1400)
    return fig


def write_sim_html(result, path: str | Path) -> Path:
    """Write the simulation chart (:func:`jalapeno.report.html.write_figure`)."""
    from jalapeno.report.html import write_figure

    return write_figure(simulation_figure(result), path)
