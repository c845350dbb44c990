"""Two-batch overlap (TBO): two micro-batches whose compute hides each other's MoE all-to-all.

What the engines do. SGLang ``--enable-two-batch-overlap`` (with the DeepEP all-to-all backend and
DP attention; PRs #4068, #6598: ``MaybeTboDeepEPDispatcher``), DeepSeek's online system (its
profile-data repository: prefill at EP32 and decode at EP128 both run "two micro-batches to overlap
computation and all-to-all communication"; DeepSeek-V3 report §3.4) and ATOM split every step into
two micro-batches of about half the rows each and interleave them layer by layer: while one
micro-batch runs attention or its experts, the other's dispatch or combine is in flight. Only the
MoE token exchange (dispatch/combine) is hidden; a TP all-reduce (attention TP > 1 inside a DP
group, the shared expert's) is a blocking call on the compute stream and stays on it.

The model, per MoE layer, for one micro-batch of half the step's rows (priced through the same
pricer as the serial step; no new roofline):

    A = pre-dispatch compute: attention, norms, router, shared expert (+ their TP all-reduces)
    M = routed-expert compute,   D = dispatch,   K = combine        (micro-batch times, s)

Two resources, each serving both micro-batches a and b in the engines' order — compute stream
A_a, A_b, M_a, M_b; links D_a, D_b, K_a, K_b — with the chain A → D → M → K → next layer's A per
micro-batch. Completion times follow the max-plus recursion (every term a start = max(resource
free, input ready)):

    A_a = max(c, r_a) + A     A_b = max(A_a, r_b) + A
    D_a = max(l, A_a) + D     D_b = max(D_a, A_b) + D
    M_a = max(A_b, D_a) + M   M_b = max(M_a, D_b) + M
    K_a = max(D_b, M_a) + K   K_b = max(K_a, M_b) + K
    next layer: r_a = K_a, r_b = K_b, c = M_b, l = K_b

It is periodic from the first layer on (checked on 200k random (A, M, D, K) spanning three orders
of magnitude; the tests re-check it), so L MoE layers take K_b(1) + (L − 1)·P with P the period:
the largest cycle mean of the event graph, e.g. 2(A + M) when compute binds, 2(D + K) when the
links bind, 2A + D + M when the dispatch outlasts the expert compute it should hide under. With
D = K = 0, P = 2(A + M): the step pays its two micro-batches' compute and hides nothing. Dense
layers (no all-to-all) run both micro-batches back to back. Edge ops (embedding, LM head) run once
on the whole batch (cost/step.py).

Costs of splitting, all carried by the micro-batch op table: GEMMs at half the rows run at a
lower η(m) (SGLang PR #9660: with Hopper's 64-row WGMMA tiles "the MLP GEMM suffers from redundant
computations" at small decode batches, and TBO gains "only at larger batch sizes (e.g. 64, 128)");
every micro-batch streams the weights it touches again (a layer's weights, hundreds of MB per
chip for DeepSeek-R1, do not stay in a 50-126 MB L2 while the other micro-batch's kernels run
between the two reads); every kernel and collective launches twice.

SM share of the communication kernels. DeepEP's normal (prefill) kernels occupy SMs (SM number
control; DeepSeek-V3 report §3.2.2: 20 of the H800's 132 SMs suffice for IB and NVLink), so in a
step with prefill tokens the compute-bound part of every MoE-layer op runs on 1 − f of the SMs
for the fraction φ = min(1, (D + K)/(A + M)) of the time communication is in flight:
compute term × (1 + φ·f/(1 − f)), f = :data:`PREFILL_COMM_SM_FRACTION`. Decode steps use the
low-latency kernels, whose hook-based receive "does not occupy any SM resource" (DeepEP README;
profile-data: "after RDMA messages are issued, all GPU SMs are freed"): f = 0 (an assumption on
NVLink-only domains, where DeepEP V2 no longer offers the zero-SM path).

A step whose DP ranks hold fewer than :data:`MIN_SPLIT_SEQS` decoding sequences and no prefill
tokens cannot be split (SGLang splits decode batches by request; a prefill chunk of one sequence
can be split by its tokens, PR #8144 "two-chunk overlap"): it runs serially (cost/step.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jalapeno.cost.batch import Batch
from jalapeno.cost.optable import CollectiveTable, OpTable
from jalapeno.cost.roofline import OpTimes
from jalapeno.cost.step_rows import tbo_rows
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.sharding import sharding
from jalapeno.specs.model import ModelSpec

#: Fraction of a chip's SMs DeepEP's normal-mode (prefill) dispatch/combine kernels occupy while
#: in flight: 20 of 132 on H800 (DeepSeek-V3 technical report §3.2.2; DeepEP ``Buffer.num_sms``
#: defaults to 20). Taken as the same fraction on every chip (assumption).
PREFILL_COMM_SM_FRACTION = 20.0 / 132.0
#: Fewest decoding sequences per attention-DP rank a decode step needs to be split in two.
MIN_SPLIT_SEQS = 2.0


def can_split(decode_seqs, prefill_tokens, dp: int):
    """Where a step can run as two micro-batches: at least :data:`MIN_SPLIT_SEQS` decoding
    sequences per DP rank, or prefill tokens to halve (arrays or scalars, same shape)."""
    return (np.asarray(decode_seqs) / dp >= MIN_SPLIT_SEQS) | (np.asarray(prefill_tokens) / dp >= 2.0)


def layer_group(name: str) -> str:
    """Which layers an op or collective of cost/ops.py belongs to, from its name.

    ``dense`` (``dense_ffn.*``: the dense-FFN layers), ``moe`` (``moe.*``: the MoE layers), else
    ``all`` (attention, norms: every layer of the stage).

    >>> layer_group("moe.shared_expert.down"), layer_group("dense_ffn.gate_up"), layer_group("attn.o_proj")
    ('moe', 'dense', 'all')
    """
    if name.startswith("dense_ffn."):
        return "dense"
    if name.startswith("moe."):
        return "moe"
    return "all"


@dataclass(frozen=True, slots=True)
class OverlapTimes:
    """One pipeline stage of a TBO step, N points; seconds, both micro-batches together.

    Attributes:
        stage_s: the stage's layers under two-batch overlap (what replaces the serial layer time).
        compute_s: busy time of the compute stream (every stage op of both micro-batches, with
            the SM-share stretch, plus the blocking TP all-reduces).
        link_s: the hidden-able all-to-all time (dispatch + combine of both micro-batches).
        exposed_s: stage_s − compute_s: the all-to-all time not hidden under compute.
        comp_part_s, mem_part_s, overhead_s, net_part_s: (n_ops, N) one micro-batch's per-op
            compute-bound, memory-bound, launch and on-die-network-bound time after the SM-share
            stretch (zero for edge ops), for the attribution (cost/step.py); None where not asked for.
    """

    stage_s: np.ndarray
    compute_s: np.ndarray
    link_s: np.ndarray
    exposed_s: np.ndarray
    comp_part_s: np.ndarray
    mem_part_s: np.ndarray
    overhead_s: np.ndarray
    net_part_s: np.ndarray


def _stretched(t: OpTimes, stretch: np.ndarray, rows: np.ndarray) -> OpTimes:
    """``t`` with the compute term of the ``rows`` ops multiplied by ``stretch`` (N,), recombined by
    the roofline rule max(compute, memory) + overhead (cost/roofline.py)."""
    comp = np.where(rows[:, None], t.compute_s * stretch[None, :], t.compute_s)
    return OpTimes.combine(comp, t.memory_s, t.overhead_s, t.network_s)


@dataclass(frozen=True, slots=True)
class _Rows:
    """Which rows of a micro-batch's op and collective tables :func:`tbo_stage` sums, as row indices (intp; read
    by ``take``): the stage ops of every layer, of the dense layers, of the MoE layers outside the routed experts,
    the routed experts; the stage collectives that block (every layer, dense, MoE layers), the dispatches and the
    combines. As (n_ops,) bool masks: the ops inside MoE layers (stretched), and the MoE-group and every-layer ops
    (for the attribution weights, stage or not)."""

    op_all: np.ndarray
    op_dense: np.ndarray
    op_moe_rest: np.ndarray
    moe_expert: np.ndarray
    moe_rows: np.ndarray
    grp_moe: np.ndarray
    grp_all: np.ndarray
    c_all: np.ndarray
    c_dense: np.ndarray
    c_moe: np.ndarray
    disp: np.ndarray
    comb: np.ndarray


#: :class:`_Rows` by table shape (op names, kinds, stage flags; collective names, kinds, stage flags): a
#: sweep meets a few shapes hundreds of times; cleared when it reaches :data:`_ROWS_KEEP` entries.
_ROWS: dict[tuple, _Rows] = {}
_ROWS_KEEP = 64


def _rows(ops: OpTable, colls: CollectiveTable) -> _Rows:
    """The row selections of :func:`tbo_stage` for these tables (from their names, kinds and stage flags)."""
    key = (ops.name, ops.kind, ops.per_stage.tobytes(), colls.name, colls.kind, colls.per_stage.tobytes())
    hit = _ROWS.get(key)
    if hit is not None:
        return hit
    st = ops.per_stage
    op_grp = np.array([layer_group(x) for x in ops.name], dtype=object)
    is_a2a = np.array([k == "all_to_all" for k in colls.kind], dtype=bool)
    is_p2p = colls.pipeline_p2p
    c_grp = np.array([layer_group(x) for x in colls.name], dtype=object)
    stage_c = colls.per_stage & ~is_p2p
    blocking = stage_c & ~is_a2a
    disp = stage_c & np.array([x == "moe.dispatch" for x in colls.name], dtype=bool)
    moe_expert = st & np.array([k == "moe" for k in ops.kind], dtype=bool)
    at = np.flatnonzero  # the summed selections as row indices: ``a.take(i, axis=0)`` is ``a[mask]``, a third faster
    out = _Rows(
        op_all=at(st & (op_grp == "all")),
        op_dense=at(st & (op_grp == "dense")),
        op_moe_rest=at(st & (op_grp == "moe") & ~moe_expert),
        moe_expert=at(moe_expert),
        moe_rows=st & (op_grp != "dense"),  # ops that run inside MoE layers (attention runs in both)
        grp_moe=op_grp == "moe",
        grp_all=op_grp == "all",
        c_all=at(blocking & (c_grp == "all")),
        c_dense=at(blocking & (c_grp == "dense")),
        c_moe=at(blocking & (c_grp == "moe")),
        disp=at(disp),
        comb=at(stage_c & is_a2a & ~disp),
    )
    if len(_ROWS) >= _ROWS_KEEP:
        _ROWS.clear()
    _ROWS[key] = out
    return out


def tbo_stage(
    ops: OpTable,
    times: OpTimes,
    colls: CollectiveTable,
    coll_s: np.ndarray,
    layers: float,
    dense_layers: float,
    moe_layers: float,
    sm_fraction,
    parts: bool = True,
) -> OverlapTimes:
    """Stage time of a two-batch-overlapped step from its micro-batch tables (module docstring).

    Args:
        ops, times: op table of ONE micro-batch (half the step's rows) and its prices (n_ops, N).
        colls, coll_s: its collective table and prices (n_coll, N), calls per step included.
        layers, dense_layers, moe_layers: layers of each kind on the stage (may be fractional:
            ceil(L/pp)/L of the model's).
        sm_fraction: (N,) or scalar: fraction of SMs the all-to-all kernels hold (0 in decode).
        parts: False: the per-op parts for the attribution are left out (None; the times are the same).

    Returns:
        :class:`OverlapTimes`.
    """
    n = times.time_s.shape[1]
    st = ops.per_stage
    r = _rows(ops, colls)

    def per_layer(t: np.ndarray | None, sel_op, sel_c, count: float) -> np.ndarray:
        # no ops (t None) or no collectives (sel_c None): the empty sum is +0.0, and 0.0 + x == x + 0.0
        tot = (
            np.add.reduce(coll_s.take(sel_c, axis=0), axis=0) + 0.0
            if t is None
            else np.add.reduce(t.take(sel_op, axis=0), axis=0) + 0.0
            if sel_c is None
            else np.add.reduce(t.take(sel_op, axis=0), axis=0) + np.add.reduce(coll_s.take(sel_c, axis=0), axis=0)
        )
        return tot / count if count > 0 else np.zeros(n)

    d = per_layer(None, None, r.disp, moe_layers)
    k = per_layer(None, None, r.comb, moe_layers)

    def compute_parts(t: OpTimes, with_dense: bool = True):
        g = per_layer(t.time_s, r.op_all, r.c_all, layers)
        dense = None
        if with_dense:
            dense = np.add.reduce(t.time_s.take(r.op_dense, axis=0), axis=0) + np.add.reduce(
                coll_s.take(r.c_dense, axis=0), axis=0
            )
        a = g + per_layer(t.time_s, r.op_moe_rest, r.c_moe, moe_layers)
        m = per_layer(t.time_s, r.moe_expert, None, moe_layers)
        return g, dense, a, m

    g_plain, dense, a0, m0 = compute_parts(times)
    phi = np.minimum(1.0, (d + k) / np.maximum(a0 + m0, 1e-30))
    f = sm_fraction  # tbo_layer's (N,) float64 as it is (np.broadcast_to's view: the same values, 5x its cost)
    if type(f) is not np.ndarray or f.dtype != np.float64 or f.shape != (n,):
        f = np.broadcast_to(np.asarray(sm_fraction, dtype=float), (n,))
    stretch = 1.0 + phi * f / (1.0 - f)
    t_moe = _stretched(times, stretch, r.moe_rows)
    _, _, a, m = compute_parts(t_moe, with_dense=False)  # the stretched tables' dense-layer sum is never read
    # dense layers: both micro-batches back to back, nothing to hide
    dense_s = 2.0 * (g_plain * dense_layers + dense)
    # MoE layers: first layer by the recursion, then the period
    z = np.zeros(n)
    ra, rb, c, ln = z, z, z, z
    ends = []
    for _ in range(2):
        e_aa = np.maximum(c, ra) + a
        e_ab = np.maximum(e_aa, rb) + a
        e_da = np.maximum(ln, e_aa) + d
        e_db = np.maximum(e_da, e_ab) + d
        e_ma = np.maximum(e_ab, e_da) + m
        e_mb = np.maximum(e_ma, e_db) + m
        e_ka = np.maximum(e_db, e_ma) + k
        e_kb = np.maximum(e_ka, e_mb) + k
        ra, rb, c, ln = e_ka, e_kb, e_mb, e_kb
        ends.append(e_kb)
    period = ends[1] - ends[0]
    moe_s = np.where(moe_layers >= 1, ends[0] + (moe_layers - 1) * period, moe_layers * ends[0])
    stage = dense_s + moe_s
    compute = dense_s + 2.0 * moe_layers * (a + m)
    link = 2.0 * moe_layers * (d + k)
    if not parts:
        return OverlapTimes(stage, compute, link, np.maximum(stage - compute, 0.0), None, None, None, None)
    # per-op micro-batch times for attribution: MoE-layer ops stretched, dense-layer ops not, and
    # the every-layer ops (attention) stretched in their MoE-layer share moe_layers / layers
    w = np.where(r.grp_moe, 1.0, np.where(r.grp_all, moe_layers / layers if layers else 0.0, 0.0))
    w = np.where(st, w, 0.0)[:, None]
    comp_p, mem_p, net_p = roof_parts(t_moe)
    comp_0, mem_0, net_0 = roof_parts(times)
    return OverlapTimes(
        stage,
        compute,
        link,
        np.maximum(stage - compute, 0.0),
        w * comp_p + (1 - w) * comp_0,
        w * mem_p + (1 - w) * mem_0,
        w * t_moe.overhead_s + (1 - w) * times.overhead_s,
        w * net_p + (1 - w) * net_0,
    )


def roof_parts(t: OpTimes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(compute-bound, memory-bound, on-die-network-bound) parts of each op's roofline time
    (n_ops, N): the roofline max(compute, memory, network) goes to the largest term (compute
    first on ties, then HBM); the network term is zero on the flat chip (cost/sliced.py)."""
    if t.network_s is None:  # the flat chip (every sweep): the two-term roofline
        roof = np.maximum(t.compute_s, t.memory_s)
        comp = np.where(t.compute_s >= t.memory_s, roof, 0.0)
        return comp, roof - comp, np.zeros_like(roof)
    net = t.network_s
    roof = np.maximum(np.maximum(t.compute_s, t.memory_s), net)
    comp = np.where((t.compute_s >= t.memory_s) & (t.compute_s >= net), roof, 0.0)
    mem = np.where((comp == 0.0) & (t.memory_s >= net), roof, 0.0)
    return comp, mem, roof - comp - mem


def tbo_layer(
    model: ModelSpec, layout: Layout, batch: Batch, halves: tuple, serial_layer: np.ndarray, share: dict, scope_names
) -> tuple[np.ndarray, np.ndarray]:
    """Stage time under two-batch overlap where the step can be split (serial elsewhere), and the
    all-to-all time hidden per stage, each (N,) s; rewrites ``share`` (the per-stage attribution) in place.
    Read by cost/step.py (moved here from its ``_two_batch``, round 42, module budget).

    The micro-batch tables (``halves``: those of ``batch.halved()``, built by cost/ops.py and priced
    by the step's pricer in :func:`cost/priced.priced_tables`) are interleaved by :func:`tbo_stage`. Attribution:
    the micro-batches' compute, HBM and launch shares (x2), their blocking collectives (x2) by link
    scope, and the exposed all-to-all time split over the scopes in proportion to the all-to-all times.
    ``share`` None: no attribution (the times alone, the same values: cost/step.step_times).
    """
    ops, colls, times, cts = halves
    ct = exposed_coll_s(cts.time_s, colls, ops, times)  # a CP ring shows only where it outlasts its attention
    sh = sharding(model, layout)
    sm = np.where(batch.prefill_tokens > 0, PREFILL_COMM_SM_FRACTION, 0.0)
    ov = tbo_stage(
        ops,
        times,
        colls,
        ct,
        model.num_layers * sh.layer_share,
        model.num_dense_layers * sh.layer_share,
        model.num_moe_layers * sh.layer_share,
        sm,
        share is not None,
    )
    split = can_split(batch.decode_seqs, batch.prefill_tokens, layout.dp)
    if share is None:
        return np.where(split, ov.stage_s, serial_layer), None
    st = ops.per_stage
    tr = tbo_rows(colls, cts.scope)  # the micro-batch table's row masks, worked out once per row layout
    a2a = tr.a2a
    a2a_total = np.maximum(np.add.reduce(ct[a2a], axis=0), 1e-30)
    tbo_share = {
        "compute": 2 * np.add.reduce(ov.comp_part_s[st], axis=0),
        "hbm_bandwidth": 2 * np.add.reduce(ov.mem_part_s[st], axis=0),
        "overhead": 2 * np.add.reduce(ov.overhead_s[st], axis=0),
        "on_die_network": 2 * np.add.reduce(ov.net_part_s[st], axis=0),
    }
    for name in scope_names:
        tbo_share[f"{name}_link"] = (
            2 * np.add.reduce(ct[tr.blocking_scope[name]], axis=0)
            + ov.exposed_s * np.add.reduce(ct[tr.a2a_scope[name]], axis=0) / a2a_total
        )
    if split.all():  # every point split (or none, below): np.where's picks without the copies
        share.update(tbo_share)
        return ov.stage_s, np.maximum(ov.link_s - ov.exposed_s, 0.0)
    if not split.any():
        return serial_layer, np.zeros(split.shape)
    for k, v in tbo_share.items():
        share[k] = np.where(split, v, share[k])
    return np.where(split, ov.stage_s, serial_layer), np.where(split, np.maximum(ov.link_s - ov.exposed_s, 0.0), 0.0)


def exposed_coll_s(ct: np.ndarray, colls: CollectiveTable, ops: OpTable, times: OpTimes) -> np.ndarray:
    """Collective times (n_coll, N) with each ``hidden_under`` row reduced to its exposed part,
    max(0, t − t_op) + min(t, t_op) / W with W = ``hidden_stages`` (inf: the first term alone).

    A collective overlapped with an op by construction (the CP ring exchange under the attention
    of the block in hand, Liu et al. 2023) only shows where it outlasts that op. A collective fused
    into its producing GEMM (cost/gemm_allreduce.gemm_allreduce_stages) runs as a two-stage pipeline over the
    W waves of output tiles: W equal stages of compute t_op/W and communication t/W finish at
    W·max(t_op, t)/W + min(t_op, t)/W, so t_op + (what this returns) (the last wave's all-reduce,
    or the GEMM's last wave when the all-reduce binds, cannot overlap). Read by cost/step.py (moved here
    from its ``_expose``, round 42, module budget).
    """
    under = colls.hidden_under
    if not any(under):
        return ct
    out = ct.copy()
    stages = colls.hidden_stages
    for j, op in enumerate(under):
        if op and op in ops.name:
            t_op = times.time_s[ops.name.index(op)]
            tail = np.minimum(ct[j], t_op) / stages[j] if stages is not None and len(stages) else 0.0
            out[j] = np.maximum(ct[j] - t_op, 0.0) + tail
    return out
