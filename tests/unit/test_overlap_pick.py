"""serve/overlap_pick.faster_by_point changes no number (round 37, speed37).

It prices a layout's serial and two-batch-overlap variants on their decode steps first, picks the faster at
each batch, and prices the long prompts' chunk steps only for the variant kept there. Its points must equal,
bit for bit, what the sweep did before: both variants' aggregated_by_batch on the whole grid (the chunk steps
joined with the step kinds in one call), each distinct clipped batch once, the faster variant's points kept.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jalapeno.analysis.sweep import DEFAULT_BATCHES, SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import MTP, Pool
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.serve.overlap_pick import faster_by_point
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

R1 = load_model("deepseek-r1")


def _joined_way(pricer, variants, wl, batches) -> list[tuple]:
    """The sweep's selection before round 37: every variant's points from one joined call each (tables built
    afresh: the memo off)."""
    import jalapeno.cost.priced as priced_mod

    keep, priced_mod._PRICED_KEEP = priced_mod._PRICED_KEEP, 0
    try:
        sets = [aggregated_by_batch(R1, pricer, d, wl, batches) for d in variants]
    finally:
        priced_mod._PRICED_KEEP = keep
    _, first = np.unique(sets[0].decode_batch, return_index=True)
    off, on = (p.take(np.sort(first)) for p in sets)
    use = on.feasible & (~off.feasible | (on.throughput_per_chip > off.throughput_per_chip))
    return [(d, p.take(np.flatnonzero(sel))) for d, p, sel in ((variants[0], off, ~use), (variants[1], on, use))
            if sel.any()]


@pytest.mark.parametrize("system, layout, workload, mtp", [
    ("gb200-nvl72", Layout(tp=1, dp=16, ep=16), "32k1k", None),  # 1,024-token budget a rank: 32 chunks a prompt
    ("jalapeno", Layout(tp=1, dp=8, ep=8), "8k1k", MTP(1, 0.8)),  # both variants kept (8 serial, 3 overlap)
    ("gb300-nvl72", Layout(tp=1, dp=8, ep=8), "1k1k", None),  # no prompt over the budget: no chunk rows
])
@pytest.mark.parametrize("split_min", [0, 10**9])  # chunk steps priced apart for the kept variant, or joined
def test_faster_by_point_is_bitwise_the_joined_sweep(system, layout, workload, mtp, split_min, monkeypatch):
    import jalapeno.serve.overlap_pick as pick_mod

    monkeypatch.setattr(pick_mod, "SPLIT_MIN_CHUNK_STEPS", split_min)
    pricer, wl = load_pricer(system), get_workload(workload)
    dep = SweepOptions(serving="agg", mtp=mtp).deployment(get_precision("fp8"), Pool(for_model(layout, R1)))
    variants = [dep, dataclasses.replace(dep, overlap="tbo")]
    batches = np.asarray(DEFAULT_BATCHES)
    got, want = faster_by_point(R1, pricer, variants, wl, batches), _joined_way(pricer, variants, wl, batches)
    assert [d for d, _ in got] == [d for d, _ in want]
    assert sum(len(p) for _, p in got) == np.unique(want[0][1].decode_batch.tolist() + (
        want[1][1].decode_batch.tolist() if len(want) > 1 else [])).size
    for (_, g), (_, w) in zip(got, want):
        for f in dataclasses.fields(ServingPoints):
            a, b = getattr(g, f.name), getattr(w, f.name)
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), f.name  # bitwise: floats compared exactly


def test_a_serial_step_prices_no_halves_and_the_overlap_step_adds_them_bitwise(monkeypatch):
    """step_cost prices the two-batch-overlap halves only under overlap (round 37); the overlap step that follows
    a serial one on the same batch prices the halves alone. Both steps equal, bit for bit, steps priced as before
    round 37 with the memo off (every table from one joined build of the batch and its halves)."""
    import jalapeno.cost.priced as priced_mod
    import jalapeno.cost.step as step_mod
    from jalapeno.cost.batch import Batch
    from jalapeno.cost.step import step_cost

    pricer, lay, fp8 = load_pricer("gb200-nvl72"), for_model(Layout(tp=1, dp=16, ep=16), R1), get_precision("fp8")
    batch = Batch.make(decode_seqs=[64.0, 512.0, 512.0], decode_ctx=8000.0, prefill_tokens=[0.0, 0.0, 1024.0],
                       prefill_ctx=[0.0, 0.0, 3000.0])
    keep = priced_mod._PRICED_KEEP
    try:
        priced_mod._PRICED_KEEP = 0
        with monkeypatch.context() as m:  # the halves asked for on every EP layout, as before round 37
            m.setattr(step_mod, "priced_tables", lambda *a: priced_mod.priced_tables(*a[:6], True))
            want = [step_cost(R1, pricer, lay, fp8, batch, overlap=ov) for ov in ("none", "tbo")]
        priced_mod._PRICED_KEEP = keep
        priced_mod._PRICED.clear()
        serial = step_cost(R1, pricer, lay, fp8, batch, overlap="none")
        assert len(priced_mod._PRICED) == 1  # the batch's tables, no halves
        overlapped = step_cost(R1, pricer, lay, fp8, batch, overlap="tbo")
        assert len(priced_mod._PRICED) == 2  # and now its halves
    finally:
        priced_mod._PRICED_KEEP = keep
        priced_mod._PRICED.clear()
    for got, w in zip((serial, overlapped), want):
        for f in ("step_time_s", "interval_s", "bound_margin", "coll_time_s"):
            assert getattr(got, f).tolist() == getattr(w, f).tolist(), f
        assert got.bound.tolist() == w.bound.tolist()
        assert (got.hidden_comm_s is None) == (w.hidden_comm_s is None)
        if w.hidden_comm_s is not None:
            assert got.hidden_comm_s.tolist() == w.hidden_comm_s.tolist()


@pytest.mark.parametrize("overlap, mtp", [("none", None), ("tbo", None), ("none", MTP(1, 0.8))])
def test_step_times_are_step_costs_step_time_and_interval(overlap, mtp):
    """cost/step.step_times gives step_cost's step time and interval bit for bit (a repeated point included:
    the distinct points' figures indexed back), without the bounds and memory fit."""
    from jalapeno.cost.batch import Batch
    from jalapeno.cost.step import step_cost, step_times

    pricer, lay, fp8 = load_pricer("gb300-nvl72"), for_model(Layout(tp=1, dp=8, ep=8), R1), get_precision("fp8")
    batch = Batch.make(decode_seqs=[8.0, 256.0, 8.0, 256.0], decode_ctx=131000.0, prefill_tokens=[2048.0, 2048.0, 2048.0, 0.0],
                       prefill_ctx=[0.0, 65536.0, 0.0, 0.0])
    sc = step_cost(R1, pricer, lay, fp8, batch, mtp, overlap=overlap)
    t, i = step_times(R1, pricer, lay, fp8, batch, mtp, overlap=overlap)
    assert t.tolist() == sc.step_time_s.tolist() and i.tolist() == sc.interval_s.tolist()
    assert t.shape == (4,) and t[0] == t[2]


