"""Serve a given deployment at given closed-loop concurrencies (aggregated or disaggregated)."""

from __future__ import annotations

import dataclasses

import numpy as np

from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.deploy.deployment import Deployment, pool_overlap
from jalapeno.deploy.mtp import check_mtp
from jalapeno.deploy.layout import validate_layout
from jalapeno.errors import SpecError, check_bool
from jalapeno.serve.analytic import solve_concurrency
from jalapeno.serve.serving_points import ServingPoints, requeue
from jalapeno.serve.disagg import (
    MAX_PREFILL_UTILISATION,
    PrefillPerf,
    decode_curve,
    disaggregated_points,
    pool_prefill_perf,
)
from jalapeno.serve.idle_start import _agg_idle_start, _disagg_idle_start
from jalapeno.serve.queueing import REQUESTS_PER_USER
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import MAX_CONCURRENCY, Workload

#: decode batches per decode instance at which C(B) is tabulated (ratio 1.12): from far below one
#: sequence (many decode workers at a low concurrency) to far beyond any KV capacity
_GRID = np.geomspace(1e-6, 65536.0, 221)


def _check_objects(model, pricer, dep, wl, where: str) -> None:
    """Refuse a name (or anything else) where a ModelSpec, pricer, Deployment or Workload goes, as
    analysis/prediction.predict_point does: serve_at_concurrency(m, p, dep, "1k1k", 8) raised
    AttributeError: 'str' object has no attribute 'mean_osl' (break52).

    Raises:
        SpecError: naming ``<where>: <argument>``, the type given and what to pass.
    """
    if not isinstance(model, ModelSpec):
        raise SpecError(
            f"{where}: model",
            f"expected a ModelSpec, got {type(model).__name__}",
            "pass load_model(name), e.g. load_model('deepseek-r1')",
        )
    check_pricer(pricer, where)
    if not isinstance(dep, Deployment):
        raise SpecError(
            f"{where}: dep",
            f"expected a Deployment, got {type(dep).__name__}",
            "pass Deployment(get_precision(name), Pool(Layout(...)))",
        )
    if not isinstance(wl, Workload):
        raise SpecError(
            f"{where}: wl",
            f"expected a Workload, got {type(wl).__name__}",
            "pass get_workload(name), e.g. get_workload('8k1k'), or get_workload(isl=..., osl=...)",
        )


def _concurrencies(concurrency) -> np.ndarray:
    """(N,) concurrencies as floats; each a number (not text, not true/false), finite and > 0.

    Raises:
        SpecError: naming ``concurrency`` (0 priced a 1e-12-request point; inf raised IndexError; '4' was read;
            above MAX_CONCURRENCY, 1e6: 1e9 allocated a first wave of 1e9 requests until the OOM killer).
    """
    try:
        arr = np.atleast_1d(np.asarray(concurrency))
    except ValueError:  # a ragged nesting
        arr = np.asarray([concurrency], dtype=object)
    if arr.ndim > 1:  # [[1, 2]] raised numpy's 'all the input arrays must have same number of dimensions' (break52)
        raise SpecError(
            "concurrency",
            f"must be one number or a flat list of numbers, got an array of shape {arr.shape}",
            "give the deployment's concurrency as a number or a list of numbers, e.g. [1, 4, 16]",
        )
    if arr.dtype.kind not in "iuf" or not arr.size:  # text, true/false, None, empty
        shown = repr(concurrency)
        raise SpecError(
            "concurrency",
            f"must be numbers (requests in flight), got {shown[:60]}" + ("..." if len(shown) > 60 else ""),
            "give the deployment's concurrency as a number or a list of numbers, e.g. [1, 4, 16]",
        )
    c = arr.astype(float)
    bad_at = np.flatnonzero(~(np.isfinite(c) & (c > 0)))
    if bad_at.size:
        raise SpecError(
            "concurrency",
            f"must be finite and > 0 (requests in flight), got {c[bad_at[0]]:g}",
            "give the deployment's concurrency as a number or a list of numbers, e.g. [1, 4, 16]",
        )
    if c.max() > MAX_CONCURRENCY:  # 1e9 built a first wave of 1e9 requests: 24 GB, then the OOM killer
        raise SpecError(
            "concurrency",
            f"{c.max():g} requests in flight is above {MAX_CONCURRENCY:,} "
            "(specs/workload.MAX_CONCURRENCY; InferenceX sweeps 1-16,384)",
            "give a concurrency up to the thousands (the deployment's batch is far smaller)",
        )
    return c


