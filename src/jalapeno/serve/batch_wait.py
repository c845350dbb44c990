"""TensorRT-LLM's batch waiting (delayed context batching): how long a new prompt is held, in closed form
(docs/model.md §8.7 effect 9).

**The rule** (NVIDIA/TensorRT-LLM ``tensorrt_llm/_torch/pyexecutor/py_executor.py``, ``PyExecutor._schedule``
and ``_waiting_requests``, the 1.x releases; the later unified scheduler's ``_apply_batch_waiting`` states
the same conditions). With ``batch_wait_timeout_iters`` T and ``batch_wait_max_tokens_ratio`` r (both 0 by
default: ``LlmArgs``), an iteration whose scheduler picked context requests *and* generation requests
(``if not self.enable_attention_dp and self.enable_batch_waiting and len(context_requests) > 0 and
len(generation_requests) > 0``) runs the generation requests alone while

    held iterations so far < T   and   Σ prompt tokens of the picked context requests
                                       + Σ (1 + draft tokens) of the generation requests < r·max_num_tokens;

each such iteration adds one to the held count, and the iteration that lets the context requests through
resets it to 0. So: an engine with attention DP never holds (its own balancing applies,
serve/adp_balance.adp_balance_wait_s); an idle engine (no generation request) never holds; with T = 0 or
r = 0 one of the conditions fails at once and nothing is held (both must be set). The held iterations are
decode-only steps. A context request counts its whole prompt (``len(get_tokens(0))``), chunked or not.

**The hold in steady state** (Poisson arrivals, renewal-reward). The first prompt to find no window open
opens one; the others arrive at a rates per decode step. The window closes after T steps, or earlier when
the K-th prompt is in (K prompts fill r·max_num_tokens beside the decode rows, :func:`prompts_to_fill`).
With N(t) the arrivals after the opener by step t (Poisson, mean a·t), the close X = min(T, S_{K−1}), and
P_n = P(N(T) ≥ n), per window

    E[X]            = (1/a)·Σ_{n=1}^{K−1} P_n                 (opener's wait),
    E[Σ (X − S_j)]  = E[∫_0^X N(t) dt] = (1/a)·Σ_{n=1}^{K−1} (n − 1)·P_n   (the others' waits),
    E[prompts]      = 1 + Σ_{n=1}^{K−1} P_n,

(∫_0^T P(N(t) = n) dt = P(N(T) ≥ n + 1)/a), and the mean hold per prompt is the first two over the third
(:func:`batch_wait_steps`). Timeout only (K → ∞): T·(1 + a·T/2)/(1 + a·T); a lone prompt (a → 0): T.
The prompts of a window share one step: a prompt's step carries the window's others too, on average
E[n²]/E[n] − 1 of them (prompt-weighted window size n).

**Bunched arrivals in a closed loop.** A closed loop started at once (InferenceX: C users issue together,
then R = serve/queueing.REQUESTS_PER_USER requests each) keeps its users in phase: a user's cycle
differs from another's only by its output length, uniform in [r_L·L, L] (std (1 − r_L)·L/√12 decode
steps), so after k cycles the phases spread with std √k times that; over a run, k̄ = (R + 1)/2. The
arrivals of a cycle then come as a bunch, and the rate an arriving prompt sees is the arrival-weighted
rate of the bunch, (C − 1)/(2√π·σ) per step for a Gaussian bunch of std σ steps (∫f²/∫f), not the
mean rate λ·τ; the larger of the two applies (:func:`bunched_arrivals_per_step`; at most C − 1 per step,
everyone at once, for fixed lengths). The request-level simulator shows the bunching directly
(tests/unit/test_batch_wait.py): Poisson arrivals at the mean rate put fewer prompts in a window and
hold them longer.

**Who is in the bunch: the concurrency C, not the decode batch B** (round 53, bunch53;
:data:`BUNCH_CONCURRENCY_ON`). The bunch is a bunch of *arrivals*: in a closed loop every one of the C users
issues one request per cycle (its arrival is the moment its previous request ends), so every user arrives once
in every bunch, whatever the others are doing when a given prompt arrives. At any instant the C users split
into B decoding and λ·TTFT before their first token (queued or prefilling: C = λ·E2E = B + λ·TTFT, Little's
law); the latter are the users who arrived a little earlier in the same bunch, and serve/analytic's grouping
counts them among the prompts a prompt meets (m = a·ISL/chunk: a per step for the ISL/chunk steps a prompt is
in prefill). Counting B drops them from the bunch: the rate is (B − 1)/(C − 1) of the bunch's. At 8k/1k
λ·TTFT ≪ B (C ≈ B); at 32k/1k sanity53 found B 2, C 4.25 at DP 256 (Jalapeño, DeepSeek-R1 fp4): (4.25 − 1)/(2 − 1) = 3.25
times the rate. The closed loop's own C is λ·E2E at the point (serve/analytic.agg_tail's ``c``); the
fixed-concurrency solve (serve/lockstep.solve_concurrencies) carries it from pass to pass (its batch B over the
pass's (E2E − TTFT)/E2E), and serve/admission_waits.batch_wait_hold_s already passes C (its no-queue Little's
law). Left out: a prefill queue that serialises a bunch's prompts spreads the bunch further (not in σ).

Pure: no I/O.
"""

