"""The steady TTFT's spread: quantiles of an aggregated engine's closed-loop TTFT, not the mean moved by lengths (round 51).

serve/analytic.agg_tail prices TTFT quantile q as the mean wait plus the prompt-length terms at the length quantile
(front end, the prompt's own prefill): the wait (the step in flight, the prompts that join the arrival's step) enters at
its mean, so the steady median sits at the mean. InferenceX reports the median TTFT (fit/validate compares it with the
predicted p50), and the request-level simulator's steady median sits below its mean (MI300X DeepSeek-R1 8k/1k C 64:
0.522 against 0.579 s, docs/gap_aic_ttft.md round 51): the wait is skewed.

**The wait's distribution** is that of the batch-service queue whose mean serve/queueing.agg_queue_s prices (effect 1
there; nothing new is assumed, nothing fitted). With j the prefill chunks a step carries, a step lasts
τ_j = t_d + s·j and the next one carries the chunks that arrived meanwhile:

    P(j_{k+1} = i | j_k = j) = Poisson(i; λ_c·τ_j)          (λ_c the other users' chunk rate, the arrival theorem)

so the steps' chunk counts form a Markov chain whose stationary law π (:func:`chunk_law`, by iteration; mean
n̄ = λ_c·t_d/(1 − ρ), variance n̄/(1 − ρ²), ρ = λ_c·s: effect 1's moments) sets the steps. An arrival lands in a
step with probability ∝ π_j·τ_j (length-biased), waits U·τ_j of it (U uniform on [0, 1], the residual) and is carried
by the next step with its own chunk and the j' ~ Poisson(λ_c·τ_j) others that arrived in the same step:

    W = U·τ_j + t_d + s·(1 + j'),     E[W] = E[τ²]/(2E[τ]) + t_d + s·(1 + λ_c·E[τ²]/E[τ])

(:func:`wait_mean_s`; E[W] − (τ/2 + t_d + s·max(n̄, 1)) is agg_queue_s's ΔTTFT). The lengths add L, the prompt-length
terms, uniform over [L_lo, L_hi] (InferenceX draws lengths uniformly in [r·ISL, ISL]; L is linear in the length to
first order), independent of W. TTFT quantile q is then the q-quantile of W + L (:func:`wait_quantile_s`, the CDF in
closed form given (j, j'): the uniform residual convolved with the uniform L; bisection on it), and
:func:`quantile_shift_s` returns Q_q(W + L) − E[W] − L_q: what the spread moves quantile q by against the analytic's
mean-plus-length form. The mean is untouched.

Named assumptions: the step budget does not cap a step's chunks (the batch-service form effect 1's mean rests on);
a workload with a length spread (a dataset's, specs/workload.LengthSpread) is given the same uniform L, its width
read off the analytic's 0.5 and 0.99 quantiles (serve/analytic.agg_tail), an approximation there;
the other waits (the scheduler's poll period, attention-DP's gate, the overlap loop's lag) keep their mean values
(constant shifts); TensorRT-LLM's batch waiting (serve/batch_wait.py) replaces the queue and is left as it is.
Shipped behind :data:`STEADY_SPREAD_ON`.

Pure: no I/O.
"""

from __future__ import annotations

import numpy as np

from jalapeno.serve.queueing import MAX_RHO, others

#: Whether an aggregated point's steady TTFT quantiles carry the wait's spread (module docstring); read at each call
#: (serve/analytic.agg_tail). Built round 51 (ttftmed51).
STEADY_SPREAD_ON = False
#: the chain's chunk counts are truncated at mean + this many standard deviations (+ 8): a numerical reach (the
#: Poisson tails past it carry < 1e-12), not a fitted constant
_REACH_SD = 12.0
#: bisection steps of the quantile (the bracket halves each step: 2^-50 of the wait's span)
_BISECT = 50


