"""Fixed-concurrency solves in lockstep (serve/lockstep.py) change no number.

solve_concurrencies prices the step batches of a layout's serial and two-batch-overlap deployments in
one build (cost/priced.price_layouts) at every pass of the fixed point; each deployment's points must
equal, bit for bit, a solve of its own with no memo (every table built afresh), and the lockstep must
build fewer tables than the solves one at a time. Also: Batch.make's fast path keeps its errors.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import jalapeno.cost.priced as priced_mod
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.batch import Batch
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.errors import SpecError
import jalapeno.serve.lockstep as lockstep_mod
from jalapeno.serve.analytic import (
    aggregated_by_batch,
    running_slots,
    solve_concurrency,
)
from jalapeno.serve.agg_batch_cap import aggregated_batch_cap
from jalapeno.serve.serving_points import ServingPoints, requeue
from jalapeno.serve.lockstep import solve_concurrencies
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

R1 = load_model("deepseek-r1")
CONC = np.array([1.0, 16.0, 64.0, 512.0, 20000.0])  # the last one past every cap: it queues


def _variants(mtp=None):
    opts = SweepOptions(serving="agg", mtp=mtp)
    dep = opts.deployment(get_precision("fp8"), Pool(for_model(Layout(tp=1, dp=8, ep=8), R1)))
    return [dep, dataclasses.replace(dep, overlap="tbo")]


def _bits(p: ServingPoints) -> list:
    out = []
    for f in dataclasses.fields(p):
        v = np.asarray(getattr(p, f.name))
        out.append(v.tolist() if v.dtype == object else (v.dtype.str, v.shape, v.tobytes()))
    return out


def _reference(model, pricer, dep, wl, concurrency) -> ServingPoints:
    """The fixed point as round 24 solved it: 8 passes + 1, one deployment, every pass priced."""
    c_req = np.asarray(concurrency, dtype=float)
    cap, cap_name = aggregated_batch_cap(model, pricer, dep, wl)
    slots = running_slots(dep, dep.decode.layout)
    full = None if slots is None or dep.adp_balance_timeout_iters is None else c_req >= slots - 1e-9

    def at(b):
        if full is not None:
            return aggregated_by_batch(model, pricer, dep, wl, b, full)
        u, inv = np.unique(b, return_inverse=True)
        pts = aggregated_by_batch(model, pricer, dep, wl, u)
        return ServingPoints(**{f.name: getattr(pts, f.name)[inv] for f in dataclasses.fields(pts)})

    b = np.minimum(c_req, max(cap, 1e-9))
    for _ in range(8):
        pts = at(b)
        ratio = np.where(pts.e2e_s > 0, (pts.e2e_s - pts.ttft_s) / pts.e2e_s, 1.0)
        b = np.minimum(np.maximum(c_req * ratio, 1e-12), cap)
    pts = at(b)
    excess = np.maximum(c_req - pts.concurrency, 0.0)
    queued = excess > 1e-6 * np.maximum(c_req, 1)
    wait = np.where(queued & (pts.request_rate_per_s > 0), excess / np.maximum(pts.request_rate_per_s, 1e-30), 0.0)
    return requeue(pts, c_req, wait, cap_name)


def _builds(monkeypatch) -> list:
    calls = []
    real = priced_mod.build_step_ops
    monkeypatch.setattr(priced_mod, "build_step_ops", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


@pytest.mark.parametrize("system", ["gb200-nvl72", "h200"])
def test_lockstep_equals_solving_each_deployment_alone_without_memo(monkeypatch, system):
    pr, wl = load_pricer(system), get_workload("8k1k")
    deps = _variants()
    priced_mod._PRICED.clear()
    calls = _builds(monkeypatch)
    together = solve_concurrencies(R1, pr, deps, wl, CONC)
    n_together = len(calls)
    monkeypatch.setattr(priced_mod, "_PRICED_KEEP", 0)  # no memo: every step builds its own tables
    calls.clear()
    alone = [_reference(R1, pr, d, wl, CONC) for d in deps]
    assert n_together < len(calls)  # one build per pass for both variants, against one each
    for t, a in zip(together, alone):
        assert _bits(t) == _bits(a)
    assert _bits(solve_concurrency(R1, pr, deps[1], wl, CONC)) == _bits(alone[1])


def test_a_deployment_at_its_fixed_point_stops_pricing(monkeypatch):
    pr, wl = load_pricer("gb200-nvl72"), get_workload("8k1k")
    dep = _variants()[0]
    plans = []
    real = lockstep_mod.agg_plan
    monkeypatch.setattr(lockstep_mod, "agg_plan", lambda *a, **k: plans.append(1) or real(*a, **k))
    # past the cap the solve starts at the cap and the first pass returns it: one pass, not nine
    got = solve_concurrencies(R1, pr, [dep], wl, [20000.0])[0]
    assert len(plans) == 1 and got.limit[0].endswith("(queueing)")
    assert _bits(got) == _bits(_reference(R1, pr, dep, wl, [20000.0]))


def test_lockstep_with_mtp_and_a_deployment_of_another_layout():
    from jalapeno.deploy.deployment import MTP

    pr, wl = load_pricer("gb200-nvl72"), get_workload("1k1k")
    deps = _variants(MTP(3, 0.7))
    other = SweepOptions(serving="agg").deployment(get_precision("fp8"), Pool(for_model(Layout(tp=8, ep=8), R1)))
    priced_mod._PRICED.clear()
    together = solve_concurrencies(R1, pr, [*deps, other], wl, CONC)
    priced_mod._PRICED.clear()
    alone = [_reference(R1, pr, d, wl, CONC) for d in [*deps, other]]
    for t, a in zip(together, alone):
        assert _bits(t) == _bits(a)


def test_batch_make_fast_path_keeps_its_arrays_and_errors():
    ds = np.array([1.0, 8.0])
    b = Batch.make(decode_seqs=ds, decode_ctx=1024, prefill_tokens=[0, 512])
    assert b.decode_seqs is ds and b.decode_ctx.tolist() == [1024.0, 1024.0] and b.pad_seqs.tolist() == [0.0, 0.0]
    assert b.prefill_seqs.tolist() == [0.0, 1.0]
    with pytest.raises(SpecError, match="batch.decode_ctx"):
        Batch.make(decode_seqs=ds, decode_ctx=[1.0, float("nan")])
    with pytest.raises(SpecError, match="batch.prefill_tokens"):
        Batch.make(decode_seqs=ds, decode_ctx=1.0, prefill_tokens=-1.0)
    with pytest.raises(SpecError, match="batch.decode_seqs"):
        Batch.make(decode_seqs=[[1.0, 2.0]], decode_ctx=1.0)
    with pytest.raises(SpecError, match="different lengths"):
        Batch.make(decode_seqs=ds, decode_ctx=[1.0, 2.0, 3.0])
