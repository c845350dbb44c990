"""Attention-DP prompt placement (issue 18, adp14): the simulator places each prompt whole on the
least-loaded rank and gives each rank its budget share per step; the analytic models map a mean
chunk count per step to the expected busiest rank. Expected values are worked by hand here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jalapeno.cost.ops import build_step_ops, mixed_step_ranks
from jalapeno.cost.step import Batch
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.analytic import mixed_prefill
from jalapeno.serve.sim.entities import PrefixCache, Request
from jalapeno.serve.sim.scheduler import Instance, least_loaded_rank, rank_chunks
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import get_precision


def test_rank_chunks_give_each_rank_its_budget_share():
    """Budget 8,192 over 8 ranks: 1,024 a rank. Prompts of 7,000 and 300 on rank 0 and 2,000 on
    rank 3: the 7,000 takes rank 0's 1,024 and the 300 waits; rank 3 takes 1,024 of its 2,000.
    One rank (dp = 1): oldest first under the whole 8,192: 7,000, 300, then 892."""
    takes, per_rank = rank_chunks([7000, 300, 2000], [0, 0, 3], 8, 8192)
    assert takes == [1024, 0, 1024]
    assert per_rank == [1024, 0, 0, 1024, 0, 0, 0, 0]
    takes, per_rank = rank_chunks([7000, 300, 2000], [0, 0, 0], 1, 8192)
    assert takes == [7000, 300, 892] and per_rank == [8192]


def test_least_loaded_placement_stacks_ceil_k_over_dp_on_the_busiest_rank():
    """K requests placed one after another on 8 empty ranks: the busiest holds ⌈K/8⌉ (K = 9: two)."""
    for k, want in ((1, 1), (8, 1), (9, 2), (16, 2), (17, 3)):
        active = [0] * 8
        for _ in range(k):
            active[least_loaded_rank(active)] += 1
        assert max(active) == want == math.ceil(k / 8)


class _Timer:
    """Records the step inputs the scheduler prices (a stand-in for StepTimer)."""

    def __init__(self):
        self.calls = []

    def __call__(self, b, ctx, pre_tokens, pre_ctx, pre_seqs, **kw):
        self.calls.append((pre_tokens, pre_seqs, kw.get("prefill_rank_tokens", 0.0)))
        return 0.01


def _instance(dp, budget=8192):
    return Instance(0, "prefill", _Timer(), 8, 1e9, 1024, budget, PrefixCache(enabled=False), None,
                    np.random.default_rng(0), dp=dp)


def test_simulator_runs_a_long_prompt_on_its_rank_over_successive_steps():
    """One 3,000-token prompt on DEP8 at budget 8,192: 1,024 + 1,024 + 952 tokens in three steps on
    one rank (not 3,000 side by side in one step), each step priced at that rank's tokens."""
    inst = _instance(8)
    inst.enqueue(Request(0, 0.0, 3000, 10))
    for _ in range(3):
        inst.plan(0.0)
        inst.complete(0.0)
    assert inst.timer.calls == [(1024.0, 1, 1024.0), (1024.0, 1, 1024.0), (952.0, 1, 952.0)]


def test_simulator_spreads_prompts_and_prices_the_busiest_rank():
    """Ten 500-token prompts arriving together on DEP8: least-loaded places two on rank 0 and 1,
    one on ranks 2..7; every rank's 1,024-token share holds its prompts whole, so the step carries
    5,000 tokens in 10 chunks and its busiest rank 1,000."""
    inst = _instance(8)
    for i in range(10):
        inst.enqueue(Request(i, 0.0, 500, 10))
    inst.plan(0.0)
    assert [r.rank for r in inst.prefilling] == [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]
    assert inst.timer.calls == [(5000.0, 10, 1000.0)]


def test_one_rank_scheduler_is_unchanged():
    """dp = 1: the instance takes 8,192 of a 10,000-token prompt in its first step, the rest next."""
    inst = _instance(1)
    inst.enqueue(Request(0, 0.0, 10000, 10))
    inst.plan(0.0)
    inst.complete(0.0)
    inst.plan(0.0)
    assert inst.timer.calls == [(8192.0, 1, 0.0), (1808.0, 1, 0.0)]


