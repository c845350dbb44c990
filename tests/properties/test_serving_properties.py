"""Properties every sweep must satisfy (DESIGN.md §3, §5 rule 2, §7 "Bounds to test against").

- physical bound: throughput per chip ≤ (ISL+OSL) / (ISL·2·active/F + OSL·kv_read/W), with
  kv_read the mean KV bytes one sequence reads per decode step (divided by 1 + draft length
  with MTP), F the chip's fastest dense peak, W its HBM bandwidth;
- per-user speed: TPOT ≥ the active weights' bytes per chip of the decoding instance / W
  (divided by the tokens per step with MTP);
- frontier points are non-dominated among all feasible points and dominate every other one;
- interactivity = 1/TPOT and TPOT = (E2E − TTFT)/(OSL − 1).
The bounds are computed here from the specs, not from the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.analysis.comparison import system_frontier
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.deploy.deployment import MTP
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

CASES = [
    ("deepseek-r1", "gb200-nvl72", "8k1k", None),
    ("deepseek-r1", "jalapeno", "8k1k", None),
    ("deepseek-r1", "jalapeno", "1k8k", None),
    ("gpt-oss-120b", "h100", "1k1k", None),
    ("deepseek-r1", "h200", "8k1k", MTP(1, 0.7)),
    ("deepseek-r1", "gb200-nvl72", "1k1k", MTP(1, 0.7)),
]
IDS = [f"{m}-{s}-{w}" + ("-mtp" if k else "") for m, s, w, k in CASES]


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def case(request):
    m, s, w, mtp = request.param
    model, system, wl = load_model(m), load_pricer(s), get_workload(w)
    prec = get_precision(model.default_precision)
    sf = system_frontier(model, system, wl, prec, SweepOptions(mtp=mtp))
    return model, system, wl, prec, mtp, sf


def _feasible(sf):
    p = sf.sweep.points
    return np.flatnonzero(p.feasible & (p.throughput_per_chip > 0) & np.isfinite(p.interactivity))


def test_sweep_has_agg_and_disagg_feasible_points(case):
    *_, sf = case
    ok = _feasible(sf)
    kinds = {sf.sweep.deployments[int(sf.sweep.dep_index[i])].kind for i in ok}
    assert kinds == {"agg", "disagg"}
    assert sf.frontier.size >= 3


def test_throughput_per_chip_below_physical_bound(case):
    model, system, wl, prec, mtp, sf = case
    f_peak = max(system.system.chip.peak_flop_per_s.values())  # fastest format the chip has
    w = system.system.chip.hbm_bandwidth_bytes_per_s
    isl, osl = wl.mean_isl, wl.mean_osl
    ctx = isl + osl / 2  # mean resident context while decoding
    kv_read = ctx * model.kv_bytes_per_token(prec.kv_cache.bytes_per_elem, int(ctx))
    per_step = 1 + (mtp.draft_tokens if mtp else 0)
    bound = (isl + osl) / (isl * 2 * model.active_params / f_peak + osl * kv_read / w / per_step)
    p = sf.sweep.points
    ok = _feasible(sf)
    worst = float(p.throughput_per_chip[ok].max())
    assert worst <= bound, f"{worst:.0f} tok/s/chip beats the physical bound {bound:.0f}"
    # output-only throughput obeys the same bound scaled by OSL/(ISL+OSL)
    assert float(p.output_throughput_per_chip[ok].max()) <= bound * osl / (isl + osl)


def test_tpot_not_below_weight_read_time(case):
    """Every step must stream, per chip of the decoding instance, its share of the active weights."""
    model, system, wl, prec, mtp, sf = case
    w = system.system.chip.hbm_bandwidth_bytes_per_s
    b_min = min(prec.modules[m].weight.bytes_per_elem for m in prec.modules)
    a = mtp.tokens_per_step if mtp else 1.0
    p = sf.sweep.points
    ok = _feasible(sf)
    chips = np.array([sf.sweep.deployments[int(sf.sweep.dep_index[i])].decode.layout.chips for i in ok])
    floor = model.active_params * b_min / chips / w / a
    assert np.all(p.tpot_s[ok] >= floor * (1 - 1e-9))


def test_frontier_non_dominated_and_complete(case):
    *_, sf = case
    p = sf.sweep.points
    ok = _feasible(sf)
    x, y = p.interactivity[ok], p.throughput_per_chip[ok]
    fx, fy = p.interactivity[sf.frontier], p.throughput_per_chip[sf.frontier]
    assert set(sf.frontier.tolist()) <= set(ok.tolist())
    # no feasible point dominates a frontier point (brute force, K x N)
    dom = (x[None, :] >= fx[:, None]) & (y[None, :] >= fy[:, None]) & (
        (x[None, :] > fx[:, None]) | (y[None, :] > fy[:, None]))
    assert not dom.any()
    # every feasible point is weakly dominated by some frontier point
    covered = (fx[:, None] >= x[None, :]) & (fy[:, None] >= y[None, :])
    assert covered.any(axis=0).all()
    # sorted by interactivity, throughput falls
    assert np.all(np.diff(fx) > 0) and np.all(np.diff(fy) < 0)


def test_interactivity_is_one_over_tpot(case):
    model, system, wl, prec, mtp, sf = case
    p = sf.sweep.points
    ok = _feasible(sf)
    assert np.all(p.interactivity[ok] <= 1 / p.tpot_s[ok] * (1 + 1e-12))
    np.testing.assert_allclose(p.interactivity[ok] * p.tpot_s[ok], 1.0, rtol=1e-9)
    np.testing.assert_allclose(p.tpot_s[ok], (p.e2e_s[ok] - p.ttft_s[ok]) / (wl.mean_osl - 1), rtol=1e-6)
    assert np.all(p.ttft_s[ok] > 0) and np.all(p.e2e_s[ok] > p.ttft_s[ok])


def test_littles_law_and_throughput_identity(case):
    model, system, wl, prec, mtp, sf = case
    p = sf.sweep.points
    ok = _feasible(sf)
    np.testing.assert_allclose(p.concurrency[ok], p.request_rate_per_s[ok] * p.e2e_s[ok], rtol=1e-6)
    np.testing.assert_allclose(p.throughput_per_chip[ok],
                               p.request_rate_per_s[ok] * (wl.mean_isl + wl.mean_osl) / p.chips[ok], rtol=1e-9)
