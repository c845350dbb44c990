"""fit/tp_scaling.py: the kernel-level decomposition of a dense decode step (issue 18 part 4).

Synthetic tables whose latencies follow power laws make every lookup exact, so the expected
values are the laws themselves, computed by hand from QwQ-32B's published config.json
(hidden 5120, 40 query / 8 KV heads of 128, intermediate 27648, 64 layers, vocabulary 152064).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.tp_scaling import (
    EngineKernels,
    allreduce_s,
    attention_s,
    dense_decode_kernels,
    gemm_s,
)
from jalapeno.specs.catalog import load_model

BW = 1.5e12  # synthetic weight-streaming rate, B/s


def _gemm_table(ms=(1, 16)) -> pd.DataFrame:
    """latency = n·k·2 B / BW (ms), on a coarse power-of-two grid."""
    grid = [2.0**e for e in range(5, 17)]
    rows = [(m, n, k, n * k * 2 / BW * 1e3) for m, n, k in itertools.product(ms, grid, grid)]
    return pd.DataFrame(rows, columns=["m", "n", "k", "latency"])


def _attention_table() -> pd.DataFrame:
    """latency (ms) = c(h)·sqrt(step)·1e-3 with c(4) = 1, c(8) = 2, at 1 KV head and batch 1."""
    rows = [(1, h, 1, s, (1.0 if h == 4 else 2.0) * np.sqrt(s) * 1e-3) for h in (4, 8) for s in (1, 3, 7, 15, 31, 63, 127, 255)]
    return pd.DataFrame(rows, columns=["batch_size", "num_heads", "num_key_value_heads", "step", "latency"])


def _allreduce_table() -> pd.DataFrame:
    """latency (ms) = 1e-3·sqrt(elements) at 2 and 8 GPUs (8 GPUs twice as slow)."""
    rows = [(g, 2**e, (1.0 if g == 2 else 2.0) * np.sqrt(2**e) * 1e-3) for g in (2, 8) for e in range(7, 22)]
    return pd.DataFrame(rows, columns=["num_gpus", "message_size", "latency"])


def test_gemm_lookup_is_exact_on_a_power_law_off_the_grid():
    t = _gemm_table()
    for n, k in ((896, 5120), (6912, 5120), (5120, 3456)):
        assert gemm_s(t, 1, n, k) == pytest.approx(n * k * 2 / BW, rel=1e-9)
    # wider than the widest n (65536): scaled by n, i.e. still the weight-streaming time
    assert gemm_s(t, 16, 76032, 5120) == pytest.approx(76032 * 5120 * 2 / BW, rel=1e-9)


def test_gemm_lookup_refuses_a_batch_the_table_lacks():
    with pytest.raises(SpecError, match="no rows at m = 4"):
        gemm_s(_gemm_table(), 4, 1024, 1024)


def test_attention_lookup_interpolates_heads_linearly_and_averages_contexts():
    ctx = np.array([16.0, 100.0])
    # 5 query heads between the table's 4 and 8: c = 1 + (5 − 4)/(8 − 4) = 1.25
    want = 1.25 * np.mean(np.sqrt(ctx)) * 1e-6
    assert attention_s(_attention_table(), 1, 5.0, 1, ctx) == pytest.approx(want, rel=1e-9)
    with pytest.raises(SpecError, match="no decode-attention rows at batch 16"):
        attention_s(_attention_table(), 16, 5.0, 1, ctx)


def test_allreduce_lookup_is_log_log():
    assert allreduce_s(_allreduce_table(), 8, 81920) == pytest.approx(2 * np.sqrt(81920) * 1e-6, rel=1e-9)
    with pytest.raises(SpecError, match="no all-reduce rows for 4 GPUs"):
        allreduce_s(_allreduce_table(), 4, 5120)


def test_qwq_step_shapes_per_tp_rank():
    """Per step at TP8, batch 1: each group's weight bytes per rank / BW × 64 layers (by hand)."""
    k = EngineKernels(_gemm_table(), _attention_table(), _allreduce_table(), "synthetic")
    ctx = np.array([50.0])
    d = dense_decode_kernels(load_model("qwq-32b"), 8, 1, ctx, k)
    L = 64
    assert d["qkv"] == pytest.approx(L * (40 + 2 * 8) * 128 / 8 * 5120 * 2 / BW)   # n = 896
    assert d["o"] == pytest.approx(L * 5120 * 640 * 2 / BW)                          # k = 5120/8
    assert d["gate_up"] == pytest.approx(L * 2 * 27648 / 8 * 5120 * 2 / BW)          # n = 6912
    assert d["down"] == pytest.approx(L * 5120 * 3456 * 2 / BW)                      # k = 27648/8
    assert d["lm_head"] == pytest.approx(152064 / 8 * 5120 * 2 / BW)                 # once per step
    assert d["attention"] == pytest.approx(L * 1.25 * np.sqrt(50.0) * 1e-6)          # 5 q heads, 1 KV head
    assert d["all_reduce"] == pytest.approx(L * 2 * 2 * np.sqrt(5120) * 1e-6)        # 2 per layer, b·h elements