def serve_at_concurrency(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    concurrency,
    idle_start: bool = True,
    recurring_waves: bool = False,
    saturate: bool = True,
) -> ServingPoints:
    """Points of ``dep`` at each requested concurrency (N,) — the whole deployment's concurrency.

    ``idle_start`` (default): TTFT and E2E (mean and tail) are those of an InferenceX run — 10·C
    counted requests starting from an idle server with C at once — not the steady state alone;
    the first wave's queue is a transient (serve/queueing.py, effect 3) that leaves throughput,
    TPOT and the steady concurrency as they are. ``False``: the steady state (open loop).
    ``recurring_waves`` (with ``idle_start``, fixed lengths, aggregated, no MTP): the run's other
    R − 1 waves repeat the first wave's burst as a limit cycle (serve/queueing.py, effect 6) — what
    the simulator shows for a fixed-length closed loop whose users start together. Off by default:
    aiconfigurator's fixed-length rows do not show it (docs/model.md §8.7, §12).

    Raises:
        InfeasibleDeployment: a pool's layout cannot run the model on the system (deploy/layout.py).
        SpecError: MTP on a model without an MTP module; two-batch overlap where no pool has an
            EP all-to-all; ``idle_start``, ``recurring_waves`` or ``saturate`` not True/False.

    Aggregated: Little's-law fixed point (serve/analytic.py). Disaggregated: C(B) is evaluated on
    a geometric grid of decode batches per decode instance (1e-6 ... 65536, ratio 1.12), inverted by
    log-log interpolation, and the point re-evaluated exactly at the interpolated batch; beyond
    the decode KV capacity, or beyond the batch at which the prefill pool reaches
    MAX_PREFILL_UTILISATION (serve/disagg.py), the excess users queue for admission: throughput
    stays flat and TTFT grows (limit ``kv_capacity`` / ``prefill_capacity`` "(queueing)").
    ``saturate`` (default; a closed loop): past MAX_PREFILL_UTILISATION the users waiting for a
    prefill keep the pool busy, so the steady range runs on to the batch at which it is fully busy
    (ρ = 1, or the decode cap first) and only the users beyond that queue — the saturation asymptote
    of a closed queueing network (:func:`_prefill_saturation`); ``False`` (open loop,
    :func:`serve_at_rate`): the threshold ends the steady range. Each
    pool's routed experts are priced by its named MoE backend (``Pool.moe_backend``;
    cost/pool_backends.with_moe_backend) and its GQA decode attention by its named attention backend
    (``Pool.attention_backend``; cost/pool_backends.with_attention_backend).
    """
    _check_objects(model, pricer, dep, wl, "serve_at_concurrency")
    for name, on in (("idle_start", idle_start), ("recurring_waves", recurring_waves), ("saturate", saturate)):
        check_bool(f"serve_at_concurrency: {name}", on, f"pass {name}=True or {name}=False")  # 'no' read as on
    c_req = _concurrencies(concurrency)
    for role, pool in (("decode", dep.decode), ("prefill", dep.prefill)):
        if pool is not None:
            validate_layout(pool.layout, model, pricer.system, role)
    check_mtp(dep.mtp, model)
    dep.check_overlap(model)
    if dep.prefill is None:
        # ``workers`` identical aggregated instances share the load evenly
        w = dep.decode.workers
        pricer = with_pool_backends(pricer, dep.decode, model, dep.decode.layout, dep.precision.kv_cache.name)
        pts = solve_concurrency(model, pricer, dep, wl, c_req / w)
        if idle_start:
            run, waves = _agg_idle_start(model, pricer, dep, wl, pts, c_req / w, recurring_waves)
            pts = run_throughput(pts, run, _drain_e2e(model, pricer, dep, wl, pts, run, c_req, waves))
        if w == 1:
            return pts
        return dataclasses.replace(
            pts, concurrency=pts.concurrency * w, request_rate_per_s=pts.request_rate_per_s * w, chips=pts.chips * w
        )
    pre = pool_prefill_perf(model, pricer, dep, wl)
    dec_ov = pool_overlap(dep.overlap, model, dep.decode.layout)
    x, y = np.array([dep.prefill.workers]), np.array([dep.decode.workers])
    grid = decode_curve(model, pricer, dep.decode.layout, dep.precision, wl, _GRID, dep.mtp, dep, dec_ov)
    gp = disaggregated_points(
        model, pricer, dep.precision, wl, pre, grid, x, y, dep.mtp, recv_interval=dep.recv_interval
    )
    _, first = np.unique(grid.batch, return_index=True)
    first = np.sort(first)
    cs, bs = gp.concurrency[first], grid.batch[first]
    # the prefill pool caps the request rate: decode batches that would need more than
    # MAX_PREFILL_UTILISATION of it are not steady states; users beyond the last one queue
    rho = gp.request_rate_per_s[first] * wl.mean_isl / (dep.prefill.workers * pre.tokens_per_s)
    pos = (cs > 0) & (rho < MAX_PREFILL_UTILISATION)
    cap_name = "prefill_capacity" if ((cs > 0) & ~pos).any() else grid.cap_name
    sat = None
    if saturate and cap_name == "prefill_capacity" and pos.any():
        sat = _prefill_saturation(model, pricer, dep, wl, pre, x, y, dec_ov, cs, bs, rho)
    cs, bs = (cs[pos], bs[pos]) if pos.any() else (np.array([1.0]), np.array([_GRID[0]]))
    if sat is not None and sat[0] > cs.max() and sat[1] > bs.max():
        cs, bs = np.append(cs, sat[0]), np.append(bs, sat[1])
    order = np.argsort(cs)
    lc, lb = np.log(cs[order]), np.log(bs[order])
    b = np.exp(np.interp(np.log(c_req), lc, lb))
    # refine the interpolated batch: secant steps in log space with the grid's local slope, kept
    # inside the steady-state range (a few % of interpolation error would read as queueing)
    slope = np.interp(np.log(c_req), lc, np.gradient(lb, lc) if len(lc) > 1 else np.ones_like(lc))
    b_max = float(np.exp(lb[-1]))
    for _ in range(4):
        dec = decode_curve(model, pricer, dep.decode.layout, dep.precision, wl, b, dep.mtp, dep, dec_ov)
        pts = disaggregated_points(
            model, pricer, dep.precision, wl, pre, dec, x, y, dep.mtp, recv_interval=dep.recv_interval
        )
        got = np.maximum(pts.concurrency, 1e-30)
        if np.all(np.abs(got / c_req - 1) < 1e-4) or not np.all(np.isfinite(got)):
            break
        b = np.minimum(b * (c_req / got) ** slope, b_max)
    if sat is not None:  # between the threshold and ρ = 1 the prefill queue holds the users: a steady state
        rho_b = pts.request_rate_per_s * wl.mean_isl / (dep.prefill.workers * pre.tokens_per_s)
        band = ~pts.feasible & dec.feasible & pre.feasible & (rho_b >= MAX_PREFILL_UTILISATION)
        pts = dataclasses.replace(
            pts,
            feasible=pts.feasible | band,
            reason=np.where(band, "", pts.reason).astype(object),
            limit=np.where(band, "prefill_capacity (queueing)", pts.limit).astype(object),
        )
    excess = np.maximum(c_req - pts.concurrency, 0.0)
    queued = excess > 1e-3 * c_req
    wait = np.where(queued & (pts.request_rate_per_s > 0), excess / np.maximum(pts.request_rate_per_s, 1e-30), 0.0)
    limit = dec.cap_name if cap_name == "prefill_capacity" and (b >= dec.cap).all() else cap_name
    pts = requeue(pts, c_req, wait, limit)
    if not idle_start:
        return pts
    run, waves = _disagg_idle_start(pricer, dep, wl, pts, c_req, pre, recurring_waves)
    return run_throughput(pts, run, _drain_e2e(model, pricer, dep, wl, pts, run, c_req, waves))


