"""scripts/aic_prefill_engine41.py: interpolation, MoE TP degree, pool parse, floor pick and the 1k → 8k increments,
worked by hand (nothing here calls aiconfigurator's engine)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from script_module import load_script

pe = load_script("aic_prefill_engine41")


def test_loglog_by_hand_and_outside():
    # y = x^2 on two points: log-log interpolation is exact for a power law, 3000^2 / 1e6 = 9
    assert pe.loglog(3000.0, [1000.0, 10000.0], [1.0, 100.0]) == pytest.approx(9.0)
    assert math.isnan(pe.loglog(500.0, [1000.0, 10000.0], [1.0, 100.0]))
    assert math.isnan(pe.loglog(1000.0, [1000.0], [1.0]))


def test_moe_tp_degree():
    assert pe.moe_tp(4, 1, 1) == 4  # the SGLang TP4 pools: every expert split four ways
    assert pe.moe_tp(8, 1, 8) == 1  # TEP8: whole experts
    assert pe.moe_tp(1, 4, 2) == 2


def test_decode_pool_parse_and_error():
    dep = "disagg P 2x(attn TP1 DP8 · MoE TP1 EP8) + D 1x(attn TP1 DP32 · MoE TP1 EP32 · DP dispatch random) [fp8]"
    assert pe.decode_pool(dep) == (1, 1, 32, 32)
    assert pe.decode_pool("disagg P 1x(attn TP4 DP1 · MoE TP4 EP1) + D 4x(attn TP4 DP1 · MoE TP4 EP1) [fp4]") == (
        4,
        4,
        1,
        1,
    )
    with pytest.raises(ValueError, match="no decode pool.*disaggregated"):
        pe.decode_pool("agg 1x(attn TP8 DP1 · MoE TP1 EP8) [fp8]")


def test_floor_rows_take_the_lowest_concurrency_at_most_c_max():
    d = pd.DataFrame(
        {"system": "s", "precision": "fp8", "cfg": ["a", "a", "a", "b"], "isl": 8192, "concurrency": [8, 4, 64, 32]}
    )
    got = pe.floor_rows(d)
    assert got[["cfg", "concurrency"]].values.tolist() == [["a", 4]]  # b has no row at C <= 16
    assert pe.floor_rows(d, c_max=64)[["cfg", "concurrency"]].values.tolist() == [["a", 4], ["b", 32]]


def test_increments_by_hand():
    # GB300 FP4 TP4 shaped: measured 0.294 -> 0.344 s (+50 ms), a step of 31 -> 127 ms (+96 ms): 1.92x the measured
    fl = pd.DataFrame(
        {
            "system": "s",
            "precision": "fp4",
            "pool": "p",
            "isl": [1024, 8192],
            "cfg": ["c1", "c8"],
            "measured": [0.294, 0.344],
            "predicted": [0.207, 0.428],
            "jal_step": [0.031, 0.127],
            "aic_step": [0.037, 0.135],
        }
    )
    r = pe.increments(fl).iloc[0]
    assert (r.cfg_short, r.cfg_long) == ("c1", "c8")
    assert r.d_measured == pytest.approx(0.050)
    assert r.d_jal_step == pytest.approx(0.096)
    assert r.ratio_jal_step == pytest.approx(0.096 / 0.050)
    assert r.ratio_aic_step == pytest.approx(0.098 / 0.050)
    # no pair when the prefill pools differ
    assert pe.increments(fl.assign(pool=["p", "q"])).empty


def test_aic_prefill_refuses_attention_dp():
    with pytest.raises(ValueError, match="dp=2.*fix: filter"):
        pe.aic_prefill_s("gb300-nvl72", "fp4", 1, 2, 2, 7373)


def test_recipe_prefill_budget_is_the_smaller_sglang_limit():
    # recipe prefill flags (srt-slurm @5063eb43) and SGLang's default max-prefill-tokens 16,384, written out by hand
    chunked = {
        ("gb300-nvl72", "fp4", 8192): 24576,
        ("gb300-nvl72", "fp8", 8192): 32768,
        ("gb300-nvl72", "fp8", 1024): 8192,
    }
    max_prefill = {
        ("gb300-nvl72", "fp4", 8192): 16384,
        ("gb300-nvl72", "fp8", 8192): 32768,
        ("gb300-nvl72", "fp8", 1024): 8192,
    }
    for k in chunked:
        assert pe.RECIPE_PREFILL_BUDGET[k] == min(chunked[k], max_prefill[k])
    # a 7.4k prompt: the FP8 8k recipe packs four a step, the FP4 8k recipe two
    assert pe.RECIPE_PREFILL_BUDGET[("gb300-nvl72", "fp8", 8192)] // 7373 == 4
    assert pe.RECIPE_PREFILL_BUDGET[("gb300-nvl72", "fp4", 8192)] // 7373 == 2
