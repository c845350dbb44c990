"""TensorRT-LLM's attention-DP context balancing, in closed form (docs/model.md §8.7 effect 5).

With ``attention_dp_config.enable_balance`` every attention-DP rank holds its context requests until each rank has
one, or until ``timeout_iters`` iterations have passed since the last release (TensorRT-LLM
``PyExecutor._balance_adp_requests``). This module prices the wait of a new prompt for that release
(:func:`adp_balance_wait_s`, its slots-free mean over the release clock's rounds :func:`adp_clock_round_wait_s`, shipped
off by :data:`ADP_CLOCK_MEAN`) and the prompts one release carries (:func:`adp_release_prompts`). Moved out of
serve/queueing.py in round 39 (module budget); the closed loop's use is serve/analytic, the open loop's
serve/open_loop.
"""

from __future__ import annotations

import numpy as np

#: :func:`adp_balance_wait_s`'s slots-free wait as the mean over the release clock's rounds (the engine's rule);
#: shipped OFF in round 39: it worsens the held-out TTFT of the rows it moves (docs/gap_large_batch_decode.md).
ADP_CLOCK_MEAN = False


def adp_balance_wait_s(
    dp: int, request_rate_per_s, step_s, timeout_iters: int | None, slots_full, clock: bool | None = None
) -> np.ndarray:
    """Wait of a new prompt for TensorRT-LLM's attention-DP context balancing (effect 5), s, (N,).

    With ``attention_dp_config.enable_balance`` every attention-DP rank holds its context requests
    until all ``dp`` ranks have one (and a free slot), then all prefill in the same step; a rank
    waits at most ``timeout_iters`` steps (NVIDIA/TensorRT-LLM
    ``tensorrt_llm/_torch/pyexecutor/py_executor.py``, ``_balance_adp_requests``: the context
    requests are emptied while ``all_ranks_have_ctx_requests`` is false, until
    ``adp_ctx_waiting_iters_count >= attention_dp_time_out_iters``; ranks with no generation
    request release at once). A round is complete once each rank has received a prompt:

    - slots free: new requests go to the least-loaded rank (``executor_request_queue.py``,
      ``_balance_requests_across_ranks``), so a round is dp consecutive arrivals and the i-th waits
      for dp − i more: on average (dp − 1)/(2λ);
    - slots full (the running cap binds): a request can only join the rank whose request just
      finished, a uniformly random one, so the round lasts until every rank has been hit (the
      coupon collector). With j ranks hit, the next new rank arrives after m_j = dp/(λ·(dp − j))
      on average; memoryless, every arrival in phase j (the one that opened it and the j/(dp − j)
      that hit an already-waiting rank meanwhile: dp/(dp − j) in all) waits S_j = Σ_{i ≥ j} m_i,
      the last arrival none, so the mean wait is Σ_{j=1}^{dp−1} dp/(dp − j)·S_j over the
      dp + Σ_j j/(dp − j) arrivals of a round.

    The timeout is a clock, not a per-prompt cap: the counter runs whether or not a prompt is held and
    restarts only at a release (:func:`adp_release_prompts`), so a free round lasts L = min(S_dp, Θ),
    Θ = ``timeout_iters``·τ, and by renewal reward the mean wait is E[∫_0^L N dt]/(λ·E[L]) (``clock``
    True, :func:`adp_clock_round_wait_s`): Θ/2 where the clock binds. Shipped OFF (:data:`ADP_CLOCK_MEAN`):
    min((dp − 1)/(2λ), Θ), twice the residual where the clock binds (MLPerf DeepSeek-R1 Server at 3.8-5/s:
    0.53-0.59 s, not 0.27-0.30), as the clock worsens the held-out TTFT of the rows it moves (round 39,
    docs/gap_large_batch_decode.md); full slots are capped at Θ either way. Backlogs carried between
    rounds are not modelled (they shorten later rounds): the wait of a round that starts empty.

    Args:
        dp: attention-DP ranks of the instance (1: no gate).
        request_rate_per_s: λ, requests per second reaching the instance, (N,).
        step_s: τ, the mean step, s, (N,).
        timeout_iters: the engine's ``timeout_iters`` (None: no balancing, no wait).
        slots_full: (N,) bool, whether the instance's running cap binds.
        clock: the free regime's mean over the release clock's rounds (True) or capped at Θ (False); None: the
            module's :data:`ADP_CLOCK_MEAN`, read at the call (so setting the switch turns it on everywhere).

    >>> [round(float(adp_balance_wait_s(8, 2.0, 0.1, t, False, clock=c)), 4) for t, c in ((60, False), (600, True))]
    [1.75, 1.75]
    >>> round(float(adp_balance_wait_s(2, 1.0, 0.1, 10, False, clock=True)), 4)  # x = 1 (below); capped: min(0.5, Θ)
    0.2948
    >>> round(float(adp_balance_wait_s(2, 1.0, 1.0, 60, True)), 4)  # m_1 = 2: (2·2)/(2 + 1)
    1.3333
    >>> float(adp_balance_wait_s(8, 0.01, 0.1, 60, True))  # capped at 60 steps
    6.0
    """
    lam = np.maximum(np.asarray(request_rate_per_s, dtype=float), 1e-30)
    tau = np.asarray(step_s, dtype=float)
    if timeout_iters is None or dp <= 1:
        return np.zeros(np.broadcast(lam, tau).shape)
    j = np.arange(1, dp, dtype=float)
    m = dp / (dp - j)  # m_j·λ, j = 1..dp − 1
    s_j = np.cumsum(m[::-1])[::-1]  # S_j·λ
    full = float((dp / (dp - j) * s_j).sum()) / float(dp + (j / (dp - j)).sum()) / lam
    if clock is None:
        clock = ADP_CLOCK_MEAN
    free = adp_clock_round_wait_s(dp, lam, timeout_iters * tau) if clock else (dp - 1) / (2.0 * lam)
    return np.minimum(np.where(np.asarray(slots_full, dtype=bool), full, free), timeout_iters * tau)


