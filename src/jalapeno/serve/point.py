"""Serve a given deployment at given closed-loop concurrencies (aggregated or disaggregated)."""

from __future__ import annotations

import dataclasses

import numpy as np

from jalapeno.deploy.deployment import Deployment
from jalapeno.serve.analytic import ServingPoints, requeue, solve_concurrency
from jalapeno.serve.disagg import MAX_PREFILL_UTILISATION, decode_curve, disaggregated_points, prefill_perf
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

_GRID = np.geomspace(1.0 / 64, 65536.0, 145)


def serve_at_concurrency(model: ModelSpec, system: System, dep: Deployment, wl: Workload, concurrency,
                         eff: Efficiency | None = None) -> ServingPoints:
    """Points of ``dep`` at each requested concurrency (N,) — the whole deployment's concurrency.

    Aggregated: Little's-law fixed point (serve/analytic.py). Disaggregated: C(B) is evaluated on
    a geometric grid of decode batches per decode instance (1/64 ... 65536, ratio 1.12), inverted by
    log-log interpolation, and the point re-evaluated exactly at the interpolated batch; beyond
    the decode KV capacity, or beyond the batch at which the prefill pool reaches
    MAX_PREFILL_UTILISATION (serve/disagg.py), the excess users queue for admission: throughput
    stays flat and TTFT grows (limit ``kv_capacity`` / ``prefill_capacity`` "(queueing)").
    """
    c_req = np.atleast_1d(np.asarray(concurrency, dtype=float))
    if dep.prefill is None:
        # ``workers`` identical aggregated instances share the load evenly
        w = dep.decode.workers
        pts = solve_concurrency(model, system, dep, wl, c_req / w, eff)
        if w == 1:
            return pts
        return dataclasses.replace(pts, concurrency=pts.concurrency * w,
                                   request_rate_per_s=pts.request_rate_per_s * w,
                                   chips=pts.chips * w)
    pre = prefill_perf(model, system, dep.prefill.layout, dep.precision, wl, dep.token_budget, eff)
    x, y = np.array([dep.prefill.workers]), np.array([dep.decode.workers])
    grid = decode_curve(model, system, dep.decode.layout, dep.precision, wl, _GRID, dep.mtp, eff)
    gp = disaggregated_points(model, system, dep.precision, wl, pre, grid, x, y, dep.mtp, eff)
    _, first = np.unique(grid.batch, return_index=True)
    first = np.sort(first)
    cs, bs = gp.concurrency[first], grid.batch[first]
    # the prefill pool caps the request rate: decode batches that would need more than
    # MAX_PREFILL_UTILISATION of it are not steady states; users beyond the last one queue
    rho = gp.request_rate_per_s[first] * wl.mean_isl / (dep.prefill.workers * pre.tokens_per_s)
    pos = (cs > 0) & (rho < MAX_PREFILL_UTILISATION)
    cap_name = "prefill_capacity" if ((cs > 0) & ~pos).any() else "kv_capacity"
    cs, bs = (cs[pos], bs[pos]) if pos.any() else (np.array([1.0]), np.array([1.0 / 64]))
    order = np.argsort(cs)
    b = np.exp(np.interp(np.log(c_req), np.log(cs[order]), np.log(bs[order])))
    dec = decode_curve(model, system, dep.decode.layout, dep.precision, wl, b, dep.mtp, eff)
    pts = disaggregated_points(model, system, dep.precision, wl, pre, dec, x, y, dep.mtp, eff)
    excess = np.maximum(c_req - pts.concurrency, 0.0)
    queued = excess > 1e-3 * c_req
    wait = np.where(queued & (pts.request_rate_per_s > 0),
                    excess / np.maximum(pts.request_rate_per_s, 1e-30), 0.0)
    limit = "kv_capacity" if cap_name == "prefill_capacity" and (b >= dec.cap).all() else cap_name
    return requeue(pts, c_req, wait, limit)


def serve_at_rate(model: ModelSpec, system: System, dep: Deployment, wl: Workload, rate_per_s,
                  eff: Efficiency | None = None) -> ServingPoints:
    """Open loop: points of ``dep`` at request rates (N,) requests/s, the whole deployment's.

    In steady state the rate fixes the decode batch through λ = B/(D·τ(B)) (monotone in B), so
    λ(B) is evaluated on a geometric grid of decode batches, inverted by log-log interpolation and
    the point re-evaluated there; the concurrency is then λ·E2E (Little). A rate above what the
    deployment sustains at its batch cap is overloaded: the point is marked infeasible.
    """
    lam_req = np.atleast_1d(np.asarray(rate_per_s, dtype=float))
    w = dep.decode.workers if dep.prefill is None else 1
    grid_c = np.geomspace(1.0 / 64, 65536.0, 145)
    grid = serve_at_concurrency(model, system, dep, wl, grid_c, eff)
    ok = grid.feasible & (grid.request_rate_per_s > 0) & (grid.queue_s <= 0)
    if not ok.any():
        return dataclasses.replace(grid.take(np.zeros(lam_req.size, dtype=int)),
                                   feasible=np.zeros(lam_req.size, dtype=bool))
    lam, conc = grid.request_rate_per_s[ok], grid.concurrency[ok]
    order = np.argsort(lam)
    c = np.exp(np.interp(np.log(lam_req), np.log(lam[order]), np.log(conc[order])))
    pts = serve_at_concurrency(model, system, dep, wl, c, eff)
    over = lam_req > lam.max() * (1 + 1e-6)
    reason = np.where(over, f"overloaded: the deployment sustains at most {lam.max():.3g} requests/s "
                      f"({w} instance(s)); add replicas or lower the rate", pts.reason)
    return dataclasses.replace(pts, feasible=pts.feasible & ~over, reason=reason.astype(object))
