"""The report page's data and tables (report/page.py), the chart fixes of issue 15 (one colour per
system, charts that follow the window, the parity legend, titled simulator axes) and the
``jalapeno report`` command's errors. In-browser checks: tests/browser/test_pages.py.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from cli_runner import check_error, run

from jalapeno.analysis.comparison import compare_systems
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.fit.validate import MeasuredPoint
from jalapeno.report.colors import CATALOG, rgba, system_color
from jalapeno.report.html import frontier_figure
from jalapeno.report.page import render_report, tables_html
from jalapeno.report.page_data import report_data
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


@pytest.fixture(scope="module")
def comparison():
    m = load_model("deepseek-r1")
    pr = [load_pricer("jalapeno"), load_pricer("b200")]
    res = compare_systems(m, pr, get_workload("1k1k"), get_precision("fp8"), baseline="b200",
                          options=SweepOptions(serving="agg", concurrency=(4.0, 64.0, 512.0)),
                          floors={"fast": 100.0})
    return res, {p.system.name: p.system for p in pr}


def test_colours_are_fixed_per_name():
    assert system_color("jalapeno") == CATALOG["jalapeno"]
    assert system_color("my-chip") == system_color("my-chip")  # hashed, stable
    assert len(set(CATALOG.values())) == len(CATALOG)
    assert rgba("#ff0080", 0.5) == "rgba(255,0,128,0.5)"


def test_compare_chart_colours_each_system_the_same_on_every_panel(comparison):
    """Defect 1: traces were coloured by position, so panel 2's 'jalapeno' line had another colour."""
    res, _ = comparison
    fig = frontier_figure(res.record(), floors=[("fast", 100.0)])
    by_system: dict[str, set] = {}
    for t in fig.data:
        by_system.setdefault(t.legendgroup, set()).add(t.line.color)
    assert by_system == {"jalapeno": {CATALOG["jalapeno"]}, "b200": {CATALOG["b200"]}}
    assert fig.layout.width is None and fig.layout.autosize  # defect 2: no fixed 1,500 px
    assert len(fig.layout.shapes) == 3  # the tier floor on each panel


def test_report_data_converts_each_metric(comparison):
    """Per kW: throughput / (power per chip / 1000) under each convention; per $: throughput / $/chip-h."""
    res, systems = comparison
    rec = res.record()
    measured = [MeasuredPoint("inferencex", "t:2", "b200", "deepseek-r1", "fp8", "sglang", 1024, 1024, 64.0, None,
                              {"throughput_per_chip": 2000.0, "interactivity": 40.0, "ttft_s": 0.5, "tpot_s": 0.025},
                              "matched"),
                  MeasuredPoint("inferencex", "t:3", "h100", "deepseek-r1", "fp8", "sglang", 1024, 1024, 8.0, None,
                                {"throughput_per_chip": 900.0, "interactivity": 30.0}, "matched")]
    data = report_data(rec, systems, floors=[("fast", 100.0)], measured=measured)
    jal = next(s for s in data["systems"] if s["name"] == "jalapeno")
    p0 = rec.systems["jalapeno"].frontier[0]
    chip = systems["jalapeno"].chip
    assert jal["frontier"]["chip"][0] == pytest.approx(p0.throughput_per_chip)
    assert jal["frontier"]["kw"]["chip"][0] == pytest.approx(p0.throughput_per_chip / (chip.tdp_w / 1000))
    assert jal["frontier"]["usd"][0] == pytest.approx(p0.throughput_per_chip / systems["jalapeno"].usd_per_chip_hour)
    assert jal["color"] == CATALOG["jalapeno"]
    # h100 is not compared: only the b200 point stays; E2E = 0.5 + 1023 x 0.025 = 26.075 s
    (m,) = data["measured"]
    assert m["system"] == "b200" and m["e2e"] == pytest.approx(26.075)
    assert m["kw"]["chip"] == pytest.approx(2000.0 / 1.0)  # B200 TDP 1,000 W
    assert data["floors"] == [["fast", 100.0]]


def test_tables_flag_ratios_and_escape(comparison):
    res, systems = comparison
    html = tables_html(res.record())
    assert "Ratios vs b200" in html and "×" in html
    assert re.search(r"at frontier end|below frontier start|unreachable", html)
    page = render_report(res.record(), report_data(res.record(), systems))
    blob = page.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in blob and json.loads(blob)["systems"][0]["name"] == "jalapeno"
    assert "Plotly" in page and "<script src" not in page  # plotly.js inline: works offline


