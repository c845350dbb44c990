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

The rate (round 47, Poisson). A rank holding ``s`` running sequences of ``n`` decode steps each completes
``s (1 − P) / n`` of them an iteration in steady state, and as many transferred requests take their places.
Taking those admissions as Poisson per rank, the share of a rank's iterations with a prebuilt batch solves

    P = 1 − exp(−x (1 − P)),   x = s / n,

(:func:`skip_fraction`), and the rank's TPOT is the lockstep step over 1 − P (:func:`tpot_factor`).

The rate in prefill waves, across the lockstep ranks (round 48, :data:`PREBUILT_WAVES_ON`; :func:`lost_share`).
Read from the sglang 0.5.9 wheel, three facts the one-by-one form leaves out:

1. Transfers land in waves. A decode rank pre-allocates no slot past its running cap above 32 requests a rank
   (``model_runner_kv_cache_mixin``: ``pre_alloc_size = max_num_reqs * 2 if max_num_reqs <= 32 else 0``; the
   launches behind the stored attention-DP rows cap at 85 to 5,625 a rank), so a freed slot is pre-allocated,
   the prefill worker's bootstrap queue releases that prompt, the prompt runs in the worker's next iteration (one
   forward for all its prompts; under attention DP its ranks step together) and its KV lands when that iteration
   ends: each prefill iteration is one wave of transfers. ``pop_transferred`` runs once a decode iteration and
   ``get_new_prebuilt_batch`` takes every waiting request (up to the free slots) into one prebuilt batch.
2. An iteration in which every rank admits costs no step. ``prepare_mlp_sync_batch_raw``
   (``scheduler_dp_attn_mixin``) counts a prebuilt rank's tokens as 0 and builds the idle forward only while some
   rank has tokens (``need_idle_batch = max(global_num_tokens) > 0``): with all ranks prebuilt there is no
   forward, only host work (taken as free here, an assumption: a few ms against a 20-100 ms step). Only the
   ranks that admit while others decode lose the step.
3. The prompts of an instance go to its ranks in turn (InferenceX and NVIDIA's recipes set
   ``--prefill-round-robin-balance`` on the decode worker and ``--load-balance-method round_robin``), so K prompts
   landing in one decode step reach min(K, D) of its D ranks (an assumption: consecutive prompts, distinct ranks).

So in a decode step K ranks of D lose it when 0 < K < D, and none when K ≥ D; the share of a rank's steps lost is
L = E[K·1{K < D}] / D and the TPOT is the lockstep step over 1 − L. K is compound Poisson: waves arrive at w a
decode step (X prefill workers out of phase with the decode loop, each iterating every t0 / (1 − ρ), the
bulk-service period serve/disagg.py already prices: :func:`prefill_waves_per_step`), each carrying Poisson(m)
prompts to the instance, E[K] = w·m = μ. The instance admits what it completes: μ = (b / n)(1 − L), b sequences
an instance of n decode steps each. No constant: b, n, D from the decode pool, w from the prefill pool's own step
and load. Limits: D → ∞ with small waves gives L = x (1 − L), x = b / (n D), the one-by-one form to first
order; waves of D or more prompts give L → 0 (every rank admits at once). The decode-loop grouping alone (one
prebuilt iteration per decoding iteration that frees a slot) holds only where the decode side pre-allocates past
its cap (≤ 32 a rank): not these rows.

Release. The sglang 0.5.9 wheel (PyPI, its decode.py dated 2026-02-23) and 0.5.5.post2 have the skipping flow
and no ``SGLANG_ENABLE_OPT_PREBUILT_BATCH``; 0.5.10rc0 (decode.py dated 2026-03-27), 0.5.10 and later merge the
prebuilt batch and decode in one iteration ("Process prebuilt batch and schedule the next decode batch"). PyPI
lists no release between 0.5.9 and 0.5.10rc0, so the stack rule is ``before = "0.5.10rc0"``.

