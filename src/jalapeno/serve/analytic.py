"""Steady-state analytic serving model (closed loop), vectorised over operating points.

Aggregated serving, parametrised by the decode batch B of one instance (DESIGN.md §7): with
request rate λ and a decode step of latency τ, a request spends D = (OSL − 1)/a decode steps
(a = tokens per step: 1, or (1 − α^(k+1))/(1 − α) with MTP), so Little's law gives

    B = λ·D·τ,   p = λ·ISL·τ = B·ISL/D  prefill tokens per step on average (chunked),
    τ = (1 − f)·step(B, 0) + f·step(B, chunk),  f = p/chunk  (p < chunk: a fraction f of the
        steps carries one prefill chunk of min(ISL, budget) tokens, the rest only decode)
    τ = step(B, p)                              (p ≥ chunk, p ≤ token budget),
    τ = step(B, 0) + f·step(0, max(p, chunk))   (prefill-first engines, Deployment.prefill_steps
        "separate": prompts run in prefill-only steps the decoding sequences wait out; f ≤ 1),
    TTFT = τ/2 + T_prefill(ISL) + front end (a + b·ISL) + Q,   TPOT = τ/a,   E2E = TTFT + D·τ,
    Q = the steady prefill queue of the steps (batch service, serve/queueing.py effect 1); with
        TensorRT-LLM's batch waiting, the hold of a prompt and its window's step instead (serve/batch_wait.py),
    T_prefill = τ_chunk (ISL ≤ budget), else the ⌈ISL/budget⌉ chunks of the prompt, each a step
        beside the decode batch at its own prefix, pipelined over the PP stages (serve/chunked.py),
    C = λ·E2E = B + λ·TTFT,

so every B gives one closed-form point and its concurrency C; :func:`solve_concurrency`
inverts C(B) for requested concurrencies. TPOT keeps prefill interference (the measured TPOT
does too). B is capped by the KV capacity (memory fit), ``max_running`` and the prefill token
budget; a concurrency beyond the cap queues: throughput stays flat and TTFT grows by
W = (C − C_cap)/λ_cap (the knee). With PP, B is spread over pp micro-batches.

Disaggregated serving: x prefill instances of throughput P (tokens/s) and y decode instances at
batch B with step latency τ_d: λ = y·B/(D·τ_d), prefill utilisation ρ = λ·ISL/(x·P) < 1,
TTFT = S_p + ρ·I_p/2 + ρ/(2(1 − ρ))·ISL/P + t_KV + τ_d/2 (bulk service on the prefill workers:
the step in progress, then the M/D/1 queue at the per-prompt pace; serve/queueing.py effect 2),
t_KV = latency + ISL·kv_bytes_per_token / (chips_p·link bandwidth), chips = x·c_p + y·c_d.

Tails: lengths are uniform in [r·L, L] (InferenceX), so E2E and TTFT quantiles follow from the
length quantiles; TPOT tails need queueing dynamics and come from the simulator, not from here.
Pure: no I/O. The points' type is serve/serving_points.ServingPoints (split from here in round 53).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.step import Batch, pool_step_cost, pool_step_times
from jalapeno.cost.step_bounds import BOUNDS, rank_bounds
from jalapeno.deploy.deployment import Deployment
from jalapeno.deploy.mtp import query_len
from jalapeno.serve.admission_waits import adp_gate_s, batch_wait_hold_s, running_slots  # noqa: F401 (re-exported)
from jalapeno.serve import batch_wait
from jalapeno.serve.batch_wait import bunched_arrivals_per_step
from jalapeno.serve.chunked import chunked_prefill_s, long_chunks, step_room
from jalapeno.serve.limits import decode_step_s, floored_steps, graph_padded, prompt_floor_s
from jalapeno.serve.overlap_loop import arrival_busy, lag_steps
from jalapeno.serve.adp_balance import adp_release_prompts
from jalapeno.serve.agg_batch_cap import _chunk, aggregated_batch_cap  # noqa: F401 (re-exported: split from here, round 53)
from jalapeno.serve.queueing import agg_queue_s, poll_wait_s
from jalapeno.serve.serving_points import (  # noqa: F401 (re-exported: split from here, round 53)
    QUANTILES,
    ServingPoints,
    requeue,
    ttft_e2e,
)
from jalapeno.serve import queueing, ttft_spread
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

_StepTimes = namedtuple("_StepTimes", "step_time_s interval_s")  # cost/step.step_times's pair, read as a StepCost's


def _chunk_step_load(dep: Deployment, wl: Workload, b_mb: np.ndarray, steps: float, users=None) -> tuple:
    """What a step carrying prefill holds at decode batches ``b_mb`` (N,) per micro-batch (:func:`aggregated_by_batch`):
    (p, chunk, prefix, p_big, b_pre) — the mean prefill tokens per step p = b·ISL/D, the chunk min(ISL, rank budget),
    its mean prefix (ISL − chunk)/2, the tokens such a step carries max(p, g·chunk) capped at the budget, and the
    decoding sequences beside them (none on a prefill-first engine, ``dep.prefill_steps`` "separate").
    g = 1 without attention DP. With attention DP the prompts in prefill run side by side, each on its own
    rank (cost/adp_rank.py), and a step costs about its busiest rank's one chunk however many ranks carry one,
    so how the chunks share steps matters: a step carrying prefill carries g = m/(1 − e^(−m)) chunks (the
    mean of a Poisson count given at least one), m = a·ISL/chunk the prompts in prefill a prompt meets (a
    prompts per step, each ISL/chunk steps long; a the closed loop's bunched arrival rate,
    serve/batch_wait.bunched_arrivals_per_step over the closed loop's ``users`` C (N,) per instance where given and
    batch_wait.BUNCH_CONCURRENCY_ON, else the decode batch; at least the mean p/ISL), at most dp (one chunk per rank), and a
    share p/(g·chunk) of the steps carries prefill (the same p tokens a step on average). At dp = 1 the step cost is near linear in its
    chunks and the grouping is left out. Where TensorRT-LLM's attention-DP context balancing holds prompts
    until every rank has one or ``dep.adp_balance_timeout_iters`` steps pass (while every rank decodes:
    :func:`adp_gate_s`), g is at least what one release carries, E[min(N, dp) | N ≥ 1] with N ~ Poisson(a·T)
    (serve/adp_balance.adp_release_prompts: the timeout runs on a clock of T steps). Under a step token cap
    (``max_tokens_per_step``) the chunk is at most the room the decode rows leave: serve/chunked.step_room
    (``MIXED_STEP_ROOM_ON``, round 52)."""
    chunk = _chunk(dep, wl.mean_isl)
    p_mb = b_mb * wl.mean_isl / steps
    lay = dep.decode.layout
    group = np.ones_like(p_mb)
    if lay.dp > 1:
        c = b_mb * lay.pp if users is None or not batch_wait.BUNCH_CONCURRENCY_ON else np.asarray(users, dtype=float)
        a = bunched_arrivals_per_step(
            c,
            p_mb / wl.mean_isl,
            wl.osl,
            wl.range_ratio,
            dep.mtp.tokens_per_step if dep.mtp else 1.0,
            osl_std=wl.osl_std,
        )
        m = a * wl.mean_isl / chunk
        busy = -np.expm1(-m)
        # at most one chunk per rank: beyond it a step grows with its chunks (the ranks' mean share), so
        # grouping more changes only the step's size (and would size it past the engine's memory)
        group = np.minimum(np.where(busy > 1e-12, m / np.maximum(busy, 1e-12), 1.0), float(lay.dp))
        if dep.adp_balance_timeout_iters is not None:
            held = adp_release_prompts(a, lay.dp, dep.adp_balance_timeout_iters)
            group = np.where(b_mb / lay.dp >= 1.0, np.maximum(group, held), group)
    p_big = np.minimum(np.maximum(p_mb, group * chunk), dep.prefill_budget(lay))
    b_pre = np.zeros_like(b_mb) if dep.prefill_steps == "separate" else b_mb
    room = step_room(dep, lay, b_pre, query_len(dep.mtp))  # serve/chunked.MIXED_STEP_ROOM_ON (None: off)
    if room is not None:
        p_big = np.minimum(p_big, np.maximum(p_mb, np.minimum(chunk, room)))
    return p_mb, chunk, (wl.mean_isl - chunk) / 2, p_big, b_pre


def mean_prompt_prefill_s(
    model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, decode_batch, users=None
) -> np.ndarray:
    """The mean prompt's prefill time (s) on one aggregated instance at decode batches ``decode_batch`` (N,), as
    :func:`aggregated_by_batch` prices it inside TTFT: its chunk step(s) beside the decode batch
    (:func:`_chunk_step_load`; a prompt longer than the budget runs its chunks in turn, :func:`_prefill_s`).
    ``pricer`` with the pool's engine backends applied (serve/point.py); ``users`` the instance's concurrency (N,)
    (:func:`_chunk_step_load`). Used by serve/ttft_parts.py."""
    lay = dep.decode.layout
    a = dep.mtp.tokens_per_step if dep.mtp else 1.0
    b_mb = np.asarray(decode_batch, dtype=float) / lay.pp
    _, chunk, pre_ctx, p_big, b_pre = _chunk_step_load(dep, wl, b_mb, (wl.mean_osl - 1) / a, users)
    lengths = {None: wl.mean_isl}
    long, chunks, plan = long_chunks(dep, lengths, b_pre, wl.decode_ctx)
    mixed = Batch.make(
        decode_seqs=b_pre,
        decode_ctx=wl.decode_ctx,
        prefill_tokens=p_big,
        prefill_ctx=pre_ctx,
        prefill_seqs=p_big / chunk,
    )
    sc = pool_step_cost(model, pricer, dep, lay, mixed if chunks is None else Batch.joined(mixed, chunks))
    n = b_mb.shape[0]
    return chunked_prefill_s(lengths, sc.step_time_s[:n], long, plan, sc.step_time_s[n:], sc.interval_s[n:])[None]


def frontend_s(eff: Efficiency, isl: float) -> float:
    """Time a request spends outside the accelerator before its first token: a + b·ISL."""
    return eff.request_overhead_s + eff.prompt_overhead_s_per_token * isl


def aggregated_by_batch(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    decode_batch,
    slots_full=None,
    cap: tuple[float, str] | None = None,
) -> ServingPoints:
    """Aggregated closed-loop points at decode batches ``decode_batch`` (N,) per instance.

    Batches above the instance's cap are clipped to it (``limit`` names the cap). Steps run
    under the deployment's overlap where the layout has an EP all-to-all (deploy/deployment.py).
    With attention-DP context balancing (``dep.adp_balance_timeout_iters``) TTFT adds the wait for
    every rank to have a prompt (serve/adp_balance.adp_balance_wait_s), in the regime ``slots_full``
    (N,) bool: whether the users fill the engine's running slots (None: the decode batch reaches
    ``max_running``). ``cap``: :func:`aggregated_batch_cap`'s (cap, name) where the caller has it already.
    """
    return agg_points(model, pricer, dep, wl, agg_plan(model, pricer, dep, wl, decode_batch, cap), slots_full)


def agg_plan(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    decode_batch,
    cap: tuple[float, str] | None = None,
    join: bool = True,
    users=None,
) -> tuple:
    """What :func:`aggregated_by_batch` derives at ``decode_batch`` (N,) before it prices a step: the step
    batch (last) and the loads it is made of; :func:`agg_points` finishes the points (serve/lockstep.py
    prices the batches of several deployments together in between). ``join`` False: the step batch holds
    the 2N rows of the three step kinds alone, not the long prompts' chunks (serve/overlap_pick.py). ``users``: the
    closed loop's concurrency at each batch (N,), for its bunched prompts (:func:`_chunk_step_load`; None: the batch)."""
    lay = dep.decode.layout
    a = dep.mtp.tokens_per_step if dep.mtp else 1.0
    steps = (wl.mean_osl - 1) / a
    cap, cap_name = cap or aggregated_batch_cap(model, pricer, dep, wl)
    b_req = np.asarray(decode_batch, dtype=float)
    b = np.minimum(b_req, max(cap, 0.0))
    limit = np.where(b_req > cap, cap_name, "")
    b_mb = b / lay.pp
    ctx = wl.decode_ctx
    p_mb, chunk, pre_ctx, p_big, b_pre = _chunk_step_load(dep, wl, b_mb, steps, users)
    # Prefill arrives in chunks: while the mean prefill load p per step is below one chunk, a
    # fraction f = p/chunk of steps carries a whole chunk and the rest decode only (averaging p
    # into every step would overstate the experts and weights a step touches); above one chunk
    # every step carries p tokens. One call prices the three step kinds. A prefill-first engine
    # (dep.prefill_steps "separate") runs the prompts in steps of their own, which the decoding
    # sequences wait out: τ = step(B, 0) + f·step(0, max(p, chunk)) (f = 1 once p ≥ chunk: one
    # prefill step per decode step carrying p tokens); the prefill step reads every weight again
    # where a mixed step shares the decode step's reads.
    # The distinct chunks of the prompts longer than one budget (serve/chunked.long_chunks) join the same call: 2N + N·K' rows.
    n = b.shape[0]
    pre = np.concatenate([np.zeros(n), p_big])
    lengths = {None: wl.mean_isl, **{qq: wl.isl_quantile(qq) for qq in QUANTILES}}
    long, chunks, plan = long_chunks(dep, lengths, b_pre, ctx)
    # decode-only steps at their padded CUDA-graph batch (serve/limits.graph_padded), in one call with the prompt-carrying
    # rows (not serve/open_loop.decode_pool_step, which prices a decode-only step alone)
    kinds = graph_padded(
        dep,
        lay,
        Batch.make(
            decode_seqs=np.concatenate([b_mb, b_pre]),
            decode_ctx=ctx,
            prefill_tokens=pre,
            prefill_ctx=pre_ctx,
            prefill_seqs=pre / chunk,
        ),
    )
    return (
        b,
        limit,
        steps,
        p_mb,
        chunk,
        pre_ctx,
        p_big,
        b_pre,
        lengths,
        long,
        plan,
        kinds if chunks is None or not join else Batch.joined(kinds, chunks),
    )


