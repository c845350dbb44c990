"""Disaggregated serving: prefill pool + decode pool, KV hand-off between them (closed loop).

Formulas in serve/analytic.py's docstring. Prefill instances run full token-budget steps
(requests batched up to ``token_budget`` tokens), so one instance delivers P = budget/τ_p
prompt tokens/s. A request's service time S_p is one full-budget step's latency when the prompt
fits one step; a longer prompt runs as ⌈ISL/budget⌉ chunks, each priced at its own cached prefix
and pipelined over the PP stages (serve/chunked.py). Decode instances run
at batch B per instance (capped by their KV capacity). Everything vectorises over decode batch
and the worker counts, so one step-cost call per pool layout prices every combination.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, pool_overlap
from jalapeno.deploy.mtp import MTP, query_len
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.kv_capacity import decode_batch_cap
from jalapeno.serve.analytic import frontend_s
from jalapeno.serve.serving_points import QUANTILES, ServingPoints
from jalapeno.serve.chunked import chunk_plan, pipelined_prefill_s
from jalapeno.serve.kv_admission import decode_admission_ctx
from jalapeno.serve import prebuilt_skip
from jalapeno.serve.handshake import handshake_s
from jalapeno.serve.limits import batch_caps, decode_step_s, graph_padded, prompt_floor_s
from jalapeno.serve.queueing import MAX_RHO, bulk_prefill_s
from jalapeno.serve.rr_wait import router_wait_s
from jalapeno.specs.formats import Precision
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: Prefill utilisation above which a disaggregated point counts as saturated: the queue's wait
#: rho/(2(1 - rho)) per-prompt paces diverges as rho -> 1 (at 0.95 it is 9.5); an open-loop steady
#: state needs headroom. A modelling threshold, not a measurement. A closed loop runs past it to the
#: pool's whole capacity (serve/point._prefill_saturation: its users bound the queue).
MAX_PREFILL_UTILISATION = 0.95


@dataclass(frozen=True, slots=True)
class PrefillPerf:
    """One prefill instance: prompt tokens/s, per-request service time (mean and quantiles)."""

    layout: Layout
    tokens_per_s: float
    service_s: float
    service_q_s: dict
    feasible: bool
    reason: str
    bound: str
    #: one full budget step's interval I, s (the worker's pace per prompt is I·ISL/budget)
    interval_s: float = 0.0
    #: a step of p prefill tokens takes t0 + σ·p (interval), plus ``fill_s`` end to end (PP stages)
    step0_s: float = 0.0
    per_token_s: float = 0.0
    fill_s: float = 0.0


@dataclass(frozen=True, slots=True)
class DecodeCurve:
    """One decode instance at decode batches ``batch`` (K,): step latency and its bound."""

    layout: Layout
    batch: np.ndarray
    tau_s: np.ndarray
    bound: np.ndarray
    margin: np.ndarray
    bound_level: np.ndarray
    feasible: np.ndarray
    reason: np.ndarray
    cap: float
    cap_name: str = "kv_capacity"


def prefill_perf(
    model: ModelSpec,
    pricer: Pricer,
    layout: Layout,
    precision: Precision,
    wl: Workload,
    token_budget: int,
    overlap: str = "none",
    floor_s: float = 0.0,
) -> PrefillPerf:
    """Throughput and service time of one prefill instance at full token-budget steps.

    A prompt runs on one attention-DP rank and is chunked at that rank's budget b = budget/dp
    (cost/adp_rank.py; b = budget without attention DP). Throughput: budget / interval of a full
    budget step (budget/chunk prompts at the mean prefix (ISL − chunk)/2, chunk = min(ISL, b)).
    Service time per length L (mean and :data:`QUANTILES`): L ≤ b — the latency of a step carrying
    that prompt alone (on its rank, the other ranks idle; the queue adds the others batched with
    it, serve/queueing.py); L > b — the prompt's ⌈L/b⌉ chunks alone, chunk j at prefix j·b, pipelined over the PP stages: Σ_j I_j + max_j (S_j − I_j) (serve/chunked.py).
    A step of p prefill tokens is taken as t0 + σ·p (fitted on the full step and a second size)
    plus the PP fill (latency − interval). The instance is infeasible if either step does not fit in memory (the last chunk holds the
    prompt's whole KV cache, split over the CP ranks). ``overlap``: ``none`` or ``tbo`` (two-batch
    overlap; needs an EP all-to-all, cost/overlap.py). ``token_budget`` is the whole instance's
    prefill tokens per step — a deployment's ``prefill_budget(layout)``, which counts a per-rank
    engine budget (TensorRT-LLM ``max_num_tokens``) once per attention-DP rank. ``floor_s``: the host time of an eager
    prompt step (serve/limits.prompt_floor_s, context only): every step costs at least it (0: none).
    """
    per_prompt = token_budget / layout.dp  # a prompt runs on one attention-DP rank (cost/adp_rank.py)
    chunk = float(min(wl.mean_isl, per_prompt))
    lengths = {None: wl.mean_isl, **{p: wl.isl_quantile(p) for p in QUANTILES}}
    short = [k for k, v in lengths.items() if math.ceil(v / per_prompt) <= 1]
    # one call: the full budget step, a second size for the linear fit t0 + σ·p (a lone mean
    # prompt, or half the budget when the prompt fills it), and each short length's lone step
    p2 = chunk if chunk < token_budget else token_budget / 2
    toks = np.array([float(token_budget), p2, *(lengths[k] for k in short)])
    seqs = np.concatenate([[token_budget / chunk, max(p2 / chunk, 1.0)], np.ones(len(short))])
    ctx = np.concatenate([[(wl.mean_isl - chunk) / 2] * 2, np.zeros(len(short))])
    sc = step_cost(
        model,
        pricer,
        layout,
        precision,
        Batch.make(prefill_tokens=toks, prefill_seqs=seqs, prefill_ctx=ctx),
        overlap=overlap,
    )
    sigma = max((float(sc.interval_s[0]) - float(sc.interval_s[1])) / (token_budget - p2), 0.0)
    tau, lat = max(float(sc.interval_s[0]), floor_s), max(float(sc.step_time_s[0]), floor_s)
    q = {k: max(float(sc.step_time_s[2 + i]), floor_s) for i, k in enumerate(short)}
    feasible, reason = bool(sc.feasible[0]), str(sc.reason[0])
    long = [k for k, v in lengths.items() if math.ceil(v / per_prompt) > 1]
    if long:
        tok, pre, owner = chunk_plan([lengths[k] for k in long], per_prompt)
        cs = step_cost(
            model, pricer, layout, precision, Batch.make(prefill_tokens=tok, prefill_ctx=pre), overlap=overlap
        )
        t = pipelined_prefill_s(
            np.maximum(cs.step_time_s, floor_s), np.maximum(cs.interval_s, floor_s), owner, len(long)
        )
        q.update({k: float(v) for k, v in zip(long, t)})
        if feasible and not cs.feasible.all():
            feasible = False
            reason = (
                f"one {max(lengths[k] for k in long):.0f}-token prompt: "
                f"{cs.reason[~cs.feasible][0]} (context parallelism, cp=, splits its KV)"
            )
    return PrefillPerf(
        layout,
        token_budget / tau,
        q[None],
        q,
        feasible,
        reason,
        str(sc.bound[0]),
        tau,
        max(tau - sigma * token_budget, 0.0),
        sigma,
        max(lat - tau, 0.0),
    )


def pool_prefill_perf(model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload) -> PrefillPerf:
    """:func:`prefill_perf` of a disaggregated ``dep``'s prefill pool as it runs: its layout, token budget and
    overlap, priced with the pool's engine backends (cost/pool_backends.with_pool_backends) on ``pricer``."""
    lay = dep.prefill.layout
    pr = with_pool_backends(pricer, dep.prefill, model, lay, dep.precision.kv_cache.name)
    floor = prompt_floor_s(model, dep, dep.prefill, pricer)  # an eager TensorRT-LLM prefill worker's host floor
    return prefill_perf(
        model,
        pr,
        lay,
        dep.precision,
        wl,
        dep.prefill_budget(lay),
        pool_overlap(dep.overlap, model, lay),
        floor[0] if floor else 0.0,
    )


