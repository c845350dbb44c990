"""serve/ttft_spread.py: the steady TTFT's quantiles from the batch-service queue's wait distribution (round 51)."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.serve import analytic, ttft_spread
from jalapeno.serve.queueing import agg_queue_s
from jalapeno.serve.ttft_spread import chunk_law, quantile_shift_s, wait_mean_s, wait_quantile_s

# t_d = 40 ms decode-only step, s = 250 ms a chunk, λ_c = 2.5 chunks/s: ρ = λ_c·s = 0.625
TD, S, LAM = 0.04, 0.25, 2.5


def test_chunk_law_has_effect_1s_moments():
    # by hand (serve/queueing.py effect 1): E[τ] = t_d/(1 − ρ) = 0.04/0.375 = 0.106667 s, so the chunks a step
    # carries have mean λ_c·E[τ] = 0.266667 and variance Var τ / s² = n̄/(1 − ρ²) = 0.266667/0.609375 = 0.437607
    pi = chunk_law([TD], [S], [LAM])[0]
    j = np.arange(pi.size)
    mean = float(pi @ j)
    assert mean == pytest.approx(0.266667, rel=1e-4)
    assert float(pi @ j**2) - mean**2 == pytest.approx(0.437607, rel=1e-4)


def test_mean_wait_is_the_queue_agg_queue_s_prices():
    # by hand: ΔTTFT = s·min(n̄, 1) + s·ρ²/(1 − ρ²) + s·ρ/(2(1 − ρ²)) = 0.066667 + 0.160256 + 0.128205 = 0.355128 s;
    # the no-queue wait τ/2 + t_d + s·max(n̄, 1) = 0.053333 + 0.04 + 0.25 = 0.343333 s: E[W] = 0.698462 s
    assert float(wait_mean_s([TD], [S], [LAM])[0]) == pytest.approx(0.698462, rel=1e-4)
    tau = TD / (1 - LAM * S)
    no_queue = tau / 2 + TD + S
    queue = float(agg_queue_s(S, LAM * tau, tau, 1e12))  # C → ∞: no arrival-theorem scaling
    assert float(wait_mean_s([TD], [S], [LAM])[0]) == pytest.approx(no_queue + queue, rel=1e-4)


def _simulated_waits(td: float, s: float, lam: float, steps: int = 400_000, seed: int = 1) -> np.ndarray:
    """The batch-service queue run step by step (Poisson arrivals, each step carrying the chunks that arrived during
    the one before): each arrival's wait to the end of the step that carries it."""
    rng = np.random.default_rng(seed)
    j, waits = 0, []
    for _ in range(steps):
        tau = td + s * j
        n = rng.poisson(lam * tau)
        if n:
            u = rng.random(n)
            waits.append(tau * (1 - u) + td + s * n)  # rest of this step, then the next carries all n
        j = n
    return np.concatenate(waits)


def test_quantiles_agree_with_the_queue_run_step_by_step():
    w = _simulated_waits(TD, S, LAM)
    for q in (0.5, 0.9):
        assert float(wait_quantile_s(q, [TD], [S], [LAM])[0]) == pytest.approx(float(np.quantile(w, q)), rel=0.02)
    assert float(wait_mean_s([TD], [S], [LAM])[0]) == pytest.approx(float(w.mean()), rel=0.02)
    # the median sits below the mean (the wait is skewed): the point of the module
    assert float(wait_quantile_s(0.5, [TD], [S], [LAM])[0]) < 0.95 * float(w.mean())


def test_no_queue_and_symmetric_lengths_leave_the_quantiles_alone():
    # a lone user (C = 1): no other arrivals, W = t_d + s + U·t_d is uniform, symmetric as the lengths: no shift
    assert float(quantile_shift_s(0.5, [TD], [S], [0.3], [0.1], [1], [-0.05], [0.05])[0]) == 0.0
    # with a queue the median moves down and the p90 up (the skew), by less than the queue's own scale s
    lo, hi = [-0.05], [0.05]
    med = float(quantile_shift_s(0.5, [TD], [S], [0.27], [0.107], [1e9], lo, hi)[0])
    p90 = float(quantile_shift_s(0.9, [TD], [S], [0.27], [0.107], [1e9], lo, hi)[0])
    assert -S < med < -0.01
    assert p90 > 0.0


def test_switch_off_keeps_the_median_at_the_mean_and_on_moves_only_quantiles(monkeypatch):
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import Workload

    assert ttft_spread.STEADY_SPREAD_ON is False  # shipped off (round 51, ttftmed51)
    model, pr = load_model("deepseek-r1"), load_pricer("mi325x")
    dep, wl = Deployment(get_precision("fp8"), Pool(Layout(tp=8))), Workload("8k/1k", 8192, 1024, 0.8)
    off = serve_at_concurrency(model, pr, dep, wl, [64], idle_start=False).record(0)
    assert off["ttft_p50_s"] == pytest.approx(off["ttft_s"], rel=1e-9)  # lengths symmetric: median = mean
    monkeypatch.setattr(ttft_spread, "STEADY_SPREAD_ON", True)
    on = serve_at_concurrency(model, pr, dep, wl, [64], idle_start=False).record(0)
    assert on["ttft_s"] == off["ttft_s"] and on["tpot_s"] == off["tpot_s"]
    assert on["ttft_p50_s"] < 0.97 * off["ttft_p50_s"]
    assert on["ttft_p99_s"] > off["ttft_p99_s"]
    assert analytic.QUANTILES == (0.5, 0.9, 0.99)


