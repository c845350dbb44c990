"""Prefill queueing: the TTFT a closed loop adds on top of one prompt's own prefill.

Each effect below is a closed form (derivations below and in docs/model.md §8.7); the
request-level simulator (serve/sim/) runs the same scheduler explicitly and is the reference
they are tested against (tests/golden/test_ttft_sim_vs_analytic.py).

**1. Aggregated steady state: a batch-service queue on the engine's steps.** Every step of an
aggregated instance carries the decoding batch plus the prefill chunks that arrived while the
previous step ran (continuous batching, chunked prefill). With t_d the decode-only step, s the
marginal cost of one prefill chunk in a step and A_k the chunks that arrived during step k,

    τ_{k+1} = t_d + s·A_k,    A_k ~ Poisson(λ_c·τ_k)    (chunk arrival rate λ_c)

so E[τ] = t_d/(1 − ρ) with ρ = λ_c·s (the step mean the analytic model already uses) and, from
Var τ_{k+1} = s²·(λ_c·E[τ] + λ_c²·Var τ_k) at stationarity, Var τ = s·ρ·E[τ]/(1 − ρ²). An
arriving prompt waits the residual of the step in progress, length-biased (renewal theory):
E[R] = E[τ²]/(2E[τ]) = E[τ]/2 + s·ρ/(2(1 − ρ²)); its own step carries it and the n' other chunks
that arrived in the same (length-biased) step, E[n'] = λ_c·E[τ²]/E[τ] = n̄ + ρ²/(1 − ρ²), n̄ = λ_c·E[τ].
Against the no-queue TTFT (τ/2 + one step with max(n̄, 1) chunks) the queue adds

    ΔTTFT = s·min(n̄, 1) + s·ρ²/(1 − ρ²) + s·ρ/(2(1 − ρ²)).

Closed loop, not Poisson: by the arrival theorem of closed queueing networks (Lavenberg & Reiser
1980; the basis of mean-value analysis) an arriving request sees the system as it is with C − 1
users, so the other users' rate is λ·(C − 1)/C: n̄ and ρ above are scaled by (C − 1)/C (one
user never queues behind another). ρ is capped at :data:`MAX_RHO` (the formula's pole).

**2. Disaggregated steady state: the same batch service on a prefill worker.** A worker's
step of p prefill tokens takes t0 + σ·p (no decode beside it), so the chain of effect 1 holds
with t_d → t0 while the worker is busy, E[τ] = t0/(1 − ρ), ρ = λ_c·s, s = σ·chunk, λ_c the
worker's chunk arrival rate. Unlike an aggregated engine it idles between bursts: an arrival
finds a step in progress with probability min(n̄, 1) (steps per second × E[τ]), so

    TTFT_prefill = S_1 + min(n̄, 1)·E[τ]/2 + ΔTTFT(effect 1),

S_1 the prompt's lone prefill (a step of its own tokens; its chunks when longer than the
budget). (The earlier form S_full·(1 + ρ/(2(1 − ρ))) charged every prompt a full budget step
even alone, and counted the M/D/1 queue at that step's length.)

**3. InferenceX's idle start (a transient, in the mean and the tail only).** InferenceX's client
runs its 2·C warm-up requests as a separate phase that drains, then issues 10·C counted requests
with C of them at once into the idle server (utils/bench_serving/benchmark_serving.py,
``benchmark()``, and benchmarks/benchmark_lib.sh ``--num-warmups 2·C``; the model scripts pass
``--num-prompts $((CONC * 10))``). The first wave queues behind itself: per instance n prompts
of ISL tokens in steps of b budget tokens, each step costing t0 + σ·p for p prefill tokens, so
prompt k (1..n) has its first token after m_k = ⌈k·ISL/b⌉ steps:

    t_k = m_k·t0 + σ·min(m_k·b, n·ISL),

and the run's mean TTFT is the steady one plus (1/R)·mean_k max(0, t_k + front end − TTFT_ss),
R = :data:`REQUESTS_PER_USER` = 10 counted requests per user. The wave spreads its users'
completions, so later waves arrive close to the steady state (the simulator shows the residue:
the test tolerance). Quantile q of the run is the larger of the steady quantile and the
1 − (1 − q)·R quantile of the first wave (when (1 − q)·R < 1: p99 reads the wave's p90).
Throughput and the steady concurrency are unchanged (a transient of one wave out of ten).
An engine's one-off first-wave stall S (Efficiency.first_wave_stall_s; docs/model.md §8.7 (10))
delays each request of this wave by S: the mean grows by about S/R, the median not at all, the
tail quantiles whose share (1 − q) is under 1/R read the stalled wave (``idle_start(stall_s=)``).
**4. The scheduler's poll for new requests (aggregated).** SGLang's ``--scheduler-recv-interval
n`` reads new requests only every n decode steps (``managers/scheduler_recv_skipper.py``: a decode
step weighs 1, any other step forces a read). With C ≥ 2 users of a closed loop the scheduler is
always decoding someone else when a request arrives (no think time), so it cycles through n
decode-only steps (L_d) and the prefill step that carries what arrived in them (L_p, a poll right
after it); an arrival waits the rest of the part it lands in, R = (L_d² + L_p²)/(2(L_d + L_p)) on
average, and its prefill step carries the others that arrived in that part. An arrival that finds
the engine idle is read and launched at once: no step in flight, no poll period; the whole wait is
scaled by P(busy) = 1 − (1 − u)^(C − 1) (serve/overlap_loop.arrival_busy: 0 for a lone user, whose
front end runs while the engine idles; the same P(busy) as the admission lag) — with :data:`IDLE_ARRIVAL_POLL`
on; shipped off, the step in flight is charged at C = 1 too and the extra part scaled by min(C − 1, 1). :func:`poll_wait_s`. (``--num-continuous-decode-steps`` would
act alike but is inert in current SGLang; not modelled.)

**6. The recurring wave of a fixed-length closed loop** (:func:`fixed_cycle_s`). With
every request exactly ISL/OSL tokens (genai-perf with zero stddev, aiconfigurator's end-to-end
rows) the first wave's burst does not spread: prompt k has its first token at step m_k of the
wave, decodes OSL − 1 steps and finishes at step m_k + OSL − 1, so the wave's completions keep
the step pattern of its prefills, and the next prompts arrive a front end f after them. Take the
first completion of a wave as time 0 and c_k = m_k − m_1 its completion step. Until the next wave's
first prompt arrives the engine runs decode-only steps (t_d at the batch still decoding, B_i = n −
#{c_k < i}); the first step boundary at or after f (after the scheduler's next poll, effect 4;
at f itself when the batch has drained, an idle engine starts at once) opens the new wave at
S = T_K = Σ_{i ≤ K} t_d(B_i). From there the steps carry the wave's prefill, t0 + σ·p_j for p_j
tokens, FCFS under the budget, exactly as the first wave's (the arrivals keep the queue from
emptying), so with P(j) = j·t0 + σ·W(j) (W(j) the wave's tokens through its step j)

    F_k = S + P(m_k)                                 (prompt k's first token)
    E_k = T_{c_k}                  for c_k ≤ K       (its request issued in a decode-only step)
    E_k = S + P(c_k − K)           for c_k > K       (issued during the wave's own prefill steps)
    TTFT_k = F_k − E_k             (issue to first token; the front end f is inside it)

The prompts issued during the K decode-only steps arrive t_d apart but are served t_b = t0 + σ·b
apart: TTFT grows by t_b − t_d per step of them; those issued later meet a conveyor of constant
length, TTFT = (K + 1)·t_b when whole prompts fill a step. A long front end against short decode
steps (f ≥ M·t_d) makes every wave the first; f → 0 dissolves the burst (K = 0: each prompt waits
its own step). The idle engine's first step carries the first arrival alone (it starts on it,
before the others of its group land): m_1 = ⌈ISL/b⌉, and with ISL ≤ b the stream of the others
starts at step 2. The cycle needs the wave prefilled before its first completion (M − m_1 <
OSL − 1); a prefill-bound engine never drains and stays in the steady state of effect 1.
A run of R = :data:`REQUESTS_PER_USER` waves from an idle server is its first wave (effect 3)
and R − 1 such waves. A disaggregated prefill worker does not recur the burst: its decode worker
never runs prefill, so the completions come apart as the prefills did and the next wave arrives at
the worker's own pace (:func:`locked_cycle_s`). Applied by ``serve_at_concurrency(..., recurring_waves=True)`` only:
aiconfigurator's fixed-length rows do not show the recurring burst (docs/model.md §8.7).

Pure: no I/O.
"""

