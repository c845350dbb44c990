"""LoadGen's early-stopping test on a Server run's token latencies: the p99 a latency-bounded run must meet.

A Server / Interactive run of an LLM benchmark is VALID only if two checks pass (mlcommons/inference @b66003e,
loadgen/results.cc ``PerformanceSummary::LogSummary``: ``all_constraints_met = ... perf_constraints_met &&
early_stopping_met``):

1. ``PerfConstraintsMet``: the run's own 99th-percentile TTFT and TPOT within the limits
   (``target_latency_percentile`` 99, loadgen/mlperf.conf ``*.Server.target_latency_percentile = 99``);
2. ``EarlyStopping`` (Server branch), once on ``time_per_output_token_arr`` against ``server_tpot_latency`` and once
   on ``first_token_latencies`` against ``server_ttft_latency``: with t of the N queries issued over the limit,
   the run passes only if N >= h + t, h the least count with ``odds(h, t, p, d) < 1 − c``
   (loadgen/early_stopping.cc ``MinPassingQueriesFinder``; ``odds`` = I_{p−d}(h, 1 + t), the regularised incomplete
   beta; p = 0.99, tolerance d = 0, confidence c = 0.99, hard-coded in ``PerformanceSummary::EarlyStopping``).

I_p(h, 1 + t) is P(Bin(h + t, 1 − p) <= t): the chance of seeing at most t over-limit queries in h + t were the true
99th percentile exactly at the limit. It falls as h grows, so check 2 reads: **P(Bin(N, 0.01) <= t) < 0.01** — the
run must show fewer over-limit queries than a run whose p99 sat exactly at the limit would show 99% of the time.
The largest such t, :func:`over_limit_allowance`, is below 1% of N (N = 26,328, a v5.1 DeepSeek-R1 Server run:
t <= 225, 0.855%), so check 2 is the binding one and the quantile a modelled latency distribution must hold within
the limit is 1 − t/N (:func:`early_stopping_quantile`; 0.99145 there), not 0.99. Check 1 is then implied.

The query count N of a run at a given rate is serve/finite_run.ServerRun.queries (LoadGen's equal-issue padding).
ASSUMPTION: the run's over-limit count is its expected count N·P(X > limit) (no sampling spread of the count:
at N >= 24,576, the v5.1 runs', its standard deviation is under 0.07% of N).

Switch: :data:`EARLY_STOPPING_ON` (fit/latency_limits passes :func:`early_stopping_quantile` of each candidate load's
run instead of 0.99 when on).
"""

from __future__ import annotations

import functools
import math

from jalapeno.errors import SpecError

#: Judge a latency-bounded MLPerf row's p99 TTFT / TPOT at LoadGen's early-stopping quantile of the run's query
#: count (:func:`early_stopping_quantile`) instead of 0.99 (fit/latency_limits._search). Round 54 (mlperf54).
EARLY_STOPPING_ON = False

#: loadgen/results.cc ``PerformanceSummary::EarlyStopping``: ``confidence = 0.99``, ``tolerance = 0.0``; the
#: percentile is mlperf.conf's ``*.Server.target_latency_percentile = 99`` (mlcommons/inference @b66003e).
CONFIDENCE = 0.99
PERCENTILE = 0.99


def _binom_cdf(t: int, n: int, p: float) -> float:
    """P(Bin(n, p) <= t) (scipy's exact regularised beta)."""
    from scipy.stats import binom

    return float(binom.cdf(t, n, p))


@functools.lru_cache(maxsize=256)
def over_limit_allowance(n_queries: int, percentile: float = PERCENTILE, confidence: float = CONFIDENCE) -> int:
    """Most over-limit queries a Server run of ``n_queries`` may have and pass LoadGen's early stopping: the largest
    t with P(Bin(n, 1 − percentile) <= t) < 1 − confidence (module docstring); −1 when not even t = 0 passes
    (n < 459 at the defaults: LoadGen asks for more queries).

    >>> over_limit_allowance(26328)  # a v5.1 DeepSeek-R1 Server run: 225, below the 263 that 1% would allow
    225
    >>> over_limit_allowance(458), over_limit_allowance(459)  # 0.99^458 = 0.0101 > 0.01; 0.99^459 = 0.0099
    (-1, 0)

    Raises:
        SpecError: ``n_queries`` not a whole number >= 1, or ``percentile`` / ``confidence`` outside (0, 1).
    """
    if isinstance(n_queries, bool) or not isinstance(n_queries, int) or n_queries < 1:
        raise SpecError("n_queries", f"{n_queries!r}", "give the run's query count, a whole number >= 1")
    for name, v in (("percentile", percentile), ("confidence", confidence)):
        if not (isinstance(v, (int, float)) and 0 < v < 1):
            raise SpecError(name, f"{v!r}", "give a fraction in (0, 1), e.g. 0.99")
    p, alpha = 1.0 - percentile, 1.0 - confidence
    if _binom_cdf(0, n_queries, p) >= alpha:
        return -1
    # normal approximation for a start, then walk to the exact boundary (the cdf rises with t)
    mu, sd = n_queries * p, math.sqrt(n_queries * p * (1.0 - p))
    t = max(0, min(n_queries, int(mu - 2.326 * sd)))
    while t > 0 and _binom_cdf(t, n_queries, p) >= alpha:
        t -= 1
    while t + 1 <= n_queries and _binom_cdf(t + 1, n_queries, p) < alpha:
        t += 1
    return t


def early_stopping_quantile(n_queries: int, percentile: float = PERCENTILE, confidence: float = CONFIDENCE) -> float:
    """Quantile of a modelled latency distribution that must sit within the limit for a run of ``n_queries`` to pass
    both LoadGen checks (module docstring): 1 − t/n, t = :func:`over_limit_allowance`; where no over-limit query is
    allowed (t <= 0), the largest of n draws: 1 − 1/(n + 1). Never below ``percentile`` (check 1).

    >>> round(early_stopping_quantile(26328), 5)  # 1 − 225 / 26,328
    0.99145
    >>> round(early_stopping_quantile(270336), 5)  # B200 Llama-2-70B Interactive's run: closer to 0.99 as n grows
    0.99045

    Raises:
        SpecError: as :func:`over_limit_allowance`.
    """
    t = over_limit_allowance(n_queries, percentile, confidence)
    q = 1.0 - 1.0 / (n_queries + 1) if t <= 0 else 1.0 - t / n_queries
    return max(q, percentile)
