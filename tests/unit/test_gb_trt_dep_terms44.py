"""scripts/gb_trt_dep_terms44.py: the decode-pool parse, the row filter, the term split and the GB300 / GB200 term
ratios, against hand-made rows and a stand-in step (expected values worked by hand)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import gb_trt_dep_terms44 as g  # noqa: E402

DEP32 = "disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]"
TEP4 = "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 5x(attn TP4 DP1 · MoE TP1 EP4) [fp4]"


def test_pool_parse():
    assert g.decode_ep(DEP32) == 32 and g.decode_ep(TEP4) == 4 and g.decode_ep("agg attn TP8 [fp8]") == 0
    assert g.pool_label(DEP32) == "1x TP1 DP32 EP32" and g.pool_label("agg") == ""


def _row(system, dep, measured, predicted, framework="trtllm 0.8.1.post2", quality=None, metric="tpot_s"):
    return {
        "source": "aiconfigurator",
        "id": f"{system}{dep[-20:]}{measured}",
        "system": system,
        "precision": "fp4",
        "framework": framework,
        "deployment": dep,
        "metric": metric,
        "measured": measured,
        "predicted": predicted,
        "error": predicted / measured - 1,
        "quality": quality,
    }


def test_rows_and_bias(tmp_path):
    rows = [
        _row("gb300-nvl72", DEP32, 10.0, 11.0),
        _row("gb300-nvl72", DEP32, 20.0, 21.0),
        _row("gb300-nvl72", DEP32, 10.0, 9.0),
        _row("gb200-nvl72", DEP32, 10.0, 9.5),
        _row("gb200-nvl72", TEP4, 10.0, 12.0),  # EP 4: out
        _row("gb200-nvl72", DEP32, 10.0, 12.0, framework="sglang 0.5.8"),  # not TensorRT-LLM: out
        _row("gb200-nvl72", DEP32, 10.0, 12.0, quality="rule C"),  # flagged: out
        _row("gb200-nvl72", DEP32, 10.0, 12.0, metric="ttft_s"),  # another metric: out
        _row("b300", DEP32, 10.0, 12.0),  # another system: out
    ]
    p = tmp_path / "v.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    d = g.dep_rows(str(p))
    assert len(d) == 4 and set(d.ep) == {32}
    t = g.bias_table(d)
    # GB300 errors +10%, +5%, −10%: median +5.0, mean +1.7; GB200 one row −5%
    assert t.loc[("gb300-nvl72", "fp4", 32), "median_pct"] == pytest.approx(5.0)
    assert t.loc[("gb300-nvl72", "fp4", 32), "mean_pct"] == pytest.approx(1.7)
    assert t.loc[("gb200-nvl72", "fp4", 32), "n"] == 1


class _Step:
    """Stand-in for cost/step.StepCost: two expert ops, one attention, one norm, an all-to-all and an all-reduce."""

    def op_rows(self, i):
        return [
            {"kind": "moe", "time_s": 1.0},
            {"kind": "moe", "time_s": 0.5},
            {"kind": "attention", "time_s": 2.0},
            {"kind": "norm", "time_s": 0.25},
        ]

    def collective_rows(self, i):
        return [
            {"collective": "moe_dispatch", "kind": "all_to_all", "time_s": 3.0},
            {"collective": "attn_out", "kind": "all_reduce", "time_s": 0.75},
        ]


def test_term_split():
    t = g.term_split(_Step(), 0.125)
    assert t == {
        "moe": 1.5,
        "attention": 2.0,
        "gemm": 0.0,
        "memory": 0.25,
        "a2a": 3.0,
        "other_coll": 0.75,
        "fixed": 0.125,
    }


def test_ratio_table():
    base = dict.fromkeys(g.TERMS, 1.0)
    s = pd.DataFrame(
        [
            {"id": "a", "system": "gb300-nvl72", "on": "gb300-nvl72", "ep": 32, **base, "moe": 0.9},
            {"id": "a", "system": "gb300-nvl72", "on": "gb200-nvl72", "ep": 32, **base, "moe": 1.0},
        ]
    )
    r = g.ratio_table(s).loc[("gb300-nvl72", 32)]
    # GB300 step 6.9 against GB200 7.0; experts 0.9 / 1.0; their share 0.9 / 6.9 = 13.0%
    assert r.x_moe == pytest.approx(0.9) and r.x_attention == pytest.approx(1.0)
    assert r.x_step == pytest.approx(round(6.9 / 7.0, 3))
    assert r.pct_moe == pytest.approx(13.0) and r.n == 1
