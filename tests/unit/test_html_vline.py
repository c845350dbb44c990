"""report/html._vline draws the tier floor's dashed line as plotly's own ``add_vline`` does (round 39: the same
page JSON without add_vline's per-call panel search and shape re-validation)."""

from __future__ import annotations

import pytest

go = pytest.importorskip("plotly.graph_objects")
pio = pytest.importorskip("plotly.io")
from plotly.subplots import make_subplots  # noqa: E402

from jalapeno.report.html import _vline  # noqa: E402


def _figure(panels=(1, 2, 3)):
    fig = make_subplots(rows=1, cols=3)
    for col in panels:
        fig.add_trace(go.Scatter(x=[1, 10, 100], y=[3, 2, 1]), row=1, col=col)
    return fig


@pytest.mark.parametrize("panels", [(1, 2, 3), (1, 3)])
def test_vline_is_add_vline(panels):
    ours, plotly_own = _figure(panels), _figure(panels)
    for floor in (10.0, 50.0):
        for col in (1, 2, 3):
            _vline(ours, floor, col)
            plotly_own.add_vline(x=floor, line={"dash": "dash", "color": "#555", "width": 1}, row=1, col=col)
    assert pio.to_json(ours) == pio.to_json(plotly_own)


def test_vline_shape_by_hand():
    fig = _figure()
    _vline(fig, 20.0, 2)
    (shape,) = fig.layout.shapes
    assert (shape.type, shape.x0, shape.x1, shape.y0, shape.y1) == ("line", 20.0, 20.0, 0, 1)
    assert (shape.xref, shape.yref) == ("x2", "y2 domain")  # panel 2's axes, the whole height of its domain
    assert (shape.line.dash, shape.line.color, shape.line.width) == ("dash", "#555", 1)


def test_empty_panel_gets_no_line():
    fig = _figure(panels=(1,))
    _vline(fig, 20.0, 3)
    assert fig.layout.shapes == ()
