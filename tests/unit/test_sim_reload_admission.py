"""The simulator loads a session's lower-tier prefix when its request is admitted (serve/sim/simulation.py,
``RELOAD_AT_ADMISSION_ON``; vLLM v1's Scheduler.schedule -> get_num_new_matched_tokens, WAITING_FOR_REMOTE_KVS).

An instance with a constant-time fake step and a fake loader checks the scheduler's side: the prefix leaves its tier
only at admission, counts as a hit, and the prompt's chunks wait for the load. The catalog's Jalapeño checks the
link charge against the hand figure of tests/golden/test_agentic_plan_point_sim.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sim import simulation
from jalapeno.serve.sim.entities import LowerTier, PrefixCache, Request
from jalapeno.serve.sim.scheduler import Instance
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

STEP_S = 0.01  # the fake step time, s
LOAD_S = 0.078  # the fake loader's time, s (the Jalapeño hand figure below)


def _instance(capacity: float, prefix_tokens: int, session: int = 7) -> tuple[Instance, LowerTier, list]:
    tier = LowerTier("host", capacity=1e6, bandwidth_bytes_per_s=50e9, latency_s=0.0)
    tier.entries[session] = prefix_tokens
    tier.tokens = prefix_tokens
    cache = PrefixCache(lower=[tier])
    inst = Instance(0, "agg", lambda *a, **k: STEP_S, 1, capacity, 4, 512, cache, None, np.random.default_rng(0))
    calls: list = []

    def load(req, now):
        calls.append(now)
        found = cache.take_lower(req.session)
        return (LOAD_S, found[1]) if found else (0.0, 0.0)

    inst.reload_lower = load
    return inst, tier, calls


def test_prefix_loads_at_admission_and_the_prompt_waits_for_it():
    inst, tier, calls = _instance(capacity=5_000, prefix_tokens=1_000)
    req = Request(0, 0.0, 1_100, 10, session=7)
    inst.enqueue(req)
    # admitted at t=0: nothing else to run, so the loop idles exactly until the prefix is in HBM
    assert inst.plan(0.0) == pytest.approx(LOAD_S)
    assert calls == [0.0] and not tier.entries and tier.tokens == 0
    assert req.cached_tokens == 1_000 and inst.cache.hits_tokens == 1_000
    assert inst.used == 1_100  # the whole prompt reserved: the loaded prefix is the request's, not an LRU entry
    assert inst.cache.tokens == 0
    inst.complete(LOAD_S)
    assert inst.plan(LOAD_S) == pytest.approx(STEP_S)
    assert inst._chunks == [(req, 100)]  # 1,100 - 1,000 loaded tokens left to prefill


def test_prefix_stays_in_its_tier_while_the_request_cannot_be_admitted():
    inst, tier, calls = _instance(capacity=1_000, prefix_tokens=900)
    req = Request(0, 0.0, 1_100, 10, session=7)  # 1,100 tokens do not fit 1,000
    inst.enqueue(req)
    assert inst.plan(0.0) is None
    assert calls == [] and tier.entries == {7: 900}
    assert req.cached_tokens == 0 and inst.cache.hits_tokens == 0


def test_jalapeno_reload_is_charged_over_the_host_link():
    # DeepSeek-R1 FP4, TP2 on Jalapeño: 35,136 B of KV per token per chip (agentic54's hand figure), so a
    # 110,425-token prefix is 3,879,892,800 B per chip; over the 50 GB/s host link with its 10 us latency:
    # 1e-5 + 3.8798928e9 / 50e9 = 0.0776079 s
    sim = simulation.Simulation(
        load_model("deepseek-r1"), load_pricer("jalapeno"), Deployment(get_precision("fp4"), Pool(Layout(tp=2)))
    )
    inst = sim.instances[0]
    host = inst.cache.lower[0]
    host.entries[3] = 110_425
    host.tokens = 110_425
    req = Request(0, 0.0, 112_925, 100, session=3)
    delay, tokens = sim._load_lower(inst, req, 0.0)
    assert tokens == 110_425 and 3 not in host.entries
    assert delay == pytest.approx(0.0776079, rel=1e-4)
    assert inst.cache.reloads == 1 and req.reload_s == delay
    if simulation.RELOAD_AT_ADMISSION_ON:
        assert inst.reload_lower is not None


def test_switch_off_reloads_at_arrival(monkeypatch):
    # off: no admission loader; the arrival path (Simulation._reload) puts the prefix back as an HBM LRU entry
    monkeypatch.setattr(simulation, "RELOAD_AT_ADMISSION_ON", False)
    sim = simulation.Simulation(
        load_model("deepseek-r1"), load_pricer("jalapeno"), Deployment(get_precision("fp4"), Pool(Layout(tp=2)))
    )
    inst = sim.instances[0]
    assert inst.reload_lower is None
    inst.cache.lower[0].entries[3] = 110_425
    inst.cache.lower[0].tokens = 110_425
    req = Request(0, 0.0, 112_925, 100, session=3)
    assert sim._reload(inst, req, 0.0) == pytest.approx(0.0776079, rel=1e-4)
    assert inst.cache.pending == {3: 110_425}


def test_request_preempted_while_loading_recomputes_without_waiting():
    inst, tier, calls = _instance(capacity=5_000, prefix_tokens=1_000)
    req = Request(0, 0.0, 1_100, 10, session=7)
    inst.enqueue(req)
    inst.plan(0.0)  # admitted, loading until 0.078 s
    # preempted as _preempt_if_full does to a prefilling request: its reservation and the loaded prefix go
    inst.prefilling.remove(req)
    inst.used -= req.isl
    req.cached_tokens = 0
    inst.waiting.appendleft(req)
    inst.busy = False
    # re-admitted at 0.01 s: the prefix is gone from every tier, so the whole 1,100-token prompt is prefilled at once
    assert inst.plan(0.01) == pytest.approx(STEP_S)
    assert inst._chunks == [(req, 512)]  # the 512-token budget's first chunk, not held back to 0.078 s
    assert calls == [0.0, 0.01] and req.lower_ready_s == 0.0
