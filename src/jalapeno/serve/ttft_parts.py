"""Where a point's mean TTFT goes: front end, prefill, KV hand-off, the first decode step, the rest.

The analytic model builds a request's TTFT (serve/analytic.py aggregated, serve/disagg.py disaggregated) as

    TTFT = front end (a + b·ISL, the engine/client's fixed costs, ``Efficiency.request_overhead_s`` and
           ``prompt_overhead_s_per_token``)
         + prefill (aggregated: the mean prompt's chunk step(s) beside the decode batch, as the steady state
           prices them; disaggregated: the prefill pool's service time of a lone mean prompt)
         + KV transfer (disaggregated only: prefill to decode pool)
         + half a decode step (the first token leaves with the next step; on average half a step away)
         + the rest: waits the closed loop adds — the steady prefill queue, scheduler poll and batch waits,
           attention-DP balancing, and InferenceX's idle-start waves (serve/queueing.py) — taken as
           TTFT minus the parts above, so the parts always add up to the point's TTFT.

A user reading ``predict`` sees which part dominates (e.g. 8xH200 DeepSeek-R1 at concurrency 1: the
0.2 s front end the fitted stack carries is a third of TTFT beside the 8K prompt's prefill).
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.pricer import Pricer, with_pool_backends
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, pool_overlap
from jalapeno.serve.analytic import ServingPoints, _chunk, _prefill_s, frontend_s
from jalapeno.serve.disagg import prefill_perf
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: the parts in the order a request meets them (keys of :func:`ttft_parts`, seconds)
PARTS = ("frontend_s", "prefill_s", "kv_transfer_s", "first_step_s", "queue_and_waits_s")


def ttft_parts(model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, pts: ServingPoints) -> dict:
    """The mean TTFT of each of ``dep``'s points ``pts`` (N,) split into :data:`PARTS` (module docstring),
    arrays (N,) in seconds; they sum to ``pts.ttft_s``. ``pricer``: the one the points were priced with,
    before each pool's engine backends (cost/pricer.with_pool_backends, applied here as serve/point.py does)."""
    kv = dep.precision.kv_cache.name
    ttft = np.asarray(pts.ttft_s, dtype=float)
    front = np.full(ttft.shape, frontend_s(pricer.efficiency, wl.mean_isl))
    half = np.asarray(pts.step_time_s, dtype=float) / 2
    if dep.prefill is not None:
        pre = prefill_perf(model, with_pool_backends(pricer, dep.prefill, model, dep.prefill.layout, kv), dep.prefill.layout, dep.precision, wl, dep.prefill_budget(dep.prefill.layout),
                           pool_overlap(dep.overlap, model, dep.prefill.layout))
        prefill = np.full(ttft.shape, pre.service_s)
        handoff = np.asarray(pts.kv_transfer_s, dtype=float)
    else:
        dec = with_pool_backends(pricer, dep.decode, model, dep.decode.layout, kv)
        prefill, handoff = _agg_prefill_s(model, dec, dep, wl, pts), np.zeros_like(ttft)
    rest = ttft - front - prefill - handoff - half
    return dict(zip(PARTS, (front, prefill, handoff, half, rest)))


def _agg_prefill_s(model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, pts: ServingPoints) -> np.ndarray:
    """The mean prompt's prefill on an aggregated instance at each point's decode batch, as
    serve/analytic.solve_batch prices it: its chunk step carries max(p, chunk) prompt tokens (p the mean
    prefill load per step, capped at the budget) beside the decode batch (none on a prefill-first engine),
    a prompt longer than the budget runs its chunks in turn."""
    lay = dep.decode.layout
    a = dep.mtp.tokens_per_step if dep.mtp else 1.0
    steps = (wl.mean_osl - 1) / a
    b_mb = np.asarray(pts.decode_batch, dtype=float) / lay.pp
    chunk = _chunk(dep, wl.mean_isl)
    p_big = np.minimum(np.maximum(b_mb * wl.mean_isl / steps, chunk), dep.prefill_budget(lay))
    b_pre = np.zeros_like(b_mb) if dep.prefill_steps == "separate" else b_mb
    sc = step_cost(model, pricer, lay, dep.precision,
                   Batch.make(decode_seqs=b_pre, decode_ctx=wl.decode_ctx, prefill_tokens=p_big,
                              prefill_ctx=(wl.mean_isl - chunk) / 2, prefill_seqs=p_big / chunk), dep.mtp,
                   dep.memory_fraction, pool_overlap(dep.overlap, model, lay), dep.memory_profile)
    return _prefill_s(model, pricer, dep, {None: wl.mean_isl}, b_pre, wl.decode_ctx, sc.step_time_s)[None]
