"""scripts/aic_ttft_share_isl40.py: the share a row asks for, the prefill-pool parse, the floor pick and the 1k → 8k
floor increments, worked by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from script_module import load_script

sh = load_script("aic_ttft_share_isl40")


def test_w_star_by_hand_and_below_the_wave_floor():
    # measured 0.40 s, steady 0.25 s, the whole wave 0.75 s late: w = 0.15 / 0.75 = 0.2 (two in R = 10)
    w = sh.w_star([0.40, 0.26], [0.25, 0.25], [0.75, 0.02])
    assert w[0] == pytest.approx(0.2)
    assert math.isnan(w[1])  # a 20 ms wave is under LATE_MIN_S (50 ms): a floor residual, not a share
    assert sh.w_star([0.26], [0.25], [0.02], late_min=0.01)[0] == pytest.approx(0.5)


def test_prefill_pool_parse_and_error():
    dep = "disagg P 2x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP8 DP1 · MoE TP1 EP8) [fp4]"
    assert sh.prefill_pool(dep) == "2x(attn TP1 DP4 · MoE TP1 EP4)"
    with pytest.raises(ValueError, match="no prefill pool.*disaggregated"):
        sh.prefill_pool("agg 1x(attn TP8 DP1 · MoE TP1 EP8) [fp8]")


def _rows():
    # two deployments at 1k and 8k of one pool, one of another model, and a queued 8k floor (5 s over 0.3 s unloaded)
    return pd.DataFrame(
        {
            "system": "gb200-nvl72",
            "engine": "sglang",
            "model": ["r1", "r1", "r1", "r1", "kimi", "r1"],
            "precision": "fp4",
            "pool": "1x(attn TP4 DP1 · MoE TP4 EP1)",
            "cfg": ["c1", "c1", "c2", "c2", "c3", "c4"],
            "isl": [1024, 1024, 8192, 8192, 8192, 8192],
            "concurrency": [4, 32, 4, 8, 4, 4],
            "measured_ttft_s": [0.27, 0.5, 0.34, 0.4, 0.5, 5.0],
            "predicted_ttft_s": [0.20, 0.4, 0.44, 0.5, 0.45, 0.5],
            "unloaded": [0.18, 0.18, 0.30, 0.30, 0.40, 0.30],
            "prefill_s": [0.03, 0.03, 0.13, 0.13, 0.2, 0.13],
            "wait": [0.02, 0.2, 0.14, 0.2, 0.05, 0.2],
        }
    )


def test_floors_take_the_lowest_load_and_drop_queued_rows():
    fl = sh.floors(_rows())
    assert sorted(fl.cfg) == ["c1", "c2", "c3"]  # c4's 5.0 s is 16.7x its unloaded 0.3 s: queued
    assert fl.set_index("cfg").loc["c1", "concurrency"] == 4
    assert fl.set_index("cfg").loc["c1", "resid_ms"] == pytest.approx(70.0)  # 0.27 - 0.20
    assert fl.set_index("cfg").loc["c2", "resid_ms"] == pytest.approx(-100.0)  # 0.34 - 0.44


def test_increments_pair_one_model_and_pool():
    inc = sh.increments(sh.floors(_rows()))
    assert len(inc) == 1  # kimi's 8k floor has no 1k twin; c4 is queued
    r = inc.iloc[0]
    assert (r.cfg_short, r.cfg_long) == ("c1", "c2")
    assert r.d_measured_s == pytest.approx(0.07)  # 0.34 - 0.27
    assert r.d_model_s == pytest.approx(0.24)  # 0.44 - 0.20
    assert (r.d_service_s, r.d_wait_s) == (pytest.approx(0.10), pytest.approx(0.12))
    assert r.ratio == pytest.approx(0.24 / 0.07)
