"""report/html.warm_chart: plotly's start-up done ahead of the first chart (round 43, while ``compare``'s sweeps run in
worker processes) leaves the chart's page JSON as it is. Each figure is built in a fresh interpreter, one cold and one
warmed first, since plotly's validator cache, once loaded, stays for the process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("plotly")

SRC = str(Path(__file__).resolve().parents[2] / "src")
SCRIPT = """
import sys
import plotly.graph_objects as go
import plotly.io as pio
from jalapeno.report import html
if sys.argv[1] == "warm":
    html.warm_chart()
fig = html._panels("chip")
for col in (1, 2, 3):
    fig.add_trace(go.Scatter(x=[1, 10, 100], y=[3, 2, 1], mode="lines+markers", name="b200", hovertext=["a", "b", "c"],
                             line={"color": "#123456"}, showlegend=col == 1, hoverinfo="text+name"), row=1, col=col)
    html._vline(fig, 20.0, col)
fig.update_xaxes(type="log", row=1, col=2)
print(pio.to_json(fig))
"""


def _json(mode: str) -> str:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], env=env, check=True, capture_output=True, text=True
    ).stdout


def test_a_warmed_process_draws_the_same_figure_as_a_cold_one():
    cold, warm = _json("cold"), _json("warm")
    assert "per kW (chip power)" in cold  # the panels' titles, as frontier_figure gives them
    assert warm == cold
