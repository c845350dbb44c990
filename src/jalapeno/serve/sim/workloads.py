"""Request sources for the simulator: InferenceX fixed-length, agentic multi-turn sessions,
trace replay; and open-loop arrival processes (Poisson, gamma, bursts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jalapeno.errors import SpecError, UnknownNameError, choice_hint
from jalapeno.serve.sim.trace import MAX_SPAN_S
from jalapeno.specs.agentic import AGENTIC_PRESETS, AgenticSpec  # noqa: F401  (re-exported)
from jalapeno.specs.workload import MAX_RATE_PER_S, Workload


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """One request to issue: lengths, session, turn and (open loop / trace) arrival time."""

    isl: int
    osl: int
    arrival_s: float = 0.0
    session: int = -1
    turn: int = 0
    prefix_group: int = -1


def fixed_length_requests(wl: Workload, n: int, rng: np.random.Generator) -> list[RequestSpec]:
    """InferenceX lengths: uniform integers in [r·L, L] (r = 1: exactly L); a workload with a
    :class:`~jalapeno.specs.workload.LengthSpread` draws its (ISL, OSL) pairs instead."""
    if wl.spread is not None:
        return [RequestSpec(int(i), int(o)) for i, o in zip(*wl.spread.sample(n, rng))]

    def draw(length: int) -> np.ndarray:
        lo = max(1, int(math.ceil(wl.range_ratio * length)))
        return rng.integers(lo, length + 1, size=n)

    isl, osl = draw(wl.isl), np.maximum(draw(wl.osl), 2)
    return [RequestSpec(int(i), int(o)) for i, o in zip(isl, osl)]


def agentic_turns(spec: AgenticSpec, session: int, rng: np.random.Generator) -> list[RequestSpec]:
    """The turns of one session (arrival times are set by the simulation: previous done + think)."""
    ctx = spec.system_prompt_tokens
    out = []
    for k in range(spec.turns):
        tool = int(spec.tool_output_tokens * rng.uniform(1 - spec.jitter, 1 + spec.jitter))
        reply = max(2, int(spec.reply_tokens * rng.uniform(1 - spec.jitter, 1 + spec.jitter)))
        ctx += tool
        out.append(RequestSpec(ctx, reply, session=session, turn=k))
        ctx += reply
    return out


def open_loop_arrivals(
    n: int, rate_per_s: float, process: str, rng: np.random.Generator, cv: float = 2.0, burst_size: int = 32
) -> np.ndarray:
    """Arrival times (s) of ``n`` requests at mean ``rate_per_s``.

    ``poisson``: exponential gaps; ``gamma``: gamma gaps with coefficient of variation ``cv``
    (shape 1/cv²); ``burst``: groups of ``burst_size`` simultaneous requests, groups Poisson.

    Raises:
        SpecError / UnknownNameError: non-positive rate, a rate above MAX_RATE_PER_S
            (specs/workload.py), a run spanning over MAX_SPAN_S (serve/sim/trace.py, 3 years), unknown process.
    """
    if not (rate_per_s > 0 and math.isfinite(rate_per_s)):
        raise SpecError("--rate", f"must be > 0, got {rate_per_s}", "give a request rate in requests/s")
    if rate_per_s > MAX_RATE_PER_S:
        raise SpecError(
            "--rate",
            f"{rate_per_s:g} requests/s is beyond any deployment (limit {MAX_RATE_PER_S:,.0f}; a "
            "GB200 NVL72 rack serves ~1,000 requests/s at 1k1k): the run would be only queueing",
            "give the rate in requests per second, e.g. --rate 2 (or a concurrency: --concurrency 64)",
        )
    if n / rate_per_s > MAX_SPAN_S:  # --rate 1e-9 simulated 1e12 s of an idle server (14 s of wall time)
        raise SpecError(
            "--rate",
            f"{n:,} requests at {rate_per_s:g} requests/s span {n / rate_per_s:.3g} s (over "
            f"{MAX_SPAN_S:.0e} s, 3 years)",
            "give the rate in requests per SECOND, e.g. --rate 2",
        )
    if process == "poisson":
        gaps = rng.exponential(1 / rate_per_s, size=n)
    elif process == "gamma":
        shape = 1 / cv**2
        gaps = rng.gamma(shape, 1 / (rate_per_s * shape), size=n)
    elif process == "burst":
        groups = math.ceil(n / burst_size)
        starts = np.cumsum(rng.exponential(burst_size / rate_per_s, size=groups))
        return np.repeat(starts, burst_size)[:n] - starts[0]
    else:
        hint = choice_hint(process, ("poisson", "gamma", "burst"))
        raise UnknownNameError("arrival", f"unknown arrival process {process!r}{hint}", "use poisson, gamma or burst")
    return np.cumsum(gaps) - gaps[0]


def read_trace(path):
    """Read a CSV or JSONL trace into columns (serve/sim/trace.py: :func:`~jalapeno.serve.sim.trace.read_trace`)."""
    from jalapeno.serve.sim.trace import read_trace as _read

    return _read(path)