from __future__ import annotations

import math

import numpy as np

#: Counted requests per user in an InferenceX run (``--num-prompts $((CONC * 10))``,
#: SemiAnalysisAI/InferenceX benchmarks/*.sh).
REQUESTS_PER_USER = 10
#: Cap on the queue's utilisation in the closed forms (their pole is at 1); a steady state with
#: more prefill load than this is flagged by the serving models' own limits.
MAX_RHO = 0.95


def others(concurrency) -> np.ndarray:
    """(C − 1)/C, the other users' share of the request rate an arrival sees (arrival theorem), (N,).

    >>> others([1, 4]).tolist()
    [0.0, 0.75]
    """
    c = np.maximum(np.asarray(concurrency, dtype=float), 1.0)
    return (c - 1) / c


def agg_queue_s(chunk_cost_s, chunks_per_step, step_s, concurrency) -> np.ndarray:
    """TTFT an aggregated instance's steady prefill queue adds (effect 1 of the module docstring), s, (N,).

    Args:
        chunk_cost_s: s, the marginal step time of one prefill chunk, (N,).
        chunks_per_step: n̄ = λ_c·E[τ], mean prefill chunks per step, (N,).
        step_s: E[τ], the mean step, s, (N,).
        concurrency: C, users of the instance (for the arrival theorem), (N,).

    >>> round(float(agg_queue_s(0.1, 0.5, 0.2, 1e9)), 4)  # ρ = 0.25: 0.05 + 0.1/15 + 0.0125/0.9375
    0.07
    """
    s = np.asarray(chunk_cost_s, dtype=float)
    n = np.asarray(chunks_per_step, dtype=float) * others(concurrency)
    rho = np.clip(n * s / np.maximum(step_s, 1e-30), 0.0, MAX_RHO)
    return s * np.minimum(n, 1.0) + s * rho**2 / (1 - rho**2) + s * rho / (2 * (1 - rho**2))


