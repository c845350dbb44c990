"""scripts/qwen3_sglang_ctx44.py: the KV bytes, the line fit, the read rate and the row reader (docs/gap_aic_itl.md,
round 44). Expected values by hand, not the script's output."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

s = load_script("qwen3_sglang_ctx44")


def test_kv_bytes_per_token_bf16_one_head():
    assert s.kv_bytes_per_token() == 512  # K and V, 128 dims, 2 bytes each: 2 x 128 x 2
    assert s.kv_bytes_per_token(128, 1) == 256  # FP8


def test_line_fit_recovers_an_exact_line_and_its_rms():
    a, b, rms = s.line_fit([0, 1, 2, 3], [1, 3, 5, 7])  # y = 1 + 2x
    assert (a, b, rms) == pytest.approx((1.0, 2.0, 0.0), abs=1e-12)
    # residuals +1, -1, +1, -1 about y = 0 (slope 0 and mean 0 by symmetry): RMS 1
    a, b, rms = s.line_fit([0, 1, 2, 3], [1, -1, -1, 1])
    assert (a, b, rms) == pytest.approx((0.0, 0.0, 1.0), abs=1e-12)
    with pytest.raises(ValueError, match="need at least 3"):
        s.line_fit([0, 1], [0, 1])


def test_read_rate_by_hand():
    # 1 us a step per context token over 94 layers of 512 B: 512 x 94 / 1e-6 s = 48.128 GB/s
    assert s.read_rate(1e-3) == pytest.approx(48.128e9)


def _csv(tmp_path, rows):
    cols = "model system framework metric deployment isl osl concurrency measured predicted split".split()
    p = tmp_path / "v.csv"
    df = pd.DataFrame(rows, columns=cols)
    df["mode"] = ["disagg" if str(d).startswith("disagg") else "agg" for d in df.deployment]  # as validate writes it
    df.to_csv(p, index=False)
    return str(p)


def test_qwen3_rows_reads_tp_gap_and_context(tmp_path):
    dep = "agg attn TP4 DP1 · MoE TP4 EP1 [fp8]"
    q = ["qwen3-235b-a22b", "h200", "sglang 0.5.6.post2"]
    rows = [
        q + ["tpot_s", dep, 4000, 2000, 9.0, 0.0213, 0.0136, "held_out"],
        q + ["ttft_s", dep, 4000, 2000, 9.0, 2.0, 0.8, "held_out"],
        ["deepseek-r1", "h200", "sglang 0.5.9", "tpot_s", dep, 1000, 1000, 8.0, 0.02, 0.02, "fit"],
    ]
    p = _csv(tmp_path, rows)
    d = s.qwen3_rows(p)
    assert len(d) == 1
    r = d.iloc[0]
    assert (r.tp, r.ctx) == (4, 5000)  # L = 4000 + 2000 / 2
    assert r.gap_ms == pytest.approx(7.7)  # 21.3 - 13.6 ms


def test_qwen3_rows_without_a_row_names_the_file(tmp_path):
    p = _csv(tmp_path, [["deepseek-r1", "h200", "sglang 0.5.9", "tpot_s", "x", 1, 1, 1.0, 1.0, 1.0, "fit"]])
    with pytest.raises(SystemExit, match="v.csv: no h200 qwen3-235b"):
        s.qwen3_rows(p)


def test_serial_slope_by_hand():
    # 94 layers x 512 B over 4.8e12 / 132 B/s: 48,128 x 132 / 4.8e12 s = 1.3235 us = 1.3235e-3 ms a token
    assert s.serial_slope_ms() == pytest.approx(48128 * 132 / 4.8e12 * 1e3)
    assert s.serial_slope_ms(layers=1, hbm_bps=512.0, sms=1) == pytest.approx(1e3)  # 1 s a token


def test_qwen3_rows_by_system_and_framework(tmp_path):
    dep = "agg attn TP8 DP1 · MoE TP8 EP1 [fp8]"
    p = _csv(
        tmp_path, [["qwen3-235b-a22b", "h100", "trtllm 1.0.0rc3", "tpot_s", dep, 1000, 1000, 4.0, 0.02, 0.019, "fit"]]
    )
    d = s.qwen3_rows(p, "h100", "trtllm")
    assert (len(d), d.tp.iloc[0], d.ctx.iloc[0]) == (1, 8, 1500)
    with pytest.raises(SystemExit, match="no h200 qwen3-235b sglang"):
        s.qwen3_rows(p)


def test_qwen3_rows_leaves_out_disaggregated_rows(tmp_path):
    # a disaggregated deployment names the prefill pool first: its "attn TP1" is not the decode's TP4
    agg = "agg attn TP2 DP1 · MoE TP2 EP1 [fp8]"
    dis = "disagg P 1x(attn TP1 DP4 · MoE TP4 EP1) + D 3x(attn TP4 DP1 · MoE TP4 EP1) [fp8]"
    q = ["qwen3-235b-a22b", "h200", "sglang 0.5.6.post2", "tpot_s"]
    p = _csv(
        tmp_path,
        [q + [agg, 1000, 1000, 4.0, 0.02, 0.015, "fit"], q + [dis, 1000, 1000, 8.0, 0.03, 0.02, "held_out"]],
    )
    d = s.qwen3_rows(p)
    assert (len(d), d.tp.iloc[0], d.c.iloc[0]) == (1, 2, 4.0)
    only_dis = _csv(tmp_path, [q + [dis, 1000, 1000, 8.0, 0.03, 0.02, "held_out"]])
    with pytest.raises(SystemExit, match="no h200 qwen3-235b sglang aggregated tpot_s row"):
        s.qwen3_rows(only_dis)


def test_qwen3_rows_without_a_mode_column_names_it(tmp_path):
    p = tmp_path / "v.csv"
    pd.DataFrame({"model": ["qwen3-235b-a22b"], "metric": ["tpot_s"]}).to_csv(p, index=False)
    with pytest.raises(SystemExit, match="no `mode` column"):
        s.qwen3_rows(str(p))