def _poisson_busiest(nbar, dp):
    """P(K ≥ 1) and E[⌈K/dp⌉ | K ≥ 1] for K ~ Poisson(nbar), summed term by term."""
    pk = [math.exp(-nbar) * nbar ** k / math.factorial(k) for k in range(1, 120)]
    share = 1 - math.exp(-nbar)
    return share, sum(math.ceil((k + 1) / dp) * p for k, p in enumerate(pk)) / share


def test_mean_chunk_count_maps_to_the_expected_busiest_rank():
    """n̄ = 1 on 8 ranks: a step carries prefill with probability 1 − e^−1 = 0.632 and its busiest
    rank holds one chunk unless K ≥ 9 (P = 1.1e-6); n̄ = 12: every step, the busiest ⌈K/8⌉ ≈ 2.0;
    a sum over the Poisson terms written out here, checked against the least-loaded placement above."""
    f, deep = mixed_step_ranks(np.array([1.0, 12.0, 0.0]), 8)
    assert f[0] == pytest.approx(1 - math.exp(-1), rel=1e-12)
    p9 = 1 - sum(math.exp(-1) / math.factorial(k) for k in range(9))
    assert deep[0] == pytest.approx(1 + p9 / (1 - math.exp(-1)), rel=1e-9)
    want_f, want_deep = _poisson_busiest(12.0, 8)
    assert f[1] == pytest.approx(want_f, rel=1e-12) and deep[1] == pytest.approx(want_deep, rel=1e-9)
    assert f[2] == 0.0 and deep[2] == 1.0


def test_mixed_prefill_dp1_is_the_one_rank_rule_and_dp8_caps_the_busiest_rank():
    """dp = 1, p = 512 in chunks of 1,024: half the steps carry one chunk. dp = 8, p = 6,000 in
    1,024-token rank chunks (n̄ = 5.86): nearly every step carries 6,000/(1 − e^−5.86) tokens, the
    busiest rank one chunk (⌈K/8⌉ = 1 for K ≤ 8, P(K ≥ 9) = 0.12 adds a second one), within its
    1,024-token share of the 8,192 budget."""
    f, tok, rank = mixed_prefill(np.array([512.0]), 1024.0, 8192.0, 1)
    assert (f[0], tok[0], rank[0]) == (0.5, 1024.0, 0.0)
    f, tok, rank = mixed_prefill(np.array([6000.0]), 1024.0, 8192.0, 8)
    nbar = 6000 / 1024
    assert f[0] == pytest.approx(1 - math.exp(-nbar), rel=1e-12)
    assert tok[0] == pytest.approx(6000 / (1 - math.exp(-nbar)), rel=1e-12)
    assert rank[0] == 1024.0


def test_placed_busiest_rank_tokens_set_the_attention_side():
    """A caller that placed the prompts (the simulator) gives the busiest rank's tokens: 5,000 prompt
    tokens over DEP8 with 1,000 on the busiest rank: o_proj 2·1000·(128·128)·7168·61 FLOPs."""
    m, chip, p = load_model("deepseek-r1"), load_system("b200").chip, get_precision("fp8")
    b = Batch.make(prefill_tokens=5000.0, prefill_seqs=10.0, prefill_rank_tokens=1000.0)
    ops, _ = build_step_ops(m, chip, Layout(dp=8, ep=8), p, b, Efficiency())
    assert ops.flop[ops.name.index("attn.o_proj"), 0] == pytest.approx(2 * 1000 * 128 * 128 * 7168 * 61, rel=1e-12)


def test_rank_tokens_above_the_step_are_refused():
    with pytest.raises(SpecError, match="batch.prefill_rank_tokens.*exceed"):
        Batch.make(prefill_tokens=100.0, prefill_rank_tokens=200.0)


def test_balanced_context_steps_hold_a_chunk_on_every_rank():
    """TensorRT-LLM's attention-DP context balancing: p = 2,048 a step in 1,024-token chunks on DEP8
    (n̄ = 2) gathers eight chunks, one per rank, into a quarter of the steps: 8,192 tokens, 1,024 on
    the busiest rank (the mean)."""
    f, tok, rank = mixed_prefill(np.array([2048.0]), 1024.0, 65536.0, 8, balanced=True)
    assert (f[0], tok[0], rank[0]) == (0.25, 8192.0, 1024.0)