#: Whether the aggregated TTFT scales :func:`poll_wait_s` by the arrival's P(busy) (serve/overlap_loop.arrival_busy:
#: a lone user finds the engine idle and waits for no step in flight). Built in round 39 (ixttft39) and shipped OFF:
#: the SGLang front-end refit it asks for (17.5 -> 16.25 us a prompt token) takes the shared H200 TTFT median 20.3 ->
#: 20.6%, over the fidelity ratchet's 20.5% (docs/gap_aic_ttft.md round 39). Read at each call (serve/analytic.agg_tail).
IDLE_ARRIVAL_POLL = False


def poll_wait_s(
    recv_interval,
    step_s,
    concurrency,
    chunk_cost_s=0.0,
    chunks_per_step=0.0,
    decode_step_s=None,
    prefill_step_s=None,
    busy_probability=None,
) -> np.ndarray:
    """Wait of an arrival for the scheduler to admit it and run its step (effect 4), s, (N,).

    A poll every step (n = 1): τ/2, the step in progress. With n > 1 and other users keeping the
    engine decoding, the scheduler cycles through n decode-only steps (L_d = n·t_dec) and the
    prefill step that carries what arrived in them (L_p; a poll follows it at once). An arrival
    lands in either part in proportion to its length and waits the rest of it, on average
    R = (L_d² + L_p²)/(2(L_d + L_p)), and its prefill step carries the others that arrived in the
    same part, 2·λ_c·R chunks (λ_c = n̄·(C − 1)/(C·τ): the other users' chunks per second, the arrival
    theorem; the same rate fills L_p), s each, of which the n̄·(C − 1)/C of one step are already in the
    steady queue (:func:`agg_queue_s`).

    Args:
        recv_interval: n, decode steps between the scheduler's polls for new requests (≥ 1).
        step_s: τ, the mean step, s, (N,).
        concurrency: C, users of the instance, (N,).
        chunk_cost_s: s, the marginal step time of one prefill chunk joining the step, (N,).
        chunks_per_step: n̄, mean prefill chunks per step, (N,).
        decode_step_s: t_dec, the decode-only step, s, (N,); None = τ.
        prefill_step_s: the step carrying one chunk beside the decode batch, s, (N,); None = τ.
        busy_probability: P(busy) in [0, 1], the chance the arrival finds another user inside the engine, (N,)
            (serve/overlap_loop.busy_probability: 1 − (1 − u)^(C − 1), the arrival theorem); it scales both the
            step in flight (an idle engine reads and launches at once: a lone user of a closed loop waits for
            none, its front end runs while the engine idles) and the poll period's extra part. None: the step in
            flight is always found (τ/2 at C = 1 too) and the extra part is scaled by min(C − 1, 1).

    >>> poll_wait_s(1, 0.02, 64).round(4).tolist()  # a poll every step: the step in progress
    0.01
    >>> # n = 30, t_dec = L_p = τ = 0.02 (nothing arrives): R = (0.6² + 0.02²)/(2·0.62)
    >>> round(float(poll_wait_s(30, 0.02, 64)), 5)
    0.29065
    >>> poll_wait_s(30, 0.02, 1).round(4).tolist()  # a lone user: no poll period, the step in flight kept
    0.01
    >>> poll_wait_s(1, 0.02, [1.0, 64.0], busy_probability=[0.0, 0.75]).round(4).tolist()  # idle: no step in flight
    [0.0, 0.0075]
    """
    tau = np.asarray(step_s, dtype=float)
    n = max(int(recv_interval), 1)
    c = np.asarray(concurrency, dtype=float)
    found = 1.0 if busy_probability is None else np.clip(np.asarray(busy_probability, dtype=float), 0.0, 1.0)
    if n == 1:
        return found * tau / 2
    busy = np.clip(c - 1.0, 0.0, 1.0) if busy_probability is None else found
    s = np.asarray(chunk_cost_s, dtype=float)
    nb = np.asarray(chunks_per_step, dtype=float) * others(c)
    lam_c = nb / np.maximum(tau, 1e-30)
    l_d = n * (tau if decode_step_s is None else np.asarray(decode_step_s, dtype=float))
    l_p = (tau if prefill_step_s is None else np.asarray(prefill_step_s, dtype=float)) + s * lam_c * l_d
    r = (l_d**2 + l_p**2) / (2 * (l_d + l_p))
    joined = np.maximum(2 * lam_c * r - nb, 0.0)
    return found * tau / 2 + busy * (np.maximum(r - tau / 2, 0.0) + s * joined)