def test_decomposition_refuses_moe_models_and_uneven_heads():
    k = EngineKernels(_gemm_table(), _attention_table(), _allreduce_table(), "synthetic")
    with pytest.raises(SpecError, match="not a dense GQA/MHA model"):
        dense_decode_kernels(load_model("deepseek-r1"), 8, 1, np.array([10.0]), k)
    with pytest.raises(SpecError, match="40 query heads do not split over TP3"):
        dense_decode_kernels(load_model("qwq-32b"), 3, 1, np.array([10.0]), k)


def test_a100_vllm_tables_read_the_cuda_graph_all_reduce():
    """The loader keeps vLLM's CUDA-graph custom all-reduce rows (a few us at a 10 kB decode
    message on A100), not its eager rows (~44 us at every size up to 2 MB: a host-side copy)."""
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.fit.tp_scaling import load_engine_kernels

    k = load_engine_kernels("a100_sxm", "vllm")
    assert set(k.allreduce.kernel_source) == {"vLLM_custom_graph"}
    assert 3e-6 < allreduce_s(k.allreduce, 8, 5120) < 10e-6
    eager = load_engine_kernels("a100_sxm", "vllm", graph=False)
    assert set(eager.allreduce.kernel_source) == {"vLLM_custom_eager"}
    assert 30e-6 < allreduce_s(eager.allreduce, 8, 5120) < 60e-6
    with pytest.raises(SpecError, match="no kernel decomposition for engine 'foo'"):
        load_engine_kernels("a100_sxm", "foo")


def test_a100_measured_set_prices_gemms_as_vllms_independent_a100_table():
    """A100's calibrated set is fitted on its TensorRT-LLM GEMM table; vLLM's own A100 GEMM table
    is an independent measurement. QwQ-32B's weight-streaming GEMMs (gate_up, down) per decode
    step agree within 10% at TP2 and TP8 (the H100-fitted default set was 14-17% fast on them)."""
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.fit.tp_scaling import load_engine_kernels, tp_decomposition

    d = tp_decomposition(load_model("qwq-32b"), load_pricer("a100-sxm", stack="vllm"),
                         load_engine_kernels("a100_sxm", "vllm"), np.arange(1.0, 201.0), batches=(1,))
    for tp in (2, 8):
        for g in ("gate_up", "down"):
            assert d[1, tp]["model"][g] == pytest.approx(d[1, tp]["kernels"][g], rel=0.10)


def test_tp_sweep_predictions_keep_each_row_with_its_own_deployment():
    """Rows in any order get the TPOT of their own TP, workload and concurrency."""
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.fit.tp_scaling import tp_sweep_predictions
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import Workload

    m, p = load_model("qwen3-32b"), load_pricer("h100", stack="vllm")
    rows = pd.DataFrame({"isl": [1024, 1024, 4096], "osl": [128, 128, 512], "concurrency": [16.0, 8.0, 8.0],
                         "tp": [8, 2, 8], "tpot_s": [0.01, 0.02, 0.01], "version": "x"})
    got = tp_sweep_predictions(m, p, rows)
    for r in got.itertuples():
        one = serve_at_concurrency(m, p, Deployment(get_precision("bf16"), Pool(Layout(tp=r.tp))),
                                   Workload("w", r.isl, r.osl, 1.0), [r.concurrency]).tpot_s[0]
        assert r.pred_tpot_s == pytest.approx(float(one))
    assert got.pred_tpot_s[1] > got.pred_tpot_s[0]  # TP2 at c8 is slower than TP8 at c16


def test_tp_sweep_rows_read_the_h100_vllm_qwen3_sweep():
    """aiconfigurator's Qwen3-32B H100 vLLM 0.12.0 rows: 6 workloads x 5 concurrencies x TP 2/4/8."""
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.fit.tp_scaling import tp_sweep_rows

    r = tp_sweep_rows()
    assert len(r) == 90 and set(r.tp) == {2, 4, 8} and set(r.concurrency) == {8.0, 16.0, 32.0, 64.0, 128.0}
    assert set(r.version) == {"0.12.0"}
    with pytest.raises(SpecError, match="no aggregated vllm rows of Nope/Model"):
        tp_sweep_rows("Nope/Model")