def _prefill_saturation(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    pre: PrefillPerf,
    x: np.ndarray,
    y: np.ndarray,
    dec_ov,
    cs: np.ndarray,
    bs: np.ndarray,
    rho: np.ndarray,
) -> tuple[float, float] | None:
    """(C_sat, B_sat): the concurrency and decode batch per decode instance at which a closed loop
    keeps the prefill pool fully busy, from the grid's C(B) ``cs``, batches ``bs`` and prefill
    utilisation ``rho`` (M,). None when no such point exists.

    Past MAX_PREFILL_UTILISATION a closed loop has no runaway queue: its C users bound the queue, and
    those waiting for a prefill keep the pool busy. So the throughput rises to the pool's capacity
    (ρ = 1) and only the users beyond the concurrency of that point queue — the saturation asymptote
    of a closed queueing network, X(N) = 1/D_max and R(N) = N/X − Z past N* (Lazowska et al.,
    *Quantitative System Performance*, 1984, §5.2, asymptotic bounds). B_sat is where ρ(B) crosses 1
    (log B interpolated linearly in ρ between the grid points around it), or the largest batch
    of the grid (the decode cap) when ρ stays below 1. The request-level simulator shows it: on
    InferenceX row 22 (GB200 DEP16, 8k/1k, 4,301 users) its eleven prefill workers are 99.8% busy
    (docs/model.md §8.4). Its point's TTFT carries the prefill queue capped at ρ = MAX_RHO
    (serve/queueing.py), and a concurrency above C_sat adds (C − C_sat)/λ_sat (``requeue``), so
    there TTFT + decode time = C/λ_sat whatever the cap (Little's law).
    """
    ok = cs > 0
    r, b = rho[ok], bs[ok]
    if r.size == 0:
        return None
    above = np.flatnonzero(r >= 1.0)
    if above.size == 0:
        b_sat = float(b[-1])
    elif above[0] == 0:
        return None
    else:
        j = int(above[0])
        b_sat = float(np.exp(np.interp(1.0, r[j - 1 : j + 1], np.log(b[j - 1 : j + 1]))))
    dec = decode_curve(model, pricer, dep.decode.layout, dep.precision, wl, np.array([b_sat]), dep.mtp, dep, dec_ov)
    pts = disaggregated_points(
        model, pricer, dep.precision, wl, pre, dec, x, y, dep.mtp, recv_interval=dep.recv_interval
    )
    c = float(pts.concurrency[0])
    return (c, b_sat) if np.isfinite(c) and c > 0 else None


