"""Every chart page a command writes carries a browser-tab title (report/html.write_figure).

Plotly's own full page has an empty ``<title>``, so a tab, a bookmark or the history of a
``jalapeno compare`` / ``simulate`` / ``sensitivity`` / ``validate`` chart showed only its file
name. The expected titles are written out by hand from the figure titles set here.
"""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from jalapeno.errors import SpecError
from jalapeno.report.html import page_title, write_figure
from jalapeno.report.tornado import write_tornado


def _title(path) -> str:
    m = re.search(r"<title>(.*?)</title>", path.read_text(encoding="utf-8"), re.S)
    assert m, "the page has no <title>"
    return m.group(1)


def test_title_is_the_figure_title_as_plain_text(tmp_path):
    fig = go.Figure(layout={"title": {"text": "deepseek-r1 · ISL 8192<br>a &amp; b <i>c</i>"}})
    assert page_title(fig) == "deepseek-r1 · ISL 8192 a & b c · jalapeno"
    out = write_figure(fig, tmp_path / "f.html")
    # escaped once in the page: '&' -> '&amp;'
    assert _title(out) == "deepseek-r1 · ISL 8192 a &amp; b c · jalapeno"
    head = out.read_text(encoding="utf-8").split("</head>", 1)[0]
    assert head.count("<title>") == 1


def test_untitled_figure_gets_the_project_name(tmp_path):
    assert _title(write_figure(go.Figure(), tmp_path / "g.html")) == "jalapeno"


def test_unwritable_path_is_one_clear_error(tmp_path):
    with pytest.raises(SpecError, match=r"--html.*cannot write.*writable file path"):
        write_figure(go.Figure(), tmp_path / "no-such-dir" / "f.html")


def test_tornado_page_has_its_title(tmp_path):
    sens = {"system": "jalapeno", "metric": "max_interactivity", "unit": "tok/s/user", "value": 143.0,
            "context": {"model": "deepseek-r1", "workload": "8k1k"},
            "rows": [{"parameter": "efficiency.kernel_launch_s", "swing": 288.0, "low": 3.2e-7,
                      "high": 4e-6, "current": 4e-6, "band_source": "stack", "metric_at_low": 431.0,
                      "metric_at_high": 143.0}]}
    path = tmp_path / "t.html"
    write_tornado(sens, str(path))
    assert _title(path) == ("jalapeno · deepseek-r1 · 8k1k: max_interactivity (tok/s/user), "
                            "one parameter at a time across its band · jalapeno")