def bulk_prefill_s(chunk_cost_s, chunks_per_step, step_s, concurrency) -> np.ndarray:
    """Queueing a disaggregated prefill worker adds to a prompt's lone prefill (effect 2), s, (N,).

    Args as :func:`agg_queue_s`, for the worker's steps (t_d → t0, the step's fixed cost).
    The step in progress is found with probability min(n̄, 1) (the worker idles between
    bursts); the rest is :func:`agg_queue_s`.

    >>> round(float(bulk_prefill_s(0.1, 0.5, 0.2, 1e9)), 4)  # 0.5·0.1 + 0.07
    0.12
    """
    n = np.asarray(chunks_per_step, dtype=float) * others(concurrency)
    busy = np.minimum(n, 1.0) * np.asarray(step_s, dtype=float) / 2
    return busy + agg_queue_s(chunk_cost_s, chunks_per_step, step_s, concurrency)


def first_wave_s(prompts, isl: float, budget: float, step0_s, per_token_s) -> list[np.ndarray]:
    """Time to the first token of each prompt of an idle-start wave, per point (effect 3).

    Args:
        prompts: n, prompts arriving at once at one instance, (N,) (rounded, at least 1).
        isl: tokens per prompt; budget: prefill tokens per step b.
        step0_s, per_token_s: t0 and σ of a step costing t0 + σ·p, (N,) or scalars.

    Returns:
        N arrays, point i's t_k for k = 1..n_i, s.

    >>> [a.round(3).tolist() for a in first_wave_s([3], 100, 200, 0.1, 0.001)]
    [[0.3, 0.3, 0.5]]
    """
    n_all = np.maximum(np.rint(np.asarray(prompts, dtype=float)), 1).astype(int)
    t0 = np.broadcast_to(np.asarray(step0_s, dtype=float), n_all.shape)
    sig = np.broadcast_to(np.asarray(per_token_s, dtype=float), n_all.shape)
    out = []
    for n, a, b in zip(n_all.tolist(), t0.tolist(), sig.tolist()):
        k = np.arange(1, n + 1, dtype=float)
        m = np.ceil(k * isl / budget - 1e-9)
        out.append(m * a + b * np.minimum(m * budget, n * isl))
    return out


