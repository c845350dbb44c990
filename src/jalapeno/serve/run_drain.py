"""The drain of an InferenceX run, per row: how long the last requests run alone (docs/model.md §8.7 effect 8).

InferenceX's client (``bench_serving``: ``--max-concurrency`` C, ``--num-prompts`` R·C with R = 10,
``--random-range-ratio`` r = 0.8; SemiAnalysisAI/InferenceX benchmarks/multi_node/srt_bench.sh and
benchmarks/benchmark_lib.sh @792d8aa4b858) starts C requests at once and issues the next request of one
shared list each time one finishes, until all R·C are issued; the run's duration ends with the last
request. Each of the C client slots is busy from 0 to its finish f_i, so the run's requests' summed E2E is
Σ f_i = R·C·E2E and the run lasts max f_i: its throughput is the steady figure times
R / (R + d), d = (E[max f] − E[mean f]) / E2E (constant step).

**Phases.** All slots decode in lock-step (one token a step), so a slot's request lasts its own TTFT plus
its output length in steps: a request's E2E is uniform on [1 − w/2, 1 + w/2] mean E2Es, w = (1 − r)·OSL·TPOT
/ E2E (the output length uniform in [r·OSL, OSL]; the prompt length's spread moves the prefill only and
is left out). Slot i's k-th request ends at S_k = o_i + Σ_{m ≤ k} L_m: o_i its first-wave offset (the
first wave's prompts get their first token staggered, serve/queueing.first_wave_s; the offset persists
in every later request of the slot), the sum Gaussian N(k, k·w²/12) (k ≥ 1 uniform terms). The shared
list balances the slots: the last request is issued at t_L, when the slots have completed R − 1
requests on average (Σ_k P(S_k ≤ t_L) = R − 1, taken deterministic: the C slots' mean), and every slot
ends at its first epoch after t_L:

    P(f ≤ x) = Σ_k ∫_{s ≤ t_L} g_{k−1}(s)·[F_L(x − s) − F_L(t_L − s)] ds      (x ≥ t_L)

(g_{k−1} the density of S_{k−1}, F_L the uniform law of one request). Small spread (phases in step):
every slot ends its R-th request, d = the expected spread of the largest of C sums (0.21 at C = 4,
0.36 at C = 16, r = 0.8, no stagger); wide spread or large C: the phases approach the renewal
equilibrium and d its bound (about 0.6 at r = 0.8). A Monte Carlo of the client protocol
(tests/unit/test_run_drain.py) checks the form at C = 4 … 4,096.

**The step speeds up as the batch empties.** While a share p(x) = 1 − F_f(x) of the slots still runs
(some slot runs with probability q(x) = 1 − F_f(x)^C), an instance's decode step is ρ(p/q) of the full
one's (ρ(u) = τ(u·B)/τ(B), B the instance's decode batch, decode-only steps), so the drain adds

    d = ∫ [q(x)·ρ(p(x)/q(x)) − p(x)] dx    (mean E2Es; ρ ≡ 1: E[max f] − E[mean f])

over the wall time the slots would have taken at the full step (serve/finite_run.drain_factor's
fluid form for an MLPerf Offline run, here with the InferenceX client's phases).

ASSUMPTIONS (named): the prompt lengths' spread and the MTP acceptance's randomness add no phase
spread; t_L is the slots' mean; the drain's steps are decode-only at the run's mean context.

Pure: no I/O.
"""

from __future__ import annotations

import math

import numpy as np

from jalapeno.errors import SpecError

#: Points of the grids (mean E2Es) the drain integrals use (d within 0.01 of a 2,401-point grid at C = 4,096: 0.1% of a run of R = 10).
GRID_POINTS = 601
#: A first wave of more prompts is summarised by this many mid-quantiles of its offsets.
OFFSET_QUANTILES = 64
#: (p90 − p50) of a normal law in standard deviations (Φ⁻¹(0.9)): a point's TTFT spread from its quantiles.
TTFT_SD_SPAN = 1.2816
#: Shares u of an instance's decode batch at which serve/point prices the drain's step ratio ρ(u)
#: (linear between them; the last is the full batch).
STEP_SHARES = np.array([1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1.0])


def _norm_cdf(z: np.ndarray) -> np.ndarray:
    """Standard normal CDF, elementwise."""
    from scipy.special import ndtr

    return ndtr(z)


def _uniform_cdf(x: np.ndarray, width: float) -> np.ndarray:
    """CDF of one request's E2E, uniform on [1 − width/2, 1 + width/2] (a point mass at 1 for width 0)."""
    if width <= 0:
        return (x >= 1.0).astype(float)
    return np.clip((x - (1.0 - width / 2)) / width, 0.0, 1.0)


def _epoch_cdf(k: int, var: float, o: np.ndarray, t: np.ndarray) -> np.ndarray:
    """P(S_k ≤ t) (M,) for a slot's k-th epoch S_k = offset + N(k, k·var), mixed over the offsets ``o`` (K,)."""
    sd = math.sqrt(k * var)
    if sd <= 1e-12:
        return np.mean((t[..., None] >= o + k), axis=-1).astype(float)
    return np.mean(_norm_cdf((t[..., None] - o - k) / sd), axis=-1)