from __future__ import annotations

import math

import numpy as np

#: Round 53 (bunch53): the closed loop's bunch counts its C users (module docstring), not the decode batch B;
#: serve/analytic._chunk_step_load reads the concurrency its caller passes (the fixed-concurrency solve's).
#: Off: the decode batch, as before round 53.
BUNCH_CONCURRENCY_ON = False

#: Largest window (prompts) the closed form sums over; a window is closed by the timeout long before
#: (a·T ≪ this at any served load), and K is capped here.
MAX_WINDOW = 4096


def prompts_to_fill(ratio: float, max_num_tokens: float, gen_tokens, mean_isl: float) -> np.ndarray:
    """K, the prompts of mean length ``mean_isl`` that bring a step to ``ratio``·``max_num_tokens`` beside
    ``gen_tokens`` (N,) decode rows (:data:`MAX_WINDOW` when r = 0: no token condition), at least 1, (N,).

    >>> prompts_to_fill(0.8, 8192, np.array([64.0]), 922.0).tolist()  # (6553.6 − 64)/922 = 7.04 → 8
    [8]
    >>> prompts_to_fill(0.8, 8192, np.array([7000.0]), 922.0).tolist()  # the decode rows alone fill it
    [1]
    """
    g = np.asarray(gen_tokens, dtype=float)
    if ratio <= 0:
        return np.full(g.shape, MAX_WINDOW, dtype=int)
    k = np.ceil((ratio * max_num_tokens - g) / max(mean_isl, 1e-9) - 1e-9)
    return np.clip(k, 1, MAX_WINDOW).astype(int)


def bunched_arrivals_per_step(
    users,
    mean_per_step,
    osl: float,
    range_ratio: float,
    tokens_per_step: float = 1.0,
    cycles: float | None = None,
    osl_std: float | None = None,
) -> np.ndarray:
    """The arrival rate a prompt sees in a closed loop of ``users`` (N,) started together, prompts per decode
    step (N,): the larger of ``mean_per_step`` (N,) and the arrival-weighted rate of the bunch,
    (C − 1)/(2√π·σ) with σ = √k̄·(1 − ``range_ratio``)·``osl``/√12/``tokens_per_step`` steps (module
    docstring; ``cycles`` k̄, default (R + 1)/2 with R = serve/queueing.REQUESTS_PER_USER), at most C − 1.
    ``osl_std`` (tokens), where given, is the output length's standard deviation in place of
    (1 − range_ratio)·osl/√12: specs/workload.Workload.osl_std, that same value for a uniform range and the
    spread's own for a workload of measured lengths (whose ``range_ratio`` 1.0 does not mean fixed lengths).

    >>> # 64 users, 1k outputs uniform in [0.8·1024, 1024]: σ = √5.5·204.8/√12 = 138.7 steps
    >>> bunched_arrivals_per_step(np.array([64.0]), np.array([0.06]), 1024, 0.8).round(4).tolist()
    [0.1282]
    >>> bunched_arrivals_per_step(np.array([64.0]), np.array([0.06]), 1024, 1.0).tolist()  # all at once
    [63.0]
    >>> # a spread of measured lengths, std 1,024: σ = √5.5·1024 = 2,401.5 steps, bunch 63/(2√π·σ) = 0.0074
    >>> bunched_arrivals_per_step(np.array([64.0]), np.array([0.06]), 1024, 1.0, osl_std=1024.0).tolist()
    [0.06]
    """
    from jalapeno.serve.queueing import REQUESTS_PER_USER

    c = np.maximum(np.asarray(users, dtype=float), 1.0)
    k = (REQUESTS_PER_USER + 1) / 2 if cycles is None else cycles
    std = (1.0 - range_ratio) * osl / math.sqrt(12.0) if osl_std is None else osl_std
    sigma = math.sqrt(k) * std / max(tokens_per_step, 1e-9)
    bunch = (c - 1) if sigma <= 0 else np.minimum((c - 1) / (2 * math.sqrt(math.pi) * sigma), c - 1)
    return np.maximum(np.asarray(mean_per_step, dtype=float), bunch)


