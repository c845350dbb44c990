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

so the steps' chunk counts form a Markov chain whose stationary law π (:func:`chunk_law`, one linear solve
π(I − P) = 0, Σπ = 1 per point; mean n̄ = λ_c·t_d/(1 − ρ), variance n̄/(1 − ρ²), ρ = λ_c·s: effect 1's moments) sets
the steps. An arrival lands in a
step with probability ∝ π_j·τ_j (length-biased), waits U·τ_j of it (U uniform on [0, 1], the residual) and is carried
by the next step with its own chunk and the j' ~ Poisson(λ_c·τ_j) others that arrived in the same step:

    W = U·τ_j + t_d + s·(1 + j'),     E[W] = E[τ²]/(2E[τ]) + t_d + s·(1 + λ_c·E[τ²]/E[τ])

(:func:`wait_mean_s`; E[W] − (τ/2 + t_d + s·max(n̄, 1)) is agg_queue_s's ΔTTFT). The lengths add L, the prompt-length
terms, uniform over [L_lo, L_hi] (InferenceX draws lengths uniformly in [r·ISL, ISL]; L is linear in the length to
first order), independent of W. TTFT quantile q is then the q-quantile of W + L (:func:`wait_quantile_s`, the CDF in
closed form given (j, j'): the uniform residual convolved with the uniform L, a C¹ piecewise quadratic in x between
the knots c_j' + {lo, hi} + {0, τ_j}, its density piecewise linear, both in closed form; inverted by Newton's method
from the mean-plus-length form, every quantile and point at once, a bisection step of the bracket wherever Newton's
leaves it — on a quadratic piece Newton lands in one or two steps), and :func:`quantile_shifts_s` returns
Q_q(W + L) − E[W] − L_q: what the spread moves each quantile q by against the analytic's mean-plus-length form, the
chain solved once for all q. The mean is untouched.

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
#: the quantile search: at most this many safeguarded Newton steps (a bisection step wherever Newton's leaves the
#: bracket: a cap, not a count; on the 529 points ``compare -c 64`` prices the stopping rule below ends it after
#: 1-9 CDF evaluations, where round 51's bisection took 50 per quantile) ...
_NEWTON = 60
#: ... stopping once every quantile's |F(x) − q| is at most this: x is then within 1e-13/F'(x) of the quantile
#: (F' ≥ 0.04 /s wherever the search evaluated it on those points: under 3e-12 s)
_F_TOL = 1e-13
#: the most (point, quantile, j, j') terms one CDF evaluation holds: larger batches go in slices of points
_CDF_TERMS = 1 << 21


def chunk_law(step0_s, chunk_cost_s, chunk_rate) -> np.ndarray:
    """π, the stationary law of the prefill chunks a step carries (module docstring), (N, J), rows summing to 1.

    Solved, not iterated (round 52, ttftwaves52; round 51 iterated π ← πP to a 1e-12 change): per point the linear
    system π(I − P) = 0 with one equation replaced by Σπ = 1, P the (J, J) transition matrix truncated at
    :data:`_REACH_SD` (its rows renormalised, so the truncated chain is a proper one with a unique law); all
    points in one batched ``numpy.linalg.solve``.

    Args:
        step0_s: t_d, the step without prefill, s, (N,); chunk_cost_s: s, one chunk's marginal step time, s, (N,).
        chunk_rate: λ_c, chunks arriving per second (the other users'), (N,); λ_c·s is capped at
            serve/queueing.MAX_RHO (the chain's pole at 1), as agg_queue_s caps it.

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
    a = np.eye(j.size) - np.swapaxes(trans, 1, 2)  # (I − P)ᵀ πᵀ = 0 ...
    a[:, -1, :] = 1.0  # ... its last equation replaced by Σπ = 1 (the others imply it)
    rhs = np.zeros((td.size, j.size, 1))
    rhs[:, -1, 0] = 1.0
    pi = np.maximum(np.linalg.solve(a, rhs)[..., 0], 0.0)  # the far tail's round-off (~1e-17) clipped
    return pi / pi.sum(axis=1, keepdims=True)


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
    return _wait_mean(_parts(step0_s, chunk_cost_s, chunk_rate), chunk_rate)


def _wait_mean(parts, chunk_rate) -> np.ndarray:
    w, tau, _, td, s, _ = parts
    lam = _capped_rate(td, s, chunk_rate)
    return np.sum(w * (tau / 2 + td[:, None] + s[:, None] * (1 + lam[:, None] * tau)), axis=1)


def _ramp_integral(y) -> np.ndarray:
    """G(y) = ∫_{−∞}^{y} clip(u, 0, 1) du: 0, y²/2, y − 1/2."""
    y = np.asarray(y, dtype=float)
    return np.where(y <= 0, 0.0, np.where(y >= 1, y - 0.5, 0.5 * y * y))


def _cdf(x, mass, tau, c, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """P(W + L ≤ x) and its density at ``x`` (N, M), for L uniform on [lo, hi] (N,) (a point where hi = lo): two
    (N, M) arrays, the density in 1/s.

    ``mass`` (N, J, J'): P(step j landed in, j' others joining); ``tau`` (N, J): τ_j; ``c`` (N, J'): the own step
    t_d + s·(1 + j'). Evaluated in slices of points holding at most :data:`_CDF_TERMS` terms."""
    n, m = x.shape
    per = max(1, _CDF_TERMS // max(m * mass.shape[1] * mass.shape[2], 1))
    if n > per:
        cut = [
            _cdf(x[i : i + per], mass[i : i + per], tau[i : i + per], c[i : i + per], lo[i : i + per], hi[i : i + per])
            for i in range(0, n, per)
        ]
        return np.concatenate([f for f, _ in cut]), np.concatenate([d for _, d in cut])
    t = tau[:, None, :, None]  # residual span of the step landed in, (N, 1, J, 1)
    off = x[:, :, None, None] - c[:, None, None, :]  # (N, M, 1, J')
    width = (hi - lo)[:, None, None, None]
    b = (off - lo[:, None, None, None]) / t
    a = (off - hi[:, None, None, None]) / t
    spread = width > 1e-15
    wide = np.maximum(width, 1e-300)
    ramp = np.where(spread, (_ramp_integral(b) - _ramp_integral(a)) * t / wide, np.clip(b, 0.0, 1.0))
    dens = np.where(spread, (np.clip(b, 0.0, 1.0) - np.clip(a, 0.0, 1.0)) / wide, ((b > 0) & (b < 1)) / t)
    return np.einsum("njk,nmjk->nm", mass, ramp), np.einsum("njk,nmjk->nm", mass, dens)


def _quantiles(qs, parts, lo, hi, start) -> np.ndarray:
    """The qs-quantiles of W + L (module docstring), s, (Q, N): safeguarded Newton from ``start`` (Q, N)."""
    w, tau, joined, td, s, j = parts
    q = np.asarray(qs, dtype=float)[None, :]  # (1, Q)
    mass = w[:, :, None] * joined  # (N, J, J')
    c = td[:, None] + s[:, None] * (1 + j[None, :])  # (N, J')
    nq = q.shape[1]
    left = np.repeat((td + s + lo)[:, None], nq, axis=1)  # F(left) = 0 ≤ q
    right = np.repeat((td + s * (1 + j[-1]) + tau[:, -1] + hi)[:, None], nq, axis=1)  # F(right) = 1
    x = np.clip(np.asarray(start, dtype=float).T, left, right)
    for _ in range(_NEWTON):
        f, d = _cdf(x, mass, tau, c, lo, hi)
        done = np.abs(f - q) <= _F_TOL
        if np.all(done):
            break
        below = f < q
        left, right = np.where(below, x, left), np.where(below, right, x)
        step = x - (f - q) / np.where(d > 0, d, 1.0)
        inside = (d > 0) & (step > left) & (step < right)
        x = np.where(done, x, np.where(inside, step, (left + right) / 2))
    return x.T


def _lengths(td, length_lo_s, length_hi_s) -> tuple[np.ndarray, np.ndarray]:
    lo = np.broadcast_to(np.asarray(length_lo_s, dtype=float), td.shape)
    return lo, np.maximum(np.broadcast_to(np.asarray(length_hi_s, dtype=float), td.shape), lo)


def wait_quantile_s(q: float, step0_s, chunk_cost_s, chunk_rate, length_lo_s=0.0, length_hi_s=0.0) -> np.ndarray:
    """The q-quantile of W + L (module docstring), s, (N,); L uniform on [``length_lo_s``, ``length_hi_s``] (N,).

    >>> round(float(wait_quantile_s(0.5, [0.1], [0.2], [0.0])[0]), 4)  # W = 0.3 + U·0.1: the median 0.35
    0.35
    >>> # 0.3 + U·0.1 + U'·0.4: P(U·0.1 + U'·0.4 > x) = (0.5 − x)²/0.08 above 0.4, = 0.1 at x = 0.5 − √0.008
    >>> round(float(wait_quantile_s(0.9, [0.1], [0.2], [0.0], 0.0, 0.4)[0]), 4)
    0.7106
    """
    parts = _parts(step0_s, chunk_cost_s, chunk_rate)
    lo, hi = _lengths(parts[3], length_lo_s, length_hi_s)
    return _quantiles([q], parts, lo, hi, (_wait_mean(parts, chunk_rate) + lo + q * (hi - lo))[None, :])[0]


def quantile_shifts_s(
    qs, step0_s, chunk_cost_s, chunks_per_step, step_s, concurrency, length_lo_s, length_hi_s
) -> np.ndarray:
    """Q_q(W + L) − E[W] − L_q for each q of ``qs``: what the wait's spread moves TTFT quantile q by, s, (Q, N)
    (module docstring); the chain is solved once for every q.

    Args:
        qs: the quantiles, each in (0, 1), (Q,).
        step0_s: t_d, the decode-only step, s, (N,); chunk_cost_s: s, a chunk's marginal step time, s, (N,).
        chunks_per_step, step_s, concurrency: n̄, τ and C as serve/queueing.agg_queue_s reads them: λ_c = n̄·(C − 1)/(C·τ).
        length_lo_s, length_hi_s: the prompt-length terms at the shortest and longest prompt, s, (N,);
            L_q = lo + q·(hi − lo).

    >>> # no queue: W + L = 0.35 + U·0.05 + U'·0.2, symmetric about its mean (median shift 0); its 0.9-quantile
    >>> # by hand: P(U·0.05 + U'·0.2 > x) = (0.25 − x)²/0.02 = 0.1 at x = 0.25 − √0.002 = 0.205279, against
    >>> # E[U·0.05] + 0.9·0.2 = 0.205: a shift of 0.000279 s
    >>> [round(float(v[0]), 6) for v in quantile_shifts_s([0.5, 0.9], [0.05], [0.2], [0.0], [0.05], [64], [0.1], [0.3])]
    [0.0, 0.000279]
    """
    td = np.atleast_1d(np.asarray(step0_s, dtype=float))
    lam = (
        np.asarray(chunks_per_step, dtype=float)
        * others(concurrency)
        / np.maximum(np.asarray(step_s, dtype=float), 1e-30)
    )
    lo = np.broadcast_to(np.asarray(length_lo_s, dtype=float), td.shape)
    hi = np.broadcast_to(np.asarray(length_hi_s, dtype=float), td.shape)
    parts = _parts(td, chunk_cost_s, lam)
    q = np.asarray(qs, dtype=float)[:, None]
    mean_form = _wait_mean(parts, lam)[None, :] + lo + q * (hi - lo)  # (Q, N): the analytic's mean-plus-length form
    shift = _quantiles(qs, parts, lo, np.maximum(hi, lo), mean_form) - mean_form
    return np.where(np.abs(shift) < 1e-12, 0.0, shift)


def quantile_shift_s(
    q: float, step0_s, chunk_cost_s, chunks_per_step, step_s, concurrency, length_lo_s, length_hi_s
) -> np.ndarray:
    """:func:`quantile_shifts_s` at the one quantile ``q``, s, (N,).

    >>> float(quantile_shift_s(0.5, [0.05], [0.2], [0.0], [0.05], [64], [0.1], [0.3])[0])  # no queue: symmetric
    0.0
    >>> bool(quantile_shift_s(0.5, [0.04], [0.25], [0.2], [0.09], [64], [0.3], [0.4])[0] < -0.005)  # skewed wait
    True
    """
    return quantile_shifts_s(
        [q], step0_s, chunk_cost_s, chunks_per_step, step_s, concurrency, length_lo_s, length_hi_s
    )[0]
