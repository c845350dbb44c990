"""scripts/mlperf_diagnosis.py's sourced figures: NVIDIA's published trtllm-bench DeepSeek-R1 runs and
the Llama FP8 rows priced by scale granularity."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
_spec = importlib.util.spec_from_file_location("mlperf_diagnosis", SCRIPTS / "mlperf_diagnosis.py")
diag = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(diag)


def test_published_runs_are_self_consistent():
    """Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md: 'Total Output Throughput' 43,146.2042 and
    36,384.0838 tok/s on 8 B200, 11,489.2671 on 8 H200, equal to 8 x the per-GPU figures; concurrency
    7,168 / 3,072 / 1,024 = 8 x max_batch_size 896 / 384 / 128; by Little's law each rank's batch over its
    output rate is the per-user step (1 / 'Per User Output Throughput'): within 3% (ramp and drain)."""
    totals = {896: 43146.2042, 384: 36384.0838, 128: 11489.2671}
    for _label, _system, _prec, batch, _tokens, tps_gpu, tps_user in diag.PUBLISHED_TRTLLM_BENCH:
        assert tps_gpu == pytest.approx(totals[batch] / 8, rel=1e-6)
        assert batch / tps_gpu == pytest.approx(1 / tps_user, rel=0.03)


def test_model_serves_each_published_engine_at_its_limits():
    rows = diag.published_engine_check()
    assert [r["batch"] for r in rows] == [896, 384, 128]
    assert rows[0]["step_s"] == pytest.approx(1 / 6.1806)
    assert all(r["model_tps_gpu"] > 0 and r["model_tpot_s"] > 0 for r in rows)


def test_llama_fp8_rows_are_per_tensor_and_block_scale_prices_them_slower():
    """Every MLPerf Llama FP8 row is read as its per-tensor checkpoint; on H200 and MI300X/MI325X the
    per-tensor FP8 GEMM fit is faster than the block-scale one at Llama's large shapes (measured:
    TensorRT-LLM 1,161-1,262 vs 1,105-1,148 TFLOP/s on H200; aiter CDNA3 1.82x), so the block-scale
    reading predicts less throughput for each row."""
    rows = diag.fp8_granularity_check()
    assert {r["system"] for r in rows} == {"h200", "mi300x", "mi325x"}
    assert all(r["per_tensor"] > r["block"] for r in rows)


def test_h200_token_budget_caps_the_decode_batch():
    """Nebius H200 Offline: max_num_tokens 1,536 per step holds decode B plus the prefill that replaces
    finished requests, B x ISL / OSL tokens: B = 1,536 / (1 + ISL / OSL) ~ 875 at 222 / 294 tokens."""
    rows = {r["id"]: r for r in diag.llama2_at_submitted_engines()}
    assert len(rows) == 7 and not any("MangoBoost" in k for k in rows)
    from jalapeno.fit.mlperf import load_mlperf

    p = next(x for x in load_mlperf()[0] if x.id == "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Offline")
    h = rows[p.id]
    assert h["limit"].startswith("max_tokens_per_step")
    assert h["decode_batch"] == pytest.approx(1536 / (1 + p.workload.mean_isl / p.workload.mean_osl), rel=0.02)


def test_step_residuals_measured_steps_by_hand_and_the_gap_is_a_step_constant():
    """Little's law on the two B200 Server logs: 14,630.74 tok/s / 8 GPUs x 61.27 ms = 112.05 running per
    GPU (Google), 18,592.24 / 8 x 66.461 ms = 154.5 (NVIDIA), each run's step its mean TPOT; trtllm-bench's
    steps 1 / 11.9263 and 1 / 11.3476 s (per-user rates). The model's step is faster at every one of the
    five runs by 15-40 ms (docs/model.md 8.9: the open lead), across 112-512 running per rank."""
    rows = {r["label"]: r for r in diag.step_residuals()}
    assert len(rows) == 5
    assert rows["Google B200 Server"]["running"] == pytest.approx(14630.74 / 8 * 0.06127, rel=1e-6)
    assert rows["NVIDIA B200 Server"]["running"] == pytest.approx(18592.24 / 8 * 0.066461, rel=1e-5)
    assert rows["trtllm-bench B200 FP4, BF16 KV"]["measured_s"] == pytest.approx(1 / 11.9263)
    assert rows["trtllm-bench H200 FP8, BF16 KV"]["measured_s"] == pytest.approx(1 / 11.3476)
    assert all(0.015 < r["residual_s"] < 0.040 for r in rows.values())
