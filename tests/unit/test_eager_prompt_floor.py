"""TensorRT-LLM's eager prompt step: host calls by architecture, the launch scripts' graph mode, max(host, GPU) in
the analytic model and the simulator (cost/host_calls.py, serve/limits.prompt_floor_s, fit/trt_prompt_graphs.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jalapeno.cost.host_calls import TRITON_MOE, TRITON_MOE_CALLS, step_host_calls
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.trt_prompt_graphs import TRTLLM_EAGER_CALL_S, piecewise_on, with_prompt_graphs
from jalapeno.serve.limits import prompt_floor_s
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

C = 24e-6


def _dep(prec="fp4", lay=None, **kw):
    return Deployment(get_precision(prec), Pool(lay or Layout(tp=8)), **kw)


def test_host_floor_by_hand_for_each_architecture():
    """Per-layer counts of eager26 (MLA context 37, absorption 33, DeepSeek MoE 23, dense 6; GQA + dense 14; GQA +
    MoE 16), summed over the layers by hand, times 24 µs."""
    ds, ll, go = load_model("deepseek-r1"), load_model("llama-3.3-70b"), load_model("gpt-oss-120b")
    ctx, mixed = 3 * (37 + 6) + 58 * (37 + 23), 3 * (37 + 33 + 6) + 58 * (37 + 33 + 23)
    assert (ctx, mixed) == (3609, 5622)
    assert prompt_floor_s(ds, _dep(eager_prompt_call_s=C)) == pytest.approx((ctx * C, mixed * C))  # 86.6 / 134.9 ms
    assert prompt_floor_s(ll, _dep("fp8", eager_prompt_call_s=C)) == pytest.approx((80 * 14 * C,) * 2)  # 26.9 ms
    assert prompt_floor_s(go, _dep("mxfp4", Layout(tp=4), eager_prompt_call_s=C)) == pytest.approx((36 * 16 * C,) * 2)
    # MTP3: three drafting passes of one MoE layer plus the MTP module's 4 calls
    assert step_host_calls(ds, True, 3) == mixed + 3 * (37 + 33 + 23 + 4) == 5913
    assert prompt_floor_s(ds, _dep(eager_prompt_call_s=C, mtp=MTP(3, 0.7)))[1] == pytest.approx(5913 * C)
    # no floor when graphed (0) or on an uncounted MoE path (TRITON on an MLA + shared-expert layer)
    assert prompt_floor_s(ds, _dep()) is None
    assert prompt_floor_s(ds, Deployment(get_precision("fp8"), Pool(Layout(tp=8), moe_backend="triton"),
                                         eager_prompt_call_s=C)) is None


def test_triton_moe_path_by_hand():
    """gpt-oss-120b on the TRITON MoE path (h200ttft27): the TRTLLM layer's 16 less its 5-call MoE part, plus the
    TRITON part read in fused_moe_triton.py / triton_kernels: pad 1, topk 6 (3 allocations, transpose, slice, launch),
    routing 16 (sum 2, slice, 3 allocations, 2 aligned allocations x 2, 4 slices, 2 launches), gemm1 14, gemm2 16,
    output slice 1 = 54; 36 layers x 65 = 2,340 calls, 56.16 ms at 24 us, context-only and mixed alike."""
    go = load_model("gpt-oss-120b")
    routing = 2 + 1 + 3 + 2 * 2 + 4 + 2
    # scale view, output alloc + [None], 2 routing-metadata views, output view, 3 as_strided, gather divide, launch,
    # 3 squeezes; gemm2 adds the scratchpad alloc, the group index arange + view and the reduction launch, no divide
    gemm1 = 1 + 2 + 2 + 1 + 3 + 1 + 1 + 3
    gemm2 = 1 + 3 + 2 + 1 + 3 + 1 + 2 + 1 + 1 + 1
    assert (routing, gemm1, gemm2) == (16, 14, 16)
    moe = 1 + (3 + 1 + 1 + 1) + routing + gemm1 + gemm2 + 1
    assert moe == TRITON_MOE == len(TRITON_MOE_CALLS) == 54
    per_layer = 16 - 5 + moe
    dep = Deployment(get_precision("mxfp4"), Pool(Layout(tp=4), moe_backend="triton"), eager_prompt_call_s=C)
    assert prompt_floor_s(go, dep) == pytest.approx((36 * per_layer * C,) * 2)
    assert 36 * per_layer * C == pytest.approx(0.05616)


def test_graph_mode_rule_on_three_known_scripts():
    """dsr1_fp4_b200_trt.sh @6eecc0e66 (1k/1k at TP8 EP8 only), dsr1_fp8_b200_trt.sh @ec7bafaae (1k/8k at
    128 <= CONC < 256), dsr1_fp8_b200_trt_mtp.sh @5d517074c (never with attention DP); gpt-oss: always eager."""
    d = _dep(lay=Layout(tp=8, ep=8))
    assert piecewise_on("fp4", "1.2.0rc6.post2", False, 1024, 1024, 64, 8, 8, False)
    assert not piecewise_on("fp4", "1.2.0rc6.post2", False, 1024, 1024, 64, 8, 1, False)
    assert [piecewise_on("fp8", "1.2.0rc6.post2", False, 1024, 8192, c, 8, 1, False) for c in (64, 128, 256)] == [
        False, True, False]
    assert not piecewise_on("fp8", "1.2.0rc6.post3", True, 1024, 1024, 64, 8, 8, True)
    assert piecewise_on("fp8", "1.2.0rc6.post3", True, 1024, 1024, 64, 8, 8, False)
    assert with_prompt_graphs(d, "trtllm", "deepseek-r1", "fp4", "1.2.0rc6.post2", 1024, 1024, 64)[0] \
        .eager_prompt_call_s == 0.0
    assert with_prompt_graphs(d, "trtllm", "gpt-oss-120b", "fp4", "1.2.0rc6.post2", 1024, 1024, 64)[0] \
        .eager_prompt_call_s == TRTLLM_EAGER_CALL_S
    assert with_prompt_graphs(d, "vllm", "deepseek-r1", "fp4", "0.11", 1024, 8192, 64)[0] is d


def test_lone_prompt_costs_max_host_gpu_in_both_models():
    """At C = 1 the prompt step carries no decode: its host floor is the context-only count (3,609 × 24 µs =
    86.6 ms) against the GPU's 1k prompt step; analytic and simulated TTFT both grow by host − GPU."""
    from jalapeno.serve.sim.run import simulate

    m, pr, wl = load_model("deepseek-r1"), load_pricer("b200"), get_workload(None, 1024, 64)
    gpu = float(step_cost(m, pr, Layout(tp=8), get_precision("fp4"),
                          Batch.make(decode_seqs=[0.0, 0.0], decode_ctx=1.0, prefill_tokens=[1024.0, 1024.0],
                                     prefill_ctx=0.0, prefill_seqs=[1.0, 1.0])).step_time_s[0])
    host = 3609 * C
    assert host > gpu
    off, on = _dep(), _dep(eager_prompt_call_s=C)
    d_an = (serve_at_concurrency(m, pr, on, wl, [1], idle_start=False).ttft_s
            - serve_at_concurrency(m, pr, off, wl, [1], idle_start=False).ttft_s)[0]
    d_sim = (simulate(m, pr, on, workload=wl, concurrency=1, seed=1).summary["ttft_s"]["mean"]
             - simulate(m, pr, off, workload=wl, concurrency=1, seed=1).summary["ttft_s"]["mean"])
    assert d_sim == pytest.approx(host - gpu, rel=0.03)
    assert d_an == pytest.approx(host - gpu, rel=0.05)