def test_parity_legend_lists_every_source(tmp_path):
    """Defect 2: aiconfigurator rows (TTFT/TPOT only) never reached the legend, which showed panel 1's."""
    from jalapeno.report.parity import write_parity

    rows = pd.DataFrame([
        {"id": "a", "source": "inferencex", "system": "b200", "metric": "throughput_per_chip", "measured": 100.0,
         "predicted": 110.0, "error": 0.1, "deployment": "agg TP8", "mapping": "", "kernels_calibrated": False},
        {"id": "b", "source": "aiconfigurator", "system": "h200", "metric": "tpot_s", "measured": 0.02,
         "predicted": 0.021, "error": 0.05, "deployment": "agg TP8", "mapping": "", "kernels_calibrated": True}])
    out = write_parity(rows, tmp_path / "p.html")
    text = out.read_text()
    names = set(re.findall(r'"name":"([^"]+)","showlegend":true', text))
    assert {"inferencex b200", "aiconfigurator h200"} <= names


def test_report_cli_errors(capsys, tmp_path):
    check_error(*run(capsys, "report", "-o", str(tmp_path / "r.txt")), "--out", ".html")
    check_error(*run(capsys, "report", "--serving", "fast", "-o", str(tmp_path / "r.html")), "--serving")
    check_error(*run(capsys, "report", "--systems", "jalapeno", "--serving", "agg", "--measured",
                     str(tmp_path / "none.csv"), "-o", str(tmp_path / "r.html")), "--measured", "not found")


def test_tier_cells_name_their_deployments(comparison):
    """Defect 6: a tier interpolated between two frontier points looked like one deployment's."""
    from jalapeno.report.compare_cells import tier_deployments

    res, _ = comparison
    rec = res.record()
    seen = set()
    for name, c in rec.comparisons.items():
        pts = rec.systems[name].frontier
        for v in c.tiers.values():
            text = tier_deployments(v, pts)
            seen.add(v["status"])
            if v["status"] == "interpolated":
                f = v["floor_tok_per_s_per_user"]
                below = [p for p in pts if p.interactivity < f][-1].deployment.label
                above = next(p for p in pts if p.interactivity >= f).deployment.label
                assert text == (f"interpolated between two points of {below}" if below == above
                                else f"interpolated between {below} and {above}")
            elif v["status"] != "unreachable":
                assert text == pts[v["frontier_index"]].deployment.label
    assert "at_point" in seen


def test_report_tables_have_the_terminal_tables_columns_and_per_kw_brackets(comparison):
    """newuser37: the page's headline table lacked the terminal's 'bound at max' column, and its ratio table gave the
    per-kW ratio in brackets at the peak only, though its caption says 'per kW ... in brackets' (the terminal gives
    it at every speed). Same columns as report/tables.comparison_tables, and each speed's per-kW ratio in brackets."""
    from jalapeno.report.tables import comparison_tables

    res, _ = comparison
    rec = res.record()
    page = tables_html(rec)
    heads = [re.findall(r"<th>(.*?)</th>", t) for t in re.findall(r'<table class="(?:headline|ratios)">.*?</table>',
                                                                   page, re.S)]
    term = [[c.header for c in t.columns] for t in comparison_tables(rec)[:2]]
    assert heads[0] == term[0]
    assert heads[1] == term[1]
    c = rec.comparisons["jalapeno"]
    row = re.search(r"<td>jalapeno</td>(.*?)</tr>", page.split('class="ratios"')[1], re.S).group(1)
    cells = re.findall(r"<td>(.*?)</td>", row)[2:]  # peak, max tok/s/user, each speed
    assert len(cells) == len(c.iso_interactivity["tok_s_per_kw"])
    for cell, kw, usd in zip(cells, c.iso_interactivity["tok_s_per_kw"], c.iso_interactivity["tokens_per_usd"]):
        if isinstance(kw["ratio"], float) and kw["ratio"] == kw["ratio"]:  # round 44: per $ after per kW
            assert f"({kw['ratio']:.2f}×, {usd['ratio']:.2f}×)" in cell, cell


def test_report_page_explains_its_bands_and_names_a_system_shown_without_one(capsys, tmp_path):
    """analyst49: `report --bands` printed each headline figure's '(low to high)' and '[wide band: Nx]' with no
    legend under the table, and gb300-nvl72 on gpt-oss-120b without a band and without the terminal's 'no band for
    gb300-nvl72' line (its measured band is validate's on deepseek-r1 only: data/validation/measured_bands.toml), so
    on the page the baseline's figure read as exact. The page carries the same two captions as compare's table."""
    page_path = tmp_path / "r.html"
    code, _, err = run(capsys, "report", "--model", "gpt-oss-120b", "--workload", "8k1k",
                       "--systems", "jalapeno,gb300-nvl72", "--bands", "--html", str(page_path))
    assert code == 0, err
    page = page_path.read_text()
    body = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert "(low to high): a derived system&#x27;s efficiency band" in body
    assert "no band for gb300-nvl72: its measured error band is validate&#x27;s on deepseek-r1" in body
    assert "validate has no gpt-oss-120b points on it" in body
    # report has no --json: the legend points at compare's, which carries min E2E's band (it said 'in --json only')
    assert "min E2E&#x27;s band (E2E = TTFT + (OSL - 1) TPOT) is in compare --json only" in body