def chunk_law(step0_s, chunk_cost_s, chunk_rate, max_iter: int = 4000, tol: float = 1e-12) -> np.ndarray:
    """π, the stationary law of the prefill chunks a step carries (module docstring), (N, J), rows summing to 1.

    Args:
        step0_s: t_d, the step without prefill, s, (N,); chunk_cost_s: s, one chunk's marginal step time, s, (N,).
        chunk_rate: λ_c, chunks arriving per second (the other users'), (N,); λ_c·s is capped at
            serve/queueing.MAX_RHO (the chain's pole at 1), as agg_queue_s caps it.
        max_iter, tol: the iteration's cap and convergence (max change of π).

    >>> chunk_law([1.0], [0.0], [0.5]).round(4)[0, :4].tolist()  # steps of 1 s: Poisson(0.5)
    [0.6065, 0.3033, 0.0758, 0.0126]
    """
    td = np.atleast_1d(np.asarray(step0_s, dtype=float))
    s = np.atleast_1d(np.asarray(chunk_cost_s, dtype=float))
    lam = _capped_rate(td, s, chunk_rate)
    rho = lam * s
    mean = lam * td / np.maximum(1 - rho, 1e-12)
    j_max = int(np.ceil(np.max(mean + _REACH_SD * np.sqrt(mean / np.maximum(1 - rho**2, 1e-12))) + 8))
    j = np.arange(j_max + 1, dtype=float)
    rates = lam[:, None] * (td[:, None] + s[:, None] * j[None, :])  # (N, J): the next step's Poisson mean
    trans = _poisson_pmf(rates, j)  # (N, J, J'): P(next = j' | this = j)
    pi = np.zeros((td.size, j.size))
    pi[:, 0] = 1.0
    for _ in range(max_iter):
        new = np.einsum("nj,njk->nk", pi, trans)
        new /= new.sum(axis=1, keepdims=True)
        if np.max(np.abs(new - pi)) < tol:
            return new
        pi = new
    return pi


def _capped_rate(td, s, chunk_rate) -> np.ndarray:
    lam = np.broadcast_to(np.asarray(chunk_rate, dtype=float), td.shape).astype(float)
    return np.where(lam * s > MAX_RHO, MAX_RHO / np.maximum(s, 1e-30), np.maximum(lam, 0.0))


def _poisson_pmf(mean, k) -> np.ndarray:
    """Poisson pmf at counts ``k`` (K,) for means ``mean`` (..., ) → (..., K) (log space; mean 0 → mass at 0)."""
    from scipy.special import gammaln

    m = np.asarray(mean, dtype=float)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = k * np.log(np.where(m > 0, m, 1.0)) - m - gammaln(k + 1)
    p = np.where(m > 0, np.exp(logp), (k == 0).astype(float))
    return p / p.sum(axis=-1, keepdims=True)


def _parts(step0_s, chunk_cost_s, chunk_rate):
    """(w (N, J): the arrival's step law, length-biased; τ_j (N, J); P(j' | j) (N, J, J'); t_d, s (N,), j' (J',))."""
    td = np.atleast_1d(np.asarray(step0_s, dtype=float))
    s = np.atleast_1d(np.asarray(chunk_cost_s, dtype=float))
    lam = _capped_rate(td, s, chunk_rate)
    pi = chunk_law(td, s, lam)
    j = np.arange(pi.shape[1], dtype=float)
    tau = td[:, None] + s[:, None] * j[None, :]
    w = pi * tau
    w /= np.maximum(w.sum(axis=1, keepdims=True), 1e-300)
    joined = _poisson_pmf(lam[:, None] * tau, j)
    return w, tau, joined, td, s, j


def wait_mean_s(step0_s, chunk_cost_s, chunk_rate) -> np.ndarray:
    """E[W], the arrival's mean wait through its own step (module docstring), s, (N,).

    >>> round(float(wait_mean_s([0.1], [0.2], [0.0])[0]), 4)  # no other prompt: τ/2 + t_d + s
    0.35
    """
    w, tau, _, td, s, _ = _parts(step0_s, chunk_cost_s, chunk_rate)
    lam = _capped_rate(td, s, chunk_rate)
    return np.sum(w * (tau / 2 + td[:, None] + s[:, None] * (1 + lam[:, None] * tau)), axis=1)


def _ramp_integral(y) -> np.ndarray:
    """G(y) = ∫_{−∞}^{y} clip(u, 0, 1) du: 0, y²/2, y − 1/2."""
    y = np.asarray(y, dtype=float)
    return np.where(y <= 0, 0.0, np.where(y >= 1, y - 0.5, 0.5 * y * y))