def _poisson_tail(mean: float, n_max: int) -> np.ndarray:
    """P(N ≥ n) for n = 1..n_max, N ~ Poisson(mean)."""
    if mean <= 0:
        return np.zeros(n_max)
    n = np.arange(0, n_max)
    log_pmf = -mean + n * math.log(mean) - np.array([math.lgamma(i + 1.0) for i in n])
    return np.clip(1.0 - np.cumsum(np.exp(log_pmf)), 0.0, 1.0)


def batch_wait_steps(arrivals_per_step, timeout_iters: int, prompts_to_fill_) -> tuple[np.ndarray, np.ndarray]:
    """Mean hold of a prompt (decode steps) and the mean number of other prompts in its step, (N,) each.

    Args:
        arrivals_per_step: a, prompts reaching the engine per decode step while a window is open (the
            other users' rate times the decode-only step), (N,).
        timeout_iters: T, ``batch_wait_timeout_iters`` (0: no hold).
        prompts_to_fill_: K, prompts that close the window by tokens (:func:`prompts_to_fill`), (N,) ints;
            K ≤ 1: a prompt alone fills it, no hold.

    Returns:
        (hold, joined): hold in steps per prompt, and the other prompts sharing its prefill step
        (prompt-weighted: E[n²]/E[n] − 1 for a window of n prompts).

    >>> h, j = batch_wait_steps(np.array([0.0]), 40, np.array([8]))  # a lone prompt waits the timeout
    >>> h.tolist(), j.tolist()
    ([40.0], [0.0])
    >>> h, j = batch_wait_steps(np.array([0.05]), 40, np.array([4096]))  # timeout only: 40·(1 + 1)/(1 + 2)
    >>> round(float(h[0]), 3), round(float(j[0]), 3)  # E[n²]/E[n] − 1 = (2 + 9)/3 − 1
    (26.667, 2.667)
    >>> batch_wait_steps(np.array([0.05]), 40, np.array([1]))[0].tolist()  # one prompt fills the budget
    [0.0]
    """
    a_all = np.asarray(arrivals_per_step, dtype=float)
    k_all = np.broadcast_to(np.asarray(prompts_to_fill_, dtype=int), a_all.shape)
    hold, joined = np.zeros(a_all.shape), np.zeros(a_all.shape)
    if timeout_iters <= 0:
        return hold, joined
    for i, (a, k) in enumerate(zip(a_all.tolist(), k_all.tolist())):
        if k <= 1:
            continue
        if a <= 0:
            hold[i] = float(timeout_iters)
            continue
        tail = _poisson_tail(a * timeout_iters, k - 1)  # P(N(T) ≥ n), n = 1..K − 1
        n = np.arange(1, k, dtype=float)
        prompts = 1.0 + tail.sum()
        hold[i] = (tail.sum() + ((n - 1) * tail).sum()) / a / prompts
        # window size m = 1 + min(N(T), K − 1): E[m²] = 1 + 2·E[M] + E[M²], E[M²] = Σ (2n − 1)·P(M ≥ n)
        m1, m2 = tail.sum(), ((2 * n - 1) * tail).sum()
        joined[i] = (1.0 + 2.0 * m1 + m2) / prompts - 1.0
    return hold, joined


def instance_kw(dep, layout) -> dict:
    """The simulator instance's batch-waiting keywords (serve/sim/scheduler.Instance) for ``dep``
    (deploy/deployment.Deployment) on ``layout``: T and θ = r·max_num_tokens (``max_tokens_per_step``,
    else the token budget); {} when the deployment does not hold or runs attention DP (no hold there)."""
    if not dep.batch_waits or layout.dp > 1:
        return {}
    cap = dep.step_token_cap(layout) or dep.prefill_budget(layout)
    return {
        "batch_wait_iters": dep.batch_wait_timeout_iters,
        "batch_wait_tokens": dep.batch_wait_max_tokens_ratio * cap,
    }
