"""A finite run issued all at once: its duration ends with the last request, after the drain.

MLPerf's Offline scenario issues one query of ``samples_per_query`` samples at the start and ends
when the last response arrives (LoadGen ``mlperf_log_summary.txt``: ``Samples per second`` =
samples / max latency). An engine with ``S`` slots runs full while samples wait; once the queue
is empty its running batch decays as the requests in flight finish, and the run lasts until the
longest of them ends. With long-tailed outputs (DeepSeek-R1's dataset: outputs up to 20K tokens,
mean 3.7K) the drain is a large share of the run: NVIDIA's GB200 DeepSeek-R1 Offline log has its
99th-percentile sample done at 2,269 s and its last at 2,700 s; Google's B200 one 2,612 s and
3,088 s (inference_results_v5.1, closed/*/results/*/deepseek-r1/Offline/performance/run_1).
The steady state (every slot filled) overstates such a run's throughput.

Fluid model, per engine instance, in decode steps (every running request emits one token per step):

- The requests in flight when the queue empties are at independent, uniformly random phases of
  their lengths (each slot a renewal process of the lengths, desynchronised by their spread), so a
  slot's remaining output R has the equilibrium (forward-recurrence) law of the length L:
  P(R > k) = E[(L − k)+] / E[L] (Cox, *Renewal Theory*, 1962, §5.2), E[R] = E[L(L + 1)] / (2 E[L])
  in whole tokens.
- Drain: k = 0, 1, … steps after the queue empties, each of the S requests still runs with
  probability p_k = P(R > k); step k happens only while one does (probability q_k = 1 − (1 − p_k)^S),
  then with S·p_k / q_k running on average. The drain lasts Σ_k q_k·τ(S·p_k / q_k), with τ(B) the
  engine's step time at B running (exact in expectation for a step time linear in B).
- Full phase: the run's N·E[L] output tokens less the S·E[R] left to the drain, S per step at τ(S).

Throughput factor = (N·E[L] / duration) / (S / τ(S)) ≤ 1. ASSUMPTIONS: the ramp-up (every slot's
first prefill at once) is left out (S·ISL prompt tokens, under 1% of an MLPerf DeepSeek-R1 run's
work); τ(B) in the drain is the closed loop's at concurrency B (its prefill share included, which
the drain no longer has: a slight over-estimate of the drain); fixed lengths are not drained —
requests started together stay in synchronised waves that end together (factor 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jalapeno.errors import SpecError, check_bool


def residual_survival(osl_tokens) -> np.ndarray:
    """P(R > k) for k = 0 … max L − 1 of the remaining output R of a request in flight at a random
    moment, for output lengths ``osl_tokens`` (N,) (tokens; rounded to whole tokens, each >= 1):
    E[(L − k)+] / E[L], the equilibrium law of a renewal process (module docstring).

    >>> residual_survival([1, 3]).round(3).tolist()
    [1.0, 0.5, 0.25]

    Raises:
        SpecError: no lengths, or a length below 1 token.
    """
    L = np.rint(np.asarray(osl_tokens, dtype=float).ravel()).astype(np.int64)
    if L.size == 0 or L.min() < 1:
        raise SpecError(
            "osl_tokens",
            f"{L.size} lengths, smallest {L.min() if L.size else None}",
            "give at least one output length of 1 token or more",
        )
    counts = np.bincount(L)  # counts[j] requests of length j
    survive = L.size - np.cumsum(counts)  # survive[j] = #{L > j}, j = 0 … max L
    tail = np.cumsum(survive[::-1])[::-1]  # tail[k] = Σ_{j >= k} #{L > j} = Σ (L − k)+
    return tail[:-1] / tail[0]


def drain_factor(osl_tokens, queries: float, slots: float, batch_grid, step_time_s_grid) -> float:
    """Throughput of a run of ``queries`` requests issued at once on an engine instance of ``slots``
    running requests, over its steady state's (every slot filled), by the fluid model of the module
    docstring. ``osl_tokens`` (N,): the output lengths the requests draw from (tokens);
    ``batch_grid`` / ``step_time_s_grid`` (M,): the instance's step time (s) at that many running
    requests, increasing batches up to ``slots`` (linearly interpolated; held flat below the first).

    >>> round(drain_factor([1, 3], 100, 10, [1, 10], [1.0, 1.0]), 6)
    0.943721

    Raises:
        SpecError: non-positive ``queries`` or ``slots``, a grid that is empty, unsorted, of
            mismatched size, with a non-positive step time, or ending below ``slots``.
    """
    b = np.asarray(batch_grid, dtype=float).ravel()
    t = np.asarray(step_time_s_grid, dtype=float).ravel()
    if not (queries > 0 and slots > 0):
        raise SpecError("queries/slots", f"{queries!r} requests on {slots!r} slots", "give positive counts")
    if b.size == 0 or b.shape != t.shape or np.any(np.diff(b) <= 0) or not np.all(t > 0) or b[-1] < slots * (1 - 1e-9):
        raise SpecError(
            "batch_grid",
            "the step-time grid must be non-empty, increasing, positive and reach the slots",
            "price the step at increasing running batches up to the engine's slots",
        )
    p = residual_survival(osl_tokens)
    L = np.rint(np.asarray(osl_tokens, dtype=float).ravel())
    mean_l, mean_r = float(L.mean()), float(p.sum())
    tau = lambda x: np.interp(x, b, t)  # noqa: E731
    tau_full = float(tau(slots))
    live = 1.0 - (1.0 - p) ** slots  # P(some request still runs k steps on): the run ends with the last
    drain_s = float(np.sum(live * tau(slots * p / live)))
    full_steps = max(queries * mean_l - slots * mean_r, 0.0) / slots
    duration_s = full_steps * tau_full + drain_s
    return float(queries * mean_l / duration_s / (slots / tau_full))


@dataclass(frozen=True)
class ServerRun:
    """How long a LoadGen Server run lasts: its settings (``mlperf_log_detail.txt``
    ``effective_min_duration_ms``, ``effective_min_query_count``; loadgen/mlperf.conf defaults 600 s
    and 100) and the dataset's ``samples`` (``performance_sample_count``), the unit equal-issue mode
    pads the request count to. ``round_robin``: the harness deals the run's queries over its instances in turn
    (NVIDIA's llmlib harness outside Server, serve/open_loop "Round-robin dispatch"), so each instance's arrivals are
    Erlang, not Poisson (fit/latency_limits.engine_within_limits); False (default): a Poisson split."""

    samples: int
    min_duration_s: float = 600.0
    min_query_count: int = 100
    source: str = "loadgen/mlperf.conf defaults (min_duration 600000 ms, LoadGen min_query_count 100)"
    round_robin: bool = False

    def __post_init__(self) -> None:
        """Raises SpecError naming the field: ``samples`` or ``min_query_count`` not a whole number >= 1 (a Python or
        NumPy integer: a count read from a DataFrame, ``np.int64(24576)``, was refused as not whole, break44),
        ``min_duration_s`` not a finite positive number of seconds."""
        for name, v in (("samples", self.samples), ("min_query_count", self.min_query_count)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
                raise SpecError(name, f"{v!r}", "give a whole number of requests, at least 1")
        d = self.min_duration_s
        if isinstance(d, bool) or not isinstance(d, (int, float)) or not (math.isfinite(d) and d > 0):
            raise SpecError("min_duration_s", f"{d!r}", "give the run's minimum duration in seconds (> 0)")
        check_bool(
            "round_robin",
            self.round_robin,
            "pass True where the harness deals queries over its instances in turn, else False",
        )

    def queries(self, rate_per_s: float) -> int:
        """Requests of the run at ``rate_per_s`` arrivals per second: loadgen/loadgen.cc ``GenerateQueries``
        in equal-issue mode (``sample_concatenate_permutation = 1``, every LLM benchmark) pads
        ``min_query_count`` to whole copies of the samples and adds a copy while the schedule is
        shorter than the duration: samples x max(ceil(min_query_count / samples), ceil(rate x duration /
        samples)). Checked on the v5.1 logs' ``generated_query_count`` (tests/unit/test_server_run.py).

        >>> ServerRun(24576, 1200.0).queries(220.0)  # NVIDIA B200 Llama-2-70B Interactive: 264,000 in 1,200 s
        270336

        Raises:
            SpecError: a rate that is not a positive finite number, or one whose schedule over the run's duration
                is past float range (``inf`` raised OverflowError from ``math.ceil``, break44).
        """
        if not (rate_per_s > 0 and math.isfinite(rate_per_s)):
            raise SpecError("rate_per_s", f"{rate_per_s!r} requests/s", "give a positive, finite arrival rate")
        n = int(self.samples)
        scheduled = rate_per_s * self.min_duration_s / n
        if not math.isfinite(scheduled):
            raise SpecError(
                "rate_per_s",
                f"{rate_per_s!r} requests/s over {self.min_duration_s:g} s is past float range",
                "give the run's arrival rate in requests per second",
            )
        return int(n * max(math.ceil(self.min_query_count / n), math.ceil(scheduled - 1e-9)))


def server_run_factor(
    osl_tokens, queries: float, rate_per_s: float, running: float, batch_grid, step_time_s_grid, ttft_s: float = 0.0
) -> float:
    """Throughput of a LoadGen Server run over its steady state: ``queries`` requests arrive as a
    Poisson stream at ``rate_per_s`` over T = queries / rate while ``running`` run at once (per
    instance). LoadGen divides by the time the LAST-ISSUED query completes (loadgen/loadgen.cc
    ``final_query_all_samples_done_time``, loadgen/results.cc ``Completed samples per second`` =
    (samples − 1) / that time; tokens likewise), so the run is T plus that query's latency D:
    factor T / (T + D). D = ``ttft_s`` + its decode at the load draining behind it: its k-th token
    (k >= 1, while its length ℓ > k) comes at step time τ(running·P(R > k)), the others' remaining
    outputs R of the equilibrium law (:func:`residual_survival`; M/G/∞): E[D] = ttft + Σ_k P(ℓ > k)·
    τ(running·P(R > k)). ``batch_grid`` / ``step_time_s_grid`` (M,): the step time (s) with no arrivals
    (decode only) at that many running, increasing, reaching ``running``.

    >>> round(server_run_factor([1, 3], 100, 10.0, 2, [1, 2], [1.0, 1.0], ttft_s=0.5), 6)  # T 10, D 0.5 + 0.5 + 0.5
    0.869565

    Raises:
        SpecError: non-positive ``queries``, ``rate_per_s`` or ``running``, or a grid as :func:`drain_factor`'s.
    """
    b = np.asarray(batch_grid, dtype=float).ravel()
    t = np.asarray(step_time_s_grid, dtype=float).ravel()
    if not (queries > 0 and rate_per_s > 0 and running > 0):
        raise SpecError(
            "queries/rate_per_s/running",
            f"{queries!r} requests at {rate_per_s!r}/s, {running!r} running",
            "give positive counts and rate",
        )
    if (
        b.size == 0
        or b.shape != t.shape
        or np.any(np.diff(b) <= 0)
        or not np.all(t > 0)
        or b[-1] < running * (1 - 1e-9)
    ):
        raise SpecError(
            "batch_grid",
            "the step-time grid must be non-empty, increasing, positive and reach the running",
            "price the decode step at increasing running batches up to the requests in flight",
        )
    L = np.rint(np.asarray(osl_tokens, dtype=float).ravel()).astype(np.int64)
    p = residual_survival(L)  # P(R > k), k = 0 … max L − 1
    longer = (L.size - np.cumsum(np.bincount(L)))[:-1] / L.size  # P(ℓ > k), k = 0 … max L − 1
    d = ttft_s + float(np.sum(longer[1:] * np.interp(running * p[1:], b, t)))
    span = queries / rate_per_s
    return float(span / (span + d))


def finite_run_factor(model, pricer, dep, wl, queries: float, points: int = 24) -> float:
    """:func:`drain_factor` of deployment ``dep`` (aggregated; every attention rank's
    ``max_running`` slots, per instance ``max_running`` × attention DP) serving ``queries`` requests
    of workload ``wl`` issued at once (whole deployment: split evenly over its instances). The step
    time at B running is the closed loop's mean TPOT at concurrency B per instance
    (serve/point.serve_at_concurrency) on a geometric grid of ``points`` batches from 1 to the
    slots. S is the requests running with every slot taken (fewer than the slots where the KV cache
    caps them). 1.0 for fixed lengths (``wl.spread`` None: synchronised waves, no drain), and 1.0
    where the closed loop cannot run with every slot taken (the point at the slots' concurrency is
    infeasible): no drain is priced and the row keeps its steady-state figure.

    Raises:
        SpecError: a deployment without ``max_running`` or with a prefill pool, or
            :func:`drain_factor`'s errors.
    """
    from jalapeno.serve.point import serve_at_concurrency

    if wl.spread is None:
        return 1.0
    if dep.prefill is not None or not dep.max_running:
        raise SpecError(
            "deployment",
            "a finite run's drain needs an aggregated deployment with max_running slots",
            "give the engine's max batch per rank (max_running)",
        )
    per_rank = dep.budget_per == "rank"
    slots = float(dep.max_running) * (dep.decode.layout.dp if per_rank else 1)
    inst = dep.decode.workers
    grid = np.unique(np.geomspace(1.0, slots, points))
    res = serve_at_concurrency(model, pricer, dep, wl, grid * inst)
    ok = res.feasible & np.isfinite(res.tpot_s) & (res.tpot_s > 0)
    if not ok[-1]:
        return 1.0
    # the requests that run with every slot taken: fewer than the slots where the KV cache caps them
    run = min(float(res.decode_batch[-1]), slots)  # decode_batch: per instance
    keep = ok & (grid < run * (1 - 1e-9))
    return drain_factor(
        wl.spread.osl_tokens,
        queries / inst,
        run,
        np.append(grid[keep], run),
        np.append(res.tpot_s[keep], res.tpot_s[-1]),
    )