def decode_curve(
    model: ModelSpec,
    pricer: Pricer,
    layout: Layout,
    precision: Precision,
    wl: Workload,
    batch,
    mtp: MTP | None = None,
    limits: Deployment | None = None,
    overlap: str = "none",
) -> DecodeCurve:
    """Decode step latency of one decode instance at batches ``batch`` (K,), clipped to its cap.

    The cap is the KV capacity (requests counted at the tokens the engine's admission holds for each,
    serve/kv_admission.py) and, with ``limits`` (a deployment whose engine limits apply),
    ``max_running`` and ``max_tokens_per_step`` (B ≤ T·pp/q: a decode instance runs no
    prefill; both x dp when the engine counts them per attention-DP rank, ``limits.budget_per``); decode batches per attention rank above its ``cuda_graph_max_batch`` run eagerly
    (serve/limits.py). ``cap_name`` names the binding cap. The KV capacity uses the engine's
    ``limits.memory_fraction`` (Deployment.memory_fraction). ``overlap``: ``none`` or ``tbo``
    (two-batch overlap; needs an EP all-to-all, cost/overlap.py). The decode pool's MoE backend
    (``limits.decode.moe_backend``) prices its routed experts (cost/pool_backends.with_moe_backend), its
    attention backend (``limits.decode.attention_backend``) its GQA decode attention
    (cost/pool_backends.with_attention_backend).
    """
    if limits is not None:
        pricer = with_pool_backends(pricer, limits.decode, model, layout, precision.kv_cache.name)
    ctx = wl.decode_ctx
    b = np.asarray(batch, dtype=float)
    mf = limits.memory_fraction if limits is not None else None
    prof = limits.memory_profile if limits is not None else None
    kv_ctx = decode_admission_ctx(wl, pricer.efficiency)  # the tokens the engine's admission counts a request for
    caps = {
        "kv_capacity": decode_batch_cap(
            model, pricer.system, layout, precision, kv_ctx, pricer.efficiency, mtp, memory_fraction=mf, engine=prof
        )
    }
    if limits is not None:
        caps.update(batch_caps(limits, query_len(mtp), 0.0, layout.pp, backstop=False, layout=layout))
    cap_name = min(caps, key=caps.get)
    cap = caps[cap_name]
    b = np.minimum(b, cap)
    # with ``limits`` this is serve/open_loop.decode_pool_step's step, built here because the layout, precision, MTP
    # and overlap are arguments apart from ``limits`` (analysis/sweep prices a layout's "tbo" twin under its limits)
    one = Batch.make(decode_seqs=b / layout.pp, decode_ctx=ctx)
    sc = step_cost(
        model,
        pricer,
        layout,
        precision,
        one if limits is None else graph_padded(limits, layout, one),
        mtp,
        memory_fraction=mf,
        overlap=overlap,
        engine_memory=prof,
    )
    tau = sc.step_time_s if limits is None else decode_step_s(sc, pricer.efficiency, limits, b, layout)
    return DecodeCurve(
        layout, b, tau, sc.bound, sc.bound_margin, sc.bound_level, sc.feasible & (b > 0), sc.reason, cap, cap_name
    )


