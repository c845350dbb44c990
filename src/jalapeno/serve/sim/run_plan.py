"""What one simulation run plans, checked before it runs: its options and its request count
(``jalapeno simulate``; serve/sim/run.simulate calls :func:`check_run_options` first).

A run is one of three workloads (fixed-length, agentic, a trace) in a closed loop at a concurrency or
an open loop at a rate; the requests it plans (warm-up included) are bounded by
:data:`MAX_PLANNED_REQUESTS`, and a trace replays its first :data:`TRACE_DEFAULT_REQUESTS` by arrival
unless told otherwise. Pure: no I/O, no randomness.
"""

from __future__ import annotations

import numbers

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
        raise SpecError(
            "--requests",
            f"replays {num_requests:,} requests of the trace, outside 1 to {MAX_PLANNED_REQUESTS:,}",
            "give --requests N within that range (the first N by arrival)",
        )
    return min(rows, TRACE_DEFAULT_REQUESTS if num_requests is None else num_requests)


def check_plan_size(workload, agentic, concurrency, rate, num_requests, sessions, warmup=None) -> None:
    """Raises SpecError when a run would plan more than :data:`MAX_PLANNED_REQUESTS` requests
    (warm-up requests included: ``--warmup 100000000`` planned them unchecked)."""
    if workload is not None:
        if concurrency is not None:
            warm = 2 * concurrency if warmup is None else warmup
            n, why, opt = (
                (num_requests or 10 * concurrency) + warm,
                (f"{num_requests or 10 * concurrency:,} counted + {warm:,} warm-up requests"),
                "--concurrency",
            )
            if warmup is not None and warmup > MAX_PLANNED_REQUESTS:
                opt = "--warmup"
        else:
            n, why, opt = num_requests or 1000, f"{num_requests or 1000:,} arrivals", "--requests"
        if num_requests is not None and num_requests > MAX_PLANNED_REQUESTS:
            opt = "--requests"
    elif agentic is not None and concurrency is not None:
        k = sessions or 2 * concurrency
        n, why, opt = (
            k * agentic.turns,
            f"{k:,} sessions x {agentic.turns} turns",
            ("--sessions" if sessions else "--concurrency"),
        )
    else:
        return
    if n > MAX_PLANNED_REQUESTS:
        raise SpecError(
            opt,
            f"the run would simulate {n:,} requests ({why}), over the limit of {MAX_PLANNED_REQUESTS:,}",
            "lower --concurrency (a deployment holds far fewer sequences "
            "at once; the rest only queue) or --requests/--sessions/--warmup",
        )


def check_run_options(
    workload, agentic, trace, concurrency, rate, num_requests, sessions, seed, warmup, arrival: str | None = None
) -> None:
    """The options of one :func:`serve.sim.run.simulate` run, checked before anything is priced:
    exactly one workload of its type, exactly one of concurrency / rate (a trace needs neither), counts and seed
    whole numbers in range, ``sessions`` only with an agentic workload, ``arrival`` (other than the default poisson)
    only with a rate,
    and at most :data:`MAX_PLANNED_REQUESTS` planned requests (:func:`check_plan_size`).

    Raises:
        SpecError: naming the option (``--workload``, ``--concurrency/--rate``, ``--concurrency``, ``--rate``,
            ``--warmup``, ``--requests``, ``--sessions``, ``--seed``, ``--arrival``) and its fix.
    """
    if sum(x is not None for x in (workload, agentic, trace)) != 1:
        raise SpecError("--workload", "give exactly one workload", "pass a preset, 'agentic' or a trace file")
    _check_kinds(workload, agentic, trace)
    if trace is None and (concurrency is None) == (rate is None):
        raise SpecError(
            "--concurrency/--rate", "give exactly one of them", "closed loop: --concurrency C; open loop: --rate R"
        )
    for opt, v in (
        ("--concurrency", concurrency),
        ("--requests", num_requests),
        ("--sessions", sessions),
        ("--seed", seed),
    ):  # the Python API: 2.5 raised numpy's TypeError, '4' a str < int TypeError
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral)):
            raise SpecError(opt, f"must be a whole number, got {v!r}", f"give {opt} as an integer, e.g. 4")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, numbers.Real)):
        raise SpecError("--rate", f"must be a number of requests/s, got {rate!r}", "give --rate as a number, e.g. 2.0")
    if sessions is not None and agentic is None:  # the CLI refuses it; the Python API ran and ignored it
        raise SpecError(
            "--sessions",
            "applies to an agentic workload only (sessions of turns)",
            "drop sessions, or pass agentic=... (specs/agentic.get_agentic)",
        )
    if rate is None and arrival not in (None, "poisson"):  # a closed loop has no arrival process: it was ignored
        raise SpecError(
            "--arrival",
            f"shapes open-loop arrivals and this run is closed loop (arrival={arrival!r})",
            "drop arrival, or give rate instead of concurrency",
        )
    if concurrency is not None and concurrency < 1:
        raise SpecError("--concurrency", f"must be >= 1, got {concurrency}", "give a positive concurrency")
    if warmup is not None and (isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0):
        raise SpecError(
            "--warmup",
            f"must be a non-negative integer, got {warmup!r}",
            "give 0 (idle start, InferenceX) or a number of warm-up requests",
        )
    for opt, v in (("--requests", num_requests), ("--sessions", sessions)):
        if v is not None and v < 1:
            raise SpecError(opt, f"must be >= 1, got {v}", f"give a positive {opt[2:]} count or leave it out")
    if seed < 0:
        raise SpecError("--seed", f"must be >= 0, got {seed}", "give a non-negative integer seed")
    check_plan_size(workload, agentic, concurrency, rate, num_requests, sessions, warmup)


def _check_kinds(workload, agentic, trace) -> None:
    """The Python API's workload arguments are of their types (``workload="1k1k"`` raised AttributeError: 'str'
    object has no attribute 'isl')."""
    from jalapeno.specs.agentic import AgenticSpec
    from jalapeno.specs.workload import Workload

    for name, v, kind, fix in (
        ("workload", workload, Workload, "jalapeno.get_workload('1k1k')"),
        ("agentic", agentic, AgenticSpec, "jalapeno.specs.agentic.get_agentic('coding')"),
    ):
        if v is not None and not isinstance(v, kind):
            raise SpecError(
                f"simulate: {name}", f"expected a {kind.__name__}, got {type(v).__name__} {v!r:.40}", f"pass {fix}"
            )
    from jalapeno.serve.sim.trace import Trace

    if trace is not None and not isinstance(trace, (list, tuple, Trace)):
        raise SpecError(
            "simulate: trace",
            f"expected a list of RequestSpec (or a Trace), got {type(trace).__name__}",
            "pass a list of RequestSpec (serve/sim), or a trace file to `jalapeno simulate -w FILE`",
        )
