"""Attention-DP prefill priced at the busiest rank (cost/adp_rank.py, cost/ops.build_step_ops,
Deployment.prompt_budget, the simulator's per-prompt chunk).

Expected values are worked by hand from the rule (a step of n prompts on dp ranks: the busiest rank
runs max(n/dp, min(n, 1)) of them, each the step's mean chunk; the routed experts see every rank's
tokens) and DeepSeek-R1's published config (hidden 7168, dense FFN intermediate 18432, 3 dense
layers: deepseek-ai/DeepSeek-R1 config.json).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.adp_rank import busiest_rank_prefill, busiest_rank_prompts
from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.step import Batch
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sim.entities import PrefixCache, Request
from jalapeno.serve.sim.scheduler import Instance
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.formats import get_precision


def test_busiest_rank_prompts_by_hand():
    # 1 prompt on 8 ranks: one rank runs it whole; 3 prompts: 1 each on 3 ranks; 16: 2 per rank;
    # 0.25 (a quarter of a chunk, a mean-load step): on one rank; 20 on 8: the mean 2.5 (token balanced)
    got = busiest_rank_prompts([1.0, 3.0, 16.0, 0.25, 20.0], 8)
    assert got.tolist() == [1.0, 1.0, 2.0, 0.25, 2.5]
    assert busiest_rank_prompts([3.0], 1).tolist() == [3.0]  # no attention DP: the instance's


def test_busiest_rank_prefill_tokens():
    # 2 prompts of 8192 on DP4 -> one whole prompt on each of two ranks: 8192 tokens, 1 prompt;
    # 32768 tokens in 8 prompts on DP4 -> 2 prompts, 8192 tokens per rank (the mean)
    tok, seqs = busiest_rank_prefill([16384.0, 32768.0], [2.0, 8.0], 4)
    assert tok.tolist() == [8192.0, 8192.0] and seqs.tolist() == [1.0, 2.0]


def _ops(layout, tokens, seqs):
    m = load_model("deepseek-r1")
    ops, colls = build_step_ops(m, load_system("h200").chip, layout, get_precision("fp8"),
                                Batch.make(prefill_tokens=tokens, prefill_seqs=seqs), DEFAULT_EFFICIENCY)
    return ops, colls


def _flop(ops, name):
    return ops.flop[ops.name.index(name)]


def test_lone_prompt_runs_whole_on_one_dp_rank():
    # the dense FFN's gate+up GEMM of one 8192-token prompt on its rank (attention DP, TP1):
    # 2 · 8192 · 7168 · (2 · 18432) FLOPs per dense layer x 3 dense layers = 1.29880e13,
    # not 1/8 of it (the old even split over the 8 ranks)
    ops, _ = _ops(Layout(dp=8, ep=8), [8192.0, 65536.0], [1.0, 8.0])
    by_hand = 2 * 8192 * 7168 * 2 * 18432 * 3
    assert _flop(ops, "dense_ffn.gate_up") == pytest.approx([by_hand, by_hand], rel=1e-9)


def test_routed_experts_see_the_instance_tokens():
    # the experts of a lone 8192-token prompt on DP8 EP8 get the same 8192 tokens' assignments as
    # with attention TP8 over the same EP8 group (only where attention runs differs)
    dp_ops, _ = _ops(Layout(dp=8, ep=8), [8192.0], [1.0])
    tp_ops, _ = _ops(Layout(tp=8, ep=8), [8192.0], [1.0])
    assert _flop(dp_ops, "moe.experts") == pytest.approx(_flop(tp_ops, "moe.experts"), rel=1e-9)


def test_all_to_all_waits_for_the_sending_rank():
    # a lone prompt: its rank sends its 8192 tokens to ~5.25 ranks each (8·(1 − (7/8)^8)), 8x what a
    # rank sends when 8 prompts are spread one per rank, per token of the instance; so the dispatch of
    # the lone prompt carries as many bytes per call as the 8-prompt step's (65536 tokens / 8 ranks)
    _, colls = _ops(Layout(dp=8, ep=8), [8192.0, 65536.0], [1.0, 8.0])
    row = colls.bytes[colls.name.index("moe.dispatch")]
    assert row[0] == pytest.approx(row[1], rel=0.05)


def test_prompt_budget_is_the_ranks_share():
    prec = get_precision("fp8")
    lay = Layout(dp=8, ep=8)
    # SGLang: chunked_prefill_size 16384 for the instance, // dp_size = 2048 per rank
    assert Deployment(prec, Pool(lay), token_budget=16384).prompt_budget(lay) == 2048
    # TensorRT-LLM: max_num_tokens 16640 per rank
    assert Deployment(prec, Pool(lay), token_budget=16640, budget_per="rank").prompt_budget(lay) == 16640
    assert Deployment(prec, Pool(Layout(tp=8)), token_budget=16384).prompt_budget(Layout(tp=8)) == 16384


class _Timer:
    """A step timer with a layout (as serve/sim/step_time.StepTimer has) that records its calls."""

    def __init__(self, dp):
        self.layout = Layout(dp=dp, ep=dp)
        self.calls = []

    def __call__(self, b, ctx, tokens, pre_ctx, seqs, hint=None):
        self.calls.append((tokens, seqs))
        return 0.01


@pytest.mark.parametrize("dp,first_chunk", [(8, 2048), (1, 8192)])
def test_simulator_chunks_a_prompt_at_its_ranks_budget(dp, first_chunk):
    # budget 16384 for the instance: on DP8 a prompt's rank takes 2048 tokens a step, so an
    # 8192-token prompt alone runs 2048 tokens in its first step; without DP the whole prompt
    timer = _Timer(dp)
    inst = Instance(0, "agg", timer, dp, 1e7, 64, 16384, PrefixCache(enabled=False), None,
                    np.random.default_rng(0))
    inst.enqueue(Request(0, arrival_s=0.0, isl=8192, osl=4))
    inst.plan(0.0)
    assert timer.calls[0] == (first_chunk, 1)


def test_aggregated_dp_steps_group_their_chunks():
    # DeepSeek-R1 DEP8, SGLang-style instance budget 8192 -> 1024 tokens per prompt a step; 8k/1k
    # (ISL uniform in [0.8, 1]·8192: mean 7372.8; OSL mean 921.6, nominal 1024), 256 decoding users.
    # By hand: mean prefill p = 256·7372.8/920.6 = 2050.3 tokens a step; the bunched arrival rate of
    # 256 users started together, σ = √5.5·0.2·1024/√12 = 138.68 steps, (256 − 1)/(2·√π·138.68) =
    # 0.51878 prompts a step (above the mean 0.2781); m = 0.51878·7372.8/1024 = 3.7352 prompts in
    # prefill; g = m/(1 − e^−m) = 3.8269 chunks a prefill step: 3918.7 tokens
    from jalapeno.serve.analytic import _chunk_step_load
    from jalapeno.specs.workload import get_workload

    wl = get_workload("8k1k")
    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), token_budget=8192)
    p, chunk, prefix, p_big, _ = _chunk_step_load(dep, wl, np.array([256.0]), (wl.mean_osl - 1))
    assert chunk == 1024 and prefix == pytest.approx((7372.8 - 1024) / 2)
    assert p[0] == pytest.approx(2050.3, rel=1e-4)
    assert p_big[0] == pytest.approx(3918.7, rel=1e-3)
    # without attention DP the step carries max(p, chunk) as before (chunk = the 8192 budget)
    tep = Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=8)), token_budget=8192)
    _, chunk, _, p_big, _ = _chunk_step_load(tep, wl, np.array([256.0]), (wl.mean_osl - 1))
    assert chunk == 7372.8 and p_big[0] == pytest.approx(7372.8)
