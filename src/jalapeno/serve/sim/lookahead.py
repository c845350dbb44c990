"""The scheduler's lookahead: the inputs of an instance's next steps, guessed so the step timer prices them ahead.

On a step-time miss, :class:`~jalapeno.serve.sim.step_time.StepTimer` prices the guesses of :func:`play_forward`
(``Instance.lookahead``) in the same vectorised call (docs/simulator.md §9). It only reads the instance: its
prefilling, waiting and decoding requests, their finish steps, the front end's requests on their way
(``in_flight``) and the closed loop's next ones (``upcoming``). Split from serve/sim/scheduler.py (round 52,
module budget).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from jalapeno.serve.sim.step_time import StepTimer

if TYPE_CHECKING:
    from jalapeno.serve.sim.scheduler import Instance

#: steps :meth:`Instance.lookahead` plays forward on a step-time miss (benchmarks/bench_simulate.py)
LOOKAHEAD_STEPS = 512


def play_forward(inst: Instance, steps: int = LOOKAHEAD_STEPS) -> np.ndarray:
    """Guesses (M, 5) at the inputs of the next ``steps`` steps, for the step timer to price ahead.

    Plays the batch of ``inst`` forward: each step's prefill chunks as :meth:`Instance.plan` builds them, decode
    sequences joining when their prefill ends and leaving at their finish step, the requests
    already in the front end (``in_flight``) arriving at their arrival times, and each finish
    issuing the next request of ``upcoming`` (the simulation's closed-loop queue), queued after
    its front-end time. A step whose inputs the timer has priced lasts its priced time;
    another, the last decode-only step plus the last mixed step's time per prefill token. It
    checks no KV capacity, preempts nothing and draws no MTP acceptance. Guesses only warm the
    cache (sim/step_time.StepTimer): a wrong one costs a priced point (microseconds), never a
    different step time.
    """
    pre = [[r.prefill_needed, r.cached_tokens + r.prefill_done] for r in inst.prefilling]
    slots = inst.max_running - len(inst.prefilling) - len(inst.decoding)
    queue = [[r.prefill_needed, r.cached_tokens + r.prefill_done] for r in inst.waiting]
    dec = inst.decoding  # a preempted request's heap entry is stale (Instance.complete skips it)
    finishes = sorted(
        f - inst.step_index
        for f, rid in inst.finish
        if f - inst.step_index <= steps and rid in dec and dec[rid].finish_step == f
    )
    arriving = iter(inst.upcoming(len(finishes)) if inst.upcoming is not None else ())
    dt_dec, dt_tok = inst._dt_decode_s, inst._dt_prefill_token_s
    # a step whose inputs the timer has priced lasts its priced time; others the estimate above
    timer = inst.timer if isinstance(inst.timer, StepTimer) else None
    cache, ahead = (timer.cache, timer.ahead) if timer else ({}, {})

    def priced(key: int) -> float | None:
        v = cache.get(key)
        return v if v is not None else ahead.get(key)

    # (arrival time from now, prompt tokens): the requests already in the front end, then those issued ahead
    due = [(at - inst._now, isl) for at, isl in inst.in_flight()] if inst.in_flight is not None else []
    b, ctx_sum, fi, q, step, t = len(inst.decoding), inst.decode_ctx_sum, 0, 0, 1, 0.0
    out: list[tuple[float, float, float, float, float]] = []
    while step <= steps:  # t: time of this step's plan, from now
        if due:  # arrivals before this step's plan join the queue, earliest first
            due.sort()
            while due and due[0][0] < t:
                queue.append([due.pop(0)[1], 0])
        while slots > 0 and q < len(queue):
            pre.append(queue[q])
            q += 1
            slots -= 1
        if not pre:  # decode only until the next finish or arrival: skip to it
            nxt = min(finishes[fi] if fi < len(finishes) else steps, steps)
            if due and dt_dec > 0:
                nxt = min(nxt, step + int((due[0][0] - t) / dt_dec) + 1)
            if nxt > step:
                ctx_sum += b * inst.a * (nxt - step)
                t += dt_dec * (nxt - step)
                step = nxt
                continue
        budget = inst.budget if inst.max_tokens is None else min(inst.budget, inst.max_tokens - b * inst.rows)
        tok = w = 0.0
        n = 0
        for c in pre:
            if budget <= 0:
                break
            take = min(c[0], budget, inst.prompt_budget)
            if take <= 0:
                continue
            budget -= take
            tok += take
            w += take * c[1]
            n += 1
            c[0] -= take
            c[1] += take
        ctx = ctx_sum / b if b else 0.0
        p_ctx = w / tok if tok else 0.0
        out.append((b, ctx, tok, p_ctx, n))
        ctx_sum += b * inst.a
        known = priced(timer.key(b, ctx, tok, p_ctx, n)) if timer else None
        t += known if known is not None else dt_dec + tok * dt_tok
        while fi < len(finishes) and finishes[fi] <= step:
            fi += 1
            b -= 1
            slots += 1
            ctx_sum -= ctx
            nxt_req = next(arriving, None)
            if nxt_req is not None:
                due.append((t + nxt_req[1], nxt_req[0]))
        if inst.role == "agg":
            joined = [c for c in pre if c[0] <= 0]
            b += len(joined)
            ctx_sum += sum(c[1] for c in joined)
        pre = [c for c in pre if c[0] > 0]
        step += 1
    return np.array(out, dtype=float).reshape(-1, 5)
