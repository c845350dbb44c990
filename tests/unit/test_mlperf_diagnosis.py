"""scripts/mlperf_diagnosis.py's sourced figures: NVIDIA's published trtllm-bench DeepSeek-R1 runs and
aiter's CDNA3 per-channel / block-scale FP8 GEMM ratio (recomputed from the installed tables)."""

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


def test_cdna3_ratio_is_the_installed_aiter_tables():
    pytest.importorskip("pandas")
    ratio = diag.cdna3_fp8_scaling_ratio()
    if ratio is None:
        pytest.skip("amd-aiter not installed (pip install -e '.[calibrate]')")
    assert ratio == pytest.approx(diag.CDNA3_PER_CHANNEL_OVER_BLOCKSCALE, abs=0.005)


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