def test_bad_host_call_time_is_one_clear_error():
    with pytest.raises(SpecError, match="eager_prompt_call_s"):
        _dep(eager_prompt_call_s=24.0)


def test_scripts_counts_match_the_package():
    """scripts/trt_eager_host_calls.py's itemised CALLS sum to the package's per-architecture constants."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import trt_eager_host_calls as s

    for name in ("deepseek-r1", "llama-3.3-70b", "gpt-oss-120b"):
        for mixed in (False, True):
            assert s.step_calls(name, mixed) == step_host_calls(load_model(name), mixed)


def test_disaggregated_prefill_worker_pays_the_context_only_floor():
    """A TensorRT-LLM prefill worker runs prompt steps alone and eagerly: a lone 1k prompt's service time is
    max(3,609 × 24 µs, GPU) and the worker's capacity its budget over max(full step, floor)."""
    from jalapeno.serve.disagg import pool_prefill_perf

    m, pr, wl = load_model("deepseek-r1"), load_pricer("b200"), get_workload(None, 1024, 64)
    pool = Pool(Layout(tp=8))
    base = Deployment(get_precision("fp4"), pool, prefill=pool, token_budget=1024)
    off = pool_prefill_perf(m, pr, base, wl)
    on = pool_prefill_perf(m, pr, Deployment(get_precision("fp4"), pool, prefill=pool, token_budget=1024,
                                             eager_prompt_call_s=C), wl)
    assert on.service_s == pytest.approx(max(off.service_s, 3609 * C))
    assert on.tokens_per_s == pytest.approx(1024 / max(1024 / off.tokens_per_s, 3609 * C))
