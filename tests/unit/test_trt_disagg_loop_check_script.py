"""scripts/trt_disagg_loop_check.py: the rows it reads and the figures it derives, worked by hand."""

from __future__ import annotations

import pandas as pd
from script_module import load_script

chk = load_script("trt_disagg_loop_check")

ROW = "aic:dsr1_gb300_trtllm_fp4_disagg_1024x1024_c12_cfg417"  # P 1 x DEP2, D 4 x TEP8, max_batch_size 32, C = 12


def _csv(quality=None) -> pd.DataFrame:
    base = {"source": "aiconfigurator", "id": ROW, "mode": "disagg", "framework": "trtllm 0.8.1.post2",
            "quality": quality, "split": "held_out"}
    return pd.DataFrame([{**base, "metric": "ttft_s", "measured": 0.40, "predicted": 0.15},
                         {**base, "metric": "tpot_s", "measured": 0.011, "predicted": 0.010}])


def test_one_row_worked_by_hand():
    df = chk._rows(_csv(), held_out=True)
    assert len(df) == 1
    r = df.iloc[0]
    # the decode cap: 4 workers x 32 requests x 1 attention-DP rank = 128; C = 12 → 12/128
    assert abs(r.load - 12 / 128) < 1e-12
    assert abs(r.left - 0.25) < 1e-12  # 0.40 − 0.15 s
    assert abs(r.left_tau - 25.0) < 1e-9  # 0.25 s over a 10 ms step
    assert abs(r.term - 0.005) < 1e-12  # half of the 10 ms step
    assert (r.sys, r.isl_osl, r.P, r.D) == ("gb300", "1k/1k", "1x(tp1dp2)", "4x(tp8dp1)")


def test_flagged_rows_are_left_out():
    assert chk._rows(_csv(quality="flagged"), held_out=False).empty


def test_error_summary_by_hand():
    # errors +10% and −20%: median |error| 15.0%, median error −5.0%
    assert chk._err(pd.Series([1.1, 0.8]), pd.Series([1.0, 1.0])) == "15.0 / -5.0"