def agg_points(
    model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, plan_: tuple, slots_full=None
) -> ServingPoints:
    """:func:`aggregated_by_batch`'s points from its :func:`agg_plan`."""
    head, long_s = agg_head(model, pricer, dep, wl, plan_)
    return agg_tail(pricer, dep, wl, plan_, head, long_s, slots_full)


def agg_head(
    model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, plan_: tuple, times_only: bool = False
) -> tuple[dict, tuple]:
    """What :func:`agg_points` works out from its plan's step batch before a prompt's prefill time: (name → (N,)
    array: the decode batch ``b``, its cap ``limit``, the mean step ``tau``, the request rate ``lam``, the
    throughput per chip ``tput`` (:meth:`ServingPoints.assemble`'s), ``feasible``, …), and the floored step times
    and intervals of the plan's long-prompt chunk rows beyond its first 2N ((N·K',) each; empty where the plan's
    batch holds none: serve/overlap_pick.py prices them apart, for the points it keeps). Every entry is
    elementwise in the points, so a subset of points gives the same figures (:func:`agg_tail` takes one).
    ``times_only``: the entries the step and queue times need alone (``b``, ``tau``, ``t_dec``, ``ttft_step``, ``lam``,
    ``n_bar``, ``s_chunk``, ``s_join``), the same values, from cost/step.step_times where no CUDA-graph ceiling reads
    the step's kernels (serve/limits.decode_step_s): no bounds, attribution or memory fit (serve/lockstep.py)."""
    b, limit, steps, p_mb, chunk, pre_ctx, p_big, b_pre, lengths, long, plan, batch = plan_
    eff, lay, ctx, n, sep = (
        pricer.efficiency,
        dep.decode.layout,
        wl.decode_ctx,
        b.shape[0],
        dep.prefill_steps == "separate",
    )
    light = times_only and dep.cuda_graph_max_batch is None
    sc = (
        _StepTimes(*pool_step_times(model, pricer, dep, lay, batch))
        if light
        else pool_step_cost(model, pricer, dep, lay, batch)
    )
    # a TensorRT-LLM step carrying a prompt without piecewise graphs costs max(host, GPU) (serve/limits.prompt_floor_s);
    # the requests decoding beside an arriving prompt are the other users, b − 1
    step_s = floored_steps(
        sc.step_time_s, batch.decode_seqs - 1, batch.prefill_tokens, prompt_floor_s(model, dep, pricer=pricer)
    )
    frac = np.minimum(p_mb / p_big, 1.0)  # p_mb / chunk below one chunk (or one per rank: _chunk_step_load)
    # decode-only steps above the CUDA-graph ceiling run eagerly (serve/limits.py); the steps
    # carrying a prefill chunk are priced as they are (engines graph decode batches only), floored above
    t_dec = decode_step_s(sc, eff, dep, np.concatenate([b, b, np.zeros(sc.step_time_s.shape[0] - 2 * n)]), lay)[:n]
    ttft_step = step_s[n : 2 * n]
    w_dec = np.ones(n) if sep else 1 - frac  # weight of the decode-only step per decode step
    tau = w_dec * t_dec + frac * ttft_step
    lam = np.where(b > 0, b / (steps * tau), 0.0)
    # the steady prefill queue (serve/queueing.py, effect 1): s = marginal cost of one chunk in
    # a step, n̄ = chunks per step; with a scheduler that polls for new requests every ``recv_interval``
    # decode steps the arrival also waits the rest of the poll period, beside the chunks that arrived in it
    # (effect 4) (a separate prefill step is all marginal: the decode step does not run beside it)
    n_bar = p_mb / chunk
    s_chunk = np.maximum(ttft_step - (0.0 if sep else t_dec), 0.0) / np.maximum(n_bar, p_big / chunk)
    s_join = _joined_chunk_s(model, pricer, dep, b_pre, ctx, pre_ctx, p_big, n_bar, chunk, ttft_step, s_chunk)
    head = dict(b=b, tau=tau, t_dec=t_dec, ttft_step=ttft_step, lam=lam, n_bar=n_bar, s_chunk=s_chunk, s_join=s_join)
    if times_only:
        return head, (step_s[2 * n :], sc.interval_s[2 * n :])
    shares = np.array([sc.attribution_s[k][: 2 * n] for k in BOUNDS], dtype=float)  # (bounds, 2N): np.stack's rows
    bound, margin = rank_bounds(w_dec * shares[:, :n] + frac * shares[:, n:])
    fits = sc.feasible[:n] & sc.feasible[n : 2 * n]
    if not fits.all():  # (bound is a fresh object array: kept as it is where every point fits)
        bound = np.where(fits, bound, "hbm_capacity")
    bound_level = np.where(
        np.array([str(x).endswith("_link") for x in bound.tolist()], dtype=bool),
        np.where(sc.bound_level[:n] != "", sc.bound_level[:n], sc.bound_level[n : 2 * n]),
        "",
    )
    reason = np.where(
        b > 0,
        np.where(sc.feasible[:n], sc.reason[n : 2 * n], sc.reason[:n]),
        "no sequence fits in the KV cache: weights and activations "
        "leave no room; shard wider or use a smaller precision",
    )
    head.update(
        limit=limit,
        bound=bound,
        margin=margin,
        bound_level=bound_level.astype(object),
        feasible=fits & (b > 0),
        reason=reason,
        tput=lam * (wl.mean_isl + wl.mean_osl) / lay.chips,
    )
    return head, (step_s[2 * n :], sc.interval_s[2 * n :])


