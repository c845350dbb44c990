"""Cost of one forward step: ops → roofline times → collectives → step time and binding constraint.

For N batch points at once (NumPy arrays), one chip of the heaviest pipeline stage:

    layer_time = Σ_stage-ops t_op + Σ_stage-collectives t_coll          (overlap "none")
                 − the shared expert hidden on the engine's aux stream  (cost/shared_stream.py)
    layer_time = two-batch-overlap stage time (cost/overlap.py)        (overlap "tbo")
    step_time  = pp · layer_time + Σ_edge-ops t_op + t_gather + (pp − 1) · t_p2p + step_overhead
    interval   = layer_time + Σ_edge t + t_p2p·[pp > 1] + step_overhead
    step_overhead = step_overhead_s + (r − 1) · tp_rank_step_s       (:func:`step_overhead`; r = tp, or tp·dp)
    a collective with ``hidden_under`` (the CP ring KV exchange) costs max(0, t_coll − t_op);
    a TP all-reduce fused into its GEMM (``Efficiency.gemm_allreduce_fusion``) costs
    max(0, t_coll − t_op) + min(t_coll, t_op) / W, W waves of the GEMM's output tiles (cost/overlap.exposed_coll_s)
    with MTP (k drafts): every decoding sequence verifies 1 + k rows, and the step adds k
    drafting passes of the MTP module, priced as that module (one decoder layer at the
    checkpoint's MTP weights, its projection and the shared LM head; cost/mtp_draft.py):
    draft = layer(1 + k rows/seq) + (k − 1)·layer(1 row/seq) + k·head(1 row/seq) + eh_proj

With ``overlap="tbo"`` the step's rows are split into two micro-batches; the micro-batch op and
collective tables are priced through the same pricer and interleaved layer by layer so that
each micro-batch's compute hides the other's MoE dispatch/combine (cost/overlap.py); a step
that cannot be split (fewer than two decoding sequences per DP rank and no prefill) runs serially.

Times come from a pricer (cost/pricer.py): the op and collective tables say what the step does,
the pricer what it costs on one system with one efficiency set.

``step_time_s`` is the latency of one step through all stages (what TPOT sees); ``interval_s``
is the time between consecutive steps of the instance with pp micro-batches in flight (what
throughput sees; equal to the step time when pp = 1). The time is attributed to compute,
HBM bandwidth, scale-up link, scale-out link and overhead (kernel launches + step overhead);
the shares sum to the step time. Under two-batch overlap the stage's shares are those of the two
micro-batches (their compute, HBM, launches and blocking collectives) and the links are charged
only the all-to-all time left exposed; hidden communication costs no time and is reported as
``hidden_comm_s``. The largest share is the binding constraint and ``bound_margin`` = largest / second largest.
A batch whose weights + KV + activations exceed usable HBM is infeasible (``feasible`` False,
``reason`` says why, bound ``hbm_capacity``). The bounds and their ranking are cost/step_bounds.py's; a batch's
repeated points take their distinct point's figures through cost/lazy_cut.step_at_points; the arguments' checks
are cost/step_checks.py's (round 55).
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.batch import Batch
from jalapeno.cost.lazy_cut import step_at_points
from jalapeno.cost.mtp_draft import mtp_draft_s
from jalapeno.cost.optable import OpTable
from jalapeno.cost.priced import moe_all_to_all, priced_tables
from jalapeno.cost.overlap import exposed_coll_s, roof_parts, tbo_layer
from jalapeno.cost.pricer import Pricer
from jalapeno.cost.roofline import OpTimes
from jalapeno.cost.shared_stream import hidden_shared_s, pricer_stream_rule, stream_on
from jalapeno.cost.step_bounds import (  # noqa: F401 (re-exported: split from here, round 53)
    BOUNDS,
    _link_level,
    rank_bounds,
)
from jalapeno.cost.step_checks import checked_step_inputs
from jalapeno.cost.step_result import StepCost
from jalapeno.cost.step_rows import SCOPES, coll_rows, op_stage_rows
from jalapeno.deploy.deployment import Deployment, pool_overlap
from jalapeno.deploy.mtp import MTP, query_len
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import memory_fit
from jalapeno.deploy.sharding import has_ep_all_to_all
from jalapeno.specs.formats import Precision
from jalapeno.specs.model import ModelSpec


def step_overhead(eff, layout: Layout) -> float:
    """Per-step cost outside kernels, s: ``step_overhead_s + (r − 1)·tp_rank_step_s`` — the
    engine's scheduler, sampling and input preparation, plus the host-side work that grows with
    the r workers of the engine's tensor-parallel group (specs/efficiency.py ``tp_rank_step_s``):
    r = tp, the attention TP workers; r = tp·dp where the engine runs its attention-DP ranks as that
    group (``Efficiency.tp_rank_step_dp``: TensorRT-LLM's ``Mapping(tp_size=tp·dp,
    enable_attention_dp=True)``, whose executor all-gathers over the group every step; data/stacks.toml).

    >>> from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
    >>> from dataclasses import replace
    >>> eff = replace(DEFAULT_EFFICIENCY, step_overhead_s=5e-4, tp_rank_step_s=1e-4)
    >>> round(step_overhead(eff, Layout(tp=8)), 6), round(step_overhead(eff, Layout(dp=8, ep=8)), 6)
    (0.0012, 0.0005)
    >>> round(step_overhead(replace(eff, tp_rank_step_dp=True), Layout(dp=8, ep=8)), 6)  # 0.5 + 7 x 0.1 ms
    0.0012
    """
    ranks = layout.tp * layout.dp if eff.tp_rank_step_dp else layout.tp
    return eff.step_overhead_s + (ranks - 1) * eff.tp_rank_step_s


#: Whether a step pays ``Efficiency.prompt_step_s_per_token`` for its prompt tokens (:func:`prompt_token_s`). Shipped
#: OFF (round 43, trt8k43; docs/gap_aic_itl.md): TensorRT-LLM 1.1.0rc2's 8k prompt steps cost ~15.6 us a prompt token
#: beyond the model in both TTFT and TPOT (scripts/trt_prompt_release43.py), but the term breaks met goals.
PROMPT_TOKEN_STEP_ON = False


def prompt_token_s(
    eff, batch_prefill_tokens: np.ndarray, layout: Layout, on: bool | None = None, decode_seqs: np.ndarray | None = None
) -> np.ndarray:
    """Engine time a step spends per prompt token beyond its kernels, s (N,): ``prompt_step_s_per_token``
    x the prompt tokens of one attention-DP rank (prefill tokens / dp, the instance's spread evenly: an
    ASSUMPTION), paid serially with the step (host work before the forward, not hidden behind it: an ASSUMPTION).
    With ``decode_seqs`` (N,), only steps that also carry decoding sequences pay it (an aggregated engine's mixed
    step: the excess is measured on aggregated runs, and the same release's disaggregated prefill pools read
    without it; docs/gap_aic_itl.md round 43); None: every step with prompt tokens.
    The mechanism is not identified: the rate is a named assumption per engine release (data/stacks.toml
    version_rules; the fit split and held-out rows in docs/gap_aic_itl.md round 43). ``on`` None reads
    :data:`PROMPT_TOKEN_STEP_ON`.

    >>> from dataclasses import replace
    >>> from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
    >>> eff = replace(DEFAULT_EFFICIENCY, prompt_step_s_per_token=10e-6)
    >>> prompt_token_s(eff, np.array([8192.0, 0.0]), Layout(tp=8), on=True).round(5).tolist()  # 8192 x 10 us
    [0.08192, 0.0]
    >>> prompt_token_s(eff, np.array([8192.0]), Layout(dp=4, ep=4), on=True).round(5).tolist()  # a rank's quarter
    [0.02048]
    >>> prompt_token_s(eff, np.array([8192.0]), Layout(tp=8), on=False).tolist()
    [0.0]
    >>> prompt_token_s(eff, np.array([8192.0, 8192.0]), Layout(tp=8), on=True, decode_seqs=np.array([0.0, 4.0])).round(5).tolist()
    [0.0, 0.08192]
    """
    if not (PROMPT_TOKEN_STEP_ON if on is None else on) or not eff.prompt_step_s_per_token:
        return np.zeros(np.shape(batch_prefill_tokens))
    t = eff.prompt_step_s_per_token * np.asarray(batch_prefill_tokens, dtype=float) / layout.dp
    return t if decode_seqs is None else np.where(np.asarray(decode_seqs) > 0, t, 0.0)


def step_cost(
    model: ModelSpec,
    pricer: Pricer,
    layout: Layout,
    precision: Precision,
    batch: Batch,
    mtp: MTP | None = None,
    memory_fraction: float | None = None,
    overlap: str = "none",
    engine_memory=None,
) -> StepCost:
    """Cost of one forward step for every point of ``batch`` on one chip, priced by ``pricer``.

    Args:
        model, layout, precision: the deployment.
        pricer: what ops and collectives cost (cost/pricer.py: system + efficiency set).
        batch: :class:`Batch` of N points (whole-instance quantities).
        mtp: speculative decoding with the model's MTP module: decoding sequences verify
            1 + k rows, k drafting passes are added (cost/mtp_draft.py), and the MTP module is
            resident in memory. None: plain decoding.
        memory_fraction: the engine's share of usable HBM for the memory fit (Deployment.
            memory_fraction; None: the efficiency set's 1 − memory_reserve_fraction).
        engine_memory: an engine memory profile for the memory fit (Deployment.memory_profile;
            deploy/engine_memory.py); None: the step's own activations (kernel-level questions).
        overlap: ``none`` (serial step) or ``tbo`` (two-batch overlap of the MoE all-to-all;
            cost/overlap.py), which needs attention DP with EP > 1.

    Returns:
        :class:`StepCost` with arrays of shape (N,). Every point is priced on its own: a repeated
        point is priced once (Batch.distinct) and its figures indexed to each of its places.

    Raises:
        InfeasibleDeployment: the layout cannot run the model on the system.
        SpecError: MTP on a model without an MTP module; a precision the model or chip cannot
            run (:func:`~jalapeno.specs.precision_checks.check_precision`); a decoding context past the model's
            (ModelSpec.check_context, as ``step --context``); an unknown ``overlap``, or
            ``tbo`` on a layout without an EP all-to-all; an argument of the wrong type (named:
            model, layout, precision, batch, mtp, engine_memory).
    """
    distinct, at = batch.distinct() if isinstance(batch, Batch) else (batch, None)
    sc = _step_cost(model, pricer, layout, precision, distinct, mtp, memory_fraction, overlap, engine_memory)
    return sc if at is None else step_at_points(sc, at)  # each distinct point priced once, then every point


def step_times(
    model: ModelSpec,
    pricer: Pricer,
    layout: Layout,
    precision: Precision,
    batch: Batch,
    mtp: MTP | None = None,
    memory_fraction: float | None = None,
    overlap: str = "none",
    engine_memory=None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`step_cost`'s ``step_time_s`` and ``interval_s`` (N,) each, s, alone: the bounds, their attribution
    and the memory fit are not worked out (serve/overlap_pick.py reads a long prompt's chunk steps so). The same
    arguments, checks and errors as :func:`step_cost`, and the same values."""
    distinct, at = batch.distinct() if isinstance(batch, Batch) else (batch, None)
    t, i = _step_cost(model, pricer, layout, precision, distinct, mtp, memory_fraction, overlap, engine_memory, True)
    return (t, i) if at is None else (np.take(t, at), np.take(i, at))


