"""scripts/sgl_prefill_dispatch_check.py: the fullest rank of a random (Poisson-split) prefill dispatch, by hand."""

from __future__ import annotations

import math

import pytest
from script_module import load_script

sd = load_script("sgl_prefill_dispatch_check")


def test_one_rank_is_the_poisson_mean():
    assert sd.expected_max_poisson(2.5, 1) == pytest.approx(2.5, rel=1e-9)


def test_two_ranks_by_hand():
    # E[max(X, Y)], X, Y ~ Poisson(1): sum_k 1 - F(k)^2 with F(0) = e^-1, F(1) = 2e^-1, F(2) = 2.5e^-1, F(3) = 8/3 e^-1
    e = math.exp(-1.0)
    f = [e, 2 * e, 2.5 * e, 8 / 3 * e, (8 / 3 + 1 / 24) * e, (8 / 3 + 1 / 24 + 1 / 120) * e]
    by_hand = sum(1 - v * v for v in f)  # the tail past k = 5 adds under 1e-4
    assert sd.expected_max_poisson(1.0, 2) == pytest.approx(by_hand, abs=2e-4)
    assert 1.0 < sd.expected_max_poisson(1.0, 2) < 2.0


def test_ratio_below_one_at_light_load_and_above_at_a_full_step():
    # one prompt a step over 4 ranks: the model's balanced rule charges one whole prompt, a random dispatch's fullest
    # rank holds fewer on average (often none): 1 - e^-1 + ... = 0.743
    assert sd.busiest_ratio(0.25, 4) == pytest.approx(0.743, abs=1e-3)
    # 8 prompts a rank on average over 8 ranks: the fullest Poisson(8) count of 8 is above 8
    assert sd.busiest_ratio(8.0, 8) > 1.3
    # no load, or one rank: nothing to spread
    assert sd.busiest_ratio(0.0, 4) == 1.0
    assert sd.busiest_ratio(3.0, 1) == pytest.approx(1.0, rel=1e-9)