def _last_issue(R: int, var: float, o: np.ndarray) -> float:
    """t_L: the time by which the slots have completed R − 1 requests on average (bisection)."""
    ks = np.arange(1, R + 3)
    lo, hi = R - 2.0 + o.min() - 1.0, R + o.max() + 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if sum(float(_epoch_cdf(int(k), var, o, np.array([mid]))[0]) for k in ks) < R - 1:
            lo = mid
        else:
            hi = mid
    return hi


def finish_cdf(
    requests_per_user: int, width: float, offsets, x: np.ndarray, jitter: float = 0.0
) -> tuple[float, np.ndarray]:
    """(t_L, P(f ≤ x)): the last issue's time and the law of a slot's finish (module docstring), x (M,)
    in mean E2Es; ``width`` w (mean E2Es), ``offsets`` (K,) the slots' first-wave offsets (mean E2Es,
    equally likely), ``jitter`` the standard deviation of a request's TTFT (mean E2Es), added to the sums'
    variance (the last request keeps the uniform law).

    >>> t, F = finish_cdf(10, 0.2, [0.0], np.array([9.5, 10.0, 10.5]))
    >>> round(float(t), 2), F.round(2).tolist()
    (9.49, [0.0, 0.5, 1.0])
    """
    R = int(requests_per_user)
    o = np.asarray(offsets, dtype=float).ravel()
    if o.size > OFFSET_QUANTILES:  # the offsets' law by its mid-quantiles, equally likely
        o = np.quantile(o, (np.arange(OFFSET_QUANTILES) + 0.5) / OFFSET_QUANTILES)
    o = o - o.mean()
    var = width * width / 12.0 + jitter * jitter
    t_l = _last_issue(R, var, o)
    # mass of S_{k−1} on an s grid below t_L (S_0 = the offsets), then the first epoch after t_L
    span = 6.0 * math.sqrt(R * var) + (o.max() - o.min()) + 1.5 + width
    s = np.linspace(t_l - span, t_l, GRID_POINTS)
    above = np.clip(np.asarray(x, dtype=float), t_l, None)
    F = np.zeros_like(above)
    for k in range(max(R - 3, 1), R + 3):
        if k == 1:
            cells, w_s = o[o <= t_l], np.full(int((o <= t_l).sum()), 1.0 / o.size)
        else:
            c = _epoch_cdf(k - 1, var, o, s)
            cells, w_s = s, np.diff(np.concatenate([[0.0], c]))  # the lowest cell takes the mass below it
        jump = _uniform_cdf(above[:, None] - cells[None, :], width) - _uniform_cdf(t_l - cells, width)[None, :]
        F += np.clip(jump, 0.0, 1.0) @ w_s
    return t_l, np.clip(F, 0.0, 1.0)


def drain_e2e(
    users: float, requests_per_user: int, width: float, offsets, step_ratio=None, jitter: float = 0.0
) -> float:
    """d, the run's extra duration in mean E2Es (module docstring): ``users`` C client slots (the whole
    run's), ``requests_per_user`` R, ``width`` w (one request's E2E range, mean E2Es), ``offsets`` (K,)
    the first-wave offsets (mean E2Es), ``step_ratio`` ((U,), (U,)): an instance's decode step over the
    full batch's at running shares u in (0, 1] (increasing; None: constant step); ``jitter`` the TTFT's
    standard deviation (mean E2Es; :func:`finish_cdf`).

    >>> round(drain_e2e(1, 10, 0.2, [0.0]), 6)  # one slot: no one waits for another
    0.0
    >>> round(drain_e2e(4, 10, 0.2, [0.0]), 3)  # in step: E[max of 4 N(0, 1)] = 1.029 x √10 x 0.2/√12 = 0.188
    0.187

    Raises:
        SpecError: ``users`` below 1, ``requests_per_user`` below 1 or ``width`` negative or at least 2.
    """
    if not users >= 1:
        raise SpecError("users", f"{users!r}", "give the run's client concurrency (at least 1)")
    if not (isinstance(requests_per_user, (int, np.integer)) and requests_per_user >= 1):
        raise SpecError("requests_per_user", f"{requests_per_user!r}", "give a whole number of requests per slot, >= 1")
    if not 0 <= width < 2:
        raise SpecError("width", f"{width!r}", "give the E2E range in mean E2Es, in [0, 2)")
    if not jitter >= 0:
        raise SpecError("jitter", f"{jitter!r}", "give the TTFT's standard deviation in mean E2Es (>= 0)")
    o = np.asarray(offsets, dtype=float).ravel()
    R = int(requests_per_user)
    var = width * width / 12.0 + jitter * jitter
    oq = np.quantile(o, (np.arange(OFFSET_QUANTILES) + 0.5) / OFFSET_QUANTILES) if o.size > OFFSET_QUANTILES else o
    oq = oq - oq.mean()
    t0 = _last_issue(R, var, oq)
    x = np.linspace(t0, R + oq.max() + 6.0 * math.sqrt(R * var) + 1.0 + width, GRID_POINTS)
    t_l, F = finish_cdf(R, width, oq, x, jitter)
    p, q = 1.0 - F, 1.0 - F ** float(users)
    if step_ratio is None:
        ratio = np.ones_like(p)
    else:
        u, r = (np.asarray(a, dtype=float).ravel() for a in step_ratio)
        ratio = np.interp(np.where(q > 0, p / np.maximum(q, 1e-300), 1.0), u, r)
    return float(max(np.trapezoid(q * ratio - p, x), 0.0))