def idle_start(
    ttft_ss: dict, waves: list[np.ndarray], extra_s, burst_fraction: float | None = None, stall_s=0.0
) -> dict:
    """Run-level TTFT (mean and :data:`REQUESTS_PER_USER`-weighted quantiles) after an idle start.

    Args:
        ttft_ss: steady TTFT by key (None = mean, else the quantile q), each (N,).
        waves: point i's first-wave times to the first token on the accelerator (first_wave_s).
        extra_s: what every first-wave request adds outside those steps (front end, KV hand-off), (N,).
        burst_fraction: share w of the counted requests that meet the burst; None = 1/R (one wave
            of R = :data:`REQUESTS_PER_USER`, InferenceX's protocol). A client's fitted share
            (Efficiency.prefill_burst_fraction) where its runs keep bunching (docs/model.md §8.7).
        stall_s: S, a one-off stall the run's first wave alone meets (Efficiency.first_wave_stall_s;
            effect 10 of docs/model.md §8.7), s, scalar or (N,): it delays each of the first wave's
            requests by S, one wave in R whatever ``burst_fraction`` says (a bunching client's later
            waves find the path warm).

    Returns:
        the same keys: mean + w·mean_k max(0, t_k + extra − mean_ss) + (1/R)·mean_k [max(0, t_k +
        extra + S − mean_ss) − max(0, t_k + extra − mean_ss)] (≈ S/R: the median is untouched);
        quantile q: the larger of ss_q, the wave quantile 1 − (1 − q)/w where (1 − q)/w < 1 and
        the stalled wave's quantile 1 − (1 − q)·R where (1 − q)·R < 1.

    >>> r = idle_start({None: np.array([1.0]), 0.99: np.array([1.0])}, [np.arange(1.0, 12.0)], 0.0)
    >>> round(float(r[None][0]), 3), round(float(r[0.99][0]), 3)  # 1 + 0.1·mean(0..10); wave p90
    (1.5, 10.0)
    >>> r = idle_start({None: np.array([1.0]), 0.5: np.array([1.0]), 0.99: np.array([1.0])},
    ...                [np.arange(1.0, 12.0)], 0.0, stall_s=3.0)
    >>> [round(float(r[k][0]), 3) for k in (None, 0.5, 0.99)]  # mean + 3/10; median as is; p99: wave p90 + 3
    [1.8, 1.0, 13.0]
    """
    extra = np.broadcast_to(np.asarray(extra_s, dtype=float), (len(waves),))
    stall = np.broadcast_to(np.asarray(stall_s, dtype=float), (len(waves),))
    w = 1.0 / REQUESTS_PER_USER if burst_fraction is None else float(burst_fraction)
    w0 = 1.0 / REQUESTS_PER_USER
    out = {}
    for key, ss in ttft_ss.items():
        ss = np.asarray(ss, dtype=float)
        adj = ss.copy()
        for i, t in enumerate(waves):
            w1 = t + extra[i]
            if key is None:
                late = float(np.mean(np.maximum(w1 - ss[i], 0.0)))
                adj[i] = ss[i] + late * w
                if stall[i] > 0:
                    adj[i] += (float(np.mean(np.maximum(w1 + stall[i] - ss[i], 0.0))) - late) * w0
                continue
            if (1 - key) / w < 1:
                adj[i] = max(ss[i], float(np.quantile(w1, 1 - (1 - key) / w)))
            if stall[i] > 0 and (1 - key) / w0 < 1:
                adj[i] = max(adj[i], float(np.quantile(w1 + stall[i], 1 - (1 - key) / w0)))
        out[key] = adj
    return out


def _wave_steps(n: int, isl: float, budget: float) -> tuple[np.ndarray, np.ndarray]:
    """(m_k for k = 1..n, W(j) for j = 0..M): each prompt's first-token step in a wave whose first
    step carries the first arrival alone, and the wave's prefill tokens through each step."""
    s1 = math.ceil(isl / budget - 1e-9)
    k = np.arange(1, n + 1, dtype=float)
    if s1 == 1:  # step 1: prompt 1 alone; then the others' stream, b tokens a step
        m = np.where(k == 1, 1.0, 1.0 + np.ceil((k - 1) * isl / budget - 1e-9))
        j = np.arange(0, int(m[-1]) + 1, dtype=float)
        w = np.where(j >= 1, isl + np.minimum(np.maximum(j - 1, 0) * budget, (n - 1) * isl), 0.0)
    else:  # a prompt longer than the budget: the stream is continuous from step 1
        m = np.ceil(k * isl / budget - 1e-9)
        j = np.arange(0, int(m[-1]) + 1, dtype=float)
        w = np.minimum(j * budget, n * isl)
    return m.astype(int), w


