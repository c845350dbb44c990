"""The periodic regime of a fixed-length closed loop (serve/queueing.py effect 6), worked by hand.

Each expected value below is computed in the comment beside it from the regime's definition
(docs/model.md §8.7 (6)), not from the code: the wave's first-token steps m_k, the completion steps
c_k = m_k − m_1 of the previous wave, the decode-only window until the first arrival, and
TTFT_k = F_k − E_k.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.serve.queueing import REQUESTS_PER_USER, fixed_cycle_s, locked_cycle_s, run_of_waves


def _const(td):
    return lambda i, batch: np.full(np.shape(batch), td)


def test_burst_then_conveyor():
    """6 users of 1,000-token prompts, budget 1,000 (one prompt a step), OSL − 1 = 100, front end
    f = 0.025 s, decode-only step 0.01 s, a prefill step 0.02 + 1e-4·p s (t_b = 0.12 s).
    m_k = k (prompt 1 alone in step 1, then one a step); c_k = k − 1. The previous wave finishes one
    prompt per 0.01 s decode step; the first arrival (f = 0.025) is met by the boundary at 0.03
    (K = 3), so the wave's step j ends at 0.03 + 0.12·j. Prompts 1-4 were issued at 0, 0.01, 0.02,
    0.03: TTFT 0.15, 0.27 − 0.01, 0.39 − 0.02, 0.51 − 0.03 (growing by t_b − t_d = 0.11); prompts
    5 and 6 were issued at the end of the wave's steps 1 and 2 (0.15, 0.27) and meet a conveyor:
    0.63 − 0.15 = 0.75 − 0.27 = 0.48 = (K + 1)·t_b."""
    (got,) = fixed_cycle_s([6], 1000, 1000, 100, 0.025, 0.02, 1e-4, _const(0.01))
    assert got == pytest.approx([0.15, 0.26, 0.37, 0.48, 0.48, 0.48])


def test_batch_drains_before_the_first_arrival():
    """4 users of 1,000-token prompts, budget 2,000, f = 0.05 s, t_d(B) = 0.01 + 0.001·B.
    m = [1, 2, 2, 3] (prompt 1 alone; 2 and 3 share step 2; 4 in step 3), c = [0, 1, 1, 2]. The
    window's decode steps carry 3 then 1 sequences (0.013, 0.011 s), then the batch is empty at
    0.024 s: the idle engine starts on the first arrival, S = 0.05. Prefill steps: P(1) = 0.02 + 0.1,
    P(2) = 0.04 + 0.3, P(3) = 0.06 + 0.4. TTFT: 0.05 + 0.12 − 0 = 0.17; 0.05 + 0.34 − 0.013 = 0.377
    (twice); 0.05 + 0.46 − 0.024 = 0.486."""
    (got,) = fixed_cycle_s([4], 1000, 2000, 100, 0.05, 0.02, 1e-4, lambda i, b: 0.01 + 0.001 * np.asarray(b))
    assert got == pytest.approx([0.17, 0.377, 0.377, 0.486])


def test_no_front_end_dissolves_the_burst():
    """f = 0: each prompt is issued as its previous request finishes and meets only its own step —
    the wave's step pattern with nothing queued (TTFT = that step: 0.12 s each, as above)."""
    (got,) = fixed_cycle_s([6], 1000, 1000, 100, 0.0, 0.02, 1e-4, _const(0.01))
    assert got == pytest.approx(np.full(6, 0.12))


def test_poll_interval_delays_the_wave_to_the_next_poll():
    """The first case with SGLang's poll every 4 decode steps: a window step i ends
    100 + 1 − 6 + i = 95 + i decode steps after the wave's last prefill step, so polls fall at
    i = 1 and 5; the first at or after f is i = 5 (0.05 s): S = 0.05, K = 5. Prompt k's first token
    at 0.05 + 0.12·k; prompts 1..6 were all issued in the window (c ≤ 5) at 0.01·(k − 1):
    TTFT = 0.05 + 0.12·k − 0.01·(k − 1)."""
    (got,) = fixed_cycle_s([6], 1000, 1000, 100, 0.025, 0.02, 1e-4, _const(0.01), recv_interval=4)
    k = np.arange(1, 7)
    assert got == pytest.approx(0.05 + 0.12 * k - 0.01 * (k - 1))


def test_prefill_bound_engine_has_no_cycle():
    """A wave whose prefill outlasts its decode (M − m_1 = 5 steps ≥ OSL − 1 = 5) never drains."""
    assert fixed_cycle_s([6], 1000, 1000, 5, 0.025, 0.02, 1e-4, _const(0.01)) == [None]


def test_prompts_longer_than_the_budget_stream_from_step_one():
    """2 users of 1,500-token prompts, budget 1,000: m = ⌈1.5⌉ = 2, ⌈3⌉ = 3; W(j) = 1000·j up to
    3,000. c = [0, 1]; one decode step (0.01 s, batch 1) then the batch is empty: S = f = 0.05.
    P(2) = 0.04 + 0.2, P(3) = 0.06 + 0.3. TTFT: 0.05 + 0.24 = 0.29 and 0.05 + 0.36 − 0.01 = 0.40."""
    (got,) = fixed_cycle_s([2], 1500, 1000, 100, 0.05, 0.02, 1e-4, _const(0.01))
    assert got == pytest.approx([0.29, 0.40])


def test_run_is_one_first_wave_and_the_recurring_ones():
    """R = 10 waves: the first wave's values weigh 1/10, the cycle's 9/10; first = [1, 3] + extra 0.5
    (1.5, 3.5), cycle [1, 1]: mean 0.1·2.5 + 0.9·1 = 1.15; p90 is 1 (90% of the weight is cycle
    values of 1 s) and p99 the first wave's top value (the last 5% of the weight)."""
    assert REQUESTS_PER_USER == 10
    r = run_of_waves(np.array([1.0, 3.0]), np.array([1.0, 1.0]), 0.5)
    assert r[None] == pytest.approx(1.15)
    assert r[0.5] == 1.0 and r[0.9] == 1.0 and r[0.99] == 3.5


def test_disaggregated_groups_split_into_singles_wave_by_wave():
    """Disaggregated prefill worker, 6 users of 1,000-token prompts, budget 2,000, t0 = 0.02 s,
    σ = 1e-4 s (a lone prompt 0.12 s). First wave's steps: prompt 1 alone, then 2 a step: groups
    [1, 2, 2, 1]. Later wave 1: each group of two arrives at an idle worker, which starts on one
    (0.12 s) and then runs the other (0.12 + 0.02 + 0.1 = 0.24 s); wave 2: all singles."""
    (got,) = locked_cycle_s([6], 1000, 2000, 0.02, 1e-4, waves=2)
    assert got == pytest.approx([0.12, 0.12, 0.24, 0.12, 0.24, 0.12] + [0.12] * 6)


def test_disaggregated_prompts_longer_than_the_budget_take_their_own_steps():
    """2 users of 1,500-token prompts, budget 1,000: the wave's steps carry 1,000 tokens each
    (P(j) = 0.02·j + 0.1·j), prompt 1 in steps 1-2 (0.24 s), prompt 2 in steps 2-3 (0.24 s)."""
    (got,) = locked_cycle_s([2], 1500, 1000, 0.02, 1e-4, waves=1)
    assert got == pytest.approx([0.24, 0.24])
