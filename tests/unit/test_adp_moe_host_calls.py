"""cost/host_calls.ADP_MOE_EXTRA: a DeepSeek-style MoE layer's extra host calls under attention DP on the TRTLLM MoE
path (round 37, gbttft37), counted by hand from TensorRT-LLM's TRTLLMGenFusedMoE.forward_impl."""

from __future__ import annotations

import pytest

from jalapeno.cost.host_calls import ADP_MOE_A2A_EXTRA, ADP_MOE_EXTRA, step_host_calls
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.limits import prompt_floor_s
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision


def test_the_attention_dp_moe_path_adds_routing_casts_allgather_and_reducescatter():
    # noaux_tc_op + its two casts (3), the forward_impl's two casts (2), the allgather of four tensors
    # (4 contiguous + 4 view + 1 op + 4 output views = 13), the reduce-scatter (contiguous, view, op, view = 4)
    assert ADP_MOE_EXTRA == 3 + 2 + (4 + 4 + 1 + 4) + 4 == 22


def test_deepseek_r1_step_under_attention_dp_on_the_trtllm_path():
    ds = load_model("deepseek-r1")  # 3 dense + 58 MoE layers
    for backend in (None, "trtllm"):
        assert step_host_calls(ds, False, moe_backend=backend, layout=(1, 4, 4)) == 3 * (37 + 6) + 58 * (37 + 23 + 22)
        assert step_host_calls(ds, True, moe_backend=backend, layout=(1, 8, 8)) == 3 * (70 + 6) + 58 * (70 + 23 + 22)
    # no attention DP, or a backend whose attention-DP path was not read: the TP count as before
    assert step_host_calls(ds, False, layout=(4, 1, 4)) == 3609
    assert step_host_calls(ds, True, moe_backend="cutlass", layout=(1, 8, 8)) == 5622
    assert step_host_calls(ds, True, moe_backend="wideep", layout=(1, 8, 8)) == 5622


def test_a_dep2_prefill_workers_floor():
    ds = load_model("deepseek-r1")
    pool = Pool(Layout(tp=1, dp=2, ep=2))
    dep = Deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8)), prefill=pool, eager_prompt_call_s=24e-6)
    # context only: (3·43 + 58·82) calls × 24 µs = 4,885 × 24 µs = 117.24 ms; the TEP8 decode pool keeps 3,609 calls
    assert prompt_floor_s(ds, dep, pool)[0] == pytest.approx(4885 * 24e-6)
    assert prompt_floor_s(ds, dep)[0] == pytest.approx(3609 * 24e-6)


def test_the_all_to_all_path_makes_fewer_calls():
    """Round 37 review: where TensorRT-LLM (>= 1.2.0rc3) exchanges the tokens by its NVLink one-sided all-to-all,
    forward_impl @026946f0 makes the routing and its casts (5), the scales' float32 cast (1), moe_a2a_dispatch and
    moe_a2a_sanitize_expert_ids (2), four views of the received tensors and the scales' bfloat16 cast (5), the output
    view and moe_a2a_combine (2), and no reduce-scatter."""
    assert ADP_MOE_A2A_EXTRA == 5 + 1 + 2 + 5 + 2 == 15
    ds = load_model("deepseek-r1")
    assert step_host_calls(ds, False, layout=(1, 4, 4), all_to_all=True) == 3 * 43 + 58 * (37 + 23 + 15)
    assert step_host_calls(ds, False, layout=(4, 1, 4), all_to_all=True) == 3609  # no attention DP: no exchange
    assert step_host_calls(ds, True, moe_backend="cutlass", layout=(1, 8, 8), all_to_all=True) == 5622


def test_the_floor_takes_the_exchange_the_engine_runs_on_the_system():
    """A DEP4 prefill pool on GB200 (72-GPU NVLink domain) and a DEP8 one on B200 (8-GPU HGX) run TensorRT-LLM's
    all-to-all (engine profile moe_exchange nvlink_all_to_all, cost/moe_exchange.moe_all_to_all_on); a DEP16 one on
    B200 spans two NVLink domains and gathers."""
    from jalapeno.fit.table_lookup import load_any_pricer

    ds = load_model("deepseek-r1")
    for system, dp, calls in (("gb200-nvl72", 4, 3609 + 58 * 15), ("b200", 8, 3609 + 58 * 15),
                              ("b200", 16, 3609 + 58 * 22)):
        pricer = load_any_pricer(system, "calibrated", pricer="roofline", stack="trtllm")
        pool = Pool(Layout(tp=1, dp=dp, ep=dp))
        dep = Deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8)), prefill=pool, eager_prompt_call_s=24e-6)
        assert prompt_floor_s(ds, dep, pool, pricer)[0] == pytest.approx(calls * 24e-6), (system, dp)
