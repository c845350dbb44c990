"""The decode steps an attention-DP rank of a disaggregated SGLang decode worker spends on admitting requests.

Mechanism (sgl-project/sglang ``python/sglang/srt/disaggregation/decode.py``,
``SchedulerDisaggregationDecodeMixin.get_next_disagg_decode_batch_to_run`` and ``_run_batch_prebuilt``, as
stored before PR #19568): each iteration of the decode worker's loop first looks for requests whose KV has
arrived (``get_new_prebuilt_batch``). If there are any, that iteration *returns the prebuilt batch instead of
the running batch*: the running sequences do not decode in it, and the prebuilt batch runs no model forward;
the next iteration merges it into the running batch. Under attention data parallelism the ranks step in
lockstep (the MoE all-to-all), so a rank with a prebuilt batch runs an idle forward while the others decode
(PR #12839, "Decode (dp0) + Prebuilt (dp1) -> Decode (dp0) + Idle (dp1, but returns prebuilt batch)"): the
iteration costs that rank's running sequences one whole step. Without attention DP a prebuilt iteration has
no forward (host work only) and is not priced here. PR #19568 (opened 2026-02-28, "Make the optimized prebuilt
batch flow the default in disagg decode, removing the ``SGLANG_ENABLE_OPT_PREBUILT_BATCH`` env flag and the old
non-optimized path") merges the prebuilt batch and decodes in the same iteration; the InferenceX MoRI image
``rocm/sgl-dev:sglang-0.5.9-rocm720-mi35x-mori-0227-3`` (a 2026-02-27 build) predates it and its env.sh sets
no ``SGLANG_ENABLE_OPT_PREBUILT_BATCH``.

The rate. A rank holding ``s`` running sequences of ``n`` decode steps each completes ``s (1 − P) / n``
of them an iteration in steady state, and each frees a slot that a transferred request takes (the decode
pool full, C above its cap). Taking those admissions as Poisson per rank (an assumption: transfers finishing
together on one rank share one prebuilt iteration, so grouped arrivals lower P) the share of a rank's
iterations with a prebuilt batch solves

    P = 1 − exp(−x (1 − P)),   x = s / n,

and the rank's TPOT is the lockstep step over 1 − P (:func:`skip_fraction`, :func:`tpot_factor`). No
constant: x is the decode batch a rank over the decode steps a request. It does not depend on the step time
or the context, so it multiplies the step by one factor at every prompt length.

Shipped off (:data:`PREBUILT_SKIP_ON`): docs/gap_large_batch_decode.md, round 47 (mori47), has the figures.
"""

from __future__ import annotations

import numpy as np

#: price the prebuilt iterations of attention-DP decode ranks on stacks whose ``disagg_prebuilt`` is ``skip``
#: (off: see the module docstring and docs/gap_large_batch_decode.md round 47)
PREBUILT_SKIP_ON = False

#: bisection halvings of :func:`skip_fraction` (P in [0, 1]: 60 leave < 1e-18)
_HALVINGS = 60


def skip_fraction(seqs_per_rank, decode_steps):
    """Share P of a rank's iterations spent on a prebuilt batch: P = 1 − exp(−x (1 − P)), x = s / n.

    The root is unique in [0, 1) for every x > 0 (the right side falls from 1 − e^{−x} at P = 0 to 0 at
    P = 1), found by bisection; u = x (1 − P) solves u·e^u = x (Lambert's W: 1 − P = W(x) / x).

    Args:
        seqs_per_rank: running sequences a rank, s (array or float, ≥ 0).
        decode_steps: decode steps a request, n (broadcast with ``seqs_per_rank``, > 0).

    Returns:
        P in [0, 1) (array), 0 where s = 0.

    Raises:
        ValueError: ``decode_steps`` not positive or ``seqs_per_rank`` negative.

    >>> round(float(skip_fraction(160, 1023)), 4)
    0.1276
    """
    s = np.asarray(seqs_per_rank, dtype=float)
    n = np.asarray(decode_steps, dtype=float)
    if np.any(n <= 0):
        raise ValueError("prebuilt_skip.skip_fraction: decode_steps must be > 0 (decode steps a request)")
    if np.any(s < 0):
        raise ValueError("prebuilt_skip.skip_fraction: seqs_per_rank must be >= 0 (running sequences a rank)")
    x = s / n
    lo, hi = np.zeros_like(x), np.ones_like(x)
    for _ in range(_HALVINGS):
        mid = (lo + hi) / 2
        above = mid > 1.0 - np.exp(-x * (1.0 - mid))  # past the root: P − f(P) rises with P
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return np.where(x > 0, (lo + hi) / 2, 0.0)


def tpot_factor(seqs_per_rank, decode_steps):
    """The TPOT of a rank's sequences over its lockstep step, 1 / (1 − P) (:func:`skip_fraction`).

    Args and errors as :func:`skip_fraction`.

    >>> round(float(tpot_factor(160, 1023)), 4)
    1.1462
    """
    return 1.0 / (1.0 - skip_fraction(seqs_per_rank, decode_steps))


def decode_tau_factor(on: bool, mode: str, dp: int, batch, decode_steps):
    """The factor on a disaggregated decode pool's step for the prebuilt iterations: :func:`tpot_factor` of
    ``batch / dp`` sequences a rank where ``on``, the stack's ``disagg_prebuilt`` is ``skip`` and ``dp`` > 1;
    else 1.

    Args:
        on: the switch (:data:`PREBUILT_SKIP_ON`).
        mode: ``Efficiency.disagg_prebuilt`` (``merge`` or ``skip``).
        dp: the decode layout's attention-DP degree.
        batch: running sequences an instance (array).
        decode_steps: decode steps a request.

    Returns:
        An array shaped like ``batch``.

    >>> float(decode_tau_factor(False, "skip", 8, 1280.0, 1023)), float(decode_tau_factor(True, "merge", 8, 1280.0, 1023))
    (1.0, 1.0)
    """
    b = np.asarray(batch, dtype=float)
    if not on or mode != "skip" or dp <= 1:
        return np.ones_like(b)
    return tpot_factor(b / dp, decode_steps)
