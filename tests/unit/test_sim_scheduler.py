"""Unit tests of the simulator's instance scheduler (serve/sim/scheduler.py) and prefix cache.

A tiny dense model and hand-made systems are written to ``tmp_path`` (the construction is
copied from tests/unit/test_analytic.py, not imported): zero fixed costs and full efficiency,
so a step is bytes / bandwidth and easy to check by hand. The 0.6 GB system leaves a KV cache of
a few thousand tokens, small enough to force preemption at modest concurrency.

Invariants are checked on every step by wrapping ``Instance.plan`` (admission) and
``Instance.complete`` (growth, retirement, preemption): the KV an instance accounts for never
exceeds its capacity, and equals the tokens its requests hold, recounted from their state.
"""

from __future__ import annotations

import dataclasses

import json

import numpy as np
import pytest
from tiny_fixtures import (
    HBM_TB_S,
    HEAD_DIM,
    HEADS,
    INTER,
    KV_HEADS,
    LAYERS,
    VOCAB,
    H,
    model_config,
    system_toml,
)

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sim.entities import PrefixCache, Request
from jalapeno.serve.sim.scheduler import Instance, decode_steps
from jalapeno.serve.sim.simulation import Simulation
from jalapeno.serve.sim.run import simulate
from jalapeno.serve.sim.workloads import AgenticSpec, RequestSpec
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_file import load_model_file
from jalapeno.specs.workload import Workload

# ---------------------------------------------------------------- the tiny hand example


BF16 = 2.0
QKV = H * (HEADS + 2 * KV_HEADS) * HEAD_DIM
O_PROJ = HEADS * HEAD_DIM * H
FFN = 3 * H * INTER
LM_HEAD = VOCAB * H
WEIGHT_BYTES_READ = (LAYERS * (QKV + O_PROJ + FFN) + LM_HEAD) * BF16  # 374,341,632 B per step
KV_BYTES_PER_TOKEN = LAYERS * 2 * KV_HEADS * HEAD_DIM * BF16  # 4,096 B
SMALL_GB, BIG_GB = 0.6, 3.0


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_sim")
    (d / "small.toml").write_text(system_toml(SMALL_GB))
    (d / "big.toml").write_text(system_toml(BIG_GB))
    (d / "config.json").write_text(json.dumps(model_config()))
    model = load_model_file(d / "config.json", name="tiny-llama")
    return model, load_pricer(str(d / "small.toml")), load_pricer(str(d / "big.toml"))


def _dep(budget: int = 256, **kw) -> Deployment:
    return Deployment(get_precision("bf16"), Pool(Layout()), token_budget=budget, **kw)


WL = Workload("tiny", 64, 129, range_ratio=1.0)  # fixed 64 in, 129 out: at most 193 tokens held


# ---------------------------------------------------------------- per-step KV invariant


def _held(inst: Instance) -> float:
    """KV tokens the instance's requests hold, recounted from their own state.

    A prefilling request reserved its prompt (+ output to recompute) at admission; a decoding
    one holds that plus ``a`` tokens per step since it started decoding.
    """
    pre = sum(r.isl + r.generated for r in inst.prefilling)
    dec = sum(r.isl + r.generated + (inst.step_index - r.decode_start_step) * inst.a
              for r in inst.decoding.values())
    return pre + dec


@pytest.fixture
def kv_monitor(monkeypatch):
    """Check every instance after each admission (plan) and each step (complete)."""
    violations: list[tuple] = []
    calls = {"n": 0}
    orig_plan, orig_complete = Instance.plan, Instance.complete

    def check(inst: Instance, where: str, now: float) -> None:
        calls["n"] += 1
        total = inst.used + inst.cache.tokens
        if total > inst.capacity + 1e-6:
            violations.append((where, now, "over capacity", total, inst.capacity))
        if abs(_held(inst) - inst.used) > 1e-6:
            violations.append((where, now, "accounting", _held(inst), inst.used))
        if inst.used < -1e-6 or inst.cache.tokens < 0:
            violations.append((where, now, "negative", inst.used, inst.cache.tokens))

    def plan(self, now):
        out = orig_plan(self, now)
        check(self, "plan", now)
        return out

    def complete(self, now):
        out = orig_complete(self, now)
        check(self, "complete", now)
        return out

    monkeypatch.setattr(Instance, "plan", plan)
    monkeypatch.setattr(Instance, "complete", complete)
    return violations, calls