#: The run's drain (docs/model.md §8.7 effect 8): once the client has issued its R·C requests the in-flight ones
#: finish alone and the pool empties; the run lasts R + d E2Es, d per point from the slots' phases (the first
#: wave's stagger, the lengths' spread over R requests, the shared request list's balancing) and the step's
#: speed-up as the batch empties (serve/run_drain.py). Priced for InferenceX's random lengths (``range_ratio``
#: < 1, no measured spread): a fixed-length run recurs in waves (effect 6), an MLPerf Offline run has its own
#: drain (serve/finite_run.py). Round 40's constant d = 1/2 is its wide-spread, constant-step limit.
RUN_DRAIN = False


def drain_factor(requests_per_user: float, drain_e2e) -> np.ndarray:
    """Throughput factor of the run's drain, R / (R + d) (docs/model.md §8.7 effect 8), dimensionless, (N,).

    Args:
        requests_per_user: R, counted requests a client slot issues (InferenceX: ``--num-prompts`` 10·C
            with ``--max-concurrency`` C, benchmarks/multi_node/srt_bench.sh; serve/queueing.REQUESTS_PER_USER).
        drain_e2e: d (N,), the drain's extra duration in the run's mean E2Es (serve/run_drain.drain_e2e).

    Raises:
        SpecError: R not positive or a d negative (name the field).

    >>> round(float(drain_factor(10, 0.5)), 5)  # 10 / 10.5
    0.95238
    """
    d = np.asarray(drain_e2e, dtype=float)
    if not requests_per_user > 0:
        raise SpecError(
            "requests_per_user",
            f"must be > 0, got {requests_per_user}",
            "give the counted requests per client slot (InferenceX: 10)",
        )
    if not np.all(d >= 0):
        raise SpecError(
            "drain_e2e", f"must be >= 0, got {drain_e2e}", "give the drain's extra duration in mean E2Es (0: no drain)"
        )
    return float(requests_per_user) / (float(requests_per_user) + d)


