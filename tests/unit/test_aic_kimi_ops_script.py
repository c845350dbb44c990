"""scripts/aic_kimi_ops.py: the vLLM B200 GEMM and all-reduce look-ups it adds to aic_kimi_split's."""

from __future__ import annotations

import math

import pytest
from script_module import load_script

ops = load_script("aic_kimi_ops")


@pytest.fixture(scope="module")
def tab():
    pytest.importorskip("aiconfigurator_core")
    return ops.Tables()


def test_gemm_lookups_at_and_between_table_rows(tab):
    # aiconfigurator-core 0.12.0, b200_sxm gemm vllm 0.24.0 gemm_perf.parquet rows (latency in ms)
    # BF16 (torch.nn.functional.linear) m 8, n 1536, k 7168: 0.0083182 ms -- Kimi's q_a projection width
    assert tab.gemm_s("bfloat16", 8, 1536, 7168) == pytest.approx(0.0083182e-3, rel=1e-4)
    # NVFP4 (FlashInfer CuTe-DSL) m 8, n 1024, k 7168: 0.010992 ms -- the shared expert's gate/up at TP4
    assert tab.gemm_s("nvfp4", 8, 1024, 7168) == pytest.approx(0.010992e-3, rel=1e-4)
    # the router's n = 384 lies between the n = 256 (0.0056009 ms) and n = 512 (0.0056267 ms) rows at m 4:
    # log-log halfway-ish, ln(384/256)/ln 2 = 0.585 of the way
    want = 0.0056009 * (0.0056267 / 0.0056009) ** (math.log(1.5) / math.log(2))
    assert tab.gemm_s("bfloat16", 4, 384, 7168) == pytest.approx(want * 1e-3, rel=1e-4)


def test_allreduce_lookup(tab):
    # custom_allreduce_perf vLLM 0.19.0, vllm_graph, 8 GPUs, 65,536 bytes: 0.009436 ms
    assert tab.allreduce_s(8, 65536) == pytest.approx(0.009436e-3, rel=1e-3)


def test_row_split_counts_each_op_per_layer(tab):
    from jalapeno.specs.catalog import load_model

    kimi = load_model("kimi-k2.5")
    parts = ops.row_split(tab, kimi, "fp4", 8, 8, 1, 4, 1536.0, "fp8")
    # 61 layers x 2 all-reduces of 4 x 7168 x 2 = 57,344 bytes each; 60 MoE layers' routers; 1 dense layer
    assert parts["allreduce"] == pytest.approx(2 * 61 * tab.allreduce_s(8, 57344))
    assert parts["router"] == pytest.approx(60 * tab.gemm_s("bfloat16", 4, 384, 7168))
    assert parts["kernels"] == pytest.approx(sum(v for k, v in parts.items() if k not in ("kernels", "experts_uniform")))
    # NVIDIA's checkpoint runs the shared expert in NVFP4, the INT4 release in BF16 (256 per rank at TP8)
    int4 = ops.row_split(tab, kimi, "int4", 8, 8, 1, 4, 1536.0, "fp8")
    assert parts["shared"] == pytest.approx(60 * (tab.gemm_s("nvfp4", 4, 512, 7168) + tab.gemm_s("nvfp4", 4, 7168, 256)))
    assert int4["shared"] == pytest.approx(60 * (tab.gemm_s("bfloat16", 4, 512, 7168) + tab.gemm_s("bfloat16", 4, 7168, 256)))
    # MoE TP8 (EP1): every rank holds all 384 experts (n = 384); 4 sequences put 4 x 8 = 32 assignments on them,
    # the balanced table's row touches 32, uniform routing 384 (1 - (1 - 8/384)^4) = 31.02: the op is the balanced
    # curve read at 31.02 assignments = 3.878 tokens (below 32 = n, so no saving term)
    u = 384 * (1 - (1 - 8 / 384) ** 4)
    tokens, lat = ops._moe_curve("b200", "fp4", 7168, 2048, 384, 8, 1)
    assert parts["experts_uniform"] == pytest.approx(60 * ops.loglog(u / 8, tokens, lat), rel=1e-9)
    assert parts["experts"] == pytest.approx(60 * ops.loglog(4, tokens, lat), rel=1e-9)
