"""Unit tests of the simulator's attention-DP balancing gate (serve/sim/adp_gate.py, round 51 waves51).

Expected values by hand from TensorRT-LLM's ``PyExecutor._balance_adp_requests`` rule: held while some rank has no
context request, released once every rank has one, or after ``timeout_iters`` held iterations, or at once while some
rank has no generation request; new requests go to the least-loaded rank with a free slot.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from jalapeno.serve.sim.adp_gate import AdpGate


def _decoding_gate(ranks: int, slots: int, timeout: int) -> AdpGate:
    """A gate whose every rank holds one decoding request (keys -1 .. -ranks), so it holds."""
    g = AdpGate(ranks, slots, timeout)
    g.take(deque(range(-1, -ranks - 1, -1)))
    g.tick()  # no rank decodes yet: released at once
    g.decoding(range(-1, -ranks - 1, -1))
    return g


def test_a_round_closes_when_every_rank_has_a_prompt():
    g = _decoding_gate(4, 8, 60)
    g.take(deque([1, 2, 3]))  # ranks 0, 1, 2 (each had one active): rank 3 has none
    assert [g.tick() for _ in range(5)] == [[]] * 5
    g.take(deque([4]))  # rank 3: the round is complete, released in arrival order
    assert g.tick() == [1, 2, 3, 4]
    assert g.count == 0


def test_the_timeout_counts_held_iterations_and_restarts_at_a_release():
    g = _decoding_gate(2, 8, 3)
    g.take(deque([1]))
    assert [g.tick() for _ in range(3)] == [[], [], [1]]  # the third held iteration reaches timeout_iters = 3
    g.take(deque([2]))
    assert [g.tick() for _ in range(3)] == [[], [], [2]]  # the count restarted at the release


def test_a_rank_without_a_generation_request_releases_at_once():
    g = _decoding_gate(2, 8, 60)
    g.done(-2)  # rank 1's only request finished: it has no generation request
    g.take(deque([1]))
    assert g.tick() == [1]


def test_full_slots_send_a_new_request_to_the_rank_that_freed_one():
    g = _decoding_gate(3, 1, 60)  # one slot a rank, all taken
    q = deque([1])
    g.take(q)
    assert list(q) == [1]  # no free slot: stays in the queue
    g.done(-2)  # rank 1's request finished
    g.take(q)
    assert g.rank_of[1] == 1 and not q


def test_full_slots_wait_is_the_coupon_collector():
    """Slots full, arrivals at uniformly random ranks at rate λ = 1/s, no timeout: the mean wait of a round's prompts.
    By hand, dp = 2: after the round's first arrival, K more arrive until the other rank is hit (K geometric, p = 1/2:
    E[K] = 2, E[K²] = Var + E[K]² = 2 + 4 = 6). The first waits K gaps (mean 2 s), the i-th repeat K − i gaps
    (E[K(K − 1)/2] = (6 − 2)/2 = 2 s in all), the last none: 4 s over 1 + E[K] = 3 arrivals, 4/3 s (as
    serve/adp_balance.adp_balance_wait_s's closed form, its doctest m_1 = 2)."""
    rng = np.random.default_rng(0)
    g = _decoding_gate(2, 10**6, 10**9)
    waits, t, arrived, key = [], 0.0, {}, 0
    for _ in range(60000):
        t += rng.exponential(1.0)
        key += 1
        g.active = [0, 0]  # slots full is modelled by the rank that freed a slot: pick it at random
        g.active[int(rng.integers(2))] = -1
        g.take(deque([key]))
        arrived[key] = t
        for k in g.tick():
            waits.append(t - arrived.pop(k))
    assert np.mean(waits) == pytest.approx(4 / 3, rel=0.03)
