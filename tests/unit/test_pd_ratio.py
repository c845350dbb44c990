"""The disaggregated sweep's prefill:decode worker ratio follows the pools' balance, not a grid
(serve/disagg.prefill_workers_needed, analysis/sweep.balanced_workers). Expected values by hand
from the balance λ = y·B/(D·τ), ρ = λ·ISL/(x·P) < 0.95, or by brute force over every worker count."""

from __future__ import annotations

from types import SimpleNamespace as N

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jalapeno.analysis.sweep import DECODE_WORKERS, PREFILL_HEADROOM, SweepOptions, balanced_workers, sweep
from jalapeno.analysis.sweep_layouts import disaggregated_layouts
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.disagg import decode_curve, disaggregated_points, prefill_perf, prefill_workers_needed
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


def _dec(batch, tau):
    return N(batch=np.asarray(batch, float), tau_s=np.asarray(tau, float), feasible=np.ones(len(batch), bool),
             layout=Layout(dp=16, ep=16))


def test_fewest_prefill_workers_by_hand():
    # D = 1024 decode steps, ISL 8192; one prefill worker: P = 8,620 prompt tokens/s (0.95 P = 8,189)
    wl = N(mean_isl=8192.0, mean_osl=1025.0)
    dec = _dec([1, 256, 1024], [0.01, 0.02, 0.025])
    pre = N(tokens_per_s=8620.0)
    # λ = B/(D·τ) = 0.0977, 12.5, 40 req/s; ISL·λ/(0.95 P) = 0.098, 12.50, 40.01 -> 1, 13, 41 workers
    assert prefill_workers_needed(pre, dec, wl, 1).tolist() == [1, 13, 41]
    # two decode workers ask twice the prompts: 0.195, 25.01, 80.03 -> 1, 26, 81 (a ratio of 40.5, above 16)
    assert prefill_workers_needed(pre, dec, wl, 2).tolist() == [1, 26, 81]


def test_a_pool_at_exactly_the_ceiling_gets_one_more_worker():
    # λ = 1 req/s of 1,900-token prompts on P = 1,000 tok/s workers: two run at ρ = 0.95 exactly (saturated)
    wl = N(mean_isl=1900.0, mean_osl=2.0)
    assert prefill_workers_needed(N(tokens_per_s=1000.0), _dec([1], [1.0]), wl, 1).tolist() == [3]


def test_an_infeasible_decode_batch_gets_one_worker():
    dec = _dec([1, 2], [0.01, 0.0])
    dec.feasible[0] = False
    assert prefill_workers_needed(N(tokens_per_s=1.0), dec, N(mean_isl=1e4, mean_osl=11.0), 4).tolist() == [1, 1]


@settings(max_examples=200, deadline=None)
@example(p=18.079613336327384, b=18.079613336327384, tau=0.0001, isl=1.9, osl=2.0, y=1)
@given(p=st.floats(1.0, 1e7), b=st.floats(1.0, 2e4), tau=st.floats(1e-4, 1.0), isl=st.floats(1.0, 2e5),
       osl=st.floats(2.0, 2e4), y=st.sampled_from([1, 2, 4, 8]))
def test_needed_workers_keep_up_and_one_fewer_does_not(p, b, tau, isl, osl, y):
    x = int(prefill_workers_needed(N(tokens_per_s=p), _dec([b], [tau]), N(mean_isl=isl, mean_osl=osl), y)[0])
    rho = lambda n: y * b / ((osl - 1) * tau) * isl / (n * p)  # noqa: E731  (disaggregated_points' balance)
    assert x >= 1 and rho(x) < 0.95
    # one fewer saturates, to the last bits: the code evaluates ρ in its own order (λ·ISL, then / (x·P)), and at the
    # edge the two orders differ by an ulp (p = b = 18.0796, τ = 1e-4, ISL 1.9, OSL 2: 0.9499999999999998 here)
    assert x == 1 or rho(x - 1) >= 0.95 * (1 - 1e-12)