def kv_transfer_s(
    model: ModelSpec,
    pricer: Pricer,
    precision: Precision,
    isl: float,
    prefill_chips: int,
    decode_chips: int,
    total_chips: int,
    copies: float | None = None,
) -> float:
    """Time to move one request's KV cache (ISL tokens) from a prefill to a decode instance, s.

    Sent over the link level that spans the whole deployment (a send/recv each). ``copies`` None: one
    copy spread over min(chips_p, chips_d) parallel chips, latency + bytes / (chips · bandwidth).
    ``copies`` c (:func:`handoff_copies`): each sending rank moves c whole caches through its own
    link, latency + c · bytes / bandwidth (the sending ranks run in parallel).
    """
    kv_bytes = model.kv_bytes_per_token(precision.kv_cache, int(isl)) * isl
    lanes, group = transfer_lanes_group(pricer, prefill_chips, decode_chips, total_chips)
    per_link = kv_bytes / lanes if copies is None else kv_bytes * copies
    r = pricer.collective("send_recv", group, np.array([per_link]))
    return float(r.time_s[0])


def transfer_lanes_group(pricer: Pricer, prefill_chips: int, decode_chips: int, total_chips: int) -> tuple[int, int]:
    """(parallel lanes, send/recv group size) of a KV hand-off: all :func:`kv_transfer_s` depends on
    besides the model, pricer, precision, ISL and the copies of :func:`handoff_copies`."""
    return max(1, min(prefill_chips, decode_chips)), min(max(total_chips, 2), pricer.system.max_chips)


