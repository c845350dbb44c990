"""deploy/vllm_fp8_moe.py: vLLM's block-FP8 MoE kernel on Hopper by release, and the kernel tables behind its pricing."""

from __future__ import annotations

import pytest

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.vllm_fp8_moe import vllm_hopper_fp8_moe_backend, with_vllm_fp8_moe_backend
from jalapeno.specs.formats import get_precision


def test_oracle_by_release_and_ep():
    # read in the wheels: 0.16.0 tries FLASHINFER_CUTLASS before DEEPGEMM and TRITON at every layout; 0.17.0 and
    # 0.18.0 put TRITON first at EP 1 and FLASHINFER_CUTLASS first at EP > 1 on compute capability 9.0
    assert [vllm_hopper_fp8_moe_backend("0.16.0", ep) for ep in (1, 2, 8)] == ["cutlass"] * 3
    assert [vllm_hopper_fp8_moe_backend(r, 1) for r in ("0.17.0", "0.18.0", "0.19.0")] == [None] * 3
    assert [vllm_hopper_fp8_moe_backend(r, ep) for r, ep in (("0.17.0", 2), ("0.18.0", 4), ("0.19.0", 8))] == \
        ["cutlass"] * 3
    # releases not read (before 0.16.0), an unstated release and a nightly keep the calibrated set
    assert [vllm_hopper_fp8_moe_backend(r, 8) for r in ("0.12.0", "0.15.1", "unstated", "nightly-5b8c30d62b75")] == \
        [None] * 4


def test_only_vllm_hopper_block_fp8_pools_without_a_backend():
    tp4 = Deployment(get_precision("fp8"), Pool(Layout(tp=4)))
    ep8 = Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=8)))
    dep, note = with_vllm_fp8_moe_backend(tp4, "vllm", "0.16.0", "h200")
    assert dep.decode.moe_backend == "cutlass" and "deploy/vllm_fp8_moe.py" in note
    assert with_vllm_fp8_moe_backend(ep8, "vllm", "0.18.0", "h100")[0].decode.moe_backend == "cutlass"
    assert with_vllm_fp8_moe_backend(tp4, "vllm", "0.18.0", "h200") == (tp4, "")  # Triton at EP 1: no curve
    assert with_vllm_fp8_moe_backend(tp4, "vllm", "0.16.0", "b200") == (tp4, "")  # not Hopper
    assert with_vllm_fp8_moe_backend(tp4, "sglang", "0.16.0", "h200") == (tp4, "")  # not vLLM
    # per-tensor FP8 experts (fp8-tensor) and INT4 experts are another scheme: untouched
    for prec in ("fp8-tensor", "int4"):
        d = Deployment(get_precision(prec), Pool(Layout(tp=4)))
        assert with_vllm_fp8_moe_backend(d, "vllm", "0.16.0", "h200") == (d, "")
    # a backend a launch script already named is kept
    named = Deployment(get_precision("fp8"), Pool(Layout(tp=4), moe_backend="triton"))
    assert with_vllm_fp8_moe_backend(named, "vllm", "0.16.0", "h200")[0].decode.moe_backend == "triton"


def _tables():
    pd = pytest.importorskip("pandas")
    from importlib import resources

    pytest.importorskip("aiconfigurator_core")
    root = resources.files("aiconfigurator_core").joinpath("systems", "data")
    keys = ["hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size", "moe_ep_size", "num_tokens"]
    out = {}
    for sd in ("h200_sxm", "h100_sxm"):
        v = pd.read_parquet(root.joinpath(sd, "moe", "vllm", "0.24.0", "moe_perf.parquet"))
        t = pd.read_parquet(root.joinpath(sd, "moe", "trtllm", "1.3.0rc20", "moe_perf.parquet"))
        v = v[(v.moe_dtype == "fp8_block") & (v.distribution == "balanced")
              & v.kernel_source.str.contains("flashinfer_cutlass")].groupby(keys).latency.min()
        t = t[(t.moe_dtype == "fp8_block") & (t.distribution == "balanced")
              & (t.kernel_source == "moe_torch_flow_cutlass")].groupby(keys).latency.min()
        out[sd] = (v, t)
    return out


def test_flashinfer_cutlass_is_trtllm_cutlass_speed_at_minimax_shape():
    # the named assumption's cross-check: vLLM 0.24.0's FlashInfer CUTLASS rows against TensorRT-LLM 1.3.0rc20's
    # CUTLASS rows at MiniMax-M2.5's shape (3072 x 1536, 256 experts, top-8), balanced, 1-256 tokens, MoE TP1 at
    # EP2/4/8 (every layout both time): the median ratio per EP size is 1.0-1.15 on H200 and H100
    import numpy as np

    for sd, (v, t) in _tables().items():
        for ep in (2, 4, 8):
            ratios = [v[(3072, 1536, 256, 8, 1, ep, n)] / t[(3072, 1536, 256, 8, 1, ep, n)]
                      for n in sorted({k[-1] for k in v.index if k[:6] == (3072, 1536, 256, 8, 1, ep)}) if n <= 256]
            assert len(ratios) >= 10
            assert 1.0 <= float(np.median(ratios)) <= 1.15, (sd, ep)


def test_cutlass_narrow_experts_are_slower_than_the_same_bytes_at_ep():
    # why the 0.16.0 MoE-TP4 rows were slow: on H200 the CUTLASS block-FP8 MoE at MoE TP4 (each rank every expert,
    # 1536/4 = 384 wide) takes 0.1174 ms a layer at 4 tokens against 0.0618 ms at EP4 (a quarter of the experts at
    # full width: the same weight bytes a rank), 1.9x; TensorRT-LLM 1.3.0rc20 h200_sxm moe_perf
    _, t = _tables()["h200_sxm"]
    tp4, ep4 = t[(3072, 1536, 256, 8, 4, 1, 4)], t[(3072, 1536, 256, 8, 1, 4, 4)]
    assert tp4 == pytest.approx(0.1174, abs=5e-4) and ep4 == pytest.approx(0.0618, abs=5e-4)
    assert tp4 / ep4 > 1.8
