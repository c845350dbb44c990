"""scripts/adp_poisson_rank.py: TensorRT-LLM's mean busiest attention-DP rank over Poisson steps, worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from script_module import load_script

apr = load_script("adp_poisson_rank")


def test_poisson_busiest_rank_by_hand():
    # n = 1, dp = 4: P(1..4)·1 + P(5..8)·2 + P(9..12)·3, Poisson(1) P(k) = e^-1 / k!
    p = [math.exp(-1.0) / math.factorial(k) for k in range(13)]
    want = sum(p[1:5]) + 2 * sum(p[5:9]) + 3 * sum(p[9:13])
    assert apr.expected_busiest_rank([1.0], 4)[0] == pytest.approx(want, rel=1e-9)
    # n = 0.5, dp = 2: P(1..2) + 2·P(3..4) + 3·P(5..6) + ...; by hand to 1e-6
    q = [math.exp(-0.5) * 0.5 ** k / math.factorial(k) for k in range(12)]
    want2 = sum(math.ceil(k / 2) * q[k] for k in range(12))
    assert apr.expected_busiest_rank([0.5], 2)[0] == pytest.approx(want2, rel=1e-6)


def test_large_mean_asymptote_and_dp_one():
    # far above dp the fractional part of S/dp is uniform: n/dp + (dp - 1)/(2 dp); dp = 1 gives the Poisson mean n
    assert apr.expected_busiest_rank([400.0], 4)[0] == pytest.approx(100.0 + 3.0 / 8.0, rel=1e-3)
    assert apr.expected_busiest_rank([3.0], 1)[0] == pytest.approx(3.0, rel=1e-9)
    np.testing.assert_allclose(apr.model_busiest_rank([0.5, 8.0], 4), [0.5, 2.0])


def test_bad_input_names_the_fix():
    with pytest.raises(ValueError, match="mean_prompts must be >= 0"):
        apr.expected_busiest_rank([-1.0], 4)
