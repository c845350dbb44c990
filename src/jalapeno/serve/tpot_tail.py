"""Per-query TPOT tail under Poisson arrivals: the decode batch's occupancy and the prompts met during a request's life.

MLPerf's Server / Interactive latency constraint is on the p99 over samples of each sample's own TPOT (LoadGen,
loadgen/results.cc ``PerfConstraintsMet``: ``target_tpot_percentile`` over ``time_per_output_token_arr``, one value per
sample; the reported mean is the mean of the same array). A request of n decode steps decodes at the mean over its
steps of the step time, and a step's time rises with the requests decoding in it and with the prompt tokens it
carries. Under Poisson arrivals both vary from request to request.

**One Poisson functional.** Count time in steps of the mean step τ. The requests arrive as a Poisson process of
a = λτ per step, request j bringing a prompt of I_j tokens (the dataset's, equally likely) and decoding for D_j steps
(the dataset's output lengths, independent of I_j: an ASSUMPTION). The tagged request decodes over a window of
n steps [0, n). Its mean step is τ + s·(A − L) + σ·(X/n − a·E[I]), with s the step's marginal time per decoding
request (secant at the point's batch), σ its marginal time per prompt token, A the time-average over the window of
the requests decoding beside it and X the prompt tokens arriving in it. Both are sums over the points
(arrival u, D, I) of one Poisson random measure — A = Σ_j ov(u_j, D_j)/n with ov the overlap of [u, u + D) with the
window, X = Σ_j I_j·1[u_j ∈ [0, n)] — so their sum Z = s·A + σ·X/n is a Poisson functional and its cumulants are
exact (Campbell's theorem: κ_r = a·E∫ g(u)^r du; e.g. D. J. Daley & D. Vere-Jones, *An Introduction to the Theory of
Point Processes* I, 2nd ed., Springer 2003, §6.1). With m = min(D, n), M = max(D, n), the overlap is a trapezoid in u
(rise m, flat M − m, fall m), so

    ∫ ov² du = m²M − m³/3,  ∫ ov³ du = m³M − m⁴/2,
    ∫_0^n ov du = m·n − m²/2,  ∫_0^n ov² du = m²·n − 2m³/3,

and the variance and third cumulant of Z − E[Z] (seconds per step) are

    κ₂ = a·[s²·E(m²M − m³/3)/n² + 2sσ·E[I]·E(mn − m²/2)/n² + σ²·E[I²]/n],
    κ₃ = a·[s³·E(m³M − m⁴/2)/n³ + 3s²σ·E[I]·E(m²n − 2m³/3)/n³ + 3sσ²·E[I²]·E(mn − m²/2)/n³ + σ³·E[I³]/n²].

At n → 0 the occupancy term is s²·L (L = a·E[D], the M/G/∞ number in system, Poisson: L. Takács, *Introduction
to the Theory of Queues*, Oxford 1962); over long windows it averages out. The prompt term alone is the compound
Poisson of :func:`tpot_quantile_s` (variance n·a·E[I²] of X). Z − E[Z] is taken as a
shifted Gamma (Pearson type III) with those three cumulants; the p99 over requests is the quantile of the mixture over
the requests' own n (each request counts once), by bisection.

Not in it: the budget cap on the prompt tokens a step carries (a request's mean share is far below it wherever the
TTFT limit holds), the decode batch's own cap (M/G/∞: no request waits for a slot), host stalls, and the balancing
clock's regularity of prompt steps (serve/adp_balance; a regular release has less variance than the Poisson count
priced here, so this is an upper bound on the prompt part there).

**A deployment's points.** :func:`poisson_tpot_s` prices the p99 for a deployment's swept points (the step's marginal
costs from cost/step.step_cost on the decode pool's engine backends); :func:`tpot_quantile_s` is the prompts-only tail
(round 40, a capped Gamma) it uses with :data:`OCCUPANCY_TAIL` off; :func:`renewal_dispersion` scales the arrivals
for a harness's round-robin dispatch (serve/open_loop's module docstring). The three lived in serve/open_loop.py until
round 45 (module budget).

Pure: no I/O.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import Batch, pool_step_cost
from jalapeno.deploy.deployment import Deployment
from jalapeno.errors import SpecError
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.serve.open_loop import ISL_GRID
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: Price the per-query TPOT tail of :func:`poisson_tpot_s` with the occupancy and the prompts jointly
#: (:func:`tail_cumulants`) rather than the prompts alone (:func:`tpot_quantile_s`). See docs/gap_large_batch_decode.md "Round 41 (mlperftail41)".
OCCUPANCY_TAIL = True
#: Bisection rounds of :func:`tail_excess_s` (the bracket halves each round; 60 rounds: below 1e-15 of its width)
BISECT_ROUNDS = 60


def window_moments(steps) -> dict[str, np.ndarray]:
    """Expectations over the other requests' decode steps D (``steps``, (M,), equally likely) of the overlap integrals
    of the module docstring, one per window n in the same ``steps`` (M,): ``e2`` = E(m²M − m³/3),
    ``e3`` = E(m³M − m⁴/2), ``c1`` = E(mn − m²/2), ``c2`` = E(m²n − 2m³/3) (steps to the powers 3, 4, 2, 3), and
    ``mean`` = E[D] (steps), with m = min(D, n), M = max(D, n).

    >>> w = window_moments(np.array([2.0]))  # one request length: m = M = n = 2
    >>> [round(float(w[k][0]), 9) for k in ("e2", "e3", "c1", "c2")]
    [5.333333333, 8.0, 2.0, 2.666666667]

    Raises:
        SpecError: a step count not positive.
    """
    d = np.asarray(steps, dtype=float).ravel()
    if not d.size or not np.all(d > 0):
        raise SpecError(
            "steps",
            f"decode steps must be positive, got {d.min() if d.size else 'none'}",
            "give each request's decode steps (output length − 1, at least 1)",
        )
    n = d[:, None]  # window (rows) against the others' D (columns)
    m, big = np.minimum(n, d[None, :]), np.maximum(n, d[None, :])
    return {
        "e2": (m**2 * big - m**3 / 3).mean(axis=1),
        "e3": (m**3 * big - m**4 / 2).mean(axis=1),
        "c1": (m * n - m**2 / 2).mean(axis=1),
        "c2": (m**2 * n - 2 * m**3 / 3).mean(axis=1),
        "mean": np.full(d.size, d.mean()),
    }


def tail_cumulants(arrivals_per_step, slope_s, sigma_s, isl_tokens, steps) -> tuple[np.ndarray, np.ndarray]:
    """Variance (s²) and third cumulant (s³) of a request's mean step about its mean, (N, M): N points of
    ``arrivals_per_step`` a (N,), marginal step time per decoding request ``slope_s`` s (N,, seconds) and per prompt
    token ``sigma_s`` σ (N,, seconds); prompts ``isl_tokens`` (K,, equally likely); the requests' decode ``steps``
    (M,, equally likely), each a window n of the module docstring's κ₂, κ₃.

    >>> v, k3 = tail_cumulants(np.array([0.5]), np.array([0.0]), np.array([1e-4]), np.array([100.0]), np.array([10.0]))
    >>> round(float(v[0, 0]), 12), round(float(k3[0, 0]), 15)  # prompts only: a·σ²·E[I²]/n, a·σ³·E[I³]/n²
    (5e-06, 5e-09)

    Raises:
        SpecError: a step count not positive.
    """
    w = window_moments(steps)
    n = np.maximum(np.asarray(steps, dtype=float).ravel(), 1.0)[None, :]
    a = np.asarray(arrivals_per_step, dtype=float).ravel()[:, None]
    s = np.asarray(slope_s, dtype=float).ravel()[:, None]
    sg = np.asarray(sigma_s, dtype=float).ravel()[:, None]
    i = np.asarray(isl_tokens, dtype=float).ravel()
    i1, i2, i3 = float(i.mean()), float((i**2).mean()), float((i**3).mean())
    e2, e3, c1, c2 = (w[k][None, :] for k in ("e2", "e3", "c1", "c2"))
    var = a * (s**2 * e2 / n**2 + 2 * s * sg * i1 * c1 / n**2 + sg**2 * i2 / n)
    k3 = a * (s**3 * e3 / n**3 + 3 * s**2 * sg * i1 * c2 / n**3 + 3 * s * sg**2 * i2 * c1 / n**3 + sg**3 * i3 / n**2)
    return var, k3


def exceed_prob(z, var, k3) -> np.ndarray:
    """P(Y > z) for Y of mean 0, variance ``var`` and third cumulant ``k3`` (arrays broadcasting together), Y taken as
    a shifted Gamma (Pearson type III) with those cumulants: skew γ = k3 / var^1.5, shape 4/γ², scale γ·√var / 2,
    shifted to mean 0. A zero variance gives P = 1[z < 0]; a skew below 1e-6 the normal's tail.

    >>> float(exceed_prob(1.0, 1.0, 2.0))  # γ = 2: an exponential of mean 1 shifted by −1, P(E > 2) = e^-2
    0.1353352832366127
    """
    from scipy.special import gammaincc, ndtr

    z, var, k3 = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (z, var, k3)))
    sd = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        gam = np.where(sd > 0, k3 / np.maximum(sd, 1e-300) ** 3, 0.0)
        shape = 4.0 / np.maximum(gam, 1e-300) ** 2
        scale = gam * sd / 2
        x = (z + shape * scale) / np.where(scale > 0, scale, 1.0)
        pearson = gammaincc(np.minimum(shape, 1e300), np.maximum(x, 0.0))
        normal = 1.0 - ndtr(z / np.where(sd > 0, sd, 1.0))
    return np.where(sd <= 0, (z < 0).astype(float), np.where(gam > 1e-6, pearson, normal))


def tail_excess_s(q: float, var, k3) -> np.ndarray:
    """Quantile ``q`` (s) over requests of the mean step's excess over its mean, (N,): the mixture over the M
    equally likely windows of ``var`` and ``k3`` (N, M, from :func:`tail_cumulants`) solved for
    mean_k P(Y_k > z) = 1 − q by bisection (:data:`BISECT_ROUNDS`).

    >>> round(float(tail_excess_s(0.99, np.array([[1.0]]), np.array([[2.0]]))[0]), 9)  # ln(100) − 1
    3.605170186

    Raises:
        SpecError: ``q`` outside (0, 1).
    """
    if not 0 < q < 1:
        raise SpecError("q", f"quantile must be in (0, 1), got {q!r}", "give e.g. 0.99")
    var, k3 = np.atleast_2d(np.asarray(var, dtype=float)), np.atleast_2d(np.asarray(k3, dtype=float))
    sd = np.sqrt(np.maximum(var, 0.0))
    lo, hi = np.zeros(var.shape[0]), 1.0 + 40.0 * sd.max(axis=1)
    for _ in range(BISECT_ROUNDS):
        mid = (lo + hi) / 2
        over = exceed_prob(mid[:, None], var, k3).mean(axis=1) > 1 - q
        lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
    return hi * (sd.max(axis=1) > 0)


def tpot_quantile_s(q: float, mean_step_s, sigma_s, arrivals_per_step, isl_tokens, steps, cap_tokens) -> np.ndarray:
    """Quantile ``q`` over requests of the mean step a request decodes at, s, (N,): the mean step
    ``mean_step_s`` (N,) plus ``sigma_s`` (N,, s per prompt token) times the excess of the prompt tokens
    per step over its window. A request of n decode steps shares its steps with the prompts arriving
    meanwhile, a compound Poisson count of ``arrivals_per_step`` (N,) per step, each of ``isl_tokens``
    (K,, equally likely) tokens: mean n·a·E[I], variance n·a·E[I²]; its per-step share X_n / n is taken
    Gamma with those moments (the compound Poisson's skew kept roughly; exact in the mean and variance)
    and capped at ``cap_tokens`` (N,: the step's prompt budget). ``steps`` (M,): the requests' decode
    steps, equally likely (the dataset's output lengths: every request counts once).

    >>> # no arrivals: every request decodes at the mean step
    >>> tpot_quantile_s(0.99, np.array([0.03]), np.array([1e-4]), np.array([0.0]), np.array([200.0]),
    ...                 np.array([10.0, 100.0]), np.array([2048.0])).round(6).tolist()
    [0.03]

    Raises:
        SpecError: ``q`` outside (0, 1).
    """
    from scipy.special import gammaincc

    if not 0 < q < 1:
        raise SpecError("q", f"quantile must be in (0, 1), got {q!r}", "give e.g. 0.99")
    a = np.asarray(arrivals_per_step, dtype=float)[:, None, None]
    i = np.asarray(isl_tokens, dtype=float)
    m1, m2 = float(i.mean()), float((i**2).mean())
    n = np.maximum(np.asarray(steps, dtype=float), 1.0)[None, None, :]
    shape = n * a * m1**2 / m2  # Gamma(k, θ) of X_n: k = n·a·E[I]²/E[I²], θ = E[I²]/E[I]
    scale = m2 / m1
    cap = np.asarray(cap_tokens, dtype=float)
    lo, hi = np.zeros(a.shape[0]), cap.copy()
    for _ in range(60):  # per-step share y: mean_n P(X_n / n > y) = 1 − q
        mid = (lo + hi) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            surv = np.where(shape > 0, gammaincc(np.maximum(shape, 1e-300), n * mid[:, None, None] / scale), 0.0)
        over = surv.mean(axis=2)[:, 0] > 1 - q
        lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
    excess = np.maximum(hi - a[:, 0, 0] * m1, 0.0)
    return np.asarray(mean_step_s, dtype=float) + np.asarray(sigma_s, dtype=float) * excess


def renewal_dispersion(isl_tokens, k: int) -> float:
    """(Var I + E[I]²/k) / E[I²] of the prompts ``isl_tokens`` (K,, equally likely): the variance of a window's prompt
    work when each instance takes every k-th arrival (Erlang gaps: counts of dispersion 1/k) over its Poisson value;
    1.0 at k = 1 (:func:`poisson_tpot_s`).

    >>> round(renewal_dispersion(np.array([1.0, 3.0]), 4), 4)  # E[I] 2, Var 1, E[I²] 5: (1 + 4/4) / 5
    0.4

    γ = 0, C = 1 where ρ ≥ 1; γ = inf, C = 0 with no work or no arrival; NaN where λ is NaN.

    Raises:
        SpecError: ``k`` not a whole number >= 1; a negative ``rate_per_s``.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise SpecError("arrival_k", f"{k!r}", "give the instances a harness deals its queries over in turn (>= 1)")
    i = np.asarray(isl_tokens, dtype=float)
    m1, m2 = float(i.mean()), float((i**2).mean())
    return 1.0 if k == 1 or m2 <= 0 else (m2 - m1**2 + m1**2 / k) / m2


def poisson_tpot_s(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    pts: ServingPoints,
    q: float = 0.99,
    arrival_k: int = 1,
) -> np.ndarray:
    """Quantile ``q`` over requests of TPOT (s) of ``dep``'s points ``pts`` under Poisson arrivals, (N,):
    :func:`tpot_quantile_s` with the instance's mean step, the marginal cost of a prompt token in a step
    σ = (t_hi − t_lo)/B (as serve/open_loop.poisson_ttft_s: a full prompt budget B beside the decode batch),
    a = λ·τ arrivals per step per instance, the workload's prompt lengths and its requests' decode steps
    (output length − 1, per the points' tokens per step), converted back to TPOT by the points' tokens
    per step. With :data:`OCCUPANCY_TAIL` on (shipped on, round 41) the decode batch's occupancy joins
    the prompts (:func:`tail_cumulants`: s the step's marginal time per decoding request, a secant over
    ±10% of the point's batch; no budget cap) instead. Disaggregated: the points' mean TPOT (the decode pool's
    steps carry no prompt; the variation of its batch is not priced, an ASSUMPTION). ``arrival_k`` > 1 (each instance
    takes every k-th query, serve/open_loop's module docstring "Round-robin dispatch"; the occupancy tail only): the prompts a window
    holds are a renewal count of dispersion 1/k, not Poisson's 1, so the window's prompt work has variance
    n·a·(Var I + E[I]²/k) against n·a·E[I²]; the cumulants are priced at the arrival rate scaled by
    :func:`renewal_dispersion` (exact for the prompts' variance; an ASSUMPTION for the occupancy terms and the third
    cumulant, which scale alike).

    Raises:
        SpecError: ``q`` outside (0, 1).
    """
    if dep.prefill is not None or not len(pts):
        return np.asarray(pts.tpot_s, dtype=float).copy()
    pool = dep.decode
    lay = pool.layout
    pr = with_pool_backends(pricer, pool, model, lay, dep.precision.kv_cache.name)
    budget = float(dep.prefill_budget(lay))
    n = len(pts)
    b = pts.decode_batch / lay.pp
    chunk = min(wl.mean_isl, budget / max(lay.dp, 1))
    z = np.zeros(n)
    sc = pool_step_cost(
        model,
        pr,
        dep,
        lay,
        Batch.make(
            decode_seqs=np.concatenate([b, b, 0.9 * b, 1.1 * b]),
            decode_ctx=wl.decode_ctx,
            prefill_tokens=np.concatenate([z, np.full(n, budget), z, z]),
            prefill_ctx=(wl.mean_isl - chunk) / 2,
            prefill_seqs=np.concatenate([z, np.full(n, budget / chunk), z, z]),
        ),
    )
    t_lo, t_hi = sc.step_time_s[:n], sc.step_time_s[n : 2 * n]
    sigma = np.maximum(t_hi - t_lo, 0.0) / budget
    step = np.asarray(pts.step_time_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_step = np.where(pts.tpot_s > 0, step / pts.tpot_s, 1.0)  # tokens per step (MTP > 1)
    isl = np.array([wl.isl_quantile((k + 0.5) / ISL_GRID) for k in range(ISL_GRID)])
    osl = np.array([wl.osl_quantile((k + 0.5) / ISL_GRID) for k in range(ISL_GRID)])
    steps = np.maximum(osl - 1.0, 1.0)
    if OCCUPANCY_TAIL:  # the decode batch's occupancy beside the prompts (round 41)
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(
                b > 0,
                np.maximum(sc.step_time_s[3 * n :] - sc.step_time_s[2 * n : 3 * n], 0.0) / (0.2 * pts.decode_batch),
                0.0,
            )
        var, k3 = tail_cumulants(
            pts.request_rate_per_s * step * renewal_dispersion(isl, arrival_k),
            slope,
            sigma,
            isl,
            steps / float(np.mean(per_step)),
        )
        return (step + tail_excess_s(q, var, k3)) / per_step
    p = tpot_quantile_s(
        q, step, sigma, pts.request_rate_per_s * step, isl, steps / float(np.mean(per_step)), np.full(n, budget)
    )
    return p / per_step