def test_quantiles_invert_the_cdf_by_hand_every_quantile_at_once():
    # round 52 (ttftwaves52): Newton on the closed-form CDF. No queue (λ_c = 0), t_d = 0.1, s = 0.2, L uniform on
    # [0, 0.4]: W + L = 0.3 + X, X = U·0.1 + U'·0.4. By hand: X's CDF is x²/0.08 below 0.1 and (x − 0.05)/0.4 on
    # [0.1, 0.4]: q 0.01 at √0.0008 = 0.028284, q 0.2 at 0.13, q 0.5 at 0.25
    parts = ttft_spread._parts([0.1], [0.2], [0.0])
    got = ttft_spread._quantiles([0.01, 0.2, 0.5], parts, np.array([0.0]), np.array([0.4]), [[0.3], [0.3], [0.3]])
    assert got[:, 0].tolist() == pytest.approx([0.328284, 0.43, 0.55], abs=1e-6)


def test_points_solved_together_or_in_slices_match_each_alone(monkeypatch):
    # three points of different loads (no queue; ρ ≈ 0.39; ρ capped at MAX_RHO 0.95) in one call, then with the CDF
    # sliced point by point (_CDF_TERMS 1): every point's shifts equal its own call's (the solve and the search are per
    # point; together the chain is truncated at the largest point's reach, hence agreement to 1e-7, not bit for bit)
    args = ([0.04, 0.05, 0.02], [0.25, 0.1, 0.3], [0.0, 0.4, 0.2], [0.05, 0.09, 0.06], [64, 128, 32])
    lo, hi = [-0.05, -0.1, 0.0], [0.05, 0.1, 0.0]
    together = ttft_spread.quantile_shifts_s(analytic.QUANTILES, *args, lo, hi)
    alone = [
        ttft_spread.quantile_shifts_s(analytic.QUANTILES, *[[a[i]] for a in args], [lo[i]], [hi[i]])[:, 0]
        for i in range(3)
    ]
    assert together.shape == (3, 3)
    for i in range(3):
        assert together[:, i] == pytest.approx(alone[i], rel=1e-7, abs=1e-12)
    monkeypatch.setattr(ttft_spread, "_CDF_TERMS", 1)
    assert ttft_spread.quantile_shifts_s(analytic.QUANTILES, *args, lo, hi) == pytest.approx(together, abs=1e-12)
    # the one-quantile form is the same numbers
    assert quantile_shift_s(0.9, *args, lo, hi) == pytest.approx(together[1], abs=1e-15)


def test_the_cdf_density_newton_steps_on_is_the_cdfs_derivative():
    # review52: Newton's step divides by _cdf's density; a wrong density left every figure right (the bracket's
    # bisection still converges), so only the speed the docs quote (1-9 evaluations, not 50) rested on it. By hand,
    # no queue (λ_c = 0), t_d = 0.1, s = 0.2, L uniform on [0, 0.4]: W + L = 0.3 + X, X = U·0.1 + U'·0.4, X's density
    # x/0.04 below 0.1, 1/0.4 = 2.5 on [0.1, 0.4], (0.5 − x)/0.04 above: at X = 0.05 / 0.25 / 0.45 it is 1.25 / 2.5 /
    # 1.25, and the CDF at X = 0.45 is 1 − 0.05²/0.08 = 0.96875.
    w, tau, joined, td, s, j = ttft_spread._parts([0.1], [0.2], [0.0])
    mass, c = w[:, :, None] * joined, td[:, None] + s[:, None] * (1 + j[None, :])
    lo, hi = np.array([0.0]), np.array([0.4])
    f, d = ttft_spread._cdf(np.array([[0.35, 0.55, 0.75]]), mass, tau, c, lo, hi)
    assert d[0].tolist() == pytest.approx([1.25, 2.5, 1.25], rel=1e-9)
    assert f[0, 2] == pytest.approx(0.96875, rel=1e-9)
    # with a queue (λ_c 3 chunks/s, ρ = 0.3) the density is the CDF's central difference, with and without a spread,
    # at x off the knots c_j' + {lo, hi} + {0, τ_j} (here multiples of 0.05 s: the density jumps there without a spread)
    w, tau, joined, td, s, j = ttft_spread._parts([0.05], [0.1], [3.0])
    mass, c = w[:, :, None] * joined, td[:, None] + s[:, None] * (1 + j[None, :])
    x, h = np.array([[0.23, 0.37, 0.52, 0.81]]), 1e-7
    for hi in (np.array([0.2]), np.array([0.0])):
        lo = np.array([0.0])
        _, d = ttft_spread._cdf(x, mass, tau, c, lo, hi)
        up, down = ttft_spread._cdf(x + h, mass, tau, c, lo, hi)[0], ttft_spread._cdf(x - h, mass, tau, c, lo, hi)[0]
        assert d == pytest.approx((up - down) / (2 * h), rel=1e-5)


def test_newton_ends_in_a_few_cdf_evaluations(monkeypatch):
    # the docs' speed claim (docs/gap_aic_ttft.md round 52: 1-9 evaluations where bisection took 50 per quantile):
    # three points, three quantiles, to |F − q| <= 1e-13 in at most 12 evaluations (bisection halves the bracket per
    # evaluation: ~40 to reach that tolerance; Newton with a density off by a constant factor converges only linearly)
    calls = []
    cdf = ttft_spread._cdf
    monkeypatch.setattr(ttft_spread, "_cdf", lambda *a: calls.append(1) or cdf(*a))
    args = ([0.04, 0.05, 0.02], [0.25, 0.1, 0.3], [0.0, 0.4, 0.2], [0.05, 0.09, 0.06], [64, 128, 32])
    ttft_spread.quantile_shifts_s(analytic.QUANTILES, *args, [-0.05, -0.1, 0.0], [0.05, 0.1, 0.0])
    assert 1 <= len(calls) <= 12