def agg_tail(
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    plan_: tuple,
    head: dict,
    long_s: tuple,
    slots_full=None,
    times_only: bool = False,
) -> ServingPoints | tuple[np.ndarray, np.ndarray]:
    """:func:`agg_points`'s points from its :func:`agg_head` ``head`` (or the same entries at a subset of its
    points) and the floored step times and intervals ``long_s`` of those points' long-prompt chunk steps
    (serve/chunked.long_chunks's rows, point major): the prompts' prefill, TTFT, queue and concurrency. ``times_only``
    (a ``times_only`` head will do): the points' (``ttft_s``, ``e2e_s``) alone, (N,) s each, the same values."""
    steps, lengths, long, plan = plan_[2], plan_[8], plan_[9], plan_[10]
    eff, lay, a = pricer.efficiency, dep.decode.layout, dep.mtp.tokens_per_step if dep.mtp else 1.0
    b, tau, lam, t_dec, ttft_step, n_bar = (head[k] for k in ("b", "tau", "lam", "t_dec", "ttft_step", "n_bar"))
    pre_s = chunked_prefill_s(lengths, ttft_step, long, plan, *long_s)
    ttft_q = {k: tau / 2 + pre_s[k] + frontend_s(eff, isl) for k, isl in lengths.items() if k is None or not times_only}
    # C for the arrival theorem from the no-queue Little's law
    users = lam * (ttft_q[None] + steps * tau)
    # P(busy): the chance an arrival finds the engine busy (a lone user finds it idle), for the poll wait
    # (serve/queueing.IDLE_ARRIVAL_POLL, shipped off) and the overlap loop's lag (no shipped profile sets it);
    # evaluated only where one of them takes it, so the sweep's default path does no extra work
    lag = lag_steps(eff, dep, lay)
    busy = (
        arrival_busy(users, frontend_s(eff, wl.mean_isl), ttft_q[None] + steps * tau)
        if lag or queueing.IDLE_ARRIVAL_POLL
        else None
    )
    idle = busy if queueing.IDLE_ARRIVAL_POLL else None
    queue = (
        agg_queue_s(head["s_chunk"], n_bar, tau, users)
        + poll_wait_s(dep.recv_interval, tau, users, head["s_join"], n_bar, t_dec, ttft_step, idle)
        - tau / 2
    )
    queue = queue + adp_gate_s(dep, lay, b, lam, tau, slots_full)
    # TensorRT-LLM's batch waiting replaces the steady queue: a prompt waits for its window to close
    # (serve/batch_wait.py) and shares that step with the window's other prompts
    hold_s, joined = batch_wait_hold_s(dep, lay, wl, b, lam, users, t_dec)
    queue = np.where(hold_s > 0, hold_s + joined * head["s_chunk"], queue)
    # an overlap loop admits a prompt read while it is busy one step late (serve/overlap_loop.py)
    if lag:
        queue = queue + lag * tau * busy  # overlap_loop.admission_lag_s, with the P(busy) above
    ttft_q = {k: v + queue for k, v in ttft_q.items()}
    if ttft_spread.STEADY_SPREAD_ON and not times_only:  # the wait's spread in the quantiles (serve/ttft_spread.py)
        width = (
            ttft_q[0.99] - ttft_q[0.5]
        ) / 0.49  # the length terms, uniform in the length: L_0.99 − L_0.5 = 0.49·width
        shifts = ttft_spread.quantile_shifts_s(
            QUANTILES, t_dec, head["s_chunk"], n_bar, tau, users, -width / 2, width / 2
        )  # (Q, N): the chain solved once for every quantile
        for k, shift in zip(QUANTILES, shifts):
            ttft_q[k] = ttft_q[k] + np.where(hold_s > 0, 0.0, shift)
    if times_only:
        return ttft_e2e(ttft_q[None], np.zeros_like(b), steps, tau)
    c = lam * (ttft_q[None] + steps * tau)
    return ServingPoints.assemble(
        concurrency=c,
        decode_batch=b,
        request_rate_per_s=lam,
        ttft_by_quantile=ttft_q,
        tpot_s=tau / a,
        decode_steps_per_request=steps,
        step_time_s=tau,
        workload=wl,
        chips=lay.chips,
        bound=head["bound"],
        bound_margin=head["margin"],
        limit=head["limit"],
        feasible=head["feasible"],
        reason=head["reason"],
        queue_s=np.zeros_like(b),
        kv_transfer_s=np.zeros_like(b),
        bound_level=head["bound_level"],
    )


