"""InferenceX's idle start priced on a deployment's steady points (serve/point.serve_at_concurrency,
``idle_start``; docs/model.md §8.7, effects 3 and 6): the first wave of C users on one aggregated instance
(:func:`_agg_idle_start`: its steps' prefill line :func:`_linear_prefill`; with fixed lengths the recurring waves,
:func:`_fixed_cycle`) or on the prefill pool (:func:`_disagg_idle_start`), as the run's TTFT (mean and tail) and the
first-wave times the run's drain reads (serve/point._drain_e2e).

Split from serve/point.py (round 50, module budget), which imports these names back (``serve/point._agg_idle_start``
and the others resolve there as before).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.step import Batch, pool_step_cost
from jalapeno.deploy.deployment import Deployment
from jalapeno.serve.analytic import frontend_s
from jalapeno.serve.serving_points import QUANTILES, ServingPoints
from jalapeno.serve.disagg import PrefillPerf
from jalapeno.serve.handshake import handshake_s
from jalapeno.serve.later_waves import with_later_waves
from jalapeno.serve.limits import decode_step_s, floored_steps, prompt_floor_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.queueing import first_wave_s, fixed_cycle_s, locked_cycle_s, run_of_waves
from jalapeno.serve.queueing import idle_start as idle_start_ttft
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload


def _linear_prefill(
    model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, layout, decode_seqs, budget: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t0, σ, fill) of a step costing t0 + σ·p for p prefill tokens beside ``decode_seqs`` (N,) at
    context ISL, from the step cost at p = budget and budget/4 (intervals; at least one token, and
    two when the budget is one token: a one-token budget, ``max_tokens_per_step`` 1, priced the
    same step twice and σ = 0/0 made every mean TTFT NaN); fill = latency − interval of the full
    step (the PP pipeline's fill, paid once per wave). An eager TensorRT-LLM prompt step's host floor
    (serve/limits.prompt_floor_s, beside ``decode_seqs`` decoding) floors the full step: t0 rises to floor − σ·budget."""
    chunk = min(wl.mean_isl, budget)
    n = np.shape(decode_seqs)[0]
    low = max(budget / 4, 1.0)
    p = np.array([budget, low if low < budget else budget + 1.0])
    sc = pool_step_cost(
        model,
        pricer,
        dep,
        layout,
        Batch.make(
            decode_seqs=np.repeat(np.asarray(decode_seqs, dtype=float), 2),
            decode_ctx=wl.mean_isl,
            prefill_tokens=np.tile(p, n),
            prefill_ctx=(wl.mean_isl - chunk) / 2,
            prefill_seqs=np.tile(p, n) / chunk,
        ),
    )
    t = sc.interval_s.reshape(n, 2)
    sigma = np.maximum((t[:, 0] - t[:, 1]) / (p[0] - p[1]), 0.0)
    fill = np.maximum(sc.step_time_s.reshape(n, 2)[:, 0] - t[:, 0], 0.0)
    full = floored_steps(t[:, 0], decode_seqs, np.full(n, p[0]), prompt_floor_s(model, dep, pricer=pricer))
    return np.maximum(full - sigma * budget, 0.0), sigma, fill


def _with_ttft(pts: ServingPoints, new: dict) -> ServingPoints:
    """``pts`` with TTFT by key (None = mean, else quantile) replaced; E2E moves by the same amount."""
    d = {}
    for key, v in new.items():
        tag = "" if key is None else f"_p{int(key * 100)}"
        delta = v - getattr(pts, f"ttft{tag}_s")
        d[f"ttft{tag}_s"] = v
        d[f"e2e{tag}_s"] = getattr(pts, f"e2e{tag}_s") + delta
    return dataclasses.replace(pts, **d)


def _ttft_by_key(pts: ServingPoints) -> dict:
    return {None: pts.ttft_s, **{q: getattr(pts, f"ttft_p{int(q * 100)}_s") for q in QUANTILES}}


def _agg_idle_start(
    model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, pts: ServingPoints, users, recurring: bool = False
) -> tuple[ServingPoints, list]:
    """(run points, first-wave first-token times per point, s) of InferenceX's idle start on one aggregated instance with ``users`` (N,) (serve/queueing.py,
    effect 3): the wave's steps carry the budget beside the half of it already decoding (alone on a
    prefill-first engine), weighed by ``efficiency.agg_burst_fraction`` (None: one wave in R,
    serve/queueing.idle_start) and the engine's one-off first-wave stall (``efficiency.first_wave_stall_s``)
    on one wave in R; with ``recurring`` and fixed lengths (no MTP) the other waves repeat it (effect 6)."""
    lay = dep.decode.layout
    budget = float(dep.prefill_budget(lay))
    n = np.maximum(np.asarray(users, dtype=float), 1.0)
    # a prefill-first engine's wave steps carry the prompts alone (Deployment.prefill_steps)
    beside = np.zeros_like(n) if dep.prefill_steps == "separate" else np.minimum(n / 2, pts.decode_batch) / lay.pp
    t0, sigma, fill = _linear_prefill(model, pricer, dep, wl, lay, beside, budget)
    waves = first_wave_s(n, wl.mean_isl, budget, t0, sigma)
    extra = fill + frontend_s(pricer.efficiency, wl.mean_isl)
    stall = pricer.efficiency.first_wave_stall_s
    out = idle_start_ttft(_ttft_by_key(pts), waves, extra, pricer.efficiency.agg_burst_fraction, stall)
    out = with_later_waves(model, pricer, dep, wl, pts, users, [t + stall for t in waves], extra, out)  # off: out
    if recurring and wl.range_ratio >= 1 and dep.mtp is None:  # fixed lengths: the waves recur (effect 6)
        out = _fixed_cycle(
            model, pricer, dep, wl, pts, users, (t0, sigma, fill), [t + stall for t in waves], extra, out
        )
    return _with_ttft(pts, out), waves


