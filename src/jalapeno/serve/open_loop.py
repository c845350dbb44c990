"""TTFT tail under Poisson arrivals: the prefill queue of an open-loop benchmark (MLPerf Server).

The steady model (serve/analytic.py) prices the prefill queue of a closed loop by its mean
(serve/queueing.py effect 1: chunk arrivals one at a time, the arrival theorem). A Poisson
stream of whole prompts queues differently: each prompt brings all its tokens at once, so the
prefill work arrives in bulk, and a latency-bounded benchmark judges the 99th percentile, not
the mean. The MLPerf Server rows show it: measured p99 TTFT is 1.8-3.1x the mean (H200
Llama-3.1-405B: 5.64 s p99 against a 1.83 s mean, the rules' limit 6 s).

**The queue.** While prompts wait, every step carries a full prefill budget of B tokens beside
the decode batch and takes t_hi = step(B_dec, B); an empty queue leaves decode-only steps t_lo.
The prefill server is therefore work-conserving at μ = w·B/t_hi tokens per second (w prefill
servers pooled: the disaggregated prefill workers, or one aggregated instance; attention-DP
ranks are pooled too — the engines dispatch each prompt to the least-loaded rank, so one queue,
a lower bound on the wait of independent per-rank queues). Prompt i of ISL_i tokens brings work
V_i = ISL_i/μ seconds; at request rate λ the load is ρ = λ·E[V] (≥ 1: unstable, no finite
tail), and by Pollaczek-Khinchine (M/G/1, FCFS) the mean wait is

    E[W] = λ·E[V²] / (2(1 − ρ)).

**Its tail.** W has an atom 1 − ρ at zero and, beyond it, the Cramér-Lundberg tail of the M/G/1
wait (S. Asmussen, *Applied Probability and Queues*, 2nd ed., Springer 2003, XIII.5: the M/G/1
waiting time is the ruin probability of a compound Poisson risk process):
P(W > x) ≈ C·exp(−γx), γ > 0 the root of λ(E[e^{γV}] − 1) = γ and
C = (1 − ρ)/(λ·E[V·e^{γV}] − 1), capped at P(W > 0) = ρ (:func:`cramer_lundberg`). Exact for
M/M/1 (γ = μ − λ, C = ρ) and asymptotically exact for any light-tailed service. Until round 30 the
exponent was the one matching the P-K mean, ρ/E[W], which is the Cramér-Lundberg root only for
exponential service: on the Llama-3.1-405B prompt mix (CV 0.43) it put the p99 6-13% above a
Lindley-recursion simulation at ρ = 0.3-0.8, the root within 2% (tests/unit/test_open_loop.py).

**The TTFT.** TTFT_i = front end(ISL_i) + τ/2 (the step in progress) + W + S_i + t_KV, with S_i
the prompt's own prefill on its rank, S_i = t_lo·max(1, ISL_i/B_r) + σ_r·ISL_i (a step at least;
its chunks of B_r per-rank budget tokens, σ_r = (t_hi − t_lo)/B_r the marginal cost of a token)
and t_KV the disaggregated hand-off. With TensorRT-LLM's attention-DP context balancing
(``Deployment.adp_balance_timeout_iters``) an aggregated prompt also waits for every rank to hold one, at most
``timeout_iters`` steps: its mean G (serve/adp_balance.adp_balance_wait_s, the closed loop's own term: as shipped
min((dp − 1)/(2λ), timeout_iters·τ) with free slots; the mean over the release clock's rounds, about timeout_iters·τ/2
where the clock binds, with adp_balance.ADP_CLOCK_MEAN on) joins c_i (round 31:
without it the p99 was below the closed loop's MEAN TTFT, 0.29 s against 0.71 s on the NVIDIA B200 DeepSeek-R1
Server engine at its measured load), spread (since round 39; a constant before) as the release clock spreads it:
G − G_c + U, U uniform on [0, 2·G_c), independent of W and the prompt, G_c the wait's mean over the clock's rounds
(serve/adp_balance.adp_clock_round_wait_s; G itself with adp_balance.ADP_CLOCK_MEAN on, shipped off). Exact where the
clock binds (the counter restarts only at a release: a prompt waits the clock's residual, uniform on
[0, timeout_iters·τ)); an ASSUMPTION where rounds fill first (the i-th of dp arrivals waits dp − i more,
Erlang: a random arrival's wait has the uniform's mean, not its shape) and with full slots. On the MLPerf
DeepSeek-R1 Server engine at its runs' loads the p99 is 0.84-1.17 s with the spread, 0.67-0.91 s without; the
runs' measured p99, 1.25-1.94 s, has a longer tail from outside the schedule (docs/gap_large_batch_decode.md
round 39). Quantile q of TTFT over the dataset's prompts solves
mean_i P(W > t − c_i) = 1 − q (c_i the parts other than W), by bisection.

**Round-robin dispatch.** A harness that deals its queries over k identical instances in turn (NVIDIA's llmlib
harness in an Interactive run: mlcommons/inference_results_v5.1 @965182b closed/NVIDIA/code/llmlib/config.py,
``traffic_distribution_policy`` ``round_robin`` for every scenario but Server, which takes ``load_balancing``;
factory.py ``_create_scheduler``) hands each instance every k-th arrival: Erlang(k) gaps, far more regular than the
Poisson split (``arrival_k``; :func:`erlang_arrival_tail`). On the GB200-NVL72 x72 Llama-3.1-405B Interactive run
(18 TP4 instances) the Poisson split put the p99 at 15.8 s at the run's own load, where it measured 3.41 s.

Pure: no I/O.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import Batch, StepCost, pool_step_cost
from jalapeno.deploy.deployment import Deployment
from jalapeno.errors import SpecError
from jalapeno.serve.admission_waits import adp_gate_s
from jalapeno.serve.analytic import frontend_s
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.serve.limits import graph_padded
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: Prompts the TTFT quantile averages over: the workload's ISL at this many evenly spaced quantiles.
ISL_GRID = 256
#: Slices of the attention-DP balancing wait's uniform spread mixed into the TTFT quantile (module docstring):
#: each prompt's copies sit at the slices' midpoints, within G/GATE_SLICES of the exact uniform quantile.
GATE_SLICES = 16


def _rate(rate_per_s) -> np.ndarray:
    """λ as a (N,) float array. Raises SpecError naming ``rate_per_s`` when an entry is negative (an arrival rate is
    >= 0; 0 is an idle queue). NaN passes: the queue functions return NaN for it, not a queue with no wait."""
    lam = np.atleast_1d(np.asarray(rate_per_s, dtype=float))
    if (lam < 0).any():
        raise SpecError(
            "rate_per_s",
            f"an arrival rate must be >= 0 requests/s, got {float(lam[lam < 0][0])!r}",
            "pass the queue's arrivals per second (0 for an idle queue)",
        )
    return lam


def mg1_wait(rate_per_s, work_s) -> tuple[np.ndarray, np.ndarray]:
    """Load ρ and mean FCFS wait E[W] (s) of an M/G/1 queue, (N,) each.

    Args:
        rate_per_s: λ, arrivals per second, (N,).
        work_s: service times, s: (N, K) per point, or (K,) shared (K equally likely values).

    ρ ≥ 1 gives E[W] = inf (no steady state); a NaN λ gives E[W] = NaN.

    Raises:
        SpecError: a negative ``rate_per_s``.

    >>> rho, w = mg1_wait(0.5, np.array([1.0]))  # M/D/1 at ρ = 0.5: ρ·S/(2(1 − ρ)) = 0.5 s
    >>> float(rho[0]), float(w[0])
    (0.5, 0.5)
    """
    lam = _rate(rate_per_s)
    v = np.asarray(work_s, dtype=float)
    v = np.broadcast_to(v, (lam.size, v.shape[-1]))
    rho = lam * v.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(rho < 1, lam * (v**2).mean(axis=1) / (2 * (1 - rho)), np.inf)
    return rho, np.where(np.isnan(lam), np.nan, w)


def cramer_lundberg(rate_per_s, work_s) -> tuple[np.ndarray, np.ndarray]:
    """Decay rate γ (1/s) and constant C of the M/G/1 wait's tail P(W > x) ≈ C·exp(−γx) (module
    docstring), (N,) each: γ > 0 solves λ(E[e^{γV}] − 1) = γ, C = (1 − ρ)/(λ·E[V·e^{γV}] − 1).

    Args:
        rate_per_s: λ, arrivals per second, (N,).
        work_s: service times, s: (N, K) per point, or (K,) shared (K equally likely values).

    The root lies in (0, 2(1 − ρ)/(λE[V²])] (e^y ≥ 1 + y + y²/2 makes the left side reach γ by
    there) and is found by bisection; γ = 0, C = 1 where ρ ≥ 1 (no steady state), γ = inf, C = 0
    where there is no work or no arrival, NaN where λ is NaN.

    Raises:
        SpecError: a negative ``rate_per_s``.

    >>> g, c = cramer_lundberg(0.5, -np.log(1 - (np.arange(4000) + 0.5) / 4000))  # M/M/1, μ = 1: γ = C = 0.5
    >>> round(float(g[0]), 1), round(float(c[0]), 1)  # (4,000 quantiles of the exponential: 0.51 each)
    (0.5, 0.5)
    """
    lam = _rate(rate_per_s)
    v = np.asarray(work_s, dtype=float)
    v = np.broadcast_to(v, (lam.size, v.shape[-1]))
    rho = lam * v.mean(axis=1)
    m2 = (v**2).mean(axis=1)
    live = (rho > 0) & (rho < 1) & (m2 > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        hi = np.where(live, 2 * (1 - rho) / (lam * m2), 0.0)
        lo = np.zeros_like(hi)
        for _ in range(80):
            mid = (lo + hi) / 2
            f = lam * (np.exp(np.minimum(mid[:, None] * v, 700.0)).mean(axis=1) - 1) - mid
            lo, hi = np.where(f < 0, mid, lo), np.where(f < 0, hi, mid)
        g = (lo + hi) / 2
        c = (1 - rho) / (lam * (v * np.exp(np.minimum(g[:, None] * v, 700.0))).mean(axis=1) - 1)
    return _tail_or_limits(live, rho, g, c, lam)


def _tail_or_limits(live, rho, g, c, lam) -> tuple[np.ndarray, np.ndarray]:
    """(γ, C) of a tail solver: the root where the queue is live; γ = 0, C = 1 where ρ >= 1; γ = inf, C = 0 with
    no load; NaN where λ is NaN (an unknown rate is not an idle queue)."""
    gamma = np.where(live, g, np.where(rho >= 1, 0.0, np.inf))
    c = np.where(live, c, np.where(rho >= 1, 1.0, 0.0))
    nan = np.isnan(lam)
    return np.where(nan, np.nan, gamma), np.where(nan, np.nan, c)


def erlang_arrival_tail(rate_per_s, work_s, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Decay rate γ (1/s) and constant C of the FCFS wait's tail P(W > x) ≈ C·exp(−γx) when the queue's arrivals are
    every k-th of a Poisson stream (a harness dealing its queries round-robin over k instances, module docstring
    "Round-robin dispatch"), (N,) each: the inter-arrival time is Erlang(k) of mean 1/λ, so the GI/G/1
    Cramér-Lundberg root (Asmussen 2003, XIII.5: E[exp(γ(V − A))] = 1) solves log E[e^{γV}] = k·log(1 + γ/(kλ))
    (k = 1: :func:`cramer_lundberg`'s λ(E[e^{γV}] − 1) = γ). C has no closed form for GI/G/1; it is taken as
    min(ρ, γ·E[W]) with E[W] Kingman's heavy-traffic mean E[V]·ρ/(1 − ρ)·(1/k + c_s²)/2 (c_s the service's
    coefficient of variation), a named ASSUMPTION: the tail's integral C/γ is then Kingman's mean. In practice the cap
    binds: on every service mix and load tried (c_s² 0-8 incl. the Llama-3.1-405B prompt mix, k 2-72, ρ 0.1-0.97;
    tests/unit/test_round_robin43.py) γ·E[W] >= ρ, so C = ρ and k acts through γ alone. Checked against a
    Lindley recursion with Erlang gaps on the Llama-3.1-405B prompt mix (tests/unit/test_open_loop.py): the p99
    sojourn within −10..+7% for k 2-18, ρ 0.5-0.9. k = 1 returns :func:`cramer_lundberg` unchanged.

    Args:
        rate_per_s: λ, this queue's arrivals per second, (N,).
        work_s: service times, s: (N, K) per point, or (K,) shared (K equally likely values).
        k: instances the stream is dealt over in turn (>= 1).

    >>> g, c = erlang_arrival_tail(0.5, np.array([1.0]), 2)  # E2/D/1: log e^γ = 2·log(1 + γ) -> γ = 2.513
    >>> round(float(g[0]), 3), round(float(c[0]), 2)
    (2.513, 0.5)

    γ = 0, C = 1 where ρ ≥ 1; γ = inf, C = 0 with no work or no arrival; NaN where λ is NaN.

    Raises:
        SpecError: ``k`` not a whole number >= 1; a negative ``rate_per_s``.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise SpecError("arrival_k", f"{k!r}", "give the instances a harness deals its queries over in turn (>= 1)")
    if k == 1:
        return cramer_lundberg(rate_per_s, work_s)
    lam = _rate(rate_per_s)
    v = np.asarray(work_s, dtype=float)
    v = np.broadcast_to(v, (lam.size, v.shape[-1]))
    m1, m2 = v.mean(axis=1), (v**2).mean(axis=1)
    rho = lam * m1
    live = (rho > 0) & (rho < 1) & (m2 > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lam_s = np.where(live, lam, 1.0)

        def f(g):  # log E[e^{γV}] − k·log(1 + γ/(kλ)): 0 at γ = 0, falling, then rising to its root
            return np.log(np.exp(np.minimum(g[:, None] * v, 700.0)).mean(axis=1)) - k * np.log1p(g / (k * lam_s))

        hi = np.where(live, 2 * (1 - rho) / (lam_s * np.where(m2 > 0, m2, 1.0)), 1.0)
        for _ in range(60):  # the Poisson root is a lower bound (regular arrivals wait less): double until past
            hi = np.where(live & (f(hi) < 0), 2 * hi, hi)
        lo = np.zeros_like(hi)
        for _ in range(80):
            mid = (lo + hi) / 2
            neg = f(mid) < 0
            lo, hi = np.where(neg, mid, lo), np.where(neg, hi, mid)
        g = (lo + hi) / 2
        cs2 = np.where(m1 > 0, m2 / np.where(m1 > 0, m1, 1.0) ** 2 - 1.0, 0.0)
        ew = m1 * rho / (1 - rho) * (1.0 / k + cs2) / 2
        c = np.minimum(rho, g * ew)
    return _tail_or_limits(live, rho, g, c, lam)


def wait_exceeds(x, rho, gamma, c) -> np.ndarray:
    """P(W > x) of the M/G/1 wait: 1 for x < 0, else min(ρ, C·exp(−γx)) (module docstring; γ, C of
    :func:`cramer_lundberg`), broadcast.

    >>> round(float(wait_exceeds(1.0, 0.5, 0.5, 0.5)), 4)  # M/M/1 at μ = 1, λ = 0.5: 0.5·e^(−0.5)
    0.3033
    """
    x, rho, g, c = (np.asarray(a, dtype=float) for a in (x, rho, gamma, c))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tail = np.where(rho <= 0, 0.0, np.where(rho >= 1, 1.0, np.minimum(rho, c * np.exp(-np.maximum(x, 0.0) * g))))
    return np.where(x < 0, 1.0, tail)


def ttft_quantile_s(q: float, rate_per_s, work_s, other_s, arrival_k: int = 1) -> np.ndarray:
    """Quantile ``q`` of TTFT = W + c_i over the K equally likely prompts, s, (N,).

    Args:
        q: quantile in (0, 1).
        rate_per_s: λ, (N,).
        work_s: each prompt's queue work V_i, s, (N, K).
        other_s: each prompt's TTFT apart from the wait (own prefill, front end, ...), s, (N, K).
        arrival_k: the queue takes every k-th arrival of a Poisson stream (:func:`erlang_arrival_tail`); 1: Poisson.

    inf where the queue is unstable (ρ ≥ 1).

    Raises:
        SpecError: ``q`` outside (0, 1); a negative ``rate_per_s``.
    """
    if not 0 < q < 1:
        raise SpecError("q", f"quantile must be in (0, 1), got {q!r}", "give e.g. 0.99")
    rho, _ = mg1_wait(rate_per_s, work_s)
    g, cl = erlang_arrival_tail(rate_per_s, work_s, arrival_k)
    c = np.asarray(other_s, dtype=float)
    c = np.broadcast_to(c, (rho.size, c.shape[-1]))
    lo = c.min(axis=1)
    # the wait's own q-quantile bounds the answer above: P(W > x) = 1 − q there
    with np.errstate(divide="ignore", invalid="ignore"):
        amp = np.minimum(rho, cl)
        w_q = np.where((rho < 1) & (amp > 1 - q), np.log(np.maximum(amp, 1e-30) / (1 - q)) / g, 0.0)
    hi = c.max(axis=1) + np.nan_to_num(w_q, posinf=0.0) + 1e-12
    for _ in range(64):
        mid = (lo + hi) / 2
        over = wait_exceeds(mid[:, None] - c, rho[:, None], g[:, None], cl[:, None]).mean(axis=1) > 1 - q
        lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
    return np.where(rho < 1, hi, np.inf)


def gated_ttft_quantile_s(q: float, rate_per_s, work_s, other_s, gate_s, arrival_k: int = 1) -> np.ndarray:
    """Quantile ``q`` of TTFT = W + U + c_i, s, (N,): :func:`ttft_quantile_s`'s W and c_i (``rate_per_s`` (N,),
    ``work_s`` and ``other_s`` (N, K)) with U the attention-DP balancing wait, uniform on [0, 2·``gate_s``) (``gate_s``: (N,), its
    mean; module docstring), independent of both: each prompt split into :data:`GATE_SLICES` equally likely copies at
    the slices' midpoints. ``gate_s`` all zero: :func:`ttft_quantile_s` itself. ``arrival_k``: as
    :func:`ttft_quantile_s`.

    >>> # no queue, one prompt of c = 0.2 s, G = 0.32 s: U uniform on [0, 0.64), the median c + G = 0.52 s, here
    >>> # within one slice (0.64 / 16 = 0.04 s): the 8th of the 16 copies, 0.2 + 0.64 x 7.5 / 16 = 0.50
    >>> round(float(gated_ttft_quantile_s(0.5, [1.0], np.zeros((1, 1)), [[0.2]], [0.32])[0]), 2)
    0.5

    Raises:
        SpecError: ``q`` outside (0, 1).
    """
    gate = np.atleast_1d(np.asarray(gate_s, dtype=float))
    work, other = np.asarray(work_s, dtype=float), np.asarray(other_s, dtype=float)
    if not np.any(gate > 0):
        return ttft_quantile_s(q, rate_per_s, work, other, arrival_k)
    n = other.shape[0]
    u = 2.0 * (np.arange(GATE_SLICES) + 0.5) / GATE_SLICES  # U / G: uniform on [0, 2), slice midpoints
    spread = (other[:, :, None] + np.broadcast_to(gate, (n,))[:, None, None] * u).reshape(n, -1)
    return ttft_quantile_s(
        q, rate_per_s, np.repeat(np.broadcast_to(work, other.shape), GATE_SLICES, axis=1), spread, arrival_k
    )


def poisson_ttft_s(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    pts: ServingPoints,
    q: float = 0.99,
    arrival_k: int = 1,
) -> np.ndarray:
    """Quantile ``q`` of TTFT (s) of ``dep``'s points ``pts`` (N,) under Poisson arrivals at each
    point's request rate (module docstring), (N,); inf where the prefill queue is unstable:
    :func:`gated_ttft_quantile_s` of :func:`poisson_ttft_parts`. ``arrival_k`` > 1: each instance takes every
    k-th query of the Poisson stream (a harness's round-robin over k instances; :func:`erlang_arrival_tail`).

    Raises:
        SpecError: ``q`` outside (0, 1).
    """
    work, other, gate = poisson_ttft_parts(model, pricer, dep, wl, pts)
    return gated_ttft_quantile_s(q, pts.request_rate_per_s, work, other, gate, arrival_k)


def poisson_ttft_parts(
    model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, pts: ServingPoints
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parts of :func:`poisson_ttft_s` for ``dep``'s points ``pts`` (N,) over the workload's :data:`ISL_GRID`
    prompts: each prompt's queue work V_i (s, (N, K)), its TTFT apart from the queue's wait and the balancing
    gate's spread (own prefill, front end, half a step, KV hand-off, and the closed loop's gate mean G less G_c;
    s, (N, K)), and G_c (s, (N,); 0 without the gate): the gate's mean over the release clock's rounds, whose
    uniform spread on [0, 2·G_c) :func:`gated_ttft_quantile_s` adds — so the mean stays G, the closed loop's
    (with serve/adp_balance.ADP_CLOCK_MEAN on, G = G_c).

    Aggregated points: one instance's rate and decode batch (``pts.decode_batch``, spread over the
    PP micro-batches), its prefill budget per step; disaggregated: the prefill pool's workers
    pooled at the deployment's rate, prefill-only steps, plus the points' KV hand-off.
    """
    eff = pricer.efficiency
    agg = dep.prefill is None
    pool = dep.decode if agg else dep.prefill
    lay = pool.layout
    pr = with_pool_backends(pricer, pool, model, lay, dep.precision.kv_cache.name)
    budget = float(dep.prefill_budget(lay))
    ranks = max(lay.dp, 1)
    per_rank = budget / ranks
    isl = np.array([wl.isl_quantile((k + 0.5) / ISL_GRID) for k in range(ISL_GRID)])
    n = len(pts)
    b = pts.decode_batch / lay.pp if agg else np.zeros(n)
    chunk = min(wl.mean_isl, per_rank)
    seqs = budget / chunk
    sc = pool_step_cost(
        model,
        pr,
        dep,
        lay,
        Batch.make(
            decode_seqs=np.concatenate([b, b]),
            decode_ctx=wl.decode_ctx,
            prefill_tokens=np.concatenate([np.full(n, 1.0 if not agg else 0.0), np.full(n, budget)]),
            prefill_ctx=(wl.mean_isl - chunk) / 2,
            prefill_seqs=np.concatenate([np.full(n, 0.0 if agg else 1.0), np.full(n, seqs)]),
        ),
    )
    t_lo, t_hi = sc.step_time_s[:n], sc.step_time_s[n:]
    workers = 1.0 if agg else float(pool.workers)
    work = isl[None, :] * (t_hi / (workers * budget))[:, None]
    sigma_r = np.maximum(t_hi - t_lo, 0.0) / per_rank
    own = t_lo[:, None] * np.maximum(1.0, isl[None, :] / per_rank) + sigma_r[:, None] * isl[None, :]
    zero = np.zeros(n)
    gate = adp_gate_s(dep, lay, pts.decode_batch, pts.request_rate_per_s, pts.step_time_s, None) if agg else zero
    spread = (
        adp_gate_s(dep, lay, pts.decode_batch, pts.request_rate_per_s, pts.step_time_s, None, clock=True)
        if agg
        else zero
    )
    other = (
        own
        + np.array([frontend_s(eff, x) for x in isl])[None, :]
        + (pts.step_time_s / 2 + pts.kv_transfer_s + gate - spread)[:, None]
    )
    return work, other, np.asarray(spread, dtype=float)


def decode_pool_step(model: ModelSpec, pricer: Pricer, dep: Deployment, decode_ctx, decode_seqs) -> StepCost:
    """The decode-only step of ``dep``'s (decode) instance decoding ``decode_seqs`` (N,) sequences at mean context
    ``decode_ctx`` (tokens; a float or (N,)) with no prompt in it, as the engine runs it: the pool's engine backends
    (cost/pool_backends.with_pool_backends: MoE backend, attention backend with the KV cache's format, MoE exchange) on
    ``pricer``, the sequences spread over the PP micro-batches (``decode_seqs / pp`` a step), padded to the
    captured CUDA-graph batch (serve/limits.graph_padded), with the deployment's MTP, memory fraction, overlap
    and memory profile. One PP micro-batch step (cost/step.StepCost, N points); the CUDA-graph ceiling is not
    applied (serve/limits.decode_step_s takes this StepCost where a caller wants it). The one path of
    :func:`decode_step_s`, of serve/point.py's window step and of the diagnosis scripts that split this step into its
    terms. ``pricer``: the bare one or one this pool's backends already wrap (with_pool_backends is idempotent: it
    returns that one unchanged; tests/unit/test_pool_backends_twice.py).

    Raises:
        SpecError: an unknown backend name on the pool, or ``pricer`` already wrapped by another pool's backends
            (cost/pool_backends.with_pool_backends).
    """
    pool = dep.decode
    lay = pool.layout
    pr = with_pool_backends(pricer, pool, model, lay, dep.precision.kv_cache.name)
    b = np.asarray(decode_seqs, dtype=float).ravel() / lay.pp
    z = np.zeros(b.size)
    batch = graph_padded(
        dep, lay, Batch.make(decode_seqs=b, decode_ctx=decode_ctx, prefill_tokens=z, prefill_ctx=0.0, prefill_seqs=z)
    )
    return pool_step_cost(model, pr, dep, lay, batch)


def decode_step_s(model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, decode_seqs) -> np.ndarray:
    """Time (s) per output token of ``dep``'s (decode) instance decoding ``decode_seqs`` (N,)
    sequences at the workload's mean decode context with no prompt in the step (the arrivals have
    stopped: a Server run's drain, serve/finite_run.server_run_factor), (N,): the sequences spread
    over the PP micro-batches as :func:`poisson_ttft_s` does, one token each per PP micro-batch steps
    (:func:`decode_pool_step` times pp).

    Disaggregated: a decode instance's (its steps carry no prompt either way).
    """
    sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, decode_seqs)
    return np.asarray(sc.step_time_s, dtype=float) * dep.decode.layout.pp