def pool_step_cost(model: ModelSpec, pricer: Pricer, dep: Deployment, layout: Layout, batch: Batch) -> StepCost:
    """:func:`step_cost` of one pool of the deployment ``dep`` as it runs: the pool's ``layout`` (``dep.decode.layout``
    for an aggregated instance, or a disaggregated pool's), ``dep``'s precision, MTP, memory fraction and engine
    memory profile, and the overlap that pool runs (deploy/overlap_mode.pool_overlap: ``tbo`` only where the layout
    has an EP all-to-all to hide). ``pricer`` is used as given: a pool priced with its engine backends passes
    cost/pool_backends.with_pool_backends's pricer. ``batch``: :class:`Batch` of N points, the pool's per-micro-batch
    load.

    Returns:
        :class:`StepCost` with arrays of shape (N,), the same object :func:`step_cost` gives for those arguments.

    Raises:
        The errors of :func:`step_cost` (InfeasibleDeployment, SpecError).
    """
    return step_cost(
        model,
        pricer,
        layout,
        dep.precision,
        batch,
        dep.mtp,
        dep.memory_fraction,
        pool_overlap(dep.overlap, model, layout),
        dep.memory_profile,
    )


def pool_step_times(
    model: ModelSpec, pricer: Pricer, dep: Deployment, layout: Layout, batch: Batch
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`step_times` (``step_time_s``, ``interval_s``: (N,) each, s) of the pool step :func:`pool_step_cost`
    prices, the same arguments and values, without the bounds, attribution and memory fit.

    Raises:
        The errors of :func:`step_cost` (InfeasibleDeployment, SpecError).
    """
    return step_times(
        model,
        pricer,
        layout,
        dep.precision,
        batch,
        dep.mtp,
        dep.memory_fraction,
        pool_overlap(dep.overlap, model, layout),
        dep.memory_profile,
    )


def _step_cost(
    model: ModelSpec,
    pricer: Pricer,
    layout: Layout,
    precision: Precision,
    batch: Batch,
    mtp: MTP | None,
    memory_fraction: float | None,
    overlap: str,
    engine_memory,
    times_only: bool = False,
) -> StepCost | tuple[np.ndarray, np.ndarray]:
    """:func:`step_cost` of a batch (its distinct points: Batch.distinct); ``times_only``: (step time, interval)."""
    layout = checked_step_inputs(model, pricer, layout, precision, batch, mtp, memory_fraction, overlap, engine_memory)
    system, eff = pricer.system, pricer.efficiency
    qlen = query_len(mtp)
    # the two-batch-overlap micro-batch's tables only where they are read (a one-point batch keeps them: priced
    # beside them, its tables have two columns, as before)
    (ops, colls, times, cts), halves = priced_tables(
        model,
        pricer,
        layout,
        precision,
        batch,
        qlen,
        has_ep_all_to_all(model, layout) and (overlap == "tbo" or batch.n < 2),
    )
    ct, levels, scopes = exposed_coll_s(cts.time_s, colls, ops, times), cts.level, cts.scope
    n, pp = batch.n, layout.pp
    nc = len(colls.name)
    cr = coll_rows(colls, scopes, pp)  # the table's row masks, worked out once per row layout
    scope_arr = cr.scope

    st = ops.per_stage
    nst = ~st
    scope_names = SCOPES
    comp_part, mem_part, net_part = parts = (None,) * 3 if times_only else roof_parts(times)  # the attribution's
    # per-stage shares of the serial step (they sum to its layer time); times_only: none (the times do not read them)
    stage_share = (
        None
        if times_only
        else {
            "compute": np.add.reduce(comp_part[st], axis=0),
            "hbm_bandwidth": np.add.reduce(mem_part[st], axis=0),
            "overhead": np.add.reduce(times.overhead_s[st], axis=0),
            "on_die_network": np.add.reduce(net_part[st], axis=0),
            **{
                f"{sc}_link": np.add.reduce(ct[cr.stage_scope[sc]], axis=0) if nc else np.zeros(n) for sc in scope_names
            },
        }
    )
    (st_i, nst_i), (p2p_i, stage_i, edge_i) = op_stage_rows(st), cr.at  # the masks' rows, by index (same arrays)
    layer_time = np.add.reduce(times.time_s.take(st_i, axis=0), axis=0) + np.add.reduce(
        ct.take(stage_i, axis=0), axis=0
    )
    if overlap == "none":  # the shared expert on the engine's auxiliary stream (cost/shared_stream.py)
        on = stream_on(
            pricer_stream_rule(eff.source, system.name),
            batch.tokens(qlen),
            batch.prefill_tokens,
            has_ep_all_to_all(model, layout) and moe_all_to_all(pricer, layout, model),
            model.moe.num_experts if model.moe else 0,
            model.moe.num_shared if model.moe else 0,
            layout.ep,
        )
        layer_time = _hide_shared_expert(ops, times, st, on, parts, stage_share, layer_time)
    hidden = np.zeros(n)
    if overlap == "tbo":
        layer_time, hidden = tbo_layer(model, layout, batch, halves, layer_time, stage_share, scope_names)
    edge_time = np.add.reduce(times.time_s.take(nst_i, axis=0), axis=0) + np.add.reduce(ct.take(edge_i, axis=0), axis=0)
    p2p = np.add.reduce(ct.take(p2p_i, axis=0), axis=0)
    step_over = step_overhead(eff, layout) + prompt_token_s(
        eff, batch.prefill_tokens, layout, decode_seqs=batch.decode_seqs
    )
    step_time = pp * layer_time + edge_time + (pp - 1) * p2p + step_over
    interval = layer_time + edge_time + (p2p if pp > 1 else 0.0) + step_over
    draft = np.zeros(n)
    if mtp is not None:  # k drafting passes of the MTP module (cost/mtp_draft.py)
        draft = mtp_draft_s(
            model,
            pricer,
            layout,
            precision,
            Batch.make(decode_seqs=batch.decode_seqs, decode_ctx=batch.decode_ctx),
            mtp,
            moe_all_to_all(pricer, layout, model),
        )
        step_time, interval = step_time + draft, interval + draft
    if times_only:
        return step_time, interval

    ctw = ct * cr.edge_weight if nc else None

    def edge_link(scope: str) -> np.ndarray:
        if not nc:
            return np.zeros(n)
        return np.add.reduce(ctw[cr.edge_scope[scope]], axis=0)

    attribution = {
        "compute": pp * stage_share["compute"] + np.add.reduce(comp_part[nst], axis=0),
        "hbm_bandwidth": pp * stage_share["hbm_bandwidth"] + np.add.reduce(mem_part[nst], axis=0),
        "scale_up_link": pp * stage_share["scale_up_link"] + edge_link("scale_up"),
        "scale_out_link": pp * stage_share["scale_out_link"] + edge_link("scale_out"),
        "overhead": pp * stage_share["overhead"] + np.add.reduce(times.overhead_s[nst], axis=0) + step_over,
        "on_die_network": pp * stage_share["on_die_network"] + np.add.reduce(net_part[nst], axis=0),
    }
    bound, margin = rank_bounds(
        np.array([attribution[b] for b in BOUNDS], dtype=float)
    )  # np.stack's rows, a third of its cost
    cw = cr.step_weight

    ctx_mean = np.where(
        batch.decode_seqs + batch.prefill_seqs > 0,
        (
            batch.decode_seqs * batch.decode_ctx
            + batch.prefill_seqs * (batch.prefill_ctx + batch.prefill_tokens / np.maximum(batch.prefill_seqs, 1e-9))
        )
        / np.maximum(batch.decode_seqs + batch.prefill_seqs, 1e-9),
        0.0,
    )
    sampled = batch.decode_seqs * qlen + np.where(batch.prefill_tokens > 0, batch.prefill_seqs, 0.0)
    mem = memory_fit(
        model,
        system,
        layout,
        precision,
        batch.decode_seqs + batch.prefill_seqs,
        ctx_mean,
        batch.tokens(qlen),
        eff,
        sampled,
        mtp,
        memory_fraction,
        engine_memory,
    )
    if not mem.fits.all():  # (bound is a fresh object array: kept as it is where every point fits)
        bound = np.where(mem.fits, bound, "hbm_capacity")
    bound_level = _link_level(bound, ct, cw, scope_arr, levels, n)
    return StepCost(
        model.name,
        system.name,
        layout,
        precision.name,
        ops,
        times,
        colls,
        ct,
        cts.algorithm,
        tuple(levels),
        tuple(scopes),
        step_time,
        interval,
        draft,
        attribution,
        bound,
        margin,
        bound_level,
        mem,
        mem.fits,
        mem.reason,
        overlap,
        pp * hidden,
    )


def _hide_shared_expert(
    ops: OpTable,
    times: OpTimes,
    st: np.ndarray,
    on: np.ndarray,
    parts: tuple,
    stage_share: dict | None,
    layer_time: np.ndarray,
) -> np.ndarray:
    """``layer_time`` less the shared expert's time the routed experts hide in the steps ``on`` (N,) where the
    pricer's stack runs it on an auxiliary stream (cost/shared_stream.py); ``stage_share`` loses the same seconds from the shared
    expert's compute, overhead and on-die-network shares (its HBM share stays: its bytes are not hidden; None: no shares)."""
    hid, se = hidden_shared_s(ops, times, st, on)
    if not se.any():
        return layer_time
    if stage_share is None:  # times only: no shares to move
        return layer_time - hid
    comp_part, _, net_part = parts
    cover = np.add.reduce((comp_part[se] + times.overhead_s[se] + net_part[se]), axis=0)
    r = np.where(cover > 0, hid / np.maximum(cover, 1e-30), 0.0)
    for key, part in (("compute", comp_part), ("overhead", times.overhead_s), ("on_die_network", net_part)):
        stage_share[key] = stage_share[key] - r * np.add.reduce(part[se], axis=0)
    return layer_time - hid
