"""A plan's inputs beyond a token rate (newuser53), so "serve 20,000 users at >= 50 tok/s/user with TTFT <= 2 s" is one
command: ``jalapeno plan --users N`` (closed-loop users; analysis/capacity.plan_capacity sizes instances =
ceil(N / the point's concurrency); ``check_users``) and ``--max-ttft-ms`` (a time-to-first-token ceiling:
``within_ttft`` keeps the frontier points whose mean TTFT is at or under it; a 32k1k DeepSeek-R1 plan on GB300 NVL72
led with a 6.4 s TTFT point and nothing could say no to it).

The TTFT is each frontier point's ``ttft_s``: the steady-state mean the plan's operating-point line prints
(front end, prefill, KV transfer, half a decode step and the queue; docs/metrics.md), not ``predict``'s
whole-run mean, which adds InferenceX's idle-start wave. The points kept are the throughput-interactivity
frontier's, each at the load that gives it its throughput: a deployment run at a lower load, off the frontier,
queues less and can start sooner (``jalapeno predict`` at a lower concurrency prices it). A ceiling prices
nothing new (no prediction moves), it only narrows the points a plan may lead with.

The checks of the target and the floor (``check_target``, ``check_floor``, ``_check_number``) moved here from
analysis/capacity.py (round 54, module budget). Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import math

from jalapeno.analysis.records import FrontierRecord
from jalapeno.errors import InfeasibleDeployment, SpecError, choice_hint

#: a plausibility bound on ``plan --users``: about the world's population (8.0e9, UN World Population Prospects
#: 2022), so a count of requests or tokens given as users is refused, not planned
MAX_USERS = 1e10

#: the ``--max-ttft-ms`` option's help (cli/plan_cmd.py)
MAX_TTFT_HELP = (
    "Time-to-first-token ceiling, ms: only frontier points whose mean TTFT (steady state, as the operating point "
    "prints it) is at or under it (default none). Fixed-length workloads; agentic ones: --max-task-min."
)


def check_users(users: float | None) -> None:
    """Refuse a ``--users`` (None: none) that is not a number from 1 to ``MAX_USERS``.

    Raises:
        SpecError: naming ``--users`` and an example.
    """
    ok = not isinstance(users, bool) and isinstance(users, (int, float)) and math.isfinite(users)
    if users is not None and not (ok and 1 <= users <= MAX_USERS):
        raise SpecError(
            "--users",
            f"must be a number of concurrent users from 1 to {MAX_USERS:.0e}, got {users!r}",
            "write e.g. --users 20000",
        )


def check_ttft_ceiling(max_ttft_ms: float | None) -> None:
    """Refuse a ceiling that is not positive and finite (None: no ceiling).

    Raises:
        SpecError: naming ``--max-ttft-ms`` and an example.
    """
    if max_ttft_ms is not None and not (max_ttft_ms > 0 and math.isfinite(max_ttft_ms)):
        raise SpecError(
            "--max-ttft-ms",
            f"must be a positive number of milliseconds, got {max_ttft_ms}",
            "write e.g. --max-ttft-ms 2000 (2 s)",
        )


def within_ttft(rec: FrontierRecord, max_ttft_ms: float | None, min_interactivity: float = 0.0) -> FrontierRecord:
    """``rec`` with only its points whose mean TTFT is at or under ``max_ttft_ms`` (ms; None: ``rec`` itself).

    Args:
        rec: a frontier record (``SystemFrontier.record()`` or ``.fleet_record()``).
        max_ttft_ms: the ceiling, milliseconds (> 0), or None.
        min_interactivity: the plan's per-user speed floor, tok/s/user; only named in the error.

    Raises:
        InfeasibleDeployment: no feasible point at or above the floor is under the ceiling; names the lowest mean
            TTFT there is at the floor and the fix.
    """
    if max_ttft_ms is None:
        return rec
    kept = tuple(p for p in rec.frontier if p.ttft_s * 1e3 <= max_ttft_ms)
    if not any(p.feasible and p.interactivity >= min_interactivity for p in kept):
        at = [p for p in rec.frontier if p.feasible and p.interactivity >= min_interactivity]
        floor = f" at >= {min_interactivity:g} tok/s/user" if min_interactivity > 0 else ""
        if not at:  # no point reaches the floor at all: the floor's own error (points_above_floor) says so
            return dataclasses.replace(rec, frontier=kept)
        low = min(at, key=lambda p: p.ttft_s)
        raise InfeasibleDeployment(
            "--max-ttft-ms",
            f"the lowest mean TTFT of {rec.system}'s frontier points{floor} on this workload is "
            f"{low.ttft_s * 1e3:,.0f} ms ({low.deployment.label} at {low.interactivity:.1f} tok/s/user), above "
            f"{max_ttft_ms:,g} ms",
            f"raise --max-ttft-ms to at least {math.ceil(low.ttft_s * 1e3):,}, shorten the prompts, or plan on a "
            "system with faster prefill; a deployment at a lower load than its frontier point's queues less: "
            "`jalapeno predict` at a lower --concurrency prices one",
        )
    return dataclasses.replace(rec, frontier=kept)


def ceiling_text(max_ttft_ms: float | None) -> str:
    """The title's clause for a ceiling: ``, mean TTFT <= 2,000 ms``; "" without one.

    >>> ceiling_text(2000.0), ceiling_text(None)
    (', mean TTFT <= 2,000 ms', '')
    """
    return "" if max_ttft_ms is None else f", mean TTFT <= {max_ttft_ms:,g} ms"


TARGET_KINDS = ("output", "total")


# A plausibility bound, not a physical limit: 1e12 tok/s is ~2,000x all of Google's served tokens
# (1.3 quadrillion a month, ~5e8 tok/s, Alphabet Q3 2025 earnings call, Oct 2025). A target above
# it is a unit slip (tokens per day or month given as per second), so it is refused, not planned.
MAX_TARGET_TOK_PER_S = 1e12


def _check_number(name: str, value, example: str) -> None:
    """Refuse a value that is not a real number: '1e6' raised TypeError on the first comparison, and True
    planned a fleet for 1 tok/s (bool is an int to Python).

    Raises:
        SpecError: naming ``plan_capacity: NAME`` and the type given.
    """
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SpecError(f"plan_capacity: {name}", f"must be a number, got {value!r}", f"pass a number, {example}")


def check_target(target_tok_per_s: float | None, target_kind: str) -> None:
    """Refuse a target (tok/s; None: a fleet plan, no target) that is not positive and finite or is above
    ``MAX_TARGET_TOK_PER_S``, and an unknown ``target_kind``: ``plan`` calls it before its sweep.

    Raises:
        SpecError: naming ``--target`` or ``--target-kind``.
    """
    if target_tok_per_s is not None and not (target_tok_per_s > 0 and math.isfinite(target_tok_per_s)):
        raise SpecError(
            "--target", f"must be a positive number of tokens/s, got {target_tok_per_s}", "write e.g. --target 1e6"
        )
    if target_tok_per_s is not None and target_tok_per_s > MAX_TARGET_TOK_PER_S:
        raise SpecError(
            "--target",
            f"{target_tok_per_s:.3g} tok/s is above the {MAX_TARGET_TOK_PER_S:.0e} tok/s "
            "plausibility bound (~2,000x all of Google's served tokens in 2025)",
            "give tokens per SECOND (a daily total / 86,400), e.g. --target 1e6",
        )
    if target_kind == "tasks":  # an agentic plan's kind: was "unknown kind 'tasks'. Fix: use output or total" (break48)
        raise SpecError(
            "--target-kind",
            "tasks (agent tasks per hour) counts an agentic workload's tasks, and this workload is fixed-length",
            "give --workload agentic:PRESET (e.g. agentic:coding-agent) to "
            "plan agent tasks, or --target-kind output or total for this workload",
        )
    if target_kind not in TARGET_KINDS:
        raise SpecError(
            "--target-kind",
            f"unknown kind {target_kind!r}{choice_hint(target_kind, ('output', 'total'))}",
            "use output or total",
        )


def check_floor(min_interactivity: float) -> None:
    """Refuse a per-user speed floor that is negative or not finite (``--min-interactivity``)."""
    if not (min_interactivity >= 0 and math.isfinite(min_interactivity)):
        raise SpecError(
            "--min-interactivity",
            f"must be >= 0 tok/s/user, got {min_interactivity}",
            "write e.g. --min-interactivity 50",
        )
