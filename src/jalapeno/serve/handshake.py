"""A disaggregated engine's handshake with its decode worker's loop, priced on a request's TTFT.

The analytic model (serve/disagg.py) holds half a decode step τ_d of the decode worker's loop in a
disaggregated request's TTFT: the KV arrives mid-step and the first token leaves with the next step
(in SGLang's terms, the transfer poll at the top of an iteration). An engine whose
``Efficiency.disagg_handshake`` (set by its software stack, data/stacks.toml) is ``decode_prealloc``
holds more:

1. **Pre-allocation poll** (:data:`PREALLOC_POLL_STEPS`, ½ step on average): the decode worker must
   pre-allocate the request's KV before the prefill worker may schedule it, and does so once per
   iteration at the top of its loop. A request reaches it at a uniform point of the step in flight,
   so the prefill may start U(0, τ_d) later — but the prefill queue's wait W runs in parallel, so the
   prompt starts max(U, W) after arrival and the TTFT grows by E[max(U − W, 0)] =
   (τ_d − W)² / (2 τ_d) for W < τ_d, else 0 (:func:`prealloc_wait_s`; W is the model's mean wait,
   taken as fixed: an assumption).
2. **Transfer poll** (½ step): what the model's half step already stands for.
3. **Prebuilt iteration** (:data:`PREBUILT_STEPS`, 1 step): the transferred request runs one
   iteration as a "prebuilt" batch, and its first token streams when that iteration's result is
   processed.

Source (read by round 28's sglboot28 in sgl-project/sglang 0.5.5.post2, 0.5.8 and 0.5.8.post1,
``python/sglang/srt/disaggregation/decode.py`` and ``scheduler.py``; docs/gap_aic_ttft.md, "SGLang's
bootstrap / pre-allocation handshake", scripts/sgl_bootstrap_wait.py): ``event_loop_overlap_disagg_decode``
runs ``process_decode_queue`` → ``DecodePreallocQueue.pop_preallocated`` and
``DecodeTransferQueue.pop_transferred`` once at the top of each iteration
(``disaggregation_decode_polling_interval`` default 1), then the prebuilt batch
(``process_batch_result_prebuilt`` → ``stream_output``). No slot limit binds (the pre-allocation gate is
the KV capacity the model already caps the decode batch with), so this is a latency, not a capacity.
TensorRT-LLM (the context server schedules a prompt on arrival) and vLLM (``NixlConnector``: the decode
side pulls after the prefill) have no such handshake: ``none``.

**The decode worker's receive interval** (:func:`recv_poll_wait_s`). With SGLang's
``--scheduler-recv-interval n`` on the decode worker the request reaches its scheduler only when the recv
skipper lets it read: each decode step weighs 1, an idle iteration (no batch) 1 and any other step (prefill,
prebuilt) 1000 (``managers/scheduler_recv_skipper.py``, ``SGLANG_SCHEDULER_RECV_SKIPPER_WEIGHT_*`` defaults 1000 /
1 / 1 / 1 in ``environ.py``, read at the 0.5.x releases), so a decoding worker reads every n decode steps and
the pre-allocation poll's period is n·τ_d: U ~ U(0, n·τ_d), and the TTFT grows by E[max(U − W, 0)]
= :func:`prealloc_wait_s` (n·τ_d, W). An idle decode worker spins through host-only iterations and reads at
once; the period applies with the probability P that the worker is decoding another user's request (its
other users' mean batch, capped at 1: an assumption, the aggregated poll's min(C − 1, 1)), else one
iteration (n = 1, the form above). The prefill worker's own interval costs nothing here: a prefill step
weighs 1000 ≥ n, so it reads after every prefill step, and its idle iterations (host-only, no step) reach n
within a few milliseconds. The recipes that set it (NVIDIA/srt-slurm @5063eb43 and Dynamo's GB200 scripts):
fit/aic_sgl_recv.py. The simulator (serve/sim/bootstrap.py) polls every iteration (n = 1): not modelled there.

The simulator runs the same path (serve/sim/bootstrap.py): the prompt enters the prefill queue at the
decode worker's next iteration boundary and the first token leaves at the end of its prebuilt step.
"""

from __future__ import annotations

import numpy as np

from jalapeno.specs.efficiency_params import DISAGG_HANDSHAKE_NAMES

#: mean decode steps of the pre-allocation poll's residual before the prefill may start (U(0, τ_d) mean;
#: the overlap with the prefill queue is :func:`prealloc_wait_s`)
PREALLOC_POLL_STEPS = 0.5
#: decode steps of the prebuilt iteration before the first token streams
PREBUILT_STEPS = 1.0


