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


def _full_every_pass(model, pricer, deps, wl, conc, iterations=8):
    """The solve as it ran before round 45, written out here as the reference: every pass finishes every
    unfixed deployment's points in full (analytic.agg_points through lockstep._at_unique_batches) and reads its
    next batch C·(E2E − TTFT)/E2E from them; the excess past the cap queues (analytic.requeue) as in
    solve_concurrencies."""
    from jalapeno.cost.priced import price_layouts
    from jalapeno.serve.admission_waits import running_slots
    from jalapeno.serve.agg_batch_cap import aggregated_batch_cap
    from jalapeno.serve.serving_points import requeue

    c_req = np.asarray(conc, dtype=float)
    caps = [aggregated_batch_cap(model, pricer, d, wl) for d in deps]
    fulls = []
    for d in deps:
        slots = running_slots(d, d.decode.layout)
        fulls.append(None if slots is None or d.adp_balance_timeout_iters is None else c_req >= slots - 1e-9)
    bs = [np.minimum(c_req, max(cap, 1e-9)) for cap, _ in caps]
    pts, fixed = [None] * len(deps), [False] * len(deps)
    for it in range(iterations + 1):
        todo = [i for i, f in enumerate(fixed) if not f]
        got = lockstep_mod._at_unique_batches(
            model,
            pricer,
            [deps[i] for i in todo],
            wl,
            [bs[i] for i in todo],
            [fulls[i] for i in todo],
            [caps[i] for i in todo],
            False,
        )
        for i, p in zip(todo, got):
            pts[i] = p
            if it < iterations:
                ratio = np.where(p.e2e_s > 0, (p.e2e_s - p.ttft_s) / p.e2e_s, 1.0)
                b = np.minimum(np.maximum(c_req * ratio, 1e-12), caps[i][0])
                fixed[i], bs[i] = b.tobytes() == bs[i].tobytes(), b
    price_layouts(model, pricer, [])
    out = []
    for p, (_, cap_name) in zip(pts, caps):
        excess = np.maximum(c_req - p.concurrency, 0.0)
        queued = excess > 1e-6 * np.maximum(c_req, 1)
        wait = np.where(queued & (p.request_rate_per_s > 0), excess / np.maximum(p.request_rate_per_s, 1e-30), 0.0)
        out.append(requeue(p, c_req, wait, cap_name))
    return out


#: the deployments whose TTFT reads what the times-only passes must carry beside the step: a PP2 instance (the
#: micro-batch split, captured graphs), TensorRT-LLM's attention-DP balancing gate (``slots_full``) and batch
#: waiting, an eager prompt host floor under a CUDA-graph ceiling, and (on the SGLang profile) the overlap loop's
#: admission lag with its P(busy) (serve/overlap_loop.lag_steps: 1 at pp 1 without MTP)
WIDE = {
    "pp2 graphs": _dep(Layout(tp=4, pp=2, ep=4), cuda_graph_batch_sizes=(1, 2, 4, 8, 16, 32, 64, 128)),
    "adp balance": _dep(Layout(tp=1, dp=8, ep=8), adp_balance_timeout_iters=50, max_running=64),
    "batch wait": _dep(Layout(tp=8, ep=8), batch_wait_timeout_iters=40, batch_wait_max_tokens_ratio=0.5),
    "eager prompt": _dep(Layout(tp=8, ep=8), eager_prompt_call_s=2e-4, cuda_graph_max_batch=64),
    "tbo mtp": _dep(Layout(tp=1, dp=8, ep=8), overlap="tbo", mtp=MTP(2, 0.8)),
}


@pytest.mark.parametrize("system, stack", [("gb200-nvl72", "trtllm"), ("h200", "sglang")])
def test_solve_gives_the_points_of_full_passes_bit_for_bit(system, stack):
    """Every field of every point of the round-45 solve equals the pre-round-45 solve's (full points every pass),
    over deployments whose TTFT reads the PP split, the attention-DP gate, batch waiting, the eager prompt floor
    and the admission lag; concurrencies from 1 past every cap (4,096) so some points queue."""
    from jalapeno.serve.overlap_loop import lag_steps

    pricer, wl = load_pricer(system, stack=stack), get_workload("8k1k")
    deps = list(WIDE.values())
    if stack == "sglang":  # the P(busy) path is exercised
        assert lag_steps(pricer.efficiency, WIDE["adp balance"], WIDE["adp balance"].decode.layout) == 1
    conc = np.array([1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0])
    new = solve_concurrencies(R1, pricer, deps, wl, conc)
    ref = _full_every_pass(R1, pricer, deps, wl, conc)
    for name, a, b in zip(WIDE, new, ref):
        for f in dataclasses.fields(a):
            va, vb = np.asarray(getattr(a, f.name)), np.asarray(getattr(b, f.name))
            assert va.tolist() == vb.tolist(), (name, f.name)