def test_a_lockstep_pass_prices_halves_for_the_overlap_deployments_alone():
    """serve/lockstep's pass prices the two-batch-overlap halves of the overlap deployment's batch only (round 37):
    the serial deployment's batch is handed over without them, the overlap one's with them."""
    import jalapeno.cost.priced as priced_mod
    from jalapeno.cost.batch import Batch
    from jalapeno.serve.lockstep import _price_shared

    pricer = load_pricer("gb200-nvl72")
    dep = SweepOptions(serving="agg").deployment(get_precision("fp8"), Pool(for_model(Layout(tp=1, dp=16, ep=16), R1)))
    deps = [dep, dataclasses.replace(dep, overlap="tbo")]
    batches = [Batch.make(decode_seqs=[64.0, 512.0], decode_ctx=8000.0, prefill_tokens=[0.0, 1024.0]),
               Batch.make(decode_seqs=[32.0, 256.0], decode_ctx=8000.0, prefill_tokens=[0.0, 1024.0])]
    try:
        _price_shared(R1, pricer, deps, batches)
        serial, overlapped = (priced_mod._HANDOFF[id(b.distinct()[0])] for b in batches)
        assert serial[4][2] is False and serial[5][1] is None
        assert overlapped[4][2] is True and overlapped[5][1] is not None
    finally:
        priced_mod.price_layouts(R1, pricer, [])


@pytest.mark.parametrize("system, stack, layout, workload, opts", [
    # TensorRT-LLM: eager prompt floor (24 µs a host call, fit/trt_prompt_graphs) on an attention-DP MoE layout whose
    # pricer runs the NVLink all-to-all (the floor counts that path's calls only with the pricer: 6db2046), MTP
    ("gb200-nvl72", "trtllm", Layout(tp=1, dp=16, ep=16), "128k1k", dict(mtp=MTP(1, 0.8), eager_prompt_call_s=24e-6)),
    # a scheduler polling every 4 steps, an engine running-request cap and a rank-counted budget (SGLang-like)
    ("b200", "sglang", Layout(tp=1, dp=8, ep=8), "128k1k", dict(recv_interval=4, max_running=128, budget_per="rank")),
    # prompts in [0.25 L, L] (each length quantile its own chunk plan), TP2 attention ranks
    ("gb300-nvl72", None, Layout(tp=2, dp=16, ep=32), ("128k1k", 0.25), {}),
])
@pytest.mark.parametrize("split_min", [0, 10**9])
def test_faster_by_point_is_bitwise_the_joined_sweep_on_engine_deployments(system, stack, layout, workload, opts,
                                                                           split_min, monkeypatch):
    """More kinds of deployment than the test above (review37b): both routes of faster_by_point (chunk steps priced
    apart for the kept variant, or joined) equal, bit for bit, both variants' aggregated_by_batch with the memo off."""
    import jalapeno.serve.overlap_pick as pick_mod
    from jalapeno.serve.limits import prompt_floor_s

    monkeypatch.setattr(pick_mod, "SPLIT_MIN_CHUNK_STEPS", split_min)
    pricer = load_pricer(system, stack=stack)
    wl = get_workload(workload) if isinstance(workload, str) else dataclasses.replace(get_workload(workload[0]),
                                                                                       range_ratio=workload[1])
    dep = SweepOptions(serving="agg", **opts).deployment(get_precision("fp8"), Pool(for_model(layout, R1)))
    variants = [dep, dataclasses.replace(dep, overlap="tbo")]
    if dep.eager_prompt_call_s:  # the case the pricer decides: without it the floor counts another exchange
        assert prompt_floor_s(R1, dep, pricer=pricer) != prompt_floor_s(R1, dep)
    batches = np.asarray(DEFAULT_BATCHES)
    got, want = faster_by_point(R1, pricer, variants, wl, batches), _joined_way(pricer, variants, wl, batches)
    assert [d for d, _ in got] == [d for d, _ in want]
    for (_, g), (_, w) in zip(got, want):
        for f in dataclasses.fields(ServingPoints):
            a, b = getattr(g, f.name), getattr(w, f.name)
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), f.name

