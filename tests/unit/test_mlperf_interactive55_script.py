"""scripts/mlperf_interactive55.py: the B200 Llama-2-70B engines' KV cache is FP8 (the Server runs could not hold their
load in BF16), the GB200 x4 Interactive run stands inside its limits (docs/gap_large_batch_decode.md "Round 55
(mlperfnv55)").

Expected values by hand (inference_results_v5.1 @965182b LoadGen summaries):
- KV a token, Llama-2-70B (80 layers, 8 KV heads, head dim 128, K and V): 2 x 80 x 8 x 128 = 163,840 elements, so
  163,840 B in FP8 and 327,680 B in BF16.
- NVIDIA B200 Server: 361.30 completed queries/s x 33.924 s mean latency / 8 GPUs = 1,532 requests in flight a GPU
  (the script's Little's law on output tok/s x mean TPOT gives ~1,529); at ~420 resident tokens each (222 prompt +
  half of ~274 output, weighted by output length) that is 1,529 x 420 x 327,680 B = 210 GB in BF16, over B200's
  180 GB before any weight; FP8 105 GB, with ~39.6 GB of NVFP4 weights (68.5 B layer parameters x 9/16 B + 1 GB of
  BF16 embeddings) 145 GB, inside.
- GB200 x4 Interactive: 109.89 scheduled/s over 4 GPUs = 27.47 a GPU, B200's 220.11 / 8 = 27.51; its p99 TPOT 33.56 ms
  is 0.84 of the 40 ms limit (B200's 38.15: 0.95); p99 / mean 33.56 / 30.58 = 1.097.
"""

from __future__ import annotations

import pytest
from script_module import load_script

it = load_script("mlperf_interactive55")


@pytest.fixture(scope="module")
def pts():
    from jalapeno.fit.mlperf import load_mlperf

    return load_mlperf()[0]


def test_server_runs_cannot_hold_their_load_in_bf16(pts):
    rows = {r["row"]: r for r in it.kv_rows(pts)}
    b200 = rows["NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Server"]
    assert b200["running"] == pytest.approx(1532, rel=0.01)
    assert b200["kv_bf16_gb"] == pytest.approx(1532 * 420 * 327_680 / 1e9, rel=0.02)  # ~210 GB
    assert b200["kv_bf16_gb"] > b200["usable_gb"]  # over HBM with no weight at all
    assert b200["kv_fp8_gb"] + b200["weights_gb"] < b200["usable_gb"]  # FP8 fits
    assert b200["weights_gb"] == pytest.approx(68.45e9 * 9 / 16 / 1e9 + 1.05, rel=0.02)
    for r in rows.values():  # every run fits in FP8; the Interactive ones would fit in either
        assert r["kv_fp8_gb"] + r["weights_gb"] < r["usable_gb"]
    gb = rows["NVIDIA_GB200-NVL72_GB200-186GB_aarch64x4_TRT_llama2-70b-99_Server"]
    assert gb["kv_bf16_gb"] + gb["weights_gb"] > gb["usable_gb"]


def test_gb200_x4_interactive_run_stands_inside_its_limit(pts):
    rows = {r["row"].split("_")[1]: r for r in it.headroom_rows(pts)}
    gb, b = rows["GB200-NVL72"], rows["B200-SXM-180GBx8"]
    assert gb["per_gpu_rate"] == pytest.approx(27.47, abs=0.01)
    assert b["per_gpu_rate"] == pytest.approx(27.51, abs=0.01)
    assert gb["p99_of_limit"] == pytest.approx(33.56 / 40, abs=0.001)
    assert gb["tail"] == pytest.approx(33.56 / 30.58, abs=0.001)
    assert gb["rate_ratio"] > b["rate_ratio"] + 0.05  # room the B200 run (0.95 of the limit) does not have
    assert 0.0 < b["rate_ratio"] - 1.0 < 0.05
    assert gb["residual_s"] == pytest.approx(b["residual_s"], abs=1e-3)  # the same ~8 ms on both chips and hosts


def test_host_table_lists_the_same_config_runs(pts):
    rows = {r["submitter"]: r for r in it.host_rows(pts)}
    assert set(rows) == {"NVIDIA", "Google", "Nebius", "Supermicro", "Dell", "GigaComputing"}
    assert rows["NVIDIA"]["cpu"] == rows["Google"]["cpu"]  # one CPU, residuals 3 ms apart
    assert abs(rows["NVIDIA"]["residual_ms"] - rows["Google"]["residual_ms"]) > 2.0
    assert all(r["residual_ms"] > 5.0 for r in rows.values())  # every system misses the step
    assert rows["NVIDIA"]["server_tpot_mean_ms"] == pytest.approx(123.32)
