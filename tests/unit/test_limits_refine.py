"""fit/latency_limits._refine: the best point within the p99 limits, solved off the sweep's doubling batch grid.

Checked against a brute force that prices every aggregated deployment of the sweep on a fine batch ladder (400
batches from 1 to its largest grid batch, ratio <= 1.025) and keeps the best within both limits: the refined answer
exceeds it by at most one of its rungs (both price only batches the limits allow) and is within one refinement rung of it (the rungs are
2^(1/13) apart: 5.5% in batch, less in throughput), while the grid alone can be a whole doubling short.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.fit.latency_limits import REFINE, peak_within_limits
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.serve.open_loop import poisson_ttft_s
from jalapeno.serve.tpot_tail import poisson_tpot_s


@pytest.fixture(scope="module")
def case():
    from jalapeno.analysis.sweep import SweepOptions, sweep
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.fit.mlperf import benchmark_spread
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import Workload

    model, pricer = load_model("llama-3.1-405b"), load_pricer("h200")
    spr = benchmark_spread("llama3.1-405b")
    wl = Workload("mlperf", round(spr.mean_isl), round(spr.mean_osl), 1.0, spread=spr)
    return model, pricer, wl, sweep(model, pricer, wl, get_precision("fp8-tensor"), SweepOptions(serving="agg"))


def _brute(model, pricer, wl, sw, tpot_limit, ttft_limit):
    best = 0.0
    for d, dep in enumerate(sw.deployments):
        own = sw.points.decode_batch[sw.dep_index == d]
        pts = aggregated_by_batch(model, pricer, dep, wl, np.geomspace(1.0, float(own.max()), 400))
        ok = np.flatnonzero(pts.feasible & (pts.tpot_s <= tpot_limit) & np.isfinite(pts.throughput_per_chip))
        if not ok.size:
            continue
        sub = pts.take(ok)
        meet = (poisson_ttft_s(model, pricer, dep, wl, sub) <= ttft_limit) & (
            poisson_tpot_s(model, pricer, dep, wl, sub) <= tpot_limit
        )
        if meet.any():
            best = max(best, float(sub.throughput_per_chip[meet].max()))
    return best


def _grid_best(model, pricer, wl, sw, tpot_limit, ttft_limit):
    pts, best = sw.points, 0.0
    for d, dep in enumerate(sw.deployments):
        sel = np.flatnonzero((sw.dep_index == d) & pts.feasible & (pts.tpot_s <= tpot_limit))
        if not sel.size:
            continue
        sub = pts.take(sel)
        meet = (poisson_ttft_s(model, pricer, dep, wl, sub) <= ttft_limit) & (
            poisson_tpot_s(model, pricer, dep, wl, sub) <= tpot_limit
        )
        if meet.any():
            best = max(best, float(sub.throughput_per_chip[meet].max()))
    return best


@pytest.mark.parametrize("tpot_limit, ttft_limit", [(0.175, 6.0), (0.080, 4.5), (0.175, 1e3)])
def test_refined_peak_against_a_brute_force(case, tpot_limit, ttft_limit):
    """The rules' Llama-3.1-405B Server (175 ms / 6 s) and Interactive (80 ms / 4.5 s) limits
    (loadgen/mlperf.conf), and the TPOT limit alone."""
    model, pricer, wl, sw = case
    y, p99 = peak_within_limits(model, pricer, wl, sw, tpot_limit, ttft_limit)
    brute = _brute(model, pricer, wl, sw, tpot_limit, ttft_limit)
    grid = _grid_best(model, pricer, wl, sw, tpot_limit, ttft_limit)
    assert 0 < grid <= y and p99 <= ttft_limit
    assert y <= brute * 1.025
    assert y >= brute / 1.06


def test_refinement_rungs_by_hand():
    # REFINE batches strictly inside one doubling: REFINE + 1 equal ratios of 2^(1/(REFINE + 1))
    ladder = np.geomspace(64.0, 128.0, REFINE + 2)
    assert REFINE == 12
    assert np.allclose(ladder[1:] / ladder[:-1], 2 ** (1 / 13))
    assert 2 ** (1 / 13) == pytest.approx(1.0548, abs=1e-4)
