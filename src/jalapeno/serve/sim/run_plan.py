"""What one simulation run plans, checked before it runs: its options and its request count
(``jalapeno simulate``; serve/sim/simulation.simulate calls :func:`check_run_options` first).

A run is one of three workloads (fixed-length, agentic, a trace) in a closed loop at a concurrency or
an open loop at a rate; the requests it plans (warm-up included) are bounded by
:data:`MAX_PLANNED_REQUESTS`, and a trace replays its first :data:`TRACE_DEFAULT_REQUESTS` by arrival
unless told otherwise. Pure: no I/O, no randomness.
"""

from __future__ import annotations

from jalapeno.errors import SpecError

#: Most requests one run plans (closed loop: warm-up + counted; open loop: arrivals; agentic:
#: turns). Memory grows with the requests (~0.5 KB each with their results), so a plausible typo
#: (``-c 1000000`` plans 12,000,000) is refused before it runs instead of growing without bound;
#: a trace replays at most this many of its requests too (``--requests``).
MAX_PLANNED_REQUESTS = 2_000_000
#: Requests of a trace replayed when no count is given: its first 200,000 by arrival. The event
#: loop runs ~15,000 requests/s on one core of the development machine (``simulate -s gb200-nvl72
#: --dp 8 --ep 8 -c 100000``: 1.2 million requests in 78 s), so the default replay takes ~15 s; a
#: trace of millions of rows ran unbounded before. ``num_requests`` (``--requests``) replays more.
TRACE_DEFAULT_REQUESTS = 200_000


def trace_replay_count(rows: int, num_requests: int | None) -> int:
    """How many of a trace's ``rows`` requests a run replays: the first ``num_requests`` by arrival
    (default :data:`TRACE_DEFAULT_REQUESTS`), never more than the trace holds.

    >>> trace_replay_count(5_000_000, None), trace_replay_count(500, None), trace_replay_count(500, 100)
    (200000, 500, 100)

    Raises:
        SpecError: ``num_requests`` below 1 or above :data:`MAX_PLANNED_REQUESTS` (field ``--requests``).
    """
    if num_requests is not None and not 1 <= num_requests <= MAX_PLANNED_REQUESTS:
        raise SpecError("--requests", f"replays {num_requests:,} requests of the trace, outside 1 to "
                        f"{MAX_PLANNED_REQUESTS:,}", "give --requests N within that range (the first N by arrival)")
    return min(rows, TRACE_DEFAULT_REQUESTS if num_requests is None else num_requests)


def check_plan_size(workload, agentic, concurrency, rate, num_requests, sessions, warmup=None) -> None:
    """Raises SpecError when a run would plan more than :data:`MAX_PLANNED_REQUESTS` requests
    (warm-up requests included: ``--warmup 100000000`` planned them unchecked)."""
    if workload is not None:
        if concurrency is not None:
            warm = 2 * concurrency if warmup is None else warmup
            n, why, opt = (num_requests or 10 * concurrency) + warm, (
                f"{num_requests or 10 * concurrency:,} counted + {warm:,} warm-up requests"), "--concurrency"
            if warmup is not None and warmup > MAX_PLANNED_REQUESTS:
                opt = "--warmup"
        else:
            n, why, opt = num_requests or 1000, f"{num_requests or 1000:,} arrivals", "--requests"
        if num_requests is not None and num_requests > MAX_PLANNED_REQUESTS:
            opt = "--requests"
    elif agentic is not None and concurrency is not None:
        k = sessions or 2 * concurrency
        n, why, opt = k * agentic.turns, f"{k:,} sessions x {agentic.turns} turns", (
            "--sessions" if sessions else "--concurrency")
    else:
        return
    if n > MAX_PLANNED_REQUESTS:
        raise SpecError(opt, f"the run would simulate {n:,} requests ({why}), over the limit of "
                        f"{MAX_PLANNED_REQUESTS:,}", "lower --concurrency (a deployment holds far fewer sequences "
                        "at once; the rest only queue) or --requests/--sessions/--warmup")


def check_run_options(workload, agentic, trace, concurrency, rate, num_requests, sessions, seed, warmup) -> None:
    """The options of one :func:`serve.sim.simulation.simulate` run, checked before anything is priced:
    exactly one workload, exactly one of concurrency / rate (a trace needs neither), counts and seed in range,
    and at most :data:`MAX_PLANNED_REQUESTS` planned requests (:func:`check_plan_size`).

    Raises:
        SpecError: naming the option (``--workload``, ``--concurrency/--rate``, ``--concurrency``, ``--warmup``,
            ``--requests``, ``--sessions``, ``--seed``) and its fix.
    """
    if sum(x is not None for x in (workload, agentic, trace)) != 1:
        raise SpecError("--workload", "give exactly one workload", "pass a preset, 'agentic' or a trace file")
    if trace is None and (concurrency is None) == (rate is None):
        raise SpecError("--concurrency/--rate", "give exactly one of them", "closed loop: --concurrency C; "
                        "open loop: --rate R")
    if concurrency is not None and concurrency < 1:
        raise SpecError("--concurrency", f"must be >= 1, got {concurrency}", "give a positive concurrency")
    if warmup is not None and (isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0):
        raise SpecError("--warmup", f"must be a non-negative integer, got {warmup!r}",
                        "give 0 (idle start, InferenceX) or a number of warm-up requests")
    for opt, v in (("--requests", num_requests), ("--sessions", sessions)):
        if v is not None and v < 1:
            raise SpecError(opt, f"must be >= 1, got {v}", f"give a positive {opt[2:]} count or leave it out")
    if seed < 0:
        raise SpecError("--seed", f"must be >= 0, got {seed}", "give a non-negative integer seed")
    check_plan_size(workload, agentic, concurrency, rate, num_requests, sessions, warmup)
