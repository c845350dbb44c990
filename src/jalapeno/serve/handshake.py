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


def handshake_s(kind: str, tau_s, wait_s):
    """A disaggregated request's TTFT beyond the model's half decode step from handshake ``kind``, s.

    Args:
        kind: ``Efficiency.disagg_handshake`` (:data:`~jalapeno.specs.efficiency_params.DISAGG_HANDSHAKE_NAMES`).
        tau_s: the decode step τ_d, s; wait_s: the prefill queue's mean wait W, s (broadcast together).

    Returns:
        ``none``: 0; ``decode_prealloc``: PREBUILT_STEPS·τ_d + :func:`prealloc_wait_s` (τ_d, W).

    >>> float(handshake_s("decode_prealloc", 0.01, 0.0)), float(handshake_s("none", 0.01, 0.0))
    (0.015, 0.0)

    Raises:
        ValueError: an unknown ``kind`` (the stack loader admits only the known ones).
    """
    tau = np.asarray(tau_s, dtype=float)
    if kind == "none":
        return np.zeros(np.broadcast(tau, np.asarray(wait_s, dtype=float)).shape)
    if kind == "decode_prealloc":
        return PREBUILT_STEPS * tau + prealloc_wait_s(tau, wait_s)
    raise ValueError(f"disagg_handshake {kind!r}: use one of {', '.join(DISAGG_HANDSHAKE_NAMES)}")
