"""The best swept point a latency-bounded benchmark allows: p99 TTFT and TPOT limits (MLPerf Server /
Interactive, mapping ``frontier@limits``).

A Server / Interactive result is valid only with its p99 TTFT and p99 TPOT within the rules'
limits (loadgen/mlperf.conf; fit/mlperf_rules.MLPERF_RULES), and the submitter raises the Poisson
arrival rate until one binds. The prediction is therefore the highest throughput per chip of a
feasible swept point whose p99 TPOT over requests (serve/tpot_tail.poisson_tpot_s: the prompts
sharing each request's decode steps, a compound Poisson count; the mean within the limit,
:func:`peak_within_tpot`, is the necessary condition that pre-selects) is within the TPOT limit
and whose p99 TTFT under Poisson arrivals at that point's request rate
(serve/open_loop.poisson_ttft_s: the prefill queue's M/G/1 tail over the dataset's prompt lengths)
is within the TTFT limit. The closed-loop TTFT the sweep carries is
a mean-queue figure and does not bound a Poisson tail; the open-loop one is computed for the
candidates only, best first, until one meets the limit.

The sweep's aggregated points sit on a batch grid that doubles (analysis/sweep.DEFAULT_BATCHES), so the
best grid point within the limits can lie up to a factor 2 in batch below the load where a limit binds;
:func:`peak_within_limits` therefore refines between a deployment's last rung within the limits and its
first beyond them (:data:`REFINE` batches, geometric) for the deployments whose points beyond the limits
out-throughput the best within them (:func:`_refine`).

Where the submission declares its engine (layout, batch and token limits: fit/mlperf.MLPERF_LIMIT_ENGINES, or its
disaggregated prefill and decode pools: fit/mlperf_disagg.MLPERF_DISAGG_ENGINES; mapping ``matched@limits``), the
search is that deployment's alone (:func:`engine_within_limits`): the same two limits over its concurrency, from one
request to every slot filled.

Both limits are judged at the 99th percentile, or with serve/early_stopping.EARLY_STOPPING_ON (round 54, shipped off)
at LoadGen's early-stopping quantile of the row's run (:func:`_judged_p99s`; 0.99145 for a 26,328-query run).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jalapeno.errors import SpecError, check_bool
from jalapeno.serve.open_loop import poisson_ttft_s
from jalapeno.serve.tpot_tail import poisson_tpot_s

#: Candidates priced per round, best throughput first (a round stops the search once one passes).
ROUND = 32
#: Batches per instance :func:`_refine` tries strictly between a deployment's last grid rung within the limits and
#: its first beyond them: geometric, ratio 2^(1/13) = 1.055 across one doubling of the sweep's grid (the throughput
#: between two of them differs by < 6%)
REFINE = 12
#: Deployments :func:`_refine` refines at most, those whose points beyond the limits reach the highest throughput first
REFINE_DEPLOYMENTS = 4
#: Concurrencies per instance :func:`engine_within_limits` solves, geometric from 1 to every slot
#: filled (ratio <= 1.1 up to 2,048 slots: the throughput between two rungs differs by < 10%).
LADDER = 81


def peak_within_limits(
    model, pricer, wl, sweep, tpot_limit_s: float | None, ttft_limit_s: float | None, run=None, run_chips: int = 0
) -> tuple[float, float]:
    """Highest throughput per chip (tok/s) of the ``sweep``'s (analysis/sweep.SweepResult) feasible
    points with Poisson p99 TPOT <= ``tpot_limit_s`` (serve/tpot_tail.poisson_tpot_s; the mean within it
    pre-selects) and Poisson p99 TTFT <= ``ttft_limit_s`` (s), and
    that point's p99 TTFT (s); (0.0, inf) when none is. The aggregated deployments whose grid points beyond
    the limits out-throughput that point are refined between their last batch within the limits and their
    first beyond them (:func:`_refine`), so the answer is not quantised to the sweep's doubling batch grid.

    ``run`` (a serve/finite_run.ServerRun: the LoadGen Server run's settings) and ``run_chips`` (the run's
    chips) price each point as LoadGen counts the run, to its last-issued query's response
    (:func:`server_run_factors`): its steady throughput times the run's factor, the best such kept.

    Raises:
        SpecError: a limit missing or not positive.
    """
    best, failed = _search(model, pricer, wl, sweep, tpot_limit_s, ttft_limit_s, run, run_chips)
    y, p99, _, _ = _refine(model, pricer, wl, sweep, tpot_limit_s, ttft_limit_s, run, run_chips, best, failed)
    return y, p99


def _search(model, pricer, wl, sweep, tpot_limit_s, ttft_limit_s, run, run_chips: int, arrival_k: int = 1):
    """((throughput per chip, p99 TTFT, point index or -1, Server-run factor) of :func:`peak_within_limits` over the
    sweep's own points, indices of the points checked and found beyond a limit). ``arrival_k``: each instance takes
    every k-th query (serve/open_loop.poisson_ttft_s; 1, a Poisson split, for the sweeps)."""
    for name, v in (("tpot_limit_s", tpot_limit_s), ("ttft_limit_s", ttft_limit_s)):
        if v is None or not v > 0:
            raise SpecError(name, f"{v!r} is not a latency limit", "give the benchmark rules' p99 limit in seconds")
    priced = run is not None and wl.spread is not None
    pts = sweep.points
    ok = pts.feasible & (pts.tpot_s <= tpot_limit_s) & np.isfinite(pts.throughput_per_chip)
    idx = np.flatnonzero(ok)
    idx = idx[np.argsort(-pts.throughput_per_chip[idx], kind="stable")]
    best = (0.0, float("inf"), -1, 1.0)
    failed: list[np.ndarray] = []
    for start in range(0, idx.size, ROUND):
        blk = idx[start : start + ROUND]
        if pts.throughput_per_chip[blk[0]] <= best[0]:  # a factor is <= 1: no later point can do better
            break
        p99 = np.full(blk.size, np.inf)
        tpot99 = np.full(blk.size, np.inf)
        for d in np.unique(sweep.dep_index[blk]):
            sel = sweep.dep_index[blk] == d
            p99[sel], tpot99[sel] = _judged_p99s(
                model, pricer, sweep.deployments[d], wl, pts.take(blk[sel]), run, run_chips, arrival_k
            )
        within = (p99 <= ttft_limit_s) & (tpot99 <= tpot_limit_s)
        meet = np.flatnonzero(within)
        failed.append(blk[~within])
        if meet.size and not priced:  # blk is sorted best first: the first that meets is the best
            return (
                (float(pts.throughput_per_chip[blk[meet[0]]]), float(p99[meet[0]]), int(blk[meet[0]]), 1.0),
                np.concatenate(failed),
            )
        for d in np.unique(sweep.dep_index[blk[meet]]):
            sel = meet[sweep.dep_index[blk[meet]] == d]
            f = server_run_factors(model, pricer, sweep.deployments[d], wl, pts.take(blk[sel]), run, run_chips)
            y = pts.throughput_per_chip[blk[sel]] * f
            k = int(np.argmax(y))
            if y[k] > best[0]:
                best = (float(y[k]), float(p99[sel[k]]), int(blk[sel[k]]), float(f[k]))
    return best, np.concatenate(failed) if failed else np.zeros(0, dtype=int)


def _judged_p99s(model, pricer, dep, wl, pts, run, run_chips: int, arrival_k: int = 1):
    """(Poisson TTFT, Poisson TPOT over requests) of ``dep``'s points ``pts`` at the quantile each is judged at, s,
    (N,) each: 0.99, or with serve/early_stopping.EARLY_STOPPING_ON and a ``run`` (serve/finite_run.ServerRun)
    LoadGen's early-stopping quantile of the run's query count at that load's whole-run rate (the point's rate per
    chip x ``run_chips``, as :func:`server_run_factors`), rounded to 1e-5 so that loads of one count are priced
    together."""
    from jalapeno.serve import early_stopping

    qs = np.full(len(pts), early_stopping.PERCENTILE)
    if run is not None and early_stopping.EARLY_STOPPING_ON:
        chips = np.broadcast_to(np.asarray(pts.chips, dtype=float), (len(pts),))
        for i in range(len(pts)):
            rate = float(pts.request_rate_per_s[i]) * ((run_chips / chips[i]) if run_chips > 0 else 1.0)
            if rate > 0 and np.isfinite(rate):
                qs[i] = round(early_stopping.early_stopping_quantile(run.queries(rate)), 5)
    ttft, tpot = np.full(len(pts), np.inf), np.full(len(pts), np.inf)
    for q in np.unique(qs):
        sel = qs == q
        sub = pts if sel.all() else pts.take(np.flatnonzero(sel))
        ttft[sel] = poisson_ttft_s(model, pricer, dep, wl, sub, q=float(q), arrival_k=arrival_k)
        tpot[sel] = poisson_tpot_s(model, pricer, dep, wl, sub, q=float(q), arrival_k=arrival_k)
    from jalapeno.serve import occupancy_padding

    if run is not None and occupancy_padding.OCCUPANCY_PADDING_ON:  # round 54: the Poisson batch's graph padding
        tpot = tpot + occupancy_padding.padding_excess_s(model, pricer, dep, wl, pts)
    return ttft, tpot


def _refine(model, pricer, wl, sweep, tpot_limit_s, ttft_limit_s, run, run_chips: int, best, failed):
    """:func:`_search`'s ``best`` (throughput per chip, p99 TTFT, index, factor) refined off the sweep's batch grid.

    For each aggregated deployment with a point beyond the limits (``failed``, the sweep's indices) whose throughput
    exceeds ``best``'s (at most :data:`REFINE_DEPLOYMENTS`, highest such throughput first): :data:`REFINE` decode batches
    per instance, geometric strictly between its highest grid batch below its smallest failed one and that one, priced
    as the sweep prices its points (serve/analytic.aggregated_by_batch) and held to the same two limits (and the
    Server-run factor when ``run`` is given). The limits grow with the load, so the binding load lies in that interval.
    Returns ``best`` or a refined (throughput, p99 TTFT, -1, factor) above it. Disaggregated deployments are not refined.
    """
    from jalapeno.serve.analytic import aggregated_by_batch

    pts = sweep.points
    failed = np.asarray(failed, dtype=int)
    failed = failed[np.isfinite(pts.throughput_per_chip[failed]) & (pts.throughput_per_chip[failed] > best[0])]
    cands = []
    for d in np.unique(sweep.dep_index[failed]):
        dep = sweep.deployments[d]
        if dep.prefill is not None:
            continue
        sel = failed[sweep.dep_index[failed] == d]
        b_hi = float(pts.decode_batch[sel].min())
        own = pts.decode_batch[sweep.dep_index == d]
        below = own[own < b_hi]
        cands.append(
            (-float(pts.throughput_per_chip[sel].max()), int(d), float(below.max()) if below.size else 1.0, b_hi)
        )
    priced = run is not None and wl.spread is not None
    for _, d, b_lo, b_hi in sorted(cands)[:REFINE_DEPLOYMENTS]:
        if not b_hi > b_lo:
            continue
        dep = sweep.deployments[d]
        ladder = np.geomspace(b_lo, b_hi, REFINE + 2)[1:-1]
        cand = aggregated_by_batch(model, pricer, dep, wl, ladder)
        ok = np.flatnonzero(
            cand.feasible
            & (cand.tpot_s <= tpot_limit_s)
            & np.isfinite(cand.throughput_per_chip)
            & (cand.throughput_per_chip > best[0])
        )
        if not ok.size:
            continue
        sub = cand.take(ok)
        p99, tpot99 = _judged_p99s(model, pricer, dep, wl, sub, run, run_chips)
        meet = np.flatnonzero((p99 <= ttft_limit_s) & (tpot99 <= tpot_limit_s))
        if not meet.size:
            continue
        sub = sub.take(meet)
        f = server_run_factors(model, pricer, dep, wl, sub, run, run_chips) if priced else np.ones(len(sub))
        y = sub.throughput_per_chip * f
        k = int(np.argmax(y))
        if y[k] > best[0]:
            best = (float(y[k]), float(p99[meet[k]]), -1, float(f[k]))
    return best


def server_run_factors(model, pricer, dep, wl, pts, run, run_chips: int) -> np.ndarray:
    """Throughput of a LoadGen Server run over the steady state of each of ``dep``'s points ``pts``
    (N,) (serve/finite_run.server_run_factor), (N,). The run: ``run.queries`` (a serve/finite_run.ServerRun)
    at the whole run's arrival rate (the points' rate per chip x ``run_chips``; 0: the points' own
    chips); the last-issued query's latency: the point's mean TTFT, then its decode while each decode
    instance's ``decode_batch`` requests drain behind it, at the decode-only step
    (serve/open_loop.decode_step_s). 1.0 for fixed lengths (``wl.spread`` None) or a point with no rate.
    """
    from jalapeno.serve.finite_run import server_run_factor
    from jalapeno.serve.open_loop import decode_step_s

    out = np.ones(len(pts))
    if wl.spread is None or not len(pts):
        return out
    batch = np.maximum(np.asarray(pts.decode_batch, dtype=float), 1.0)
    grid = np.unique(np.concatenate([np.geomspace(1.0, float(batch.max()), 24), batch]))
    tau = decode_step_s(model, pricer, dep, wl, grid)
    chips = np.broadcast_to(np.asarray(pts.chips, dtype=float), (len(pts),))
    for i in range(len(pts)):
        rate = float(pts.request_rate_per_s[i]) * ((run_chips / chips[i]) if run_chips > 0 else 1.0)
        if not rate > 0 or not np.isfinite(rate):
            continue
        out[i] = server_run_factor(
            wl.spread.osl_tokens, run.queries(rate), rate, batch[i], grid, tau, ttft_s=float(pts.ttft_s[i])
        )
    return out


def dealt_instances(dep, run) -> int:
    """k, the instances a run's harness deals its queries over in turn, each taking every k-th (serve/open_loop
    "Round-robin dispatch"): an aggregated ``dep``'s decode workers where ``run`` (a ServerRun or None) says
    ``round_robin``, else 1 (a Poisson split). The one statement of that rule: engine_within_limits prices with it
    and fit/mlperf's row notes name it."""
    return int(dep.decode.workers) if run is not None and run.round_robin and dep.prefill is None else 1