def prealloc_wait_s(tau_s, wait_s):
    """E[max(U − W, 0)], U ~ U(0, τ_d): the pre-allocation poll's residual past the prefill queue wait W, s.

    Args:
        tau_s: the decode step τ_d, s (array or float).
        wait_s: the request's mean wait in the prefill queue W, s (broadcast with ``tau_s``).

    Returns:
        (τ_d − W)² / (2 τ_d) where W < τ_d, else 0 (the mean τ_d/2 at W = 0; 0 for τ_d = 0).

    >>> float(prealloc_wait_s(0.01, 0.0)), float(prealloc_wait_s(0.01, 0.005)), float(prealloc_wait_s(0.01, 0.02))
    (0.005, 0.00125, 0.0)
    """
    tau = np.asarray(tau_s, dtype=float)
    short = np.clip(tau - np.asarray(wait_s, dtype=float), 0.0, None)
    return np.divide(short * short, 2 * tau, out=np.zeros(np.broadcast(tau, short).shape), where=tau > 0)


def recv_poll_wait_s(tau_s, wait_s, recv_interval: int = 1, busy_probability=1.0):
    """The pre-allocation poll's residual past the prefill queue wait W with the decode worker reading new
    requests every ``recv_interval`` decode steps (module docstring), s.

    Args:
        tau_s: the decode step τ_d, s; wait_s: the prefill queue's mean wait W, s (broadcast together).
        recv_interval: n, SGLang's ``--scheduler-recv-interval`` on the decode worker (≥ 1).
        busy_probability: P in [0, 1], the chance the decode worker is decoding when the request reaches it.

    Returns:
        P·:func:`prealloc_wait_s` (n·τ_d, W) + (1 − P)·:func:`prealloc_wait_s` (τ_d, W); n = 1 gives
        :func:`prealloc_wait_s` (τ_d, W) whatever P.

    Raises:
        ValueError: ``recv_interval`` below 1.

    >>> round(float(recv_poll_wait_s(0.01, 0.0, 10)), 6)  # (10·0.01)² / (2·10·0.01) = n·τ/2
    0.05
    >>> round(float(recv_poll_wait_s(0.01, 0.0, 10, 0.5)), 4), float(recv_poll_wait_s(0.01, 0.0, 1, 0.5))
    (0.0275, 0.005)
    """
    n = int(recv_interval)
    if n < 1:
        raise ValueError(f"recv_interval {recv_interval!r}: use an integer >= 1 (SGLang --scheduler-recv-interval)")
    one = prealloc_wait_s(tau_s, wait_s)
    if n == 1:
        return one
    p = np.clip(np.asarray(busy_probability, dtype=float), 0.0, 1.0)
    return p * prealloc_wait_s(n * np.asarray(tau_s, dtype=float), wait_s) + (1 - p) * one


def handshake_s(kind: str, tau_s, wait_s, recv_interval: int = 1, busy_probability=1.0):
    """A disaggregated request's TTFT beyond the model's half decode step from handshake ``kind``, s.

    Args:
        kind: ``Efficiency.disagg_handshake`` (:data:`~jalapeno.specs.efficiency_params.DISAGG_HANDSHAKE_NAMES`).
        tau_s: the decode step τ_d, s; wait_s: the prefill queue's mean wait W, s (broadcast together).
        recv_interval, busy_probability: the decode worker's receive interval and the chance it is decoding
            (:func:`recv_poll_wait_s`; 1 and 1.0: a poll every iteration).

    Returns:
        ``none``: 0; ``decode_prealloc``: PREBUILT_STEPS·τ_d + :func:`recv_poll_wait_s` (τ_d, W, n, P).

    >>> float(handshake_s("decode_prealloc", 0.01, 0.0)), float(handshake_s("none", 0.01, 0.0))
    (0.015, 0.0)

    Raises:
        ValueError: an unknown ``kind`` (the stack loader admits only the known ones).
    """
    tau = np.asarray(tau_s, dtype=float)
    if kind == "none":
        return np.zeros(np.broadcast(tau, np.asarray(wait_s, dtype=float)).shape)
    if kind == "decode_prealloc":
        return PREBUILT_STEPS * tau + recv_poll_wait_s(tau, wait_s, recv_interval, busy_probability)
    raise ValueError(f"disagg_handshake {kind!r}: use one of {', '.join(DISAGG_HANDSHAKE_NAMES)}")