def test_small_system_leaves_a_small_cache(tiny):
    """Hand upper bound: (usable HBM − resident weights) / KV bytes per token."""
    model, small, _ = tiny
    sim = Simulation(model, small, _dep(), ctx_ref=WL.mean_isl + WL.mean_osl / 2)
    cap = sim.instances[0].capacity
    weights = WEIGHT_BYTES_READ + VOCAB * H * BF16  # + the input embedding
    upper = (SMALL_GB * 1e9 * (1 - 0.05) - weights) / KV_BYTES_PER_TOKEN  # ≈ 31,800 tokens
    assert 0 < cap <= upper
    # ... and small enough that 64 requests of up to 193 tokens cannot all be resident
    assert 64 * (WL.isl + WL.osl) > 1.5 * cap
    assert 8 * (WL.isl + WL.osl) < cap


@pytest.mark.parametrize("case", ["closed_fixed", "closed_ranged", "agentic_small_cache"])
def test_kv_capacity_never_exceeded(tiny, kv_monitor, case):
    model, small, _ = tiny
    violations, calls = kv_monitor
    if case == "closed_fixed":
        res = simulate(model, small, _dep(), workload=WL, concurrency=64, seed=1)
    elif case == "closed_ranged":
        res = simulate(model, small, _dep(), workload=Workload("r", 64, 129, range_ratio=0.8),
                       concurrency=96, num_requests=480, seed=2)
    else:  # sessions whose contexts outgrow the cache: eviction and preemption together
        spec = AgenticSpec("t", 6, 300, 150, 30, 0.002)
        res = simulate(model, small, _dep(), agentic=spec, concurrency=12, sessions=24, seed=3)
    assert calls["n"] > 100
    assert not violations, violations[:5]
    assert res.timeseries.kv_occupancy.max() <= 1 + 1e-9
    assert res.summary["preemptions_total"] > 0  # the cache really was under pressure


def test_preemption_when_cache_too_small_and_every_request_finishes(tiny, monkeypatch):
    """64 requests of 193 tokens need > 1.5x the cache: some are preempted, all finish, and
    each emits exactly its output length (1 token at the end of its first prefill + 1 per
    decode step it takes part in; a recompute after preemption emits nothing new)."""
    model, small, _ = tiny
    emitted: dict[int, int] = {}
    first_prefill: set[int] = set()
    orig = Instance.complete

    def complete(self, now):
        for rid in self.decoding:  # every decoding sequence gains a token in this step
            emitted[rid] = emitted.get(rid, 0) + 1
        done, prefilled = orig(self, now)
        for r in prefilled:
            if r.id not in first_prefill:
                first_prefill.add(r.id)
                emitted[r.id] = emitted.get(r.id, 0) + 1
        return done, prefilled

    monkeypatch.setattr(Instance, "complete", complete)
    c = 64
    sim = Simulation(model, small, _dep(), seed=1, ctx_ref=WL.mean_isl + WL.mean_osl / 2)
    from jalapeno.serve.sim.workloads import fixed_length_requests

    sim.closed_loop(fixed_length_requests(WL, 12 * c, np.random.default_rng(1)), c, 2 * c)
    res = sim.run()
    assert res.summary["preemptions"] > 0 and res.summary["preemptions_total"] > 0
    assert sum(r.preemptions for r in sim.requests) == res.summary["preemptions_total"]
    assert len(sim.requests) == 12 * c
    assert all(np.isfinite(r.done_s) for r in sim.requests)
    assert res.summary["requests"] == 10 * c  # warm-up 2·C not counted
    assert {r.id: emitted.get(r.id, 0) for r in sim.requests} == {r.id: WL.osl for r in sim.requests}
    # a preempted request waited again: its E2E exceeds that of an unpreempted one on average
    df = res.requests
    assert df[df.preemptions > 0].e2e_s.mean() > df[df.preemptions == 0].e2e_s.mean()


@pytest.mark.parametrize("which,c", [("big", 64), ("small", 8)])
def test_no_preemption_when_the_cache_is_large_enough(tiny, which, c):
    model, small, big = tiny
    system = big if which == "big" else small
    res = simulate(model, system, _dep(), workload=WL, concurrency=c, seed=1)
    assert res.summary["preemptions"] == 0 and res.summary["preemptions_total"] == 0
    assert res.summary["requests"] == 10 * c