def _drain_e2e(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    steady: ServingPoints,
    run: ServingPoints,
    users,
    waves: list,
) -> np.ndarray | None:
    """d (N,) of each point in the run's mean E2Es (serve/run_drain.drain_e2e): the whole run's ``users``
    (N,) slots, one request's E2E range (1 − r)·OSL·TPOT, its TTFT's spread (p90 − p50)/1.2816, the first wave's
    offsets ``waves`` (per point, s), an instance's decode-only step at shares of its batch; None where not
    priced (:data:`RUN_DRAIN`)."""
    if not RUN_DRAIN or wl.range_ratio >= 1 or wl.spread is not None:
        return None
    from jalapeno.serve.open_loop import decode_step_s
    from jalapeno.serve.run_drain import STEP_SHARES, TTFT_SD_SPAN, drain_e2e

    e2e, batch = steady.e2e_s, np.maximum(steady.decode_batch, 1.0)
    tau = decode_step_s(model, pricer, dep, wl, np.maximum(np.outer(batch, STEP_SHARES), 1.0).ravel())
    tau = tau.reshape(batch.size, STEP_SHARES.size)
    out = np.zeros(batch.size)
    for i, c in enumerate(np.broadcast_to(np.asarray(users, dtype=float), batch.shape)):
        if not (steady.feasible[i] and np.isfinite(e2e[i]) and e2e[i] > 0 and run.e2e_s[i] > 0):
            continue
        width = min((1.0 - wl.range_ratio) * wl.osl * steady.tpot_s[i] / e2e[i], 1.9)
        jitter = max(steady.ttft_p90_s[i] - steady.ttft_p50_s[i], 0.0) / TTFT_SD_SPAN / e2e[i]
        d = drain_e2e(
            max(c, 1.0),
            REQUESTS_PER_USER,
            width,
            np.asarray(waves[i], dtype=float) / e2e[i],
            (STEP_SHARES, tau[i] / tau[i, -1]),
            jitter if np.isfinite(jitter) else 0.0,
        )
        out[i] = d * e2e[i] / run.e2e_s[i]
    return out


def run_throughput(steady: ServingPoints, run: ServingPoints, drain_e2e=None) -> ServingPoints:
    """``run`` (the idle-start points of ``steady``) with the throughput and request rate of the
    benchmark run rather than of the steady state (docs/model.md §8.7, effect 8).

    InferenceX's client keeps C requests in flight from the first of its R·C counted requests until
    the pool is empty, so the C slots' busy time is the requests' summed E2E and the run completes
    requests at C / E2E_run on average, E2E_run the run's mean E2E (idle-start wave included), not
    at the steady λ = C / E2E_ss (Little's law over the run; the measured rows obey it within
    0.97-1.0, fit/data_quality.py rule 1):

        throughput_run = throughput_ss · E2E_ss / E2E_run      (request rate and output throughput alike)

    Concurrency, TPOT and the decode batch are the steady state's. The drain after the last issue (the
    last requests finish alone) multiplies it by :func:`drain_factor` of ``drain_e2e`` (N,; d in the run's
    mean E2Es, :func:`_drain_e2e`; None: not priced, :data:`RUN_DRAIN` off).

    >>> import numpy as np, dataclasses
    >>> from jalapeno.serve.serving_points import ServingPoints
    >>> f = {k.name: np.array([1.0]) for k in dataclasses.fields(ServingPoints)}
    >>> ss = ServingPoints(**{**f, "e2e_s": np.array([20.0]), "throughput_per_chip": np.array([1000.0])})
    >>> float(run_throughput(ss, dataclasses.replace(ss, e2e_s=np.array([25.0]))).throughput_per_chip[0])
    800.0
    """
    scale = np.where(run.e2e_s > 0, steady.e2e_s / np.maximum(run.e2e_s, 1e-30), 1.0)
    if drain_e2e is not None:  # the pool empties after the last issue (:func:`drain_factor`)
        scale = scale * drain_factor(REQUESTS_PER_USER, drain_e2e)
    return dataclasses.replace(
        run,
        throughput_per_chip=run.throughput_per_chip * scale,
        output_throughput_per_chip=run.output_throughput_per_chip * scale,
        request_rate_per_s=run.request_rate_per_s * scale,
    )


