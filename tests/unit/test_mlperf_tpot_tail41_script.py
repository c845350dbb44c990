"""scripts/mlperf_tpot_tail41.py: the integrated M_t/G/∞ occupancy by hand and the ramp's limits (a run long against
its requests is the steady state; one as long as a request decodes at half the load on average)."""

from __future__ import annotations

import numpy as np
import pytest
from script_module import load_script

tt = load_script("mlperf_tpot_tail41")


def test_integrated_occupancy_by_hand():
    """D in {1, 3}: H(x) = E[∫_0^x min(D, u) du]. x = 2: D = 1 gives 1·2 − 1/2 = 1.5, D = 3 gives 2²/2 = 2: mean 1.75;
    x <= 0 gives 0; x = 4: (4 − 0.5 + 12 − 4.5) / 2 = 5.5."""
    assert tt.integrated_occupancy(np.array([2.0, -1.0, 4.0]), [1.0, 3.0]).tolist() == pytest.approx([1.75, 0.0, 5.5])


def _parts(steps, a=0.5, s=1e-4, tau=0.05):
    return {
        "steps": np.asarray(steps, dtype=float),
        "a": a,
        "slope_s": s,
        "step_s": tau,
        "var": np.zeros(len(steps)),
        "k3": np.zeros(len(steps)),
    }


def test_ramp_long_run_is_the_steady_state():
    r = tt.ramp_tail(_parts([100.0]), 1e9)
    assert r["mean"] == pytest.approx(1.0, abs=1e-6)
    assert r["p99"] == pytest.approx(1.0, abs=1e-6)


def test_ramp_fixed_length_run_as_long_as_a_request():
    """All requests n = 100 steps, issued over a span of 100 steps: a query issued at t decodes over [t, t + 100],
    where the mean count is a·u rising to a·100 at u = 100 and a·(200 − u) after; its window average is
    a·(100 − t²/200 − (100 − t)²/200)... averaged over t uniform on [0, 100]: a·100·(2/3). So the run's mean step is
    τ + s·(2/3 − 1)·a·100 = 0.05 − 1e-4·50/3."""
    r = tt.ramp_tail(_parts([100.0]), 100.0, slices=2000)
    assert r["mean"] == pytest.approx((0.05 - 1e-4 * 50 / 3) / 0.05, rel=1e-4)