def _fixed_cycle(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    pts: ServingPoints,
    users,
    line: tuple,
    waves: list,
    extra,
    out: dict,
) -> dict:
    """TTFT by key of a fixed-length run: its first wave and R − 1 recurring ones (serve/queueing.py,
    effect 6), for the ``users`` (N,) of each instance admitted at once (the rest queue for a slot,
    ``pts.queue_s``); points whose engine is prefill-bound keep ``out`` (effect 1 and the first wave).

    The decode-only steps of the window between two waves are priced at the batch still decoding
    (CUDA-graph ceiling applied, serve/limits.py) at the end of the requests' lives, context ISL + OSL:
    serve/open_loop.decode_pool_step (``pricer`` already carries the pool's backends;
    cost/pool_backends.with_pool_backends
    returns it unchanged).
    """
    lay = dep.decode.layout
    t0, sigma, fill = line
    admitted = np.maximum(np.asarray(users, dtype=float) - pts.queue_s * pts.request_rate_per_s, 1.0)
    n = np.maximum(np.rint(admitted), 1).astype(int)
    grids = [
        np.unique(np.maximum(np.rint(k * np.array([1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1.0])), 1.0)) for k in n.tolist()
    ]
    flat = np.concatenate(grids)
    sc = decode_pool_step(model, pricer, dep, wl.mean_isl + wl.mean_osl, flat)
    td_flat = decode_step_s(sc, pricer.efficiency, dep, flat, lay)
    bounds = np.cumsum([0] + [g.size for g in grids])

    def decode_at(i: int, batch: np.ndarray) -> np.ndarray:
        return np.interp(batch, grids[i], td_flat[bounds[i] : bounds[i + 1]])

    front = frontend_s(pricer.efficiency, wl.mean_isl)
    cycles = fixed_cycle_s(
        n,
        wl.mean_isl,
        float(dep.prefill_budget(lay)),
        int(round(wl.mean_osl)) - 1,
        front,
        t0,
        sigma,
        decode_at,
        dep.recv_interval,
    )
    extra = np.broadcast_to(np.asarray(extra, dtype=float), n.shape)
    res = {k: np.array(v, dtype=float) for k, v in out.items()}
    for i, cyc in enumerate(cycles):
        if cyc is None:
            continue
        run = run_of_waves(waves[i], cyc + fill[i], float(extra[i]))
        for key in res:
            res[key][i] = run[key] + pts.queue_s[i]
    return res


def _disagg_idle_start(
    pricer: Pricer, dep: Deployment, wl: Workload, pts: ServingPoints, users, pre: PrefillPerf, recurring: bool = False
) -> tuple[ServingPoints, list]:
    """(run points, first-wave first-token times per point, s) of InferenceX's idle start on the prefill pool: each of its x workers takes users/x (N,) of the
    first wave at once, in steps of t0 + σ·p (``pre``); the KV hand-off, half a decode step and the
    engine's prebuilt step (serve/handshake.py) follow each prompt; the run's mean adds the share ``efficiency.prefill_burst_fraction`` of the
    wave's excess (None: one wave in R, serve/queueing.idle_start) and the engine's one-off first-wave
    stall (``efficiency.first_wave_stall_s``) on one wave in R. With ``recurring`` and fixed lengths (no MTP) the other R − 1 waves are
    the locked cycle (serve/queueing.py effect 6, :func:`~jalapeno.serve.queueing.locked_cycle_s`)
    where a worker's wave is shorter than the decode ((OSL − 1)·τ_d); elsewhere the steady queue."""
    budget = float(dep.prefill_budget(dep.prefill.layout))
    n = np.maximum(np.asarray(users, dtype=float) / dep.prefill.workers, 1.0)
    waves = first_wave_s(n, wl.mean_isl, budget, pre.step0_s, pre.per_token_s)
    extra = pre.fill_s + frontend_s(pricer.efficiency, wl.mean_isl) + pts.kv_transfer_s + pts.step_time_s / 2
    # the engine's decode-loop handshake (serve/handshake.py): its prebuilt step; a wave's prompts queue
    # far longer than the decode worker's pre-allocation poll, which the queue hides (W = inf)
    extra = extra + handshake_s(pricer.efficiency.disagg_handshake, pts.step_time_s, np.inf)
    stall = pricer.efficiency.first_wave_stall_s
    out = idle_start_ttft(_ttft_by_key(pts), waves, extra, pricer.efficiency.prefill_burst_fraction, stall)
    if recurring and wl.range_ratio >= 1 and dep.mtp is None:
        admitted = np.maximum(n - pts.queue_s * pts.request_rate_per_s / dep.prefill.workers, 1.0)
        cycles = locked_cycle_s(admitted, wl.mean_isl, budget, pre.step0_s, pre.per_token_s)
        wave_s = np.array(
            [
                pre.step0_s * np.ceil(k * wl.mean_isl / budget) + pre.per_token_s * k * wl.mean_isl
                for k in np.rint(admitted)
            ]
        )
        for i, cyc in enumerate(cycles):
            if wave_s[i] >= (wl.mean_osl - 1) * pts.step_time_s[i]:
                continue  # the worker never idles between waves: the steady queue holds
            run = run_of_waves(waves[i] + stall, cyc + extra[i], float(extra[i]))
            for key in out:
                out[key][i] = run[key] + pts.queue_s[i]
    return _with_ttft(pts, out), waves