def _rate_grid(model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload) -> tuple[np.ndarray, ServingPoints]:
    """The closed-loop grid open-loop rates are read from: 145 concurrencies from 1/64 to 65,536 (geometric)."""
    grid_c = np.geomspace(1.0 / 64, 65536.0, 145)
    return grid_c, serve_at_concurrency(model, pricer, dep, wl, grid_c, idle_start=False, saturate=False)


def _plateau(grid: ServingPoints) -> float:
    """The highest request rate the grid's feasible points reach, requests/s (0.0 where none is)."""
    feas = grid.feasible & (grid.request_rate_per_s > 0)
    return float(grid.request_rate_per_s[feas].max()) if feas.any() else 0.0


def sustainable_rate_per_s(model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload) -> float:
    """The open-loop request rate ``dep`` sustains, requests/s (the whole deployment's): the plateau the
    closed-loop points reach at the batch cap; :func:`serve_at_rate` marks any rate above it overloaded."""
    return _plateau(_rate_grid(model, pricer, dep, wl)[1])


def serve_at_rate(model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, rate_per_s) -> ServingPoints:
    """Open loop: points of ``dep`` at request rates (N,) requests/s, the whole deployment's.

    In steady state the rate fixes the decode batch through λ = B/(D·τ(B)) (monotone in B), so
    λ(B) is evaluated on a geometric grid of decode batches, inverted by log-log interpolation and
    the point re-evaluated there; the concurrency is then λ·E2E (Little). A rate above what the
    deployment sustains at its batch cap is overloaded: the point is marked infeasible.
    """
    lam_req = np.atleast_1d(np.asarray(rate_per_s, dtype=float))
    w = dep.decode.workers if dep.prefill is None else 1
    grid_c, grid = _rate_grid(model, pricer, dep, wl)
    # steady states without an admission queue (a sliver of queueing from interpolation is not one)
    ok = grid.feasible & (grid.request_rate_per_s > 0) & (grid.queue_s <= 1e-3 * grid.e2e_s)
    if not ok.any():
        return dataclasses.replace(
            grid.take(np.zeros(lam_req.size, dtype=int)), feasible=np.zeros(lam_req.size, dtype=bool)
        )
    lam, conc = grid.request_rate_per_s[ok], grid.concurrency[ok]
    order = np.argsort(lam)
    c = np.exp(np.interp(np.log(lam_req), np.log(lam[order]), np.log(conc[order])))
    # below the grid's lightest load the batch is not shared: E2E no longer changes with the rate,
    # so Little's law C = λ·E2E scales the concurrency with λ (np.interp would clamp it, reporting
    # the grid's floor rate, 0.006 requests/s, for any lower one)
    light = lam_req < lam[order][0]
    c[light] = conc[order][0] * lam_req[light] / lam[order][0]
    # the sustainable rate is the plateau the queued (closed-loop) points reach; rates between the
    # last unqueued grid point and it are found by bisection on the concurrency (λ(C) is monotone)
    feas = grid.feasible & (grid.request_rate_per_s > 0)
    lam_cap = _plateau(grid)
    band = (lam_req > lam.max()) & (lam_req <= lam_cap * (1 + 1e-6))
    if band.any():
        c_lo = float(conc[order][-1])
        above = grid_c[feas & (grid_c > c_lo)]  # the next grid point brackets the plateau's knee
        lo = np.full(band.sum(), c_lo)
        hi = np.full(band.sum(), float(above[0]) if above.size else float(grid_c[-1]))
        while np.max(hi / lo) > 1 + 1e-6:
            mid = np.sqrt(lo * hi)
            r = serve_at_concurrency(model, pricer, dep, wl, mid, idle_start=False, saturate=False)
            below = (r.request_rate_per_s < lam_req[band]) & (r.queue_s <= 1e-3 * r.e2e_s)
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        c[band] = lo
    pts = serve_at_concurrency(model, pricer, dep, wl, c, idle_start=False, saturate=False)
    over = lam_req > lam_cap * (1 + 1e-6)
    what = f"{w} instance(s)" if dep.prefill is None else "prefill and decode pools"
    reason = np.where(
        over,
        f"overloaded: the deployment sustains at most {lam_cap:.3g} requests/s ({what}); add workers or lower the rate",
        pts.reason,
    )
    return dataclasses.replace(pts, feasible=pts.feasible & ~over, reason=reason.astype(object))
