"""scripts/gb300_twin_check.py: the decode-pool parse, the twin match and its ratios, against a hand-made CSV."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import gb300_twin_check as g  # noqa: E402

TEP8 = "disagg P 1x(attn TP1 DP2 · MoE TP1 EP2) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]"
TEP8_OTHER_PREFILL = "disagg P 2x(attn TP1 DP4 · MoE TP1 EP4) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]"
DEP32 = "disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]"


def test_decode_pool_and_sharding():
    assert g.decode_pool(DEP32) == "1x TP1 DP32 TP1 EP32"
    assert g.sharding(DEP32) == "ADP" and g.sharding(TEP8) == "ATP"
    assert g.decode_pool("agg attn TP8 DP1 · MoE TP1 EP8 [fp8]") == "" and g.sharding("agg ...") == "agg"


def _row(system, framework, dep, conc, measured, predicted, split="fit", quality=None, metric="tpot_s"):
    return {"source": "aiconfigurator", "system": system, "model": "deepseek-r1", "precision": "fp4",
            "framework": framework, "stack": "trtllm", "isl": 1024, "osl": 1024, "concurrency": conc,
            "deployment": dep, "metric": metric, "measured": measured, "predicted": predicted,
            "error": predicted / measured - 1, "quality": quality, "split": split}


@pytest.fixture()
def csv(tmp_path):
    rows = [
        # a twin: same release line (post dropped), same decode pool and concurrency, other prefill pool
        _row("gb300-nvl72", "trtllm 0.8.1.post2", TEP8, 48.0, 8.0e-3, 9.0e-3),
        _row("gb200-nvl72", "trtllm 0.8.1", TEP8_OTHER_PREFILL, 48.0, 10.0e-3, 10.0e-3),
        # not twins: another concurrency; another release; a flagged row
        _row("gb300-nvl72", "trtllm 0.8.1.post2", TEP8, 96.0, 10.0e-3, 10.0e-3),
        _row("gb200-nvl72", "trtllm 0.5.1-rc0.pre3", TEP8, 96.0, 10.0e-3, 10.0e-3),
        _row("gb200-nvl72", "trtllm 0.8.1.post2", TEP8, 96.0, 10.0e-3, 10.0e-3, quality="flagged"),
        # a DEP32 twin
        _row("gb300-nvl72", "sglang 0.5.8.post1", DEP32, 512.0, 12.0e-3, 11.0e-3),
        _row("gb200-nvl72", "sglang 0.5.8", DEP32, 512.0, 15.0e-3, 11.0e-3),
    ]
    p = tmp_path / "v.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return str(p)


def test_twins_by_hand(csv):
    t = g.twins(csv).set_index("attn")
    assert len(t) == 2
    # ATP: measured 8 / 10 = 0.8, modelled 9 / 10 = 0.9; the model makes GB300 0.9 / 0.8 - 1 = 12.5% slower
    assert t.loc["ATP", "m"] == pytest.approx(0.8) and t.loc["ATP", "p"] == pytest.approx(0.9)
    assert t.loc["ATP", "err_300"] == pytest.approx(0.125) and t.loc["ATP", "err_200"] == pytest.approx(0.0)
    # ADP: 12 / 15 = 0.8 measured, 11 / 11 = 1 modelled
    assert t.loc["ADP", "m"] == pytest.approx(0.8) and t.loc["ADP", "p"] == pytest.approx(1.0)
    s = g.twin_summary(g.twins(csv))
    assert s.loc["ATP", "model_over_measured"] == pytest.approx(0.125)
    assert s.loc["ADP", "model_over_measured"] == pytest.approx(0.25)
    assert s.loc["all", "n"] == 2


def test_composition_counts_by_hand(tmp_path):
    rows = [_row("gb300-nvl72", "trtllm 0.8.1.post2", TEP8, 12.0, 100.0, 90.0, split="held_out", metric="interactivity"),
            _row("gb300-nvl72", "trtllm 0.8.1.post2", TEP8, 48.0, 100.0, 94.0, split="held_out", metric="interactivity"),
            _row("gb300-nvl72", "sglang 0.5.8.post1", DEP32, 512.0, 100.0, 110.0, split="held_out", metric="interactivity")]
    p = tmp_path / "i.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    c = g.composition(str(p)).set_index(["rows", "attn"])
    assert c.loc[("held-out", "ATP"), "n"] == 2 and c.loc[("held-out", "ATP"), "bias_pct"] == pytest.approx(-8.0)
    assert c.loc[("held-out", "ADP"), "bias_pct"] == pytest.approx(10.0)
    assert c.loc[("held-out", "all"), "bias_pct"] == pytest.approx(-6.0)
