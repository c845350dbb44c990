"""The best swept point a latency-bounded benchmark allows: p99 TTFT and TPOT limits (MLPerf Server /
Interactive, mapping ``frontier@limits``).

A Server / Interactive result is valid only with its p99 TTFT and p99 TPOT within the rules'
limits (loadgen/mlperf.conf; fit/mlperf.MLPERF_RULES), and the submitter raises the Poisson
arrival rate until one binds. The prediction is therefore the highest throughput per chip of a
feasible swept point whose mean TPOT is within the TPOT limit (a necessary condition: every
request's TPOT is, fit/validate.peak_within_tpot) and whose p99 TTFT under Poisson arrivals at
that point's request rate (serve/open_loop.poisson_ttft_s: the prefill queue's M/G/1 tail over
the dataset's prompt lengths) is within the TTFT limit. The closed-loop TTFT the sweep carries is
a mean-queue figure and does not bound a Poisson tail; the open-loop one is computed for the
candidates only, best first, until one meets the limit.
"""

from __future__ import annotations

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.serve.open_loop import poisson_ttft_s

#: Candidates priced per round, best throughput first (a round stops the search once one passes).
ROUND = 32


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