def handoff_copies(model: ModelSpec, pricer: Pricer, prefill: Layout, decode: Layout) -> float | None:
    """Whole KV caches one sending prefill rank moves per request, or None (the even spread of
    :func:`kv_transfer_s`).

    Where the stack sets ``Efficiency.kv_handoff_fanout`` (TensorRT-LLM) and the model's attention is
    MLA: the latent is one head shared by every attention-TP rank, so each of the decode instance's
    ``t_d`` attention-TP ranks (per attention-DP group) receives it whole, and the ``t_p`` prefill ranks
    that hold the request (its attention-DP group's TP ranks) share those sends:
    ``max(1, t_d / t_p)`` copies each (NVIDIA/TensorRT-LLM cpp/tensorrt_llm/batch_manager/
    mlaCacheFormatter.cpp: ``needSendCache`` keeps every sender when t_p <= t_d, and ``format`` /
    ``formatOutput`` sends the same split cache down each connection that ``targetIRanks`` names;
    the engine's cache transceiver unit test, targetTest CacheStateNODP, expects generation ranks
    {0, 1} from context rank 0 at TP2 -> TP4; read at three stored versions, from before September
    2025 to after May 2026: docs/gap_aic_ttft.md round 36, kvfan36). None for pipeline or
    context parallelism (the per-stage layer split is not modelled here) and for other engines
    (SGLang's and vLLM's connectors not read).

    >>> from types import SimpleNamespace as N
    >>> pr = N(efficiency=N(kv_handoff_fanout=True)); mla = N(attention=N(kind="mla"))
    >>> [handoff_copies(mla, pr, Layout(dp=4, ep=4), d) for d in (Layout(tp=8, ep=8), Layout(dp=8, ep=8))]
    [8.0, 1.0]
    >>> handoff_copies(mla, pr, Layout(tp=2), Layout(tp=4)), handoff_copies(mla, pr, Layout(tp=8), Layout(tp=4))
    (2.0, 1.0)
    """
    if not pricer.efficiency.kv_handoff_fanout or model.attention.kind != "mla":
        return None
    if prefill.pp != 1 or decode.pp != 1 or prefill.cp != 1 or decode.cp != 1:
        return None
    return max(1.0, decode.tp / prefill.tp)


