"""scripts/rr_wait_split49.py: the helpers behind its figures, each against values worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from script_module import load_script

s49 = load_script("rr_wait_split49")


def test_normal_excess_at_zero_and_unit_slack():
    # s = 0: σ/√(2π) = 2/2.5066 = 0.7979; σ = 1, s = 1: φ(1) − (1 − Φ(1)) = 0.241971 − 0.158655 = 0.083315
    assert s49.normal_excess(2.0, 0.0) == pytest.approx(0.797885, abs=1e-6)
    assert s49.normal_excess(1.0, 1.0) == pytest.approx(0.083315, abs=1e-6)
    assert s49.normal_excess(0.0, 1.0) == 0.0


def test_steady_sigma_of_a_uniform_spread():
    # uniform decode times of width w: ∫F(1−F) dS = w/6; λ_v = 49 req/s, w = 12 s, N = 2:
    # Var = 49 · 12/6 · 1/2 = 49, σ = 7 (the midpoint grid is exact to 1/(6·G²) of w/6 here)
    sigma = s49.steady_sigma(49.0, 2, np.full(64, 12.0 / 64))
    assert sigma == pytest.approx(7.0, rel=1e-3)
    assert s49.steady_sigma(49.0, 1, np.full(64, 12.0 / 64)) == 0.0  # one worker: no split


def test_in_system_counts_half_open_intervals():
    # [0, 2), [1, 3), [1, NaN): at t = 0.5 one, at t = 1 two, at t = 2 one ([0, 2) has left), at t = 3 none
    counts = s49.in_system([0.0, 1.0, 1.0], [2.0, 3.0, math.nan], np.array([0.5, 1.0, 2.0, 3.0]))
    assert counts.tolist() == [1, 2, 1, 0]


def test_increment_variance_of_a_ramp_and_of_alternation():
    # x = 0, 1, 2, ...: every increment over lag k is k, variance 0; x = 0, 1, 0, 1, ..., 0 (21 samples): the 20
    # one-step increments are ten +1 and ten −1 (mean 0, variance 1), the two-step ones all 0
    assert s49.increment_variance(np.arange(10.0), 1.0, 3.0) == 0.0
    alt = np.array([0.0, 1.0] * 10 + [0.0])
    assert s49.increment_variance(alt, 1.0, 1.0) == pytest.approx(1.0)
    assert s49.increment_variance(alt, 1.0, 2.0) == 0.0
