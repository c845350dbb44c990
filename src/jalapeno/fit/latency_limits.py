"""The best swept point a latency-bounded benchmark allows: p99 TTFT and TPOT limits (MLPerf Server /
Interactive, mapping ``frontier@limits``).

A Server / Interactive result is valid only with its p99 TTFT and p99 TPOT within the rules'
limits (loadgen/mlperf.conf; fit/mlperf.MLPERF_RULES), and the submitter raises the Poisson
arrival rate until one binds. The prediction is therefore the highest throughput per chip of a
feasible swept point whose mean TPOT is within the TPOT limit (a necessary condition: every
request's TPOT is, :func:`peak_within_tpot`) and whose p99 TTFT under Poisson arrivals at
that point's request rate (serve/open_loop.poisson_ttft_s: the prefill queue's M/G/1 tail over
the dataset's prompt lengths) is within the TTFT limit. The closed-loop TTFT the sweep carries is
a mean-queue figure and does not bound a Poisson tail; the open-loop one is computed for the
candidates only, best first, until one meets the limit.

Where the submission declares its engine (layout, batch and token limits: fit/mlperf.MLPERF_LIMIT_ENGINES,
mapping ``matched@limits``), the search is that deployment's alone (:func:`engine_within_limits`): the
same two limits over its concurrency, from one request to every slot filled.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.serve.open_loop import poisson_ttft_s

#: Candidates priced per round, best throughput first (a round stops the search once one passes).
ROUND = 32
#: Concurrencies per instance :func:`engine_within_limits` solves, geometric from 1 to every slot
#: filled (ratio <= 1.1 up to 2,048 slots: the throughput between two rungs differs by < 10%).
LADDER = 81


def peak_within_limits(model, pricer, wl, sweep, tpot_limit_s: float | None,
                       ttft_limit_s: float | None) -> tuple[float, float]:
    """Highest throughput per chip (tok/s) of the ``sweep``'s (analysis/sweep.SweepResult) feasible
    points with mean TPOT <= ``tpot_limit_s`` and Poisson p99 TTFT <= ``ttft_limit_s`` (s), and
    that point's p99 TTFT (s); (0.0, inf) when none is.

    Raises:
        SpecError: a limit missing or not positive.
    """
    for name, v in (("tpot_limit_s", tpot_limit_s), ("ttft_limit_s", ttft_limit_s)):
        if v is None or not v > 0:
            raise SpecError(name, f"{v!r} is not a latency limit", "give the benchmark rules' p99 limit in seconds")
    pts = sweep.points
    ok = pts.feasible & (pts.tpot_s <= tpot_limit_s) & np.isfinite(pts.throughput_per_chip)
    idx = np.flatnonzero(ok)
    idx = idx[np.argsort(-pts.throughput_per_chip[idx], kind="stable")]
    for start in range(0, idx.size, ROUND):
        blk = idx[start:start + ROUND]
        p99 = np.full(blk.size, np.inf)
        for d in np.unique(sweep.dep_index[blk]):
            sel = sweep.dep_index[blk] == d
            p99[sel] = poisson_ttft_s(model, pricer, sweep.deployments[d], wl, pts.take(blk[sel]))
        meet = np.flatnonzero(p99 <= ttft_limit_s)
        if meet.size:  # blk is sorted best first: the first that meets is the best
            return float(pts.throughput_per_chip[blk[meet[0]]]), float(p99[meet[0]])
    return 0.0, float("inf")


def engine_within_limits(model, pricer, dep, wl, max_concurrency: float, tpot_limit_s: float | None,
                         ttft_limit_s: float | None) -> dict:
    """The best load of one declared deployment ``dep`` (aggregated, ``workers`` identical instances)
    within the limits: its highest throughput per chip (tok/s) over :data:`LADDER` steady-state
    (open-loop) concurrencies per instance, geometric from 1 to ``max_concurrency`` / workers (the
    whole deployment's slots), whose mean TPOT <= ``tpot_limit_s`` and Poisson p99 TTFT <=
    ``ttft_limit_s`` (s), as :func:`peak_within_limits` does over a sweep. Returns a dict with
    ``throughput_per_chip``, ``ttft_p99_s``, ``concurrency`` (the whole deployment's), ``feasible``
    and ``reason`` (why none meets the limits, else "").

    Raises:
        SpecError: a limit missing or not positive, ``max_concurrency`` < 1, or a disaggregated ``dep``.
    """
    from jalapeno.analysis.sweep import SweepResult
    from jalapeno.serve.point import serve_at_concurrency

    if not max_concurrency >= 1:
        raise SpecError("max_concurrency", f"{max_concurrency!r} slots", "give the engine's slots (>= 1 request)")
    if dep.prefill is not None:
        raise SpecError("deployment", "a disaggregated deployment", "give the submission's aggregated engine")
    w = dep.decode.workers
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    ladder = np.unique(np.geomspace(1.0, max(max_concurrency / w, 1.0), LADDER))
    pts = serve_at_concurrency(model, pricer, one, wl, ladder, idle_start=False)
    sw = SweepResult(model.name, "", wl, dep.precision.name, pts, [one], np.zeros(len(pts), dtype=int))
    y, p99 = peak_within_limits(model, pricer, wl, sw, tpot_limit_s, ttft_limit_s)
    if y <= 0:
        return {"throughput_per_chip": 0.0, "ttft_p99_s": p99, "concurrency": float("nan"), "feasible": False,
                "reason": f"the submitted engine has no load with mean TPOT <= {tpot_limit_s:g} s and Poisson "
                          f"p99 TTFT <= {ttft_limit_s:g} s"}
    i = int(np.flatnonzero(pts.throughput_per_chip == y)[0])
    return {"throughput_per_chip": y, "ttft_p99_s": p99, "concurrency": float(ladder[i] * w), "feasible": True,
            "reason": ""}


def peak_within_tpot(points, tpot_limit_s: float | None) -> float:
    """Highest throughput per chip (tok/s) of the feasible swept ``points`` (a ServingPoints) whose
    mean TPOT is at most ``tpot_limit_s`` seconds; 0.0 when none is. A benchmark's p99 limit bounds
    every request's TPOT, so the mean within it is a necessary condition: an upper bound on what
    the rules allow.

    Raises:
        SpecError: no limit given.
    """
    if tpot_limit_s is None or not tpot_limit_s > 0:
        raise SpecError("tpot_limit_s", f"{tpot_limit_s!r} is not a TPOT limit",
                        "give the benchmark rules' p99 TPOT limit in seconds")
    ok = points.feasible & (points.tpot_s <= tpot_limit_s) & np.isfinite(points.throughput_per_chip)
    return float(points.throughput_per_chip[ok].max()) if ok.any() else 0.0