def _joined_chunk_s(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    b_mb,
    ctx: float,
    pre_ctx: float,
    p_big,
    n_bar,
    chunk: float,
    chunk_step,
    s_chunk,
) -> np.ndarray:
    """Marginal step time of each chunk that joins an arrival's prefill step after a poll period, s, (N,).

    With a poll every n decode steps the (n − 1)·n̄ chunks that arrived in the period run in one
    step beside the arrival's (serve/queueing.py effect 4): priced as that step (``p_big`` prefill
    tokens plus theirs, up to the token budget) minus the step with the arrival's chunk alone
    (``chunk_step``), per joined chunk — batched chunks share the weight reads, so this is below
    the lone chunk's ``s_chunk``, which it falls back to when nothing joins (n = 1). ``b_mb`` (N,):
    the decoding sequences in a step that carries prefill (0 for a prefill-first engine).
    """
    joined = (dep.recv_interval - 1) * np.asarray(n_bar, dtype=float)
    if dep.recv_interval <= 1 or not np.any(joined > 0):
        return s_chunk
    lay = dep.decode.layout
    p_join = np.minimum(p_big + chunk * joined, dep.prefill_budget(lay))
    sc = pool_step_cost(
        model,
        pricer,
        dep,
        lay,
        Batch.make(
            decode_seqs=b_mb, decode_ctx=ctx, prefill_tokens=p_join, prefill_ctx=pre_ctx, prefill_seqs=p_join / chunk
        ),
    )
    extra = (p_join - p_big) / chunk
    return np.where(extra > 1e-9, np.maximum(sc.step_time_s - chunk_step, 0.0) / np.maximum(extra, 1e-9), s_chunk)


def solve_concurrency(
    model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, concurrency, iterations: int = 8
) -> ServingPoints:
    """Aggregated points at requested closed-loop concurrencies (N,), per instance.

    Fixed point B ← C·D·τ/E2E (Little's law), started at B = C; beyond the instance's cap the
    excess requests queue (throughput flat, TTFT and E2E grow by the queueing delay).
    serve/lockstep.solve_concurrencies solves several deployments at once.
    """
    from jalapeno.serve.lockstep import solve_concurrencies

    return solve_concurrencies(model, pricer, [dep], wl, concurrency, iterations)[0]
