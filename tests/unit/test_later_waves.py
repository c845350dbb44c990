"""serve/later_waves.py: the idle start's burst in an aggregated run's later waves (round 49, aggq49).

Expected values worked by hand in the comments (the queue of serve/queueing.agg_queue_s, effect 1:
Q = s·min(n̄, 1) + s·ρ²/(1 − ρ²) + s·ρ/(2(1 − ρ²)), ρ = n̄·s/τ).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.serve import later_waves
from jalapeno.serve.later_waves import load_shift_s, run_ttft, wave_loads


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