def fixed_cycle_s(
    prompts,
    isl: float,
    budget: float,
    decode_steps: int,
    front_s,
    step0_s,
    per_token_s,
    decode_step_s,
    recv_interval: int = 1,
) -> list[np.ndarray | None]:
    """Each prompt's TTFT in the periodic regime of a fixed-length closed loop (effect 6), per point.

    Args:
        prompts: n, users of one instance, (N,) (rounded, at least 1).
        isl: tokens per prompt; budget: prefill tokens per step b; decode_steps: OSL − 1.
        front_s: f, the front end before a request reaches the engine, s, (N,) or scalar.
        step0_s, per_token_s: t0 and σ of a step costing t0 + σ·p with p prefill tokens, (N,) or scalars.
        decode_step_s: callable (point index i, batches (G,)) → decode-only step times (G,), s.
        recv_interval: the scheduler's poll for new requests, every n decode-only steps (effect 4).

    Returns:
        N entries: point i's TTFT_k for k = 1..n_i (s), or None where the engine is prefill-bound
        (the wave's prefill outlasts its decode: M − m_1 ≥ OSL − 1; effect 1 applies there).

    Two users of 1k prompts, b = 2048, f = 0.1 s, t_d = 0.03 s, t0 = 0.03 s, σ = 1e-4 s (a
    1,024-token step 0.1324 s): prompt 1 finishes first, prompt 2 one decode step later (batch 1);
    then the batch is empty, so the engine idles until prompt 1's next request lands at f = 0.1 and
    starts it at once (0.1 + 0.1324); prompt 2's arrives at 0.03 + 0.1, queues behind it and is
    served in step 2: 0.2324 + 0.1324 − 0.03.

    >>> [a.round(4).tolist() for a in fixed_cycle_s([2], 1024, 2048, 100, 0.1, 0.03, 1e-4, lambda i, b: 0.03 + 0 * b)]
    [[0.2324, 0.3348]]
    """
    n_all = np.maximum(np.rint(np.asarray(prompts, dtype=float)), 1).astype(int)
    shape = n_all.shape
    f_all, t0_all, sig_all = (
        np.broadcast_to(np.asarray(v, dtype=float), shape) for v in (front_s, step0_s, per_token_s)
    )
    every = max(int(recv_interval), 1)
    out: list[np.ndarray | None] = []
    for i, (n, f, t0, sig) in enumerate(zip(n_all.tolist(), f_all.tolist(), t0_all.tolist(), sig_all.tolist())):
        m, w = _wave_steps(n, isl, budget)
        big_m = int(m[-1])
        if big_m - m[0] >= decode_steps:
            out.append(None)
            continue
        c = m - m[0]
        # decode-only steps of the window until the new wave's first step; a step i ends with
        # decode_steps + m_1 − M + i decode steps since the last prefill step (the poll's phase)
        steps = np.arange(1, int(c[-1]) + 2)
        batch = n - np.searchsorted(c, steps, side="left")
        live = steps[batch > 0]
        td = np.asarray(decode_step_s(i, batch[batch > 0].astype(float)), dtype=float) if live.size else np.zeros(0)
        t_end = np.concatenate([[0.0], np.cumsum(td)])
        since = decode_steps + int(m[0]) - big_m + live
        ok = (t_end[1:] >= f - 1e-12) & (since % every == 0)
        if f <= 0:
            k_open, start = 0, 0.0
        elif ok.any():
            k_open = int(np.argmax(ok)) + 1
            start = float(t_end[k_open])
        else:  # the batch drains first: the idle engine polls and starts on the first arrival
            k_open, start = live.size, max(f, float(t_end[-1]))
        p = np.arange(w.size) * t0 + sig * w  # P(j), the wave's first j steps
        first = start + p[m]
        issued = np.where(c <= k_open, t_end[np.minimum(c, k_open)], start + p[np.clip(c - k_open, 0, big_m)])
        own = f + math.ceil(isl / budget - 1e-9) * t0 + sig * isl
        out.append(np.maximum(first - issued, own))
    return out


