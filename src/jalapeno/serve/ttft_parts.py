"""Where a point's mean TTFT goes: front end, prefill, KV hand-off, the first decode step, the rest.

The analytic model builds a request's TTFT (serve/analytic.py aggregated, serve/disagg.py disaggregated) as

    TTFT = front end (a + b·ISL, the engine/client's fixed costs, ``Efficiency.request_overhead_s`` and
           ``prompt_overhead_s_per_token``)
         + prefill (aggregated: the mean prompt's chunk step(s) beside the decode batch, as the steady state
           prices them, or less where the TTFT holds less (below); disaggregated: the prefill pool's
           service time of a lone mean prompt)
         + KV transfer (disaggregated only: prefill to decode pool)
         + half a decode step (the first token leaves with the next step; on average half a step away;
           disaggregated on an engine with a decode-loop handshake, serve/handshake.py, plus its prebuilt
           step — its pre-allocation poll's residual is a wait, below;
           less, down to none, where the TTFT holds less: a user that starts on an idle engine, as
           recurring waves at C = 1 do, waits for no step in flight and its prompt is prefilled alone)
         + the rest: waits the closed loop adds — the steady prefill queue, scheduler poll and batch waits,
           attention-DP balancing, InferenceX's idle-start waves (serve/queueing.py) and SGLang's
           pre-allocation poll past the prefill queue (serve/handshake.py), a round-robin front end's wait
           for a slot on a full decode worker (serve/rr_wait.py) — taken as TTFT minus the
           parts above, so the parts always add up to the point's TTFT.

A user reading ``predict`` sees which part dominates (e.g. 8xH200 DeepSeek-R1 at concurrency 1: the
0.2 s front end the fitted stack carries is a third of TTFT beside the 8K prompt's prefill).
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.deploy.deployment import Deployment
from jalapeno.serve.analytic import frontend_s, mean_prompt_prefill_s
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.serve.disagg import pool_prefill_perf
from jalapeno.serve.handshake import handshake_s
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: the parts in the order a request meets them (keys of :func:`ttft_parts`, seconds)
PARTS = ("frontend_s", "prefill_s", "kv_transfer_s", "first_step_s", "queue_and_waits_s")


def ttft_parts(model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, pts: ServingPoints) -> dict:
    """The mean TTFT of each of ``dep``'s points ``pts`` (N,) split into :data:`PARTS` (module docstring),
    arrays (N,) in seconds; they sum to ``pts.ttft_s``. ``pricer``: the one the points were priced with,
    before each pool's engine backends (applied here as serve/point.py does)."""
    ttft = np.asarray(pts.ttft_s, dtype=float)
    front = np.full(ttft.shape, frontend_s(pricer.efficiency, wl.mean_isl))
    half = np.asarray(pts.step_time_s, dtype=float) / 2
    if dep.prefill is not None:
        prefill = np.full(ttft.shape, pool_prefill_perf(model, pricer, dep, wl).service_s)
        handoff = np.asarray(pts.kv_transfer_s, dtype=float)
        half = half + handshake_s(pricer.efficiency.disagg_handshake, 2 * half, np.inf)  # its prebuilt step
    else:
        dec = with_pool_backends(pricer, dep.decode, model, dep.decode.layout, dep.precision.kv_cache.name)
        # the instance's own concurrency, λ·E2E before a queue outside it (serve/batch_wait.BUNCH_CONCURRENCY_ON)
        users = (
            np.asarray(pts.concurrency) - np.asarray(pts.request_rate_per_s) * np.asarray(pts.queue_s)
        ) / dep.decode.workers
        prefill, handoff = mean_prompt_prefill_s(model, dec, dep, wl, pts.decode_batch, users), np.zeros_like(ttft)
    rest = ttft - front - prefill - handoff - half
    # a request that finds no step in flight waits for none: with recurring waves at C = 1 each user
    # starts on an idle engine, its TTFT holds no half step and its prompt is prefilled alone (not
    # beside a decode batch), which left the waits negative ("queue, batch and wave waits -4.7 ms");
    # the shortfall comes out of the half step, then the prefill; a rounding residue is no wait either
    short = np.minimum(rest, 0.0)
    cut = np.maximum(short, -half)
    half, prefill = half + cut, np.maximum(prefill + short - cut, 0.0)
    rest = ttft - front - prefill - handoff - half
    rest = np.where(np.abs(rest) <= 1e-9 * np.abs(ttft), 0.0, rest)
    return dict(zip(PARTS, (front, prefill, handoff, half, rest)))
