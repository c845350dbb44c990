"""serve/later_waves.py: the idle start's burst in an aggregated run's later waves (round 49, aggq49).

Expected values worked by hand in the comments (the queue of serve/queueing.agg_queue_s, effect 1:
Q = s·min(n̄, 1) + s·ρ²/(1 − ρ²) + s·ρ/(2(1 − ρ²)), ρ = n̄·s/τ).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.serve import later_waves
from jalapeno.serve.later_waves import load_shift_s, reformed_loads, run_ttft, wave_loads


def test_wave_profiles_spread_by_one_box_a_cycle():
    # 4 users at 0 on a 10 s cycle of 10 bins, w = 3 s = 3 bins: wave 1 a box of 3 bins (1/3 each), wave 2 the
    # box convolved with itself: 1, 2, 3, 2, 1 ninths
    d = wave_loads(np.zeros(4), 10.0, 3.0, waves=2, bins=10)
    assert d[0] == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0, 0, 0, 0, 0, 0, 0])
    assert d[1] == pytest.approx(np.array([1, 2, 3, 2, 1, 0, 0, 0, 0, 0]) / 9)


def test_wave_profile_folds_onto_the_cycle():
    # an arrival at 12 s on a 10 s cycle lands in bin 2; no spread (w = 0) leaves it there
    d = wave_loads(np.array([12.0]), 10.0, 0.0, waves=1, bins=10)
    assert d[0].argmax() == 2 and d[0].max() == pytest.approx(1.0)


def test_load_shift_is_nil_at_the_steady_load_and_priced_above_it():
    # s 0.1, n̄ 0.5, τ 0.2, t_dec 0.1, t_pre 0.3: share of prefill steps (0.2 − 0.1)/(0.3 − 0.1) = 0.5; C → ∞.
    # g 1.5: f = 0.75, τ_g = 0.25·0.1 + 0.75·0.3 = 0.25, n̄_g = 1.5·0.5·0.25/0.2 = 0.9375, ρ_g = 0.375:
    # Q_g = 0.09375 + 0.1·0.140625/0.859375 + 0.1·0.375/1.71875 = 0.131932; Q = 0.07 (ρ 0.25);
    # Δ = (0.25 − 0.2)/2 + 0.131932 − 0.07 = 0.086932
    d = load_shift_s(np.array([1.0, 1.5]), 0.1, 0.5, 0.2, 0.1, 0.3, 1e9)
    assert d[0] == pytest.approx(0.0, abs=1e-12)
    assert d[1] == pytest.approx(0.086932, rel=1e-5)


def test_run_mixes_the_first_wave_and_the_later_ones():
    # R = 10: the first wave (2 users at 5 s) weighs 1/10, waves 1..9 9/10 at 1 s + their shift: each wave half at
    # 0 s, half at +2 s. Mean 0.1·5 + 0.9·(1 + 1) = 2.3; median: 0.45 of the weight at 1 s, 0.55 above it -> 3 s;
    # p99 the first wave (5 s, its 0.1 at the top)
    r = run_ttft({None: 1.0, 0.5: 1.0, 0.99: 1.0}, np.full(2, 5.0), np.full((9, 2), 0.5), np.array([0.0, 2.0]))
    assert r[None] == pytest.approx(2.3)
    assert r[0.5] == pytest.approx(3.0)
    assert r[0.99] == pytest.approx(5.0)


def test_the_switch_ships_off():
    assert later_waves.LATER_WAVES_ON is False
    assert later_waves.WAVE_REFORM_ON is True  # the later waves' form, read only where LATER_WAVES_ON is on


# reformed_loads's unit engine: λ 0.1/s, τ 1 s, φ 0.1 -> a prompt step serves λτ/φ = 1 prompt; t_dec 1 s, t_pre 3 s:
# bins of one prompt step (3 s), a bin with one prompt = 1 prompt step + 0 decode-only steps, one without = 3 steps
_ENGINE = dict(
    users=1.0,
    rate=0.1,
    step_s=1.0,
    share=0.1,
    decode_step_s=1.0,
    prefill_step_s=3.0,
    range_ratio=1.0,
    tokens_per_step=1.0,
    rest_s=0.0,
    window_s=1.0,
    waves=1,
    max_bins=10_000,
)


def test_a_prompt_step_holds_the_decode_clock_back():
    # one user's first token at 0 s, 10 output tokens: the bin 0-3 s holds its own prompt step (1 token), then 3
    # tokens a bin: the clock reads 10 at 3 + 9·1 = 12 s, the bin starting at 12 s (index 4), not at 10 s
    d, g = reformed_loads(np.zeros(1), osl=10.0, **_ENGINE)
    assert int(np.argmax(d[0])) == 4 and d[0].max() == pytest.approx(1.0)
    # a 40-token output: 1 + 3·13 = 40 tokens at 3 + 13·3 = 42 s, bin 14
    d, _ = reformed_loads(np.zeros(1), osl=40.0, **_ENGINE)
    assert int(np.argmax(d[0])) == 14


def test_returns_slowed_by_the_others_prompts_come_back_bunched():
    # three users, first tokens at 0, 3 and 6 s (each the one prompt of its bin), 10.5 output tokens each. The clock
    # reads 1, 2, 3 at the ends of bins 0-2 (a prompt step each), then 6, 9, 12, 15 (3 decode steps a bin).
    # A (started at clock 0) is back at 10.5, B (started at 1) at 11.5: both in bin 5 (clock 9-12, 15-18 s) though
    # their first tokens were 3 s apart; C (started at 2) at 12.5, bin 6. A passive spread keeps them 3 s apart.
    e = dict(_ENGINE, users=3.0)
    d, g = reformed_loads(np.array([0.0, 3.0, 6.0]), osl=10.5, **e)
    assert d[0][5] == pytest.approx(2 / 3) and d[0][6] == pytest.approx(1 / 3)
    assert g.sum() * 3.0 * 0.1 == pytest.approx(3.0)  # the rate over λ integrates to the wave's three arrivals


def test_reformed_waves_each_sum_to_one_and_count_users_in_order():
    # 4 users at 0 s, outputs uniform in [5, 10] tokens, 3 later waves: each row a wave of 4 arrivals
    e = dict(_ENGINE, users=4.0, range_ratio=0.5, waves=3)
    d, g = reformed_loads(np.zeros(4), osl=10.0, **e)
    assert d.shape[0] == 3 and d.sum(axis=1) == pytest.approx(np.ones(3))
    first = [int(np.flatnonzero(r)[0]) for r in d]
    assert first == sorted(first)  # a later wave starts no earlier than the one before it


def test_a_bin_holds_no_more_prompt_steps_than_fit_in_it():
    # three users' first tokens all at 0 s: the bin 0-3 s holds one prompt step (t_pre 3 s), not the three prompts'
    # 9 s, so the clock reads 1 at its end (uncapped it would read 3 + (3 - 9)/1 = -3: a clock run backwards). Then
    # 3 tokens a bin: clock 10 at 12 s, all three back in bin 4, as the lone user of
    # test_a_prompt_step_holds_the_decode_clock_back (uncapped: clock 10 only at 15 s, bin 5)
    d, _ = reformed_loads(np.zeros(3), osl=10.0, **dict(_ENGINE, users=3.0))
    assert int(np.argmax(d[0])) == 4 and d[0][4] == pytest.approx(1.0)


def test_the_balancing_gate_meets_a_wave_at_its_local_rate():
    """Round 51 (waves51, later_waves.gate_shift_s): TensorRT-LLM's attention-DP gate with every slot taken waits the
    coupon collector, ∝ 1/λ. By hand, dp = 2 (serve/adp_balance's doctest, m_1 = 2): W(λ) = 4/(3λ); at λ = 1/s,
    τ = 0.1 s (cap 60·τ = 6 s, not reached): a wave at twice the rate waits 2/3 s, 2/3 s less; at half the rate
    8/3 s, 4/3 s more. Users below the slots: the free regime, (dp − 1)/(2λ) = 0.5 s at λ = 1, 0.25 s at 2."""
    import numpy as np

    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.serve.admission_waits import running_slots
    from jalapeno.serve.later_waves import gate_shift_s
    from jalapeno.specs.formats import get_precision

    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=2, ep=2)), adp_balance_timeout_iters=60, max_running=64)
    slots = running_slots(dep, dep.decode.layout)
    g = np.array([2.0, 1.0, 0.5])
    full = gate_shift_s(dep, g, 1.0, 0.1, slots - 2, slots)
    assert full.tolist() == pytest.approx([-2 / 3, 0.0, 4 / 3])
    free = gate_shift_s(dep, g, 1.0, 0.1, slots - 2, slots - 2)
    assert free.tolist() == pytest.approx([-0.25, 0.0, 0.5])
    no_gate = Deployment(get_precision("fp8"), Pool(Layout(dp=2, ep=2)), max_running=64)
    assert gate_shift_s(no_gate, g, 1.0, 0.1, slots - 2, slots).tolist() == [0.0, 0.0, 0.0]