def locked_cycle_s(
    prompts, isl: float, budget: float, step0_s: float, per_token_s: float, waves: int = REQUESTS_PER_USER - 1
) -> list[np.ndarray]:
    """Each prompt's time on a disaggregated prefill worker in the waves after the first of a
    fixed-length loop (effect 6), s: ``waves`` waves of n values each, per point.

    A decode worker never runs prefill, so a wave's completions come apart in time exactly as its
    prefills did (each joins the decode batch at its hand-off and decodes OSL − 1 steps of the same
    length): the next prompts reach the worker at the pace it served them, each group (the prompts
    of one step of the first wave) as the worker falls idle. An idle worker starts on the first
    arrival alone (as the first wave's step 1), so a group of g splits: in the j-th later wave j of
    its prompts come as singles, t0 + σ·ISL each, and the other g − j wait for that single step and
    then share one, t0 + σ·ISL + t0 + σ·(g − j)·ISL. Prompts longer than the budget are singles
    from the start: the steps that carry their tokens, P(m_k) − P(s_k − 1) (s_k the first).
    Valid while the worker idles between waves (its wave shorter than the decode); the caller checks.

    Args:
        prompts: n, users per prefill worker, (N,) (rounded, at least 1).
        isl, budget: tokens per prompt and per step; step0_s, per_token_s: a step of p tokens takes t0 + σ·p.
        waves: later waves to return (R − 1).

    Three 1k prompts, b = 2,048, t0 = 0.03, σ = 1e-4 (a lone prompt 0.1324 s): the first wave's
    steps carry prompt 1, then prompts 2 and 3. Later wave 1: prompt 1 alone; of the group of two
    one single, the other 0.1324 + 0.1324; wave 2: all singles.

    >>> [a.round(4).tolist() for a in locked_cycle_s([3], 1024, 2048, 0.03, 1e-4, waves=2)]
    [[0.1324, 0.1324, 0.2648, 0.1324, 0.1324, 0.1324]]
    """
    out = []
    lone = step0_s + per_token_s * isl
    for n in np.maximum(np.rint(np.asarray(prompts, dtype=float)), 1).astype(int).tolist():
        m, w = _wave_steps(n, isl, budget)
        if math.ceil(isl / budget - 1e-9) > 1:
            k = np.arange(1, n + 1, dtype=float)
            first = np.floor((k - 1) * isl / budget + 1e-9).astype(int)
            p = np.arange(w.size) * step0_s + per_token_s * w
            out.append(np.tile(p[m] - p[first], waves))
            continue
        groups = np.bincount(m)[1:]
        vals = []
        for j in range(1, waves + 1):
            for g in groups[groups > 0].tolist():
                single = min(j, g)
                vals += [lone] * single + [lone + step0_s + per_token_s * (g - single) * isl] * (g - single)
        out.append(np.array(vals))
    return out


def run_of_waves(first: np.ndarray, cycle: np.ndarray, extra: float) -> dict:
    """Mean and :data:`QUANTILES`-style TTFT of a run: its first wave (``first`` + ``extra``, effect 3)
    and R − 1 recurring waves (``cycle``, effect 6), R = :data:`REQUESTS_PER_USER`, s.

    >>> r = run_of_waves(np.array([1.0, 3.0]), np.array([1.0, 1.0]), 0.0)
    >>> round(r[None], 3), r[0.5]  # mean (0.1·2 + 0.9·1); the median of 20 values, 18 of them 1
    (1.1, 1.0)
    """
    vals = np.concatenate([first + extra, cycle])
    wts = np.concatenate(
        [
            np.full(first.size, 1.0 / (REQUESTS_PER_USER * first.size)),
            np.full(cycle.size, (REQUESTS_PER_USER - 1.0) / (REQUESTS_PER_USER * cycle.size)),
        ]
    )
    order = np.argsort(vals)
    vals, cum = vals[order], np.cumsum(wts[order])
    out = {None: float(np.sum(vals * wts[order]))}
    for q in (0.5, 0.9, 0.99):
        out[q] = float(vals[min(int(np.searchsorted(cum, q - 1e-12)), vals.size - 1)])
    return out