def test_decode_step_time_is_the_hand_roofline(tiny):
    """C = 1, no fixed costs: a decode step reads the weights once and the KV of the context:
    τ = (374,341,632 B + ctx·4,096 B) / 1e12 B/s ≈ 374.9 µs at the mean context 64 + 129/2;
    activations (one row, < 0.6 MB) add under 0.2%."""
    model, _, big = tiny
    res = simulate(model, big, _dep(), workload=WL, concurrency=1, seed=0)
    ctx = WL.isl + WL.osl / 2
    tau = (WEIGHT_BYTES_READ + ctx * KV_BYTES_PER_TOKEN) / (HBM_TB_S * 1e12)
    tpot = res.requests.tpot_s.to_numpy()
    assert tpot.min() >= tau * (1 - 3e-3)  # bucketing of the context moves the KV term by ±1.5%
    assert tpot.mean() == pytest.approx(tau, rel=4e-3)
    # one prefill step of 64 tokens: the same weights plus 64 rows of activations
    ttft = res.requests.ttft_s.to_numpy()
    assert np.all(ttft >= WEIGHT_BYTES_READ / 1e12)
    assert np.all(ttft <= (WEIGHT_BYTES_READ + 64 * 0.6e6 + 64 * KV_BYTES_PER_TOKEN) / 1e12)
    assert np.all(res.requests.queue_s.to_numpy() == 0)


# ---------------------------------------------------------------- known scheduler bugs


def test_kv_capacity_not_exceeded_by_one_decoder_beside_a_long_prefill(tiny, kv_monitor):
    model, small, _ = tiny
    model = dataclasses.replace(model, max_context=1 << 20)  # B is longer than tiny-llama's 4K context
    violations, _ = kv_monitor
    dep = _dep(budget=16)  # a long prompt needs hundreds of 16-token chunks
    sim = Simulation(model, small, dep, ctx_ref=3000.0)
    cap = sim.instances[0].capacity
    # A: short prompt, long answer (decodes while B prefills); B: fills the cache up to 300 tokens
    sim.open_loop([RequestSpec(100, 3000, 0.0), RequestSpec(int(cap) - 300, 10, 0.0)])
    res = sim.run()
    assert not violations, violations[:3]
    assert res.timeseries.kv_occupancy.max() <= 1 + 1e-9


def test_waiting_request_holds_no_unaccounted_prefix(tiny):
    cache = PrefixCache()
    inst = Instance(0, "agg", lambda *a: 1e-3, 1, 1000.0, 16, 256, cache, None, np.random.default_rng(0))
    cache.insert(7, 300)  # a finished turn of session 7 left 300 tokens of KV
    a = Request(0, 0.0, 600, 200)  # fits: 600 + 300 cached ≤ 1000
    inst.enqueue(a)
    inst.plan(0.0)
    b = Request(1, 0.0, 500, 10, session=7, turn=1)  # needs 500 > the 100 left after A
    inst.enqueue(b)
    t = 0.0
    for _ in range(150):  # A decodes and grows; B waits at the head of the queue
        t += 1e-3
        inst.complete(t)
        inst.plan(t)
        waiting_cached = sum(r.cached_tokens for r in inst.waiting)
        assert inst.used + cache.tokens + waiting_cached <= inst.capacity + 1e-9, (
            inst.used, cache.tokens, waiting_cached)


# ---------------------------------------------------------------- decode steps and MTP


@pytest.mark.parametrize("tokens", [1, 2, 17, 1024])
def test_decode_steps_without_mtp_is_the_token_count(tokens):
    assert decode_steps(tokens, None, np.random.default_rng(0)) == tokens


def test_decode_steps_of_nothing_is_zero():
    rng = np.random.default_rng(0)
    assert decode_steps(0, None, rng) == 0
    assert decode_steps(0, MTP(2, 0.7), rng) == 0


@pytest.mark.parametrize("k,alpha", [(1, 0.8), (3, 0.7), (2, 0.5)])
def test_mtp_mean_steps_is_tokens_over_tokens_per_step(k, alpha):
    """E[steps] ≈ tokens / ((1 − α^(k+1)) / (1 − α)) (one step emits 1 + accepted drafts)."""
    rng = np.random.default_rng(123)
    tokens = 1000
    per_step = (1 - alpha ** (k + 1)) / (1 - alpha)  # e.g. k = 3, α = 0.7: 2.5327
    steps = np.array([decode_steps(tokens, MTP(k, alpha), rng) for _ in range(400)])
    assert steps.mean() == pytest.approx(tokens / per_step, rel=0.03)
    assert steps.min() >= tokens / (k + 1)  # a step never emits more than k + 1 tokens
    assert steps.max() <= tokens