def adp_clock_round_wait_s(dp: int, request_rate_per_s, clock_s) -> np.ndarray:
    """Mean wait (s) of a prompt for a slots-free attention-DP balancing round that closes at its dp-th
    arrival or at the release clock's tick ``clock_s`` = Θ after the last release, whichever is first
    (:func:`adp_balance_wait_s`), broadcast: Σ_{k<dp} k·P(Pois(x) > k) / (λ·Σ_{k<dp} P(Pois(x) > k)), x = λΘ
    (∫_0^Θ P(N(t) = k) dt = P(Pois(x) > k)/λ), from (dp − 1)/(2λ) at x ≫ dp to Θ/2 (the clock's residual) at x → 0.

    >>> # dp = 2, x = 1: P(Pois > 1)/(λ·(P(Pois > 0) + P(Pois > 1))) = (1 − 2/e)/(2 − 3/e); x → 0: Θ/2
    >>> [round(float(adp_clock_round_wait_s(2, 1.0, 1.0)), 4), round(float(adp_clock_round_wait_s(8, 1e-6, 0.5)), 4)]
    [0.2948, 0.25]
    """
    from scipy.special import gammainc  # P(Pois(x) > k) = gammainc(k + 1, x); lazily, as adp_release_prompts

    lam = np.maximum(np.asarray(request_rate_per_s, dtype=float), 1e-30)
    x = lam * np.asarray(clock_s, dtype=float)
    k = np.arange(int(dp), dtype=float)
    p = gammainc(k + 1.0, x[..., None])
    with np.errstate(divide="ignore", invalid="ignore"):
        w = (k * p).sum(axis=-1) / (lam * p.sum(axis=-1))
    return np.where(x > 0, w, 0.0)


def adp_release_prompts(arrivals_per_step, dp: int, timeout_iters: int) -> np.ndarray:
    """Prompts one release of TensorRT-LLM's attention-DP context balancing carries, (N,).

    ``_balance_adp_requests`` (NVIDIA/TensorRT-LLM ``tensorrt_llm/_torch/pyexecutor/py_executor.py``;
    the same rule in the later ``scheduler`` refactor) counts every iteration in which some rank has no
    context request (``adp_ctx_waiting_iters_count``, reset only when it releases), whether or not any
    rank holds one, and releases the held prompts when every rank has one or when the count reaches
    ``timeout_iters``. So the releases run on a clock of at most T = ``timeout_iters`` iterations: with N
    the prompts of a window's T steps (Poisson, mean a·T), the round completes first exactly when N ≥ dp and
    carries dp prompts (one per rank: least-loaded dispatch), else the timeout releases the N that arrived;
    a window with none releases nothing. One release carries E[min(N, dp) | N ≥ 1] =
    Σ_{j=1..dp} P(N ≥ j) / (1 − e^(−a·T)) — a·T/(1 − e^(−a·T)) where a·T ≪ dp, dp where a·T ≫ dp (the
    form of round 36, min(dp, a·T/(1 − e^(−a·T))), was up to 17% larger where a·T ≈ dp: 8.0 against 6.89 at
    dp = 8, a·T = 8; review36). The share of steps carrying prompts is a / (this), where the earlier form,
    dp in every release, gave a/dp. The batching wait after a completed round (``batching_wait_iters``) is
    not modelled (it only acts once every rank has one).

    Args:
        arrivals_per_step: a, prompts reaching the instance per engine step, (N,).
        dp: the instance's attention-DP ranks.
        timeout_iters: the engine's ``attention_dp_config.timeout_iters``.

    >>> # dp = 2, a·T = 1: (P(N ≥ 1) + P(N ≥ 2)) / P(N ≥ 1) = ((1 − 1/e) + (1 − 2/e)) / (1 − 1/e) = 1.418
    >>> adp_release_prompts([1 / 9, 50.0], 2, 9).round(3).tolist()
    [1.418, 2.0]
    """
    from scipy.special import gammainc  # P(N ≥ j) for N ~ Poisson(x) is gammainc(j, x); lazily, as open_loop.py

    a = np.maximum(np.asarray(arrivals_per_step, dtype=float), 1e-12)
    at = a * float(timeout_iters)
    j = np.arange(1, int(dp) + 1, dtype=float)
    return gammainc(j, at[..., None]).sum(axis=-1) / -np.expm1(-at)