def prefill_workers_needed(
    pre: PrefillPerf, dec: DecodeCurve, wl: Workload, decode_workers: int, mtp: MTP | None = None
) -> np.ndarray:
    """The fewest prefill workers that keep up with ``decode_workers`` decode instances, per decode batch, (K,).

    The balance :func:`disaggregated_points` applies: y decode instances at batch B finish
    λ = y·B/(D·τ) requests/s (D = (mean OSL − 1)/a decode steps), whose prompts load x prefill
    workers to ρ = λ·ISL/(x·P) (P: one worker's prompt tokens/s); a point is saturated at
    ρ ≥ :data:`MAX_PREFILL_UTILISATION`. Returns the smallest whole x ≥ 1 with ρ below it, computed
    with the same expression (so the point it names is not saturated); 1 where the decode batch is
    infeasible or its step time is not positive (the point carries the decode pool's reason).

    >>> from types import SimpleNamespace as N
    >>> w = N(mean_osl=101.0, mean_isl=1000.0)  # D = 100 steps; one worker: P = 1e5 prompt tokens/s
    >>> d = N(batch=np.array([1.0, 64.0, 1024.0]), tau_s=np.array([0.01, 0.02, 0.05]), feasible=np.ones(3, bool))
    >>> prefill_workers_needed(N(tokens_per_s=1e5), d, w, 1).tolist()  # λ = 1, 32, 204.8 req/s
    [1, 1, 3]
    """
    a = mtp.tokens_per_step if mtp else 1.0
    steps = (wl.mean_osl - 1) / a
    tau = np.asarray(dec.tau_s, dtype=float)
    ok = np.asarray(dec.feasible, dtype=bool) & (tau > 0) & np.isfinite(tau)
    lam = float(decode_workers) * dec.batch / (steps * np.where(ok, tau, 1.0))
    load = lam * wl.mean_isl  # prompt tokens/s the decode pool asks for
    x = np.maximum(np.floor(load / (pre.tokens_per_s * MAX_PREFILL_UTILISATION)), 0.0) + 1.0
    x = np.where(load / (x * pre.tokens_per_s) < MAX_PREFILL_UTILISATION, x, x + 1.0)  # rounding at the edge
    return np.where(ok & np.isfinite(x), x, 1.0).astype(int)


def _prebuilt_token_time(pricer: Pricer, dp: int, b, tau, steps: float, xs, ys, step0_s: float, prompt_s: float):
    """The decode token time τ_t: the lockstep step τ over 1 − L, L the share of an attention-DP rank's steps lost
    to iterations that admit transferred requests instead of decoding (SGLang before PR #19568;
    serve/prebuilt_skip.py, shipped off); τ where it does not apply. With prebuilt_skip.PREBUILT_WAVES_ON (the form
    used) L = prebuilt_skip.lost_share at the prefill waves w = X·τ·(1 − ρ)/t0 a decode step, ρ = λ·(prompt's step
    time)/X the prefill workers' load at the request rate λ = Y·b/(n·τ_t) that τ_t itself sets (a fixed point,
    prebuilt_skip.WAVE_PASSES passes from τ_t = τ); without it round 47's per-rank 1 − P.

    Args:
        pricer: the decode pool's pricer (its ``efficiency.disagg_prebuilt``).
        dp: the decode layout's attention-DP degree.
        b, tau: running sequences an instance and the lockstep step, s (broadcast arrays).
        steps: decode steps a request.
        xs, ys: prefill and decode worker counts (broadcast arrays).
        step0_s: a prefill step's fixed part t0, s (≤ 0: waves unknown, one by one).
        prompt_s: a prompt's share of a prefill step, s (its chunks' σ·chunk).

    Returns:
        τ_t, s, broadcast over the inputs.
    """
    on, mode = prebuilt_skip.PREBUILT_SKIP_ON, pricer.efficiency.disagg_prebuilt
    if not prebuilt_skip.applies(on, mode, dp) or not prebuilt_skip.PREBUILT_WAVES_ON:
        return tau * prebuilt_skip.decode_tau_factor(on, mode, dp, b, steps)  # 1 where it does not apply
    tau_t = tau * np.ones_like(b * xs, dtype=float)
    for _ in range(prebuilt_skip.WAVE_PASSES):
        rho_p = np.minimum(ys * b / (steps * tau_t) * prompt_s / xs, MAX_RHO)
        waves = prebuilt_skip.prefill_waves_per_step(tau, xs, step0_s, rho_p)
        tau_t = tau * prebuilt_skip.decode_tau_factor(on, mode, dp, b, steps, waves)
    return tau_t


