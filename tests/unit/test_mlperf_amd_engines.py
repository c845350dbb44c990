"""MLPerf v5.1 AMD Llama-2-70B rows (docs/gap_large_batch_decode.md "Round 32"): the 8-GPU Offline rows priced at
AMD's submitted vLLM engines (fit/mlperf_engines.MLPERF_ENGINES), and scripts/mi355x_mxfp4_llama2.py's checks —
the MI355X MXFP4 GEMM pricing against aiter's measured kernels is not the +22% over-prediction."""

from __future__ import annotations

import pytest
from script_module import load_script

from jalapeno.fit.mlperf import load_mlperf

mx = load_script("mi355x_mxfp4_llama2")


def test_amd_offline_rows_run_the_submitted_engine():
    """{closed,open}/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/offline_<chip>.yaml: one TP1 vLLM engine
    per GPU at VLLM_LLAMA2_MLPERF_MAX_TARGET_DECODE_BATCH 1,536 / 2,048 / 3,072 and max_num_batched_tokens 40,960 /
    65,536 / 40,960 (MI300X / MI325X / MI355X): 8 engines, every slot filled = 8 x the batch in flight. MangoBoost's
    32 / 64 x MI355X (open/AMD_MangoBoost/code/llama2-70b-99/apps/mlperf/vllm_args.json ``offline_vllm_args``):
    max_num_seqs 3,450, max_num_batched_tokens 65,536 per GPU."""
    pts = {p.id: p for p in load_mlperf()[0]}
    for key, (batch, tokens, queries) in {
            "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline": (1536, 40960, 245760),
            "mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Offline": (2048, 65536, 319488),
            "mlperf51_AMD_8xMI325X_2xEPYC_9575F_2_llama2-70b-99_Offline": (2048, 65536, 319488),
            "mlperf51_AMD_8xMI355X_2xEPYC_9575F_llama2-70b-99_Offline": (3072, 40960, 1327104),
            "mlperf51_AMD_MangoBoost_32xMI355X-PollaraCluster-EPYC9575F_llama2-70b-99_Offline": (3450, 65536, 2555904),
            "mlperf51_AMD_MangoBoost_64xMI355X-PollaraCluster-EPYC9575F_llama2-70b-99_Offline": (3450, 65536, 5087232),
            }.items():
        p = pts[key]
        d = p.deployment
        gpus = 64 if "64x" in key else 32 if "32x" in key else 8
        assert p.mapping == "matched" and p.concurrency == gpus * batch and p.queries == queries
        assert (d.decode.layout.tp, d.decode.layout.dp, d.decode.workers) == (1, 1, gpus)
        assert (d.max_running, d.max_tokens_per_step) == (batch, tokens)


def test_aiter_rows_by_hand():
    """The table's own rate column (aiter's ``tflops``) is 2 m n k / time: gate-up at m 3,072 (735.2449 µs)
    3,925.5 TFLOP/s; between rows the time is linear in m: QKV at 3,072 = 117.3484 + 0.6 x (122.2919 - 117.3484)
    = 120.3145 µs; beyond the largest row the rate is kept: 40,960 rows of gate-up = 6,141.7014 x 1.25 µs."""
    assert 2 * 3072 * 57344 * 8192 / mx.table_s(57344, 8192, 3072) / 1e12 == pytest.approx(3925.52, rel=1e-5)
    assert mx.table_s(10240, 8192, 3072) == pytest.approx(120.3145e-6, rel=1e-6)
    assert mx.table_s(57344, 8192, 40960) == pytest.approx(6141.7014e-6 * 1.25, rel=1e-9)


def test_model_mxfp4_rate_is_not_above_amds_best():
    """The model's large-M MXFP4 rate (calibrated peak fraction x 10,066 TFLOP/s) is within 10% below AMD's best
    published MI355X MXFP4 GEMM (5,255 TFLOP/s): the chip is not priced faster than AMD measures it."""
    r = mx.model_mxfp4_asymptote_tflops()
    assert 0.9 * mx.GLUON_MXFP4_TFLOPS < r < mx.GLUON_MXFP4_TFLOPS


def test_gemm_pricing_is_not_the_gap():
    """At the engine's shapes the model's GEMMs are within 15% of aiter's measured kernels (decode 3,072 rows, the
    gate-up row at 3,072 its slowest) and 5% (prefill 40,960), and with aiter's GEMMs in place of the model's one
    request still costs the model over 15% less GPU time than the run measured (8 / 333.216 s)."""
    steps = mx.gemm_check()
    dec, pre = steps
    assert 1.0 < dec["table_gemm_s"] / dec["model_gemm_s"] < 1.15
    assert abs(pre["table_gemm_s"] / pre["model_gemm_s"] - 1) < 0.05
    r = mx.per_request(steps)
    assert r["measured_s"] == pytest.approx(8 / 333.216, rel=1e-9)
    assert r["measured_s"] / r["table_s"] - 1 > 0.15 and r["table_s"] > r["model_s"]


def test_multistep_admission_wait_by_hand():
    """V0 multi-step with 8 steps per window at MI300X Interactive's mean TPOT 32.10 ms: a prompt waits for the
    window's end, on average 4 x 32.10 = 128.4 ms (of its measured 201 ms mean TTFT), at p99 0.99 x 8 x 32.10 =
    254.2 ms; MI325X's V1 engine schedules every step (no wait)."""
    pair = {p["system"]: p for p in mx.interactive_pair()}
    assert pair["mi300x"]["wait_mean_s"] == pytest.approx(4 * 0.032102490, rel=1e-9)
    assert pair["mi300x"]["wait_p99_s"] == pytest.approx(0.99 * 8 * 0.032102490, rel=1e-9)
    assert pair["mi325x"]["wait_mean_s"] == 0.0
    assert pair["mi300x"]["wait_mean_s"] < pair["mi300x"]["ttft_mean_s"]


def test_gfx942_small_m_fp8_gemms_slower_than_hipblaslt():
    """Llama-2-70B TP1 decode on MI325X (fp8-tensor): at the Interactive runs' load (35 / 81 sequences a GPU) the
    model's four GEMMs x 80 layers take over 1.5x hipBLASLt's tuned times in AMD's own override file (a weight-
    streaming kernel at small M: gate-up's 470 MB of FP8 weights in 104.3 µs at M 35), at 512 / 2,048 under 1.4x."""
    rows = {r["rows"]: r for r in mx.gfx942_fp8_check("mi325x")}
    assert sum(mx.HIPBLASLT_FP8[s][35] for s in mx.HIPBLASLT_FP8) == pytest.approx(28.0984 + 22.8624 + 104.314 + 56.3801)
    for m in (35, 81):
        assert rows[m]["model_gemm_s"] / rows[m]["hipblaslt_gemm_s"] > 1.5
    for m in (512, 2048):
        assert 1.0 < rows[m]["model_gemm_s"] / rows[m]["hipblaslt_gemm_s"] < 1.4
