"""scripts/adp_prefill_twins51.py: the layout twins, the packed context step and the MLA hand-off, worked by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from script_module import load_script

s = load_script("adp_prefill_twins51")


def _frame(**over) -> pd.DataFrame:
    base = {
        "id": ["x_c64_cfg1", "x_c64_cfg2"],
        "mode": "disagg",
        "system": "h200_sxm",
        "model_path": "m",
        "backend": "trtllm",
        "backend_version": "0.8.1",
        "precision": "fp8",
        "isl": 8192,
        "osl": 1024,
        "prefill_num_workers": 2,
        "decode_num_workers": 1,
        "decode_tp_size": 1,
        "decode_attention_dp_size": 8,
        "decode_moe_ep_size": 8,
        "decode_batch_size": 8,
        "prefill_tp_size": [1, 8],
        "prefill_attention_dp_size": [8, 1],
        "prefill_moe_tp_size": 1,
        "prefill_moe_ep_size": 8,
        "silicon_ttft_ms": [4000.0, 6000.0],
        "silicon_tpot_ms": [40.0, 40.0],
        "silicon_data_source": [
            "measured=2026-02-14T1; workflow_run_id=288",
            "measured=2026-03-23T1; workflow_run_id=333",
        ],
    }
    base.update(over)
    return pd.DataFrame(base)


def test_a_twin_pair_by_hand():
    t = s.twin_pairs(_frame())
    assert len(t) == 1
    r = t.iloc[0]
    # λ/x = 64 / (4 + 1023 · 0.04) / 2 = 64 / 44.92 / 2 = 0.71238; b: 64 / 46.92 / 2 = 0.68201
    assert r.rate_a == pytest.approx(64 / 44.92 / 2, rel=1e-9)
    assert r.rate_ratio == pytest.approx(44.92 / 46.92, rel=1e-9)
    assert r.ttft_ratio == pytest.approx(1.5) and r.tpot_ratio == pytest.approx(1.0)
    assert (r.layout_a, r.layout_b, r.run_a, r.run_b) == ("TP1 DP8 EP8", "TP8 DP1 EP8", "288", "333")


def test_rows_that_differ_elsewhere_are_not_twins():
    assert s.twin_pairs(_frame(decode_num_workers=[1, 2])).empty  # another decode pool
    assert s.twin_pairs(_frame(prefill_tp_size=1, prefill_attention_dp_size=8)).empty  # the same prefill layout
    assert s.twin_pairs(_frame(id=["x_c64_cfg1", "x_c32_cfg2"])).empty  # another concurrency


def test_packed_context_step_by_hand():
    # whole 1,000-token prompts under a 3,500-token budget: three fit, the fourth waits → 3,000 a step
    assert s.packed_tokens(3500, 1000, 1.0) == 3000.0
    # lengths uniform in [0.8 L, L] at a budget of L: one prompt a step, of mean 0.9 L (± its Monte-Carlo error)
    assert s.packed_tokens(8192, 8192, 0.8) == pytest.approx(0.9 * 8192, abs=15)
    # 1k prompts at 8,192: 8 always fit (8 × 1,024 = 8,192); a 9th when the 9 sum to ≤ 8,192. The sum of 9 is about
    # normal, mean 8,294.4, sd 3 × 204.8/√12 = 177.4: P ≈ Φ(−0.577) = 0.28, so ≈ 7,373 + 0.28 × ~870 ≈ 7,620
    assert s.packed_tokens(8192, 1024, 0.8) == pytest.approx(7620, rel=0.02)
    assert math.isnan(s.packed_tokens(8000, 8192, 0.8))


def test_mla_handoff_by_hand():
    # DeepSeek-R1 MLA: 61 layers × (512 + 64) values × 1 byte (FP8) = 35,136 B a token; B200 FP8 8k plateau 55,130/s
    assert s.mla_handoff_gb_s(55130.0) == pytest.approx(55130 * 35136 / 1e9, rel=1e-12)
    assert s.mla_handoff_gb_s(1000.0, kv_bytes=2.0) == pytest.approx(0.070272)


def test_concurrency_from_the_id():
    assert s.concurrency_of("dsr1_b200_trtllm_fp8_disagg_8192x1024_c640_cfg555") == 640.0
    assert math.isnan(s.concurrency_of("no_concurrency_here"))
