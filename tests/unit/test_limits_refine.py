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


class _Priced:
    """The brute force's and the grid's pricing, each done once for the module (the three limit pairs share it): every
    deployment's fine batch ladder (400 batches from 1 to its largest grid batch) reads neither limit, and a ladder's
    or the grid's points within a TPOT limit and their Poisson p99 TTFT and TPOT read the TPOT limit alone (two pairs
    share 175 ms), so each is computed for the first pair that needs it and reused: the same calls with the same
    arguments on the case's module-scoped model, pricer, workload and sweep, which nothing modifies (``take`` copies).
    Each pair still applies its own limits to the p99s."""

    def __init__(self, case):
        self.case, self.ladder, self.within = case, {}, {}

    def _ladder(self, d, dep):
        model, pricer, wl, sw = self.case
        if d not in self.ladder:
            own = sw.points.decode_batch[sw.dep_index == d]
            self.ladder[d] = aggregated_by_batch(model, pricer, dep, wl, np.geomspace(1.0, float(own.max()), 400))
        return self.ladder[d]

    def within_tpot(self, kind, d, dep, tpot_limit):
        """(points of deployment ``d`` within ``tpot_limit``, their Poisson p99 TTFT, their p99 TPOT), or None: of its
        fine ladder (``kind`` "brute") or of the sweep's own grid ("grid")."""
        key = (kind, d, tpot_limit)
        if key not in self.within:
            model, pricer, wl, sw = self.case
            if kind == "brute":
                pts = self._ladder(d, dep)
                idx = np.flatnonzero(pts.feasible & (pts.tpot_s <= tpot_limit) & np.isfinite(pts.throughput_per_chip))
            else:
                pts = sw.points
                idx = np.flatnonzero((sw.dep_index == d) & pts.feasible & (pts.tpot_s <= tpot_limit))
            sub = pts.take(idx) if idx.size else None
            self.within[key] = (
                None
                if sub is None
                else (sub, poisson_ttft_s(model, pricer, dep, wl, sub), poisson_tpot_s(model, pricer, dep, wl, sub))
            )
        return self.within[key]


@pytest.fixture(scope="module")
def priced(case):
    return _Priced(case)


def _best(priced, kind, tpot_limit, ttft_limit):
    """The best throughput per chip within both limits over the sweep's deployments: of their fine ladders (``kind``
    "brute", the brute force) or of the sweep's grid ("grid")."""
    best = 0.0
    for d, dep in enumerate(priced.case[3].deployments):
        got = priced.within_tpot(kind, d, dep, tpot_limit)
        if got is None:
            continue
        sub, ttft, tpot = got
        meet = (ttft <= ttft_limit) & (tpot <= tpot_limit)
        if meet.any():
            best = max(best, float(sub.throughput_per_chip[meet].max()))
    return best


@pytest.mark.parametrize("tpot_limit, ttft_limit", [(0.175, 6.0), (0.080, 4.5), (0.175, 1e3)])
def test_refined_peak_against_a_brute_force(case, priced, tpot_limit, ttft_limit):
    """The rules' Llama-3.1-405B Server (175 ms / 6 s) and Interactive (80 ms / 4.5 s) limits
    (loadgen/mlperf.conf), and the TPOT limit alone."""
    model, pricer, wl, sw = case
    y, p99 = peak_within_limits(model, pricer, wl, sw, tpot_limit, ttft_limit)
    brute = _best(priced, "brute", tpot_limit, ttft_limit)
    grid = _best(priced, "grid", tpot_limit, ttft_limit)
    assert 0 < grid <= y and p99 <= ttft_limit
    assert y <= brute * 1.025
    assert y >= brute / 1.06


def test_refinement_rungs_by_hand():
    # REFINE batches strictly inside one doubling: REFINE + 1 equal ratios of 2^(1/(REFINE + 1))
    ladder = np.geomspace(64.0, 128.0, REFINE + 2)
    assert REFINE == 12
    assert np.allclose(ladder[1:] / ladder[:-1], 2 ** (1 / 13))
    assert 2 ** (1 / 13) == pytest.approx(1.0548, abs=1e-4)