Shipped off (:data:`PREBUILT_SKIP_ON`): docs/gap_large_batch_decode.md, rounds 47 (mori47) and 48 (mi355x48),
has the figures; round 50 (fp4pair50) re-judged it on top of the FP4 TensorRT-LLM pair, with and without the stack
refit (docs/gap_fp4_fp8_decode.md §7): the aiconfigurator GB300 misses stay, so still off.
"""

from __future__ import annotations

import numpy as np

#: price the prebuilt iterations of attention-DP decode ranks on stacks whose ``disagg_prebuilt`` is ``skip``
#: (off: see the module docstring and docs/gap_large_batch_decode.md round 47)
PREBUILT_SKIP_ON = False

#: price the lost steps across the lockstep ranks with transfers in prefill waves (:func:`lost_share`, round 48)
#: rather than per rank one by one (:func:`skip_fraction`, round 47); read only while :data:`PREBUILT_SKIP_ON`
PREBUILT_WAVES_ON = True

#: fixed-point passes of the decode token time against the prefill pool's load (:func:`prefill_waves_per_step`)
WAVE_PASSES = 8

#: bisection halvings of :func:`skip_fraction` (P in [0, 1]: 60 leave < 1e-18)
_HALVINGS = 60
#: bisection halvings of :func:`lost_share` (L in [0, 1]: 40 leave < 1e-12; each costs a recursion over D)
_HALVINGS_L = 40


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
    root = _bisect_fixed_point(lambda p: 1.0 - np.exp(-x * (1.0 - p)), x.shape, _HALVINGS)
    return np.where(x > 0, root, 0.0)


def _bisect_fixed_point(rhs, shape, halvings: int):
    """The root in [0, 1] of v − ``rhs``(v), elementwise over ``shape``, by ``halvings`` bisections: ``rhs`` maps an
    array of trial values to the right side, and v − rhs(v) must rise through 0 once on [0, 1] (:func:`skip_fraction`,
    :func:`lost_share`)."""
    lo, hi = np.zeros(shape), np.ones(shape)
    for _ in range(halvings):
        mid = (lo + hi) / 2
        above = mid > rhs(mid)  # past the root
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return (lo + hi) / 2


def lost_share(batch, decode_steps, dp: int, waves_per_step):
    """Share L of a rank's decode steps lost to admitting iterations (module docstring): L = E[K·1{K < D}] / D,
    K compound Poisson (Poisson(w) waves a decode step, Poisson(m) prompts a wave, w·m = μ), μ = (b / n)(1 − L).

    The pmf of K below D by Panjer's recursion, p_k = (1/k) Σ_{j=1..k} j·(w f_j)·p_{k−j}, w f_j = μ e^{−m}
    m^{j−1} / j!, p_0 = exp(−w (1 − e^{−m})); ``waves_per_step`` = inf (m = 0) gives K ~ Poisson(μ). L found by
    bisection on L − E[K·1{K < D}] / D, which is −(≥ 0) at L = 0 and 1 at L = 1.

    Args:
        batch: running sequences an instance, b (array or float, ≥ 0).
        decode_steps: decode steps a request, n (> 0).
        dp: the instance's attention-DP ranks, D (≥ 1; D = 1 loses nothing: a lone rank that admits has no
            forward).
        waves_per_step: prefill waves a decode step, w (> 0, inf allowed; broadcast with ``batch``).

    Returns:
        L in [0, 1) (array).

    Raises:
        ValueError: a non-positive ``decode_steps`` or ``waves_per_step``, a negative ``batch``, or ``dp`` < 1.

    >>> round(float(lost_share(1280, 1023, 8, np.inf)), 4), round(float(lost_share(1280, 1023, 8, 0.5)), 4)
    (0.1352, 0.1234)
    """
    b = np.asarray(batch, dtype=float)
    n = np.asarray(decode_steps, dtype=float)
    w = np.asarray(waves_per_step, dtype=float)
    if np.any(n <= 0):
        raise ValueError("prebuilt_skip.lost_share: decode_steps must be > 0 (decode steps a request)")
    if np.any(b < 0):
        raise ValueError("prebuilt_skip.lost_share: batch must be >= 0 (running sequences an instance)")
    if np.any(~(w > 0)):
        raise ValueError("prebuilt_skip.lost_share: waves_per_step must be > 0 (prefill waves a decode step)")
    if int(dp) < 1:
        raise ValueError("prebuilt_skip.lost_share: dp must be >= 1 (attention-DP ranks of the instance)")
    d = int(dp)
    rate, w = np.broadcast_arrays(b / n, w)
    root = _bisect_fixed_point(lambda v: _expected_partial(rate * (1.0 - v), w, d) / d, rate.shape, _HALVINGS_L)
    return np.where(rate > 0, root, 0.0) if d > 1 else np.zeros(rate.shape)


def _expected_partial(mu, w, d: int):
    """E[K·1{K < d}] for K compound Poisson of mean ``mu`` in Poisson(``w``) waves (:func:`lost_share`)."""
    finite = np.isfinite(w)
    w_f = np.where(finite, w, 1.0)
    m = np.where(finite, mu / w_f, 0.0)  # prompts a wave (0: one by one)
    p = [np.exp(-np.where(finite, -w_f * np.expm1(-m), mu))]  # P(K = 0)
    # w·f_j for j = 1 .. d − 1 (f_j: Poisson(m) at j), written through μ so that w = inf needs no inf·0
    wf = [mu * np.exp(-m)]
    for j in range(2, d):
        wf.append(wf[-1] * m / j)
    out = np.zeros_like(mu)
    for k in range(1, d):
        pk = sum(j * wf[j - 1] * p[k - j] for j in range(1, k + 1)) / k
        p.append(pk)
        out = out + k * pk
    return out


def tpot_factor(seqs_per_rank, decode_steps):
    """The TPOT of a rank's sequences over its lockstep step, 1 / (1 − P) (:func:`skip_fraction`, round 47).

    Args and errors as :func:`skip_fraction`.

    >>> round(float(tpot_factor(160, 1023)), 4)
    1.1462
    """
    return 1.0 / (1.0 - skip_fraction(seqs_per_rank, decode_steps))


def prefill_waves_per_step(step_s, prefill_workers, step0_s, rho):
    """Prefill iterations that end within one decode step: w = X · τ · (1 − ρ) / t0 (X workers, each iterating
    every t0 / (1 − ρ) under bulk service, the period serve/disagg.py prices for the prefill queue).

    Args:
        step_s: the decode pool's lockstep step τ, s (array).
        prefill_workers: X (array, broadcast).
        step0_s: a prefill step's fixed part t0, s (≤ 0: unknown, gives inf: one by one).
        rho: the prefill workers' utilisation in [0, 1) (array, broadcast).

    Returns:
        w (array), inf where ``step0_s`` ≤ 0.

    >>> float(prefill_waves_per_step(0.05, 4, 0.04, 0.5)), float(prefill_waves_per_step(0.05, 4, 0.0, 0.5))
    (2.5, inf)
    """
    if step0_s <= 0:
        return np.full(np.broadcast(np.asarray(step_s), np.asarray(prefill_workers), np.asarray(rho)).shape, np.inf)
    return (
        np.asarray(prefill_workers, dtype=float) * np.asarray(step_s, dtype=float) * (1.0 - np.asarray(rho)) / step0_s
    )


def applies(on: bool, mode: str, dp: int) -> bool:
    """Whether the prebuilt iterations are priced: ``on``, the stack's ``disagg_prebuilt`` is ``skip`` and the
    decode layout has attention DP (``dp`` > 1).

    >>> applies(True, "skip", 8), applies(True, "skip", 1), applies(False, "skip", 8), applies(True, "merge", 8)
    (True, False, False, False)
    """
    return on and mode == "skip" and dp > 1


def decode_tau_factor(on: bool, mode: str, dp: int, batch, decode_steps, waves_per_step=None):
    """The factor on a disaggregated decode pool's step for the prebuilt iterations: :func:`tpot_factor` of
    ``batch / dp`` sequences a rank where ``on``, the stack's ``disagg_prebuilt`` is ``skip`` and ``dp`` > 1;
    else 1.

    Args:
        on: the switch (:data:`PREBUILT_SKIP_ON`).
        mode: ``Efficiency.disagg_prebuilt`` (``merge`` or ``skip``).
        dp: the decode layout's attention-DP degree.
        batch: running sequences an instance (array).
        decode_steps: decode steps a request.
        waves_per_step: prefill waves a decode step (:func:`prefill_waves_per_step`, broadcast with ``batch``):
            1 / (1 − :func:`lost_share`); None: round 47's per-rank form, :func:`tpot_factor` of ``batch / dp``.

    Returns:
        An array shaped like ``batch``.

    >>> float(decode_tau_factor(False, "skip", 8, 1280.0, 1023)), float(decode_tau_factor(True, "merge", 8, 1280.0, 1023))
    (1.0, 1.0)
    """
    b = np.asarray(batch, dtype=float)
    if not applies(on, mode, dp):
        return np.ones_like(b)
    if waves_per_step is None:
        return tpot_factor(b / dp, decode_steps)
    return 1.0 / (1.0 - lost_share(b, decode_steps, dp, waves_per_step))