def _cdf(x, w, tau, joined, td, s, j, lo, hi) -> np.ndarray:
    """P(W + L ≤ x) (N,) for L uniform on [lo, hi] (N,) (a point where hi = lo)."""
    c = td[:, None, None] + s[:, None, None] * (1 + j[None, None, :])  # own step with j' others, (N, 1, J')
    t = tau[:, :, None]  # residual span of the step landed in, (N, J, 1)
    width = (hi - lo)[:, None, None]
    a = (x[:, None, None] - c - hi[:, None, None]) / t
    b = (x[:, None, None] - c - lo[:, None, None]) / t
    ramp = np.where(
        width > 1e-15, (_ramp_integral(b) - _ramp_integral(a)) * t / np.maximum(width, 1e-300), np.clip(b, 0.0, 1.0)
    )
    return np.einsum("nj,njk,njk->n", w, joined, ramp)


def wait_quantile_s(q: float, step0_s, chunk_cost_s, chunk_rate, length_lo_s=0.0, length_hi_s=0.0) -> np.ndarray:
    """The q-quantile of W + L (module docstring), s, (N,); L uniform on [``length_lo_s``, ``length_hi_s``] (N,).

    >>> round(float(wait_quantile_s(0.5, [0.1], [0.2], [0.0])[0]), 4)  # W = 0.3 + U·0.1: the median 0.35
    0.35
    >>> # 0.3 + U·0.1 + U'·0.4: P(U·0.1 + U'·0.4 > x) = (0.5 − x)²/0.08 above 0.4, = 0.1 at x = 0.5 − √0.008
    >>> round(float(wait_quantile_s(0.9, [0.1], [0.2], [0.0], 0.0, 0.4)[0]), 4)
    0.7106
    """
    w, tau, joined, td, s, j = _parts(step0_s, chunk_cost_s, chunk_rate)
    lo = np.broadcast_to(np.asarray(length_lo_s, dtype=float), td.shape)
    hi = np.maximum(np.broadcast_to(np.asarray(length_hi_s, dtype=float), td.shape), lo)
    left = td + s + lo
    right = td + s * (1 + j[-1]) + tau[:, -1] + hi
    for _ in range(_BISECT):
        mid = (left + right) / 2
        below = _cdf(mid, w, tau, joined, td, s, j, lo, hi) < q
        left, right = np.where(below, mid, left), np.where(below, right, mid)
    return (left + right) / 2


def quantile_shift_s(
    q: float, step0_s, chunk_cost_s, chunks_per_step, step_s, concurrency, length_lo_s, length_hi_s
) -> np.ndarray:
    """Q_q(W + L) − E[W] − L_q: what the wait's spread moves TTFT quantile q by, s, (N,) (module docstring).

    Args:
        q: the quantile, in (0, 1).
        step0_s: t_d, the decode-only step, s, (N,); chunk_cost_s: s, a chunk's marginal step time, s, (N,).
        chunks_per_step, step_s, concurrency: n̄, τ and C as serve/queueing.agg_queue_s reads them: λ_c = n̄·(C − 1)/(C·τ).
        length_lo_s, length_hi_s: the prompt-length terms at the shortest and longest prompt, s, (N,);
            L_q = lo + q·(hi − lo).

    >>> float(quantile_shift_s(0.5, [0.05], [0.2], [0.0], [0.05], [64], [0.1], [0.3])[0])  # no queue: symmetric
    0.0
    >>> bool(quantile_shift_s(0.5, [0.04], [0.25], [0.2], [0.09], [64], [0.3], [0.4])[0] < -0.005)  # skewed wait
    True
    """
    td = np.atleast_1d(np.asarray(step0_s, dtype=float))
    lam = (
        np.asarray(chunks_per_step, dtype=float)
        * others(concurrency)
        / np.maximum(np.asarray(step_s, dtype=float), 1e-30)
    )
    lo = np.broadcast_to(np.asarray(length_lo_s, dtype=float), td.shape)
    hi = np.broadcast_to(np.asarray(length_hi_s, dtype=float), td.shape)
    quant = wait_quantile_s(q, td, chunk_cost_s, lam, lo, hi)
    shift = quant - wait_mean_s(td, chunk_cost_s, lam) - (lo + q * (hi - lo))
    return np.where(np.abs(shift) < 1e-12, 0.0, shift)