@pytest.fixture(scope="module")
def r1_jalapeno():
    """DeepSeek-R1 FP4 8K/1K on Jalapeño: a TP2 prefill worker (slow: one 8K prompt at a time on two chips)
    against a DP16 wide-EP decode pool (fast: thousands of sequences a step), as the sweep prices them."""
    model, pricer, prec, wl = load_model("deepseek-r1"), load_pricer("jalapeno"), get_precision("fp4"), get_workload("8k1k")
    opt = SweepOptions(serving="disagg", overlap="none", eplb=None)
    limits = opt.deployment(prec, Pool(Layout()))
    pres, decs = disaggregated_layouts(model, pricer.system, prec, pricer.efficiency, eplb=None, isl=wl.mean_isl)
    plan = next(lay for lay in pres if lay.tp == 2)
    dlay = next(lay for lay in decs if lay.dp == 16)
    pre = prefill_perf(model, pricer, plan, prec, wl, limits.prefill_budget(plan))
    dec = decode_curve(model, pricer, dlay, prec, wl, np.asarray(opt.batches, float), None, limits)
    return model, pricer, prec, wl, opt, pre, dec


def test_batch_index_prices_the_grid_points(r1_jalapeno):
    model, pricer, prec, wl, _, pre, dec = r1_jalapeno
    xs, ys = np.array([1, 7, 30]), np.array([1, 2, 4])
    k = dec.batch.shape[0]
    grid = disaggregated_points(model, pricer, prec, wl, pre, dec, xs, ys)
    m, bi = np.repeat(np.arange(3), k), np.tile(np.arange(k), 3)
    one = disaggregated_points(model, pricer, prec, wl, pre, dec, xs[m], ys[m], batch_index=bi)
    for f in ("throughput_per_chip", "ttft_s", "tpot_s", "chips", "kv_transfer_s", "concurrency", "feasible"):
        np.testing.assert_array_equal(getattr(one, f), getattr(grid, f), err_msg=f)
    assert one.reason.tolist() == grid.reason.tolist()


def test_needed_workers_are_the_edge_of_saturation(r1_jalapeno):
    model, pricer, prec, wl, _, pre, dec = r1_jalapeno
    bi = np.flatnonzero(dec.feasible)
    for y in DECODE_WORKERS:
        x = prefill_workers_needed(pre, dec, wl, y)[bi]
        at = disaggregated_points(model, pricer, prec, wl, pre, dec, x, np.full(x.shape, y), batch_index=bi)
        assert at.feasible.all()
        low = x > 1
        below = disaggregated_points(model, pricer, prec, wl, pre, dec, x[low] - 1, np.full(low.sum(), y),
                                     batch_index=bi[low])
        assert not below.feasible.any() and all("prefill pool saturated" in r for r in below.reason)


def test_the_sweep_finds_the_best_ratio_above_16(r1_jalapeno):
    """Brute force over 1-400 prefill workers per decode worker at every batch: the sweep's points of this
    layout pair reach the same best throughput per chip, and at the largest batches it needs more than 16."""
    model, pricer, prec, wl, opt, pre, dec = r1_jalapeno
    res = sweep(model, pricer, wl, prec, opt)
    mine = np.array([d.prefill is not None and d.prefill.layout == pre.layout and d.decode.layout == dec.layout
                     and d.decode.workers == 1 for d in res.deployments])[res.dep_index]
    xs = np.arange(1, 401)
    brute = disaggregated_points(model, pricer, prec, wl, pre, dec, xs, np.ones_like(xs))
    tput = np.where(brute.feasible, brute.throughput_per_chip, 0.0).reshape(xs.size, -1)  # (x, batch)
    cols = [j for j in np.unique(dec.batch, return_index=True)[1] if dec.feasible[j]]  # the sweep's batches
    assert len(cols) >= 10
    for j in cols:
        at = mine & (res.points.decode_batch == dec.batch[j]) & res.points.feasible
        assert res.points.throughput_per_chip[at].max() == pytest.approx(tput[:, j].max(), rel=1e-12)
    assert xs[tput[:, cols].argmax(axis=0)].max() > 16  # past the old grid's edge (16 per decode worker)
    assert tput[:, cols].argmax(axis=0).max() < xs.size - 1  # and the brute force's range holds the best
    assert PREFILL_HEADROOM[0] == 0  # the fewest that keep up are always tried


def test_balanced_workers_respect_the_systems_size(r1_jalapeno):
    *_, pre, dec = r1_jalapeno
    wl = get_workload("8k1k")
    x, y, b = balanced_workers(pre, dec, wl, np.arange(dec.batch.shape[0]), None, 200)
    assert x.size and (x * pre.layout.chips + y * dec.layout.chips <= 200).all()
    full, *_ = balanced_workers(pre, dec, wl, np.arange(dec.batch.shape[0]), None, 10**9)
    assert full.size > x.size  # the largest batches' pools are dropped at 200 chips