def engine_within_limits(
    model,
    pricer,
    dep,
    wl,
    max_concurrency: float,
    tpot_limit_s: float | None,
    ttft_limit_s: float | None,
    run=None,
    refine: bool = True,
) -> dict:
    """The best load of one declared deployment ``dep`` within the limits: its highest throughput per chip
    (tok/s) over :data:`LADDER` steady-state (open-loop) concurrencies, geometric from 1 to ``max_concurrency``
    (the whole deployment's slots) — per instance for an aggregated ``dep`` of ``workers`` identical instances
    (``max_concurrency`` / workers), over the whole deployment for a disaggregated one (its prefill and decode
    pools priced together, serve/point.serve_at_concurrency; the Poisson TTFT is the prefill pool's queue,
    serve/open_loop, and the TPOT the decode pool's mean, serve/tpot_tail) — whose Poisson p99 TPOT <= ``tpot_limit_s``
    and Poisson p99 TTFT <= ``ttft_limit_s`` (s), as :func:`peak_within_limits` does over a sweep. Returns a dict with
    ``throughput_per_chip``, ``ttft_p99_s``, ``concurrency`` (the whole deployment's), ``feasible``,
    ``reason`` (why none meets the limits, else "") and ``run_factor``. ``run`` (a serve/finite_run.ServerRun):
    each load priced as a LoadGen Server run of the whole deployment (:func:`peak_within_limits`;
    ``run_factor`` the best load's factor, 1.0 at the steady state). ``refine`` (default; since round 37): the best
    rung is refined by :data:`REFINE` loads geometric strictly between it and the next rung (the binding load lies
    there), as :func:`peak_within_limits` refines off the sweep's grid, so the answer is not quantised down by up
    to one rung (<= 10% in load); False keeps the ladder's rungs alone. A ``run`` whose harness deals queries
    round-robin (``run.round_robin``, since round 43) gives each of an aggregated ``dep``'s ``workers`` instances every
    workers-th query: Erlang gaps in its TTFT queue (serve/open_loop.erlang_arrival_tail), not a Poisson split.

    Raises:
        SpecError: a limit missing or not positive, ``max_concurrency`` < 1, or a non-bool ``refine``.
    """
    from jalapeno.analysis.sweep import SweepResult
    from jalapeno.serve.point import serve_at_concurrency

    check_bool("refine", refine, "pass True to refine the best load between the ladder's rungs, else False")
    if not max_concurrency >= 1:
        raise SpecError("max_concurrency", f"{max_concurrency!r} slots", "give the engine's slots (>= 1 request)")
    w = dep.decode.workers if dep.prefill is None else 1  # a disaggregated deployment is priced whole
    one = (
        dep if dep.prefill is not None else dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    )
    ladder = np.unique(np.geomspace(1.0, max(max_concurrency / w, 1.0), LADDER))
    pts = serve_at_concurrency(model, pricer, one, wl, ladder, idle_start=False)
    sw = SweepResult(model.name, "", wl, dep.precision.name, pts, [one], np.zeros(len(pts), dtype=int))
    chips = float(np.atleast_1d(pts.chips)[0]) * w
    k = dealt_instances(dep, run)
    (y, p99, i, f), _ = _search(model, pricer, wl, sw, tpot_limit_s, ttft_limit_s, run, round(chips), k)
    if refine and 0 <= i < len(ladder) - 1:  # the binding load lies between rung i and the next
        fine = np.geomspace(ladder[i], ladder[i + 1], REFINE + 2)[1:-1]
        fp = serve_at_concurrency(model, pricer, one, wl, fine, idle_start=False)
        fs = SweepResult(model.name, "", wl, dep.precision.name, fp, [one], np.zeros(len(fp), dtype=int))
        (y2, p2, j, f2), _ = _search(model, pricer, wl, fs, tpot_limit_s, ttft_limit_s, run, round(chips), k)
        if y2 > y:
            y, p99, f, ladder, i = y2, p2, f2, fine, j
    if y <= 0:  # the arrivals the limits were checked under: the harness's round-robin dealt them k ways (round 43)
        arrivals = "Poisson" if k == 1 else f"round-robin (every {k}th Poisson arrival an instance)"
        return {
            "throughput_per_chip": 0.0,
            "ttft_p99_s": p99,
            "concurrency": float("nan"),
            "feasible": False,
            "reason": f"the submitted engine has no load with {arrivals} p99 TPOT <= {tpot_limit_s:g} s and "
            f"p99 TTFT <= {ttft_limit_s:g} s",
            "run_factor": 1.0,
        }
    return {
        "throughput_per_chip": y,
        "ttft_p99_s": p99,
        "concurrency": float(ladder[i] * w),
        "feasible": True,
        "reason": "",
        "run_factor": f,
    }


def peak_within_tpot(points, tpot_limit_s: float | None) -> float:
    """Highest throughput per chip (tok/s) of the feasible swept ``points`` (a ServingPoints) whose
    mean TPOT is at most ``tpot_limit_s`` seconds; 0.0 when none is. A benchmark's p99 limit bounds
    every request's TPOT, so the mean within it is a necessary condition: an upper bound on what
    the rules allow.

    Raises:
        SpecError: no limit given.
    """
    if tpot_limit_s is None or not tpot_limit_s > 0:
        raise SpecError(
            "tpot_limit_s",
            f"{tpot_limit_s!r} is not a TPOT limit",
            "give the benchmark rules' p99 TPOT limit in seconds",
        )
    ok = points.feasible & (points.tpot_s <= tpot_limit_s) & np.isfinite(points.throughput_per_chip)
    return float(points.throughput_per_chip[ok].max()) if ok.any() else 0.0
