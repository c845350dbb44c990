"""Issue 15 defect 6: every deployment label names the attention and the MoE parallelism (docs/metrics.md
§5.1). "agg TP1 DP4" hid that its experts run TP4 EP1: a stage of tp·dp = 4 chips with EP1 leaves each
expert split over all 4 chips. The expected strings are written out by hand from that rule
(expert TP = tp·dp / ep), not taken from the code.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from cli_runner import run

from jalapeno.analysis.comparison import system_frontier
from jalapeno.analysis.records import FrontierRecord
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.report.html import hover_text
from jalapeno.report.compare_cells import tier_deployments
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


@pytest.mark.parametrize("layout, text", [
    (Layout(tp=1, dp=4, ep=1), "attn TP1 DP4 · MoE TP4 EP1"),           # the example
    (Layout(tp=1, dp=8, ep=8), "attn TP1 DP8 · MoE TP1 EP8"),           # DEP8
    (Layout(tp=8, ep=8), "attn TP8 DP1 · MoE TP1 EP8"),                 # TEP8
    (Layout(tp=8), "attn TP8 DP1 · MoE TP8 EP1"),                       # TP8: experts tensor-parallel
    (Layout(tp=4, dp=16, ep=32), "attn TP4 DP16 · MoE TP2 EP32"),       # 64 chips / EP32 = expert TP2
    (Layout(tp=2, dp=32, ep=64, eplb=64, pp=2), "attn TP2 DP32 · MoE TP1 EP64 EPLB+64 · PP2"),
    (Layout(tp=8, ep=8, cp=4), "attn TP8 DP1 · MoE TP1 EP8 · CP4"),
])
def test_layout_label_names_attention_and_moe(layout, text):
    assert layout.label == text


def test_dense_model_label_names_its_ffn():
    llama = load_model("llama-3.3-70b")
    assert for_model(Layout(tp=4, dp=2), llama).label == "attn TP4 DP2 · FFN TP4"
    assert "MoE" not in for_model(Layout(tp=8), llama).label
    assert for_model(Layout(tp=8), llama) == Layout(tp=8)  # the label flag takes no part in equality


def test_deployment_labels_agg_and_disagg():
    fp4 = get_precision("fp4")
    agg = Deployment(fp4, Pool(Layout(dp=4)), mtp=MTP(1, 0.7))
    assert agg.label == "agg attn TP1 DP4 · MoE TP4 EP1 MTP1@0.7 [fp4]"
    # issue 15 defect 7's deployment: prefill 3x(DP4 EP4) + decode 5x(DP4 EP4)
    dis = Deployment(fp4, Pool(Layout(dp=4, ep=4), 5), prefill=Pool(Layout(dp=4, ep=4), 3))
    assert dis.label == ("disagg P 3x(attn TP1 DP4 · MoE TP1 EP4) + D 5x(attn TP1 DP4 · MoE TP1 EP4) [fp4]")
    assert dis.as_dict()["label"] == dis.label


def test_predict_json_label(capsys):
    code, out, err = run(capsys, "predict", "-s", "b200", "-m", "deepseek-r1", "-p", "fp4", "--tp", "1", "--dp", "4",
                         "--ep", "1", "-c", "8", "-w", "1k1k", "--json")
    assert code == 0, err
    assert json.loads(out)["deployment"]["label"] == "agg attn TP1 DP4 · MoE TP4 EP1 [fp4]"
    code, out, err = run(capsys, "predict", "-s", "b200", "-m", "deepseek-r1", "-p", "fp4", "--tp", "1", "--dp", "4",
                         "--ep", "1", "-c", "8", "-w", "1k1k")
    assert code == 0 and "attn TP1 DP4 · MoE TP4 EP1" in out


@pytest.fixture(scope="module")
def r1_frontier():
    m = load_model("deepseek-r1")
    sf = system_frontier(m, load_pricer("b200"), get_workload("1k1k"), get_precision("fp8"), SweepOptions())
    return sf.record()


def test_frontier_frame_csv_and_hover_name_both(r1_frontier, tmp_path, capsys):
    rec: FrontierRecord = r1_frontier
    df = rec.to_frame()
    for lab in df["deployment"]:
        assert lab.count("attn TP") == lab.count("MoE TP") >= 1, lab
    assert all("attn TP" in hover_text(p) and "MoE TP" in hover_text(p) for p in rec.frontier)
    path = tmp_path / "f.csv"
    code, _, err = run(capsys, "frontier", "-s", "b200", "-m", "deepseek-r1", "-w", "1k1k", "-o", str(path))
    assert code == 0, err
    csv = pd.read_csv(path)
    assert all("attn TP" in s and "MoE TP" in s for s in csv["deployment"])
    assert all("attn TP" in json.loads(s)["label"] for s in csv["deployment_json"])


def test_dense_sweep_labels_say_ffn():
    m = load_model("llama-3.3-70b")
    sf = system_frontier(m, load_pricer("h200"), get_workload("1k1k"), get_precision("bf16"),
                         SweepOptions(serving="agg"))
    labels = {p.deployment.label for p in sf.record().frontier}
    assert labels and all("FFN TP" in s and "MoE" not in s for s in labels), labels


def test_tier_cell_marks_interpolation_within_one_deployment(r1_frontier):
    pts = r1_frontier.frontier
    same = next(j for j in range(1, len(pts)) if pts[j - 1].deployment.label == pts[j].deployment.label)
    floor = (pts[same - 1].interactivity + pts[same].interactivity) / 2
    cell = tier_deployments({"status": "interpolated", "floor_tok_per_s_per_user": floor}, pts)
    assert cell == f"interpolated between two points of {pts[same].deployment.label}"
    other = next((j for j in range(1, len(pts)) if pts[j - 1].deployment.label != pts[j].deployment.label), None)
    if other is not None:
        floor = (pts[other - 1].interactivity + pts[other].interactivity) / 2
        cell = tier_deployments({"status": "interpolated", "floor_tok_per_s_per_user": floor}, pts)
        assert cell.startswith(("interpolated between agg", "interpolated between disagg"))
        assert " and " in cell


def test_agentic_tier_rows_name_the_deployments_either_side():
    """An agentic tier interpolated at its task-time ceiling names both deployments (by hand: a
    ceiling of 2 min = 30 tasks/h/user falls between the points at 20 and 40)."""
    from jalapeno.analysis.agentic import _tier_rows
    from jalapeno.analysis.compare import build_frontier

    fr = build_frontier([20.0, 40.0, 60.0], [9.0, 4.0, 1.0])
    pts = [{"deployment": d} for d in ("agg A", "agg B", "agg C")]
    rows = _tier_rows(fr, {"fast": 2.0, "exact": 1.5}, pts, 1.0, 1.0)
    assert rows["batch"]["deployment"] == "agg A"
    assert rows["exact"]["deployment"] == "agg B" and "between" not in rows["exact"]  # 60/1.5 = 40: a point
    # log-log between (20, 9) and (40, 4) at 30: 9·(4/9)^(ln 1.5 / ln 2) = 5.60 > 4 (the point at 40)
    assert rows["fast"]["status"] == "interpolated"
    assert rows["fast"]["tasks_per_hour_per_chip"] == pytest.approx(9 * (4 / 9) ** (math.log(1.5) / math.log(2)))
    assert rows["fast"]["deployment"] is None and rows["fast"]["between"] == ["agg A", "agg B"]
