"""The fixed-concurrency solve's passes read times alone (serve/lockstep.py, round 45) and change no number.

A pass before the last needs each deployment's TTFT and E2E alone (its next batch is C·(E2E − TTFT)/E2E),
so it finishes them without the bounds, attribution and memory fit (analytic.agg_head / agg_tail
``times_only``, cost/step.step_times with no attribution in the step and the two-batch overlap); each
deployment's points are finished in full once, at the pass that fixes them or the last. The figures are
checked here against the full path bit for bit (the expected values are the full path's own, computed by
the code paths that were in place before the change), and the count of full finishes against the count
of deployments.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import jalapeno.serve.lockstep as lockstep_mod
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.batch import Batch
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import step_cost, step_times
from jalapeno.deploy.deployment import MTP, Pool
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.serve.analytic import agg_head, agg_plan, agg_points, agg_tail
from jalapeno.serve.lockstep import solve_concurrencies
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

R1 = load_model("deepseek-r1")
FP8 = get_precision("fp8")


def _dep(layout: Layout, **kw):
    dep = SweepOptions(serving="agg").deployment(FP8, Pool(for_model(layout, R1)))
    return dataclasses.replace(dep, **kw)


DEPS = {
    "serial": _dep(Layout(tp=1, dp=8, ep=8)),
    "tbo": _dep(Layout(tp=1, dp=8, ep=8), overlap="tbo"),
    "mtp": _dep(Layout(tp=8, ep=8), mtp=MTP(3, 0.7)),
    "cuda graph ceiling": _dep(Layout(tp=8, ep=8), cuda_graph_max_batch=16),  # the full step (eager steps read kernels)
    "prefill first, polled": _dep(Layout(tp=8, ep=8), prefill_steps="separate", recv_interval=4),
}


@pytest.mark.parametrize("name", list(DEPS))
@pytest.mark.parametrize("wl_name", ["8k1k", "1k1k"])
def test_times_only_head_and_tail_give_the_full_points_ttft_and_e2e_bit_for_bit(name, wl_name):
    pricer, wl, dep = load_pricer("gb200-nvl72"), get_workload(wl_name), DEPS[name]
    plan = agg_plan(R1, pricer, dep, wl, np.array([1.0, 7.5, 64.0, 300.0]))
    full = agg_points(R1, pricer, dep, wl, plan)
    head, long_s = agg_head(R1, pricer, dep, wl, plan, times_only=True)
    ttft, e2e = agg_tail(pricer, dep, wl, plan, head, long_s, times_only=True)
    assert ttft.tobytes() == full.ttft_s.tobytes() and e2e.tobytes() == full.e2e_s.tobytes()
    assert "bound" not in head and "feasible" not in head  # no bounds or memory fit worked out


@pytest.mark.parametrize("system, stack", [("gb200-nvl72", None), ("h200", "vllm")])
@pytest.mark.parametrize("overlap", ["none", "tbo"])
def test_step_times_without_attribution_equal_step_costs(system, stack, overlap):
    """vLLM runs DeepSeek's shared expert on a second stream up to 256 tokens (cost/shared_stream.py): the
    hidden seconds leave the layer time with no shares to rewrite."""
    pricer = load_pricer(system, stack=stack)
    lay = for_model(Layout(tp=1, dp=8, ep=8), R1)
    batch = Batch.make(
        decode_seqs=[8.0, 64.0, 64.0, 200.0],
        decode_ctx=9000.0,
        prefill_tokens=[0.0, 0.0, 4096.0, 0.0],
        prefill_ctx=[0.0, 0.0, 2048.0, 0.0],
    )
    sc = step_cost(R1, pricer, lay, FP8, batch, overlap=overlap)
    t, i = step_times(R1, pricer, lay, FP8, batch, overlap=overlap)
    assert t.tobytes() == sc.step_time_s.tobytes() and i.tobytes() == sc.interval_s.tobytes()


def test_each_deployment_is_finished_in_full_once(monkeypatch):
    """Three deployments over nine passes: three full finishes (one each, at the pass that fixes it or the
    last), not one a pass; the times-only passes price the same batches."""
    pricer, wl = load_pricer("gb200-nvl72"), get_workload("8k1k")
    deps = [DEPS["serial"], DEPS["tbo"], DEPS["mtp"]]
    finishes, heads = [], []
    real_points, real_head = lockstep_mod.agg_points, lockstep_mod.agg_head
    monkeypatch.setattr(lockstep_mod, "agg_points", lambda *a, **k: finishes.append(a[2]) or real_points(*a, **k))
    monkeypatch.setattr(lockstep_mod, "agg_head", lambda *a, **k: heads.append(a[2]) or real_head(*a, **k))
    conc = np.array([1.0, 16.0, 64.0, 512.0])
    got = solve_concurrencies(R1, pricer, deps, wl, conc)
    assert sorted(map(id, finishes)) == sorted(map(id, deps))  # each once
    assert len(heads) > len(deps)  # the passes before: times alone
    assert all(len(p) == 4 and p.bound.dtype == object for p in got)