def disaggregated_points(
    model: ModelSpec,
    pricer: Pricer,
    precision: Precision,
    wl: Workload,
    pre: PrefillPerf,
    dec: DecodeCurve,
    prefill_workers,
    decode_workers,
    mtp: MTP | None = None,
    transfer_cache: dict | None = None,
    batch_index=None,
    recv_interval: int = 1,
) -> ServingPoints:
    """Closed-loop points for every (prefill workers x_m, decode workers y_m) pair and every batch.

    Args:
        prefill_workers, decode_workers: (M,) worker counts, paired element-wise.
        transfer_cache: (lanes, group) of :func:`transfer_lanes_group` and the copies of
            :func:`handoff_copies` → KV hand-off time, s, shared by the calls of one sweep (the same model,
            pricer, precision and workload), which meet the same pool sizes many times; None = a cache for
            this call only.
        batch_index: (M,) indices into ``dec.batch``: pair m is priced at that one decode batch only
            (the sweep's balanced worker counts, :func:`prefill_workers_needed`); None = every batch.
        recv_interval: the decode worker's SGLang ``--scheduler-recv-interval`` (Deployment.recv_interval; 1 =
            a read every iteration): the pre-allocation poll's period in decode steps (serve/handshake.py).

    With serve/prebuilt_skip.PREBUILT_SKIP_ON (shipped off) and the stack's ``disagg_prebuilt`` ``skip``, an
    attention-DP decode pool's token time is its step over 1 − L (the share of a rank's steps lost to admitting
    transferred requests, in prefill waves: :func:`_prebuilt_token_time`); ``step_time_s`` stays the lockstep step.

    Returns:
        :class:`ServingPoints` of M·K points, pair-major (pair m occupies [m·K, (m+1)·K)); M points
        with ``batch_index``.
    """
    xs = np.asarray(prefill_workers, dtype=float)[:, None]
    ys = np.asarray(decode_workers, dtype=float)[:, None]
    a = mtp.tokens_per_step if mtp else 1.0
    steps = (wl.mean_osl - 1) / a
    if batch_index is None:
        col = lambda v: np.asarray(v)[None, :]  # noqa: E731  (1, K): every pair at every batch
    else:
        bi = np.asarray(batch_index, dtype=int)
        col = lambda v: np.asarray(v)[bi][:, None]  # noqa: E731  (M, 1): pair m at its own batch
    b, tau = col(dec.batch), col(dec.tau_s)
    # the prefill workers' steady queue (serve/queueing.py, effect 2): chunks arrive at
    # λ_c = λ·m/x, each costs s = σ·chunk in a step of t0 + s·n chunks
    chunk = min(wl.mean_isl, pre.tokens_per_s * pre.interval_s)
    m_chunks = math.ceil(wl.mean_isl / chunk - 1e-9)
    s_chunk = pre.per_token_s * chunk
    tau_t = _prebuilt_token_time(pricer, dec.layout.dp, b, tau, steps, xs, ys, pre.step0_s, m_chunks * s_chunk)
    k = b.shape[1]
    cp, cd = pre.layout.chips, dec.layout.chips
    chips = xs * cp + ys * cd
    lam = ys * b / (steps * tau_t)
    rho = lam * wl.mean_isl / (xs * pre.tokens_per_s)
    ok = (rho < MAX_PREFILL_UTILISATION) & col(dec.feasible) & pre.feasible
    lam_c = lam * m_chunks / xs
    rho_c = np.minimum(lam_c * s_chunk, MAX_RHO)
    tau_p = pre.step0_s / (1 - rho_c)
    n_bar = lam_c * tau_p
    cache = {} if transfer_cache is None else transfer_cache
    totals, inv = np.unique(chips[:, 0].astype(int), return_inverse=True)  # each pool size priced once
    xfer = []
    copies = handoff_copies(model, pricer, pre.layout, dec.layout)
    for t in totals.tolist():
        key = (*transfer_lanes_group(pricer, cp, cd, t), copies)
        if key not in cache:
            cache[key] = kv_transfer_s(model, pricer, precision, wl.mean_isl, cp, cd, t, copies)
        xfer.append(cache[key])
    xfer = np.array(xfer)[inv.ravel()][:, None]
    eff_ = pricer.efficiency
    isl_of = {None: wl.mean_isl, **{q: wl.isl_quantile(q) for q in QUANTILES}}
    # bulk service on the prefill workers (serve/queueing.py, effect 2)
    users = lam * (pre.service_s + steps * tau_t)  # the no-queue Little's law, for the arrival theorem
    wait = bulk_prefill_s(s_chunk, n_bar, tau_p, users)
    # the first token leaves with the next decode step (τ/2), plus the engine's handshake with the decode
    # loop (SGLang: a prebuilt step and the pre-allocation poll past the queue wait; serve/handshake.py);
    # the decode worker reads every recv_interval decode steps while decoding another user's request: P = its other
    # users' mean batch b − 1/y (y·b users in all, one of them the arrival), capped at 1 (serve/handshake.py)
    busy = np.clip(b - 1.0 / ys, 0.0, 1.0)
    loop = tau / 2 + handshake_s(eff_.disagg_handshake, tau, wait, recv_interval, busy)
    # a round-robin front end's wait for a slot on a full decode worker in turn (serve/rr_wait.py): n = B users a
    # worker over y workers of the pool's cap, each away for the TTFT before its decode slot between requests
    away = pre.service_s + wait + xfer + frontend_s(eff_, wl.mean_isl)
    loop = loop + router_wait_s(eff_.disagg_router, b, dec.cap, ys, tau_t / a, wl, away)
    ttft_q = {q: (v + wait + xfer + loop + frontend_s(eff_, isl_of[q])).ravel() for q, v in pre.service_q_s.items()}
    shape = lam.shape

    def flat(arr):
        return np.broadcast_to(arr, shape).ravel()

    lam_f, tau_f, tok_f = lam.ravel(), flat(tau), flat(tau_t)
    c = lam_f * (ttft_q[None] + steps * tok_f)
    dec_ok = flat(col(dec.feasible))
    reason = np.where(
        ok.ravel(),
        "",
        np.where(
            ~dec_ok,
            flat(col(dec.reason)),
            f"prefill pool saturated (utilisation >= {MAX_PREFILL_UTILISATION:.0%}): add prefill workers",
        ),
    )
    if not pre.feasible:
        reason = np.full(c.shape, f"prefill: {pre.reason}", dtype=object)
    limit = flat(col(np.where(dec.batch >= dec.cap, dec.cap_name, "")))
    n = c.shape[0]
    return ServingPoints.assemble(
        concurrency=c,
        decode_batch=flat(b),
        request_rate_per_s=lam_f,
        ttft_by_quantile=ttft_q,
        tpot_s=tok_f / a,
        decode_steps_per_request=steps,
        step_time_s=tau_f,
        workload=wl,
        chips=chips.repeat(k, axis=1).ravel(),
        bound=flat(col(dec.bound)),
        bound_margin=flat(col(dec.margin)),
        limit=limit,
        feasible=ok.ravel(),
        reason=reason,
        queue_s=np.zeros(n),
        kv_transfer_s=flat(xfer),
        bound_level=flat(col(dec.bound_level)),
        prefill_bound=np.full(n, pre.bound, dtype=object),
        prefill_chips=(xs * cp).repeat(k, axis=1).ravel(),
    )