def test_mtp_two_tokens_by_hand():
    """k = 1: 2 tokens take 1 step if the draft is accepted (prob α), else 2: mean 2 − α."""
    rng = np.random.default_rng(7)
    alpha = 0.6
    steps = np.array([decode_steps(2, MTP(1, alpha), rng) for _ in range(20000)])
    assert set(np.unique(steps)) == {1, 2}
    assert steps.mean() == pytest.approx(2 - alpha, abs=0.015)  # σ of the mean ≈ 0.0035


def test_mtp_zero_acceptance_is_one_token_per_step():
    assert decode_steps(50, MTP(3, 0.0), np.random.default_rng(0)) == 50


def test_mtp_draws_repeat_with_the_seed():
    a = [decode_steps(300, MTP(2, 0.7), np.random.default_rng(5)) for _ in range(3)]
    assert a[0] == a[1] == a[2]


# ---------------------------------------------------------------- prefix cache (LRU)


def test_prefix_cache_insert_lookup_evict_by_hand():
    c = PrefixCache()
    c.insert(1, 100)
    c.insert(2, 200)
    c.insert(3, 50)
    assert c.tokens == 350 and list(c.entries) == [1, 2, 3]  # LRU first

    # a lookup returns at most the prompt less its last token (recomputed for logits),
    # consumes the entry and frees its tokens
    assert c.lookup(1, 80) == 79
    assert c.tokens == 250 and 1 not in c.entries
    assert (c.hits_tokens, c.lookup_tokens) == (79, 80)
    assert c.lookup(1, 40) == 0  # gone
    assert c.lookup(9, 60) == 0  # never there
    assert c.lookup(-1, 10) == 0  # no key
    assert (c.hits_tokens, c.lookup_tokens) == (79, 190)
    assert c.hit_rate == pytest.approx(79 / 190)

    # re-inserting a key replaces its size and makes it most recently used
    c.insert(2, 220)
    assert c.tokens == 270 and list(c.entries) == [3, 2]

    # eviction is LRU-first and stops once enough is freed
    assert c.evict(10) == 50  # key 3 (50 tokens) is the least recent
    assert list(c.entries) == [2] and c.tokens == 220
    c.insert(4, 30)
    assert c.evict(221) == 250  # both remaining entries
    assert c.tokens == 0 and not c.entries
    assert c.evict(5) == 0


def test_prefix_cache_lookup_shorter_entry_than_prompt():
    c = PrefixCache()
    c.insert(5, 120)
    assert c.lookup(5, 400) == 120
    assert c.tokens == 0


def test_prefix_cache_disabled_and_invalid_inserts():
    c = PrefixCache(enabled=False)
    c.insert(1, 100)
    assert c.tokens == 0 and not c.entries
    assert c.lookup(1, 100) == 0 and c.lookup_tokens == 100 and c.hit_rate == 0.0
    on = PrefixCache()
    on.insert(-1, 100)  # no key
    on.insert(2, 0)  # nothing to keep
    assert on.tokens == 0 and not on.entries
    assert PrefixCache().hit_rate == 0.0


def test_prefill_first_instance_runs_prompts_in_steps_of_their_own():
    """Deployment.prefill_steps "separate" (ROCm/ATOM): a step with a prompt chunk carries no decode
    row, and the decoding sequences do not advance in it; the next step, with no prompt, decodes."""
    seen = []

    def timer(b, ctx, pre_tokens, pre_ctx, pre_seqs, **kw):
        seen.append((b, pre_tokens))
        return 0.01

    inst = Instance(0, "agg", timer, 1, 1e6, 64, 4096, PrefixCache(enabled=False), None,
                    np.random.default_rng(0), prefill_first=True)
    old, new = Request(id=0, arrival_s=0.0, isl=100, osl=10), Request(id=1, arrival_s=0.0, isl=300, osl=10)
    inst.enqueue(old)
    inst.plan(0.0)
    inst.complete(0.01)  # old prefilled alone (first token), then decodes; no decode step yet
    assert list(inst.decoding) == [0] and inst.step_index == 0
    inst.enqueue(new)
    inst.plan(0.01)
    assert seen[-1] == (0, 300)  # the prompt's step: no decode rows
    used = inst.used
    inst.complete(0.02)
    assert inst.step_index == 0 and inst.used == used + 1  # old did not advance; new got its first token
    inst.plan(0.02)
    assert seen[-1] == (2, 0)  # both decode
