"""serve/tpot_tail: the per-query TPOT tail's cumulants by hand (fixed lengths: the M/D/∞ window average's 2/3·L) and
against a direct simulation of Poisson arrivals; the Pearson III tail and the mixture quantile by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jalapeno.errors import SpecError
from jalapeno.serve import tpot_tail


def test_window_moments_by_hand_two_lengths():
    """D in {1, 3} equally likely. Window n = 1: m = 1 for both, M = 1, 3: e2 = mean(1 − 1/3, 3 − 1/3) = 5/3;
    c1 = mean(1 − 1/2, 1 − 1/2) = 1/2. Window n = 3: m = 1, 3 and M = 3, 3: e2 = mean(3 − 1/3, 27 − 9) = 31/3;
    c2 = mean(1·3 − 2/3, 9·3 − 18) = 17/3."""
    w = tpot_tail.window_moments([1.0, 3.0])
    assert w["e2"].tolist() == pytest.approx([5 / 3, 31 / 3])
    assert w["c1"][0] == pytest.approx(0.5)
    assert w["c2"][1] == pytest.approx(17 / 3)
    assert w["mean"].tolist() == [2.0, 2.0]
    with pytest.raises(SpecError, match="steps"):
        tpot_tail.window_moments([0.0, 3.0])


def test_fixed_lengths_give_two_thirds_of_the_poisson_variance():
    """Every request n steps, a per step: L = a·n decoding; a window of exactly n steps averages the count
    N(u) whose autocovariance is L·(1 − |h|/n)+ (M/D/∞), so Var(A) = (L/n²)∫∫(1 − |u − v|/n) du dv = 2L/3."""
    a, n, s = 0.4, 500.0, 2e-5
    var, k3 = tpot_tail.tail_cumulants([a], [s], [0.0], [100.0], [n])
    assert var[0, 0] == pytest.approx(s**2 * 2 * a * n / 3, rel=1e-12)
    assert k3[0, 0] > 0


def _simulate(a, lengths, isl, s, sigma, window, trials, rng):
    """Mean-step excess s·A + σ·X/n of ``trials`` windows of ``window`` steps, arrivals Poisson a per step on
    [−max D, n), each with a random length and prompt."""
    lo = -float(max(lengths))
    out = np.empty(trials)
    for t in range(trials):
        k = rng.poisson(a * (window - lo))
        u = rng.uniform(lo, window, k)
        d = rng.choice(lengths, k)
        i = rng.choice(isl, k)
        ov = np.clip(np.minimum(u + d, window) - np.maximum(u, 0.0), 0.0, None)
        x = i[(u >= 0) & (u < window)].sum()
        out[t] = s * ov.sum() / window + sigma * x / window
    return out - out.mean()


def test_cumulants_and_p99_match_a_simulation():
    """Two lengths (20 and 200 steps), two prompts (100 and 900 tokens), a = 0.5 per step: the simulated variance of
    each window's excess within 6% of κ₂, and the mixture's 99th percentile within 5% of :func:`tail_excess_s`."""
    rng = np.random.default_rng(7)
    lengths, isl = np.array([20.0, 200.0]), np.array([100.0, 900.0])
    a, s, sigma = 0.5, 3e-5, 2e-6
    var, k3 = tpot_tail.tail_cumulants([a], [s], [sigma], isl, lengths)
    sims = [_simulate(a, lengths, isl, s, sigma, n, 20000, rng) for n in lengths]
    for j, z in enumerate(sims):
        assert z.var() == pytest.approx(var[0, j], rel=0.06)
    p99 = float(np.quantile(np.concatenate(sims), 0.99))
    assert float(tpot_tail.tail_excess_s(0.99, var, k3)[0]) == pytest.approx(p99, rel=0.05)


def test_exceed_prob_normal_and_degenerate_limits():
    assert float(tpot_tail.exceed_prob(2.3263478740408408, 1.0, 0.0)) == pytest.approx(0.01, rel=1e-9)
    assert float(tpot_tail.exceed_prob(-1.0, 0.0, 0.0)) == 1.0
    assert float(tpot_tail.exceed_prob(1.0, 0.0, 0.0)) == 0.0


def test_tail_excess_mixture_by_hand():
    """Two equally likely exponentials shifted to mean 0 (γ = 2), of means 1 and 2: the 0.99 quantile z solves
    (e^-(z+1) + e^-(z/2+1)) / 2 = 0.01; no variance at all gives 0."""
    z = float(tpot_tail.tail_excess_s(0.99, np.array([[1.0, 4.0]]), np.array([[2.0, 16.0]]))[0])
    assert (math.exp(-(z + 1)) + math.exp(-(z / 2 + 1))) / 2 == pytest.approx(0.01, rel=1e-9)
    assert float(tpot_tail.tail_excess_s(0.99, np.zeros((1, 3)), np.zeros((1, 3)))[0]) == 0.0
    with pytest.raises(SpecError, match="quantile must be in"):
        tpot_tail.tail_excess_s(1.0, np.ones((1, 1)), np.ones((1, 1)))
