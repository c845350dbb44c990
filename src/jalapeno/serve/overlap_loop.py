"""An overlap scheduler loop's admission lag: a prompt read while the engine is busy runs one step late (issue 18, round 38).

SGLang's default loop, ``Scheduler.event_loop_overlap`` (sgl-project/sglang ``python/sglang/srt/managers/scheduler.py``,
the same body in the 0.5.9 and 0.5.12 wheels; docs/gap_aic_ttft.md round 38), does per pass: ``recv_requests()``,
``get_next_batch_to_run()``, ``run_batch(batch)`` (a launch) and then ``pop_and_process()`` of the *previous* batch, which
blocks until that batch's results are on the host. A pass therefore starts when step k − 1 ends on the GPU with step k
already launched, and a prompt it reads goes into step k + 1: an arrival while the engine runs waits the rest of the
step in flight (τ/2 on average, serve/queueing.poll_wait_s) and one whole step more (the lag, ``L`` = 1 step). Its
first token leaves when its own step ends (that result is the one the next pass blocks on): nothing after it. An idle
loop reads and launches at once: no lag.

The probability that an arrival finds the engine busy (a closed loop of C users, no think time; the arrival theorem:
an arriving user sees the other C − 1 as in the steady state): each other user is inside the engine (queued, in
prefill or decoding) for the part u = 1 − f/T of its cycle T = TTFT + decode steps·τ that is not its front end f
(HTTP, tokenisation: serve/frontend.frontend_s, outside the engine), independently, so

    P(busy) = 1 − (1 − u)^(C − 1),   lag = L·τ·P(busy)

— 0 for a lone user (C = 1: the engine idles while its front end runs), → L·τ under load; C is the model's
(fractional) Little's-law concurrency. The engine turns the loop off (``server_args.py``: ``disable_overlap_schedule``
set for speculative decoding without spec v2 and for pipeline parallelism, the cases the shipped deployments can
state): :func:`lag_steps` gives 0 there. The simulator holds a prompt read by a busy loop for one step
(serve/sim/scheduler.Instance, ``admission_lag``).

TensorRT-LLM's ``PyExecutor._executor_loop_overlap`` (NVIDIA/TensorRT-LLM ``tensorrt_llm/_torch/pyexecutor/
py_executor.py`` @00043967) has the same order per pass: fetch and schedule (``_prepare_and_schedule_batch``),
``_forward_step`` (a launch), then ``_update_requests(previous_batch.sample_state)`` and ``_process_previous_batch``,
which wait for the previous step's results: L = 1 too. ``PyExecutor.__init__`` picks it unless
``disable_overlap_scheduler`` (then ``_executor_loop``: fetch, forward, sample, respond — no lag) or pp > 1
(``_executor_loop_pp``); the executor creator sets ``disable_overlap_scheduler`` for a speculative mode whose
``support_overlap_scheduler()`` is false, and one-model MTP (DeepSeek's one MTP layer, ``MTP_EAGLE_ONE_MODEL``, the
default) is not one of them: TensorRT-LLM keeps the lag with MTP (``Efficiency.admission_lag_with_mtp``;
docs/gap_aic_ttft.md round 38, trtlag38).
"""

from __future__ import annotations

import numpy as np


def lag_steps(eff, dep, layout) -> int:
    """Whole steps of admission lag an aggregated instance of ``dep`` on ``layout`` pays (Efficiency.admission_lag_steps,
    set by the software stack): 0 where the engine runs its loop without overlap — pipeline parallelism (pp > 1:
    SGLang's ``server_args.py``, TensorRT-LLM's ``_executor_loop_pp``) or MTP on an engine that turns the overlap loop
    off for speculative decoding (SGLang without spec v2, 0.5.9/0.5.12; ``Efficiency.admission_lag_with_mtp`` False).

    >>> from types import SimpleNamespace as NS
    >>> lay, on = NS(pp=1), NS(admission_lag_steps=1.0, admission_lag_with_mtp=False)
    >>> lag_steps(on, NS(mtp=None), lay), lag_steps(on, NS(mtp=object()), lay), lag_steps(on, NS(mtp=None), NS(pp=2))
    (1, 0, 0)
    >>> lag_steps(NS(admission_lag_steps=1.0, admission_lag_with_mtp=True), NS(mtp=object()), lay)  # TensorRT-LLM
    1
    """
    steps = int(round(float(getattr(eff, "admission_lag_steps", 0.0))))
    if steps <= 0 or layout.pp > 1:
        return 0
    if dep.mtp is not None and not getattr(eff, "admission_lag_with_mtp", False):
        return 0
    return steps


def busy_probability(concurrency, inside_fraction) -> np.ndarray:
    """P(busy) = 1 − (1 − u)^(C − 1): the chance an arriving user finds another inside the engine, (N,).

    Args:
        concurrency: C, users of the instance, (N,) (fractional allowed; below 1 counts as 1).
        inside_fraction: u in [0, 1], the share of a user's cycle it spends inside the engine, (N,).

    >>> busy_probability([1.0, 2.0, 3.0], 0.5).tolist()  # alone: idle; 1 − 0.5; 1 − 0.25
    [0.0, 0.5, 0.75]
    """
    c = np.maximum(np.asarray(concurrency, dtype=float), 1.0)
    u = np.clip(np.asarray(inside_fraction, dtype=float), 0.0, 1.0)
    return 1.0 - (1.0 - u) ** (c - 1.0)


def arrival_busy(concurrency, front_s, cycle_s) -> np.ndarray:
    """P(busy) of an arriving user of a closed loop, (N,): :func:`busy_probability` with u = 1 − f/T (module docstring).
    Shared by the admission lag (:func:`admission_lag_s`) and the step in flight of serve/queueing.poll_wait_s.

    Args:
        concurrency: C, users of the instance, (N,).
        front_s: f, a request's front end outside the engine, s, (N,).
        cycle_s: T, a user's whole cycle (TTFT + decode steps·τ), s, (N,).

    >>> arrival_busy([1.0, 2.0], 0.1, 0.4).tolist()  # alone: idle; one other user inside 3/4 of its cycle
    [0.0, 0.75]
    """
    t = np.maximum(np.asarray(cycle_s, dtype=float), 1e-30)
    return busy_probability(concurrency, 1.0 - np.asarray(front_s, dtype=float) / t)


def admission_lag_s(steps: int, step_s, concurrency, front_s, cycle_s) -> np.ndarray:
    """The overlap loop's admission lag on an arrival's TTFT, s, (N,): L·τ·P(busy) (module docstring).

    Args:
        steps: L, whole steps of lag (:func:`lag_steps`).
        step_s: τ, the mean step, s, (N,).
        concurrency: C, users of the instance, (N,).
        front_s: f, a request's front end outside the engine, s, (N,).
        cycle_s: T, a user's whole cycle (TTFT + decode steps·τ), s, (N,).

    >>> admission_lag_s(1, 0.02, [1.0, 64.0], 0.1, 20.0).round(6).tolist()  # alone: 0; loaded: one step
    [0.0, 0.02]
    >>> admission_lag_s(0, 0.02, 64.0, 0.1, 20.0).tolist()  # a loop that launches what it reads
    0.0
    """
    tau = np.asarray(step_s, dtype=float)
    if steps <= 0:
        return np.zeros_like(tau)
    return steps * tau * arrival_busy(concurrency, front_s, cycle_s)
