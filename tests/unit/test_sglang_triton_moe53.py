"""SGLang's Triton fused MoE on Hopper as a fitted backend form (round 53, h200form53; shipped off).

Facts, by hand from their sources:

- aiconfigurator-core 0.12.0, systems/data/h200_sxm/moe/sglang/0.5.14/moe_perf.parquet, kernel_source
  ``sglang_fused_moe_triton``, ``fp8_block``, DeepSeek-R1's shape (hidden 7,168, intermediate 2,048, 256 experts,
  top-8) at MoE TP8 EP1, balanced routing: 0.1679 ms at 16 tokens, 0.2498 ms at 32 tokens; the H100 table of the same
  release: 0.1040 ms at 8 tokens.
- Balanced routing touches min(256, 8·T) experts; one expert at MoE TP8 holds 3 · 7,168 · 256 = 5,505,024 FP8 weights
  (1 B each). Streamed at H200's 4.8 TB/s: 128 experts (T 16) 704.6 MB in 0.1468 ms, 256 experts (T 32) 1.409 GB in
  0.2936 ms; at H100's 3.35 TB/s 64 experts (T 8) 352.3 MB in 0.1052 ms. So the T 32 H200 row and the T 8 H100 row
  are timed faster than the chip can read their weights (excluded), the T 16 H200 row is not (kept).
"""

from __future__ import annotations

import pandas as pd
import pytest

import jalapeno.deploy.sglang_triton_moe as stm
from jalapeno.cost.moe_backend import KernelMoePricer
from jalapeno.cost.pool_backends import with_moe_backend
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit.moe_backends import beyond_peak
from jalapeno.fit.searched import with_launch_backend
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.moe_backends import moe_backend_kernel

FP8 = {"fp8_block": ("fp8", 1.0, 1.0)}


def _rows(tokens, latency_ms):
    n = len(tokens)
    return pd.DataFrame(
        {
            "moe_dtype": ["fp8_block"] * n,
            "num_tokens": tokens,
            "hidden_size": [7168] * n,
            "inter_size": [2048] * n,
            "topk": [8] * n,
            "num_experts": [256] * n,
            "moe_tp_size": [8] * n,
            "moe_ep_size": [1] * n,
            "latency": latency_ms,
        }
    )


def test_peak_check_by_hand():
    assert beyond_peak(_rows([16, 32], [0.1679, 0.2498]), FP8, 4.8e12).tolist() == [False, True]
    assert beyond_peak(_rows([8], [0.1040]), FP8, 3.35e12).tolist() == [True]
    assert beyond_peak(_rows([8], [0.1060]), FP8, 3.35e12).tolist() == [False]  # 0.1052 ms needed


def test_switch_off_by_default_and_rule_when_on():
    assert stm.SGLANG_TRITON_MOE_ON is False
    dep = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    assert stm.with_sglang_triton_moe_backend(dep, "sglang", "h200") == (dep, "")
    on = stm.with_sglang_triton_moe_backend(dep, "sglang 0.5.9", "h100", on=True)[0]
    assert on.decode.moe_backend == "sglang_triton"
    for engine, system, prec in (("vllm", "h200", "fp8"), ("sglang", "b200", "fp8"), ("sglang", "h200", "fp4")):
        d = Deployment(get_precision(prec), Pool(Layout(tp=8)))
        assert stm.with_sglang_triton_moe_backend(d, engine, system, on=True)[0].decode.moe_backend is None
    named = Deployment(get_precision("fp8"), Pool(Layout(tp=8), moe_backend="cutlass"))
    assert stm.with_sglang_triton_moe_backend(named, "sglang", "h200", on=True)[0].decode.moe_backend == "cutlass"


def test_launch_recipe_takes_it_only_when_on(monkeypatch):
    pool = Pool(Layout(tp=8))
    assert with_launch_backend("h200", "deepseek-r1", "sglang", "fp8", pool).moe_backend is None
    monkeypatch.setattr(stm, "SGLANG_TRITON_MOE_ON", True)
    assert with_launch_backend("h200", "deepseek-r1", "sglang", "fp8", pool).moe_backend == "sglang_triton"


def test_shipped_form_priced_with_its_floor():
    k = moe_backend_kernel("h200", "sglang_triton")
    assert k["floor_applied"] and k["table"].endswith("sglang 0.5.14 moe_perf")
    assert 0.0 < k["hbm_fraction"] <= 1.0 and 1e-6 < k["floor_s"] < 1e-4
    assert k["excluded_beyond_peak"] > 0
    p = with_moe_backend(load_pricer("h200", stack="sglang"), "sglang_triton", load_model("deepseek-r1"), Layout(tp=8))
    assert isinstance(p, KernelMoePricer) and p.floor_s == pytest.approx(k["floor_s"])


def test_fit_excludes_the_rows_beyond_peak():
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.fit.kernel_tables import load_table

    df, version = load_table("h200_sxm", "moe", "moe_perf", backend="sglang")
    d = df[
        (df.kernel_source == "sglang_fused_moe_triton")
        & (df.moe_dtype == "fp8_block")
        & (df.moe_ep_size == 1)
        & (df.distribution == "balanced")
    ]
    bad = beyond_peak(d, FP8, 4.8e12)
    shapes = {tuple(int(v) for v in x) for x in d[bad][["hidden_size", "inter_size", "num_experts", "topk"]].values}
    assert shapes == {(7168, 2048, 256, 8)}  # only DeepSeek-R1's shape beats the peak
    assert int(bad.sum()) == moe_backend_kernel("h200", "sglang_triton")["excluded_beyond_peak"]
