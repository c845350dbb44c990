"""Round 46's shortcuts in the fixed-concurrency solve's hot calls give the very arrays the calls they replace gave.

- cost/overlap.tbo_stage reads an (N,) float64 ``sm_fraction`` as it is (np.broadcast_to's view of it before);
- cost/batch.Batch._distinct fills its (N, 6) row table by column (np.stack before);
- serve/chunked.long_chunks gives one point's chunk batch from the plan's distinct chunks as they are (np.tile
  of them once before);
- cost/step._step_cost and cost/overlap.tbo_stage sum their tables' selected rows taken by row index
  (cost/step_rows.op_stage_rows, CollRows.at, overlap._Rows), where they indexed by boolean masks.

Each check holds the shortcut against the general path or a hand-worked answer, value for value (bitwise).
"""

from __future__ import annotations

import numpy as np

from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.batch import Batch
from jalapeno.cost.optable import CollectiveTable, OpTable
from jalapeno.cost.overlap import tbo_stage
from jalapeno.cost.roofline import OpTimes
from jalapeno.cost.step_rows import coll_rows, op_stage_rows
from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve import analytic, chunked
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


def _tables(n: int):
    """One attention op and one routed-expert op, a dispatch and a combine, N points (the MoE layers only)."""
    ops = OpTable(
        name=("attn.qkv", "moe.experts"),
        kind=("gemm", "moe"),
        fmt=("fp8", "fp8"),
        per_stage=np.array([True, True]),
        flop=np.zeros((2, n)),
        weight_bytes=np.zeros((2, n)),
        kv_bytes=np.zeros((2, n)),
        act_bytes=np.zeros((2, n)),
        rows=np.ones((2, n)),
        kernels=np.ones(2),
        kernel=("", ""),
        kn=((0.0, 0.0), (0.0, 0.0)),
        key=("fp8", "fp8"),
        split=(1.0, 1.0),
    )
    colls = CollectiveTable(
        name=("moe.dispatch", "moe.combine"),
        kind=("all_to_all", "all_to_all"),
        group=(8, 8),
        per_stage=np.array([True, True]),
        bytes=np.ones((2, n)),
        calls=np.ones(2),
    )
    return ops, colls


def test_tbo_stage_takes_an_array_sm_fraction_as_the_broadcast_one():
    """The stage time with an (N,) float64 SM share (read as it is) equals the one with the same shares as a list
    (read through np.broadcast_to), bitwise, and the prefill column (share > 0) is the slower: the stretch applies."""
    n, layers = 3, 4.0
    ops, colls = _tables(n)
    comp = np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]]) * layers
    times = OpTimes.combine(comp, np.full((2, n), 0.5), np.zeros((2, n)))
    coll_s = np.array([[2.0, 0.5, 4.0], [1.0, 0.5, 3.0]]) * layers
    sm = np.array([0.0, 20.0 / 132.0, 0.0])
    fast = tbo_stage(ops, times, colls, coll_s, layers, 0.0, layers, sm, parts=False)
    slow = tbo_stage(ops, times, colls, coll_s, layers, 0.0, layers, sm.tolist(), parts=False)
    for name in ("stage_s", "compute_s", "link_s", "exposed_s"):
        assert getattr(fast, name).tobytes() == getattr(slow, name).tobytes(), name
    unstretched = tbo_stage(ops, times, colls, coll_s, layers, 0.0, layers, np.zeros(n), parts=False)
    assert fast.compute_s[1] > unstretched.compute_s[1] and fast.compute_s[0] == unstretched.compute_s[0]


def test_distinct_groups_points_by_every_field_the_padding_included():
    """Hand-worked: points 0 and 2 are equal in every field, point 3 differs from point 0 only by its padding
    dummies, point 1 by its sequences: three distinct points, first seen at 0, 1, 3."""
    b = Batch.make(decode_seqs=[8.0, 64.0, 8.0, 8.0], decode_ctx=1024.0, pad_seqs=np.array([0.0, 0.0, 0.0, 2.0]))
    d, at = b.distinct()
    assert d.decode_seqs.tolist() == [8.0, 64.0, 8.0] and d.pad_seqs.tolist() == [0.0, 0.0, 2.0]
    assert at.tolist() == [0, 1, 0, 2]
    z = Batch.make(decode_seqs=[0.0, -0.0, 0.0], decode_ctx=1024.0)  # -0.0 and 0.0 differ in their bits
    assert z.distinct()[1].tolist() == [0, 1, 0]


def test_one_point_long_chunks_equal_the_first_point_of_two():
    """serve/chunked.long_chunks at one point gives the rows a two-point call gives its first point (the plan's
    distinct chunks beside that point's decoding sequences), bitwise, and the same plan."""
    wl = get_workload("8k1k")
    dep = SweepOptions().deployment(get_precision("fp8"), Pool(Layout(tp=1, dp=8, ep=8)))
    lengths = {None: wl.mean_isl, **{q: wl.isl_quantile(q) for q in analytic.QUANTILES}}
    long1, one, plan1 = chunked.long_chunks(dep, lengths, np.array([64.0]), wl.decode_ctx)
    long2, two, plan2 = chunked.long_chunks(dep, lengths, np.array([64.0, 512.0]), wl.decode_ctx)
    assert long1 == long2 and all(a.tobytes() == b.tobytes() for a, b in zip(plan1, plan2))
    k = one.n
    assert two.n == 2 * k and k == plan1[3].max() + 1  # K' distinct chunks a point
    for name in ("decode_seqs", "decode_ctx", "prefill_tokens", "prefill_ctx", "prefill_seqs", "pad_seqs"):
        a, b = getattr(one, name), getattr(two, name)[:k]
        assert a.dtype == b.dtype and a.flags.c_contiguous and a.tobytes() == b.tobytes(), name


def test_row_indices_select_the_masks_rows():
    """Hand-worked: per-stage flags (T, F, T, F) give per-stage rows 0, 2 and the others 1, 3; a collective table
    of a per-stage all-reduce, a once-per-step all-gather and a pipeline hand-off (send/recv outside the layers)
    gives the hand-off 2, the stage row 0 and the edge row 1; taking those rows equals indexing by the masks."""
    st, nst = op_stage_rows(np.array([True, False, True, False]))
    assert st.tolist() == [0, 2] and nst.tolist() == [1, 3]
    colls = CollectiveTable(
        name=("attn.ar", "lm_head.ag", "pp.send_recv"),
        kind=("all_reduce", "all_gather", "send_recv"),
        group=(4, 4, 2),
        per_stage=np.array([True, False, False]),
        bytes=np.ones((3, 2)),
        calls=np.ones(3),
    )
    cr = coll_rows(colls, ("scale_up", "scale_up", "scale_out"), 2)
    assert [a.tolist() for a in cr.at] == [[2], [0], [1]]
    t = np.arange(6.0).reshape(3, 2)
    for idx, mask in zip(cr.at, (cr.is_p2p, cr.stage, cr.edge)):
        assert t.take(idx, axis=0).tobytes() == t[mask].tobytes()


def test_tbo_stage_sums_by_row_index_as_by_mask():
    """The stage time from the rows taken by index equals the hand-worked schedule of cost/overlap's docstring:
    A the attention row, M the expert row (one MoE layer, no dense layers), D and K the dispatch and combine,
    no SM share; A = 1, M = 3, D = 5, K = 0.05 give A_a 1, A_b 2, D_a 6, D_b 11, M_a 9, M_b 14, K_a 11.05,
    K_b 14.05 (the stage)."""
    ops, colls = _tables(1)
    times = OpTimes.combine(np.array([[1.0], [3.0]]), np.zeros((2, 1)), np.zeros((2, 1)))
    ov = tbo_stage(ops, times, colls, np.array([[5.0], [0.05]]), 1.0, 0.0, 1.0, np.zeros(1), parts=False)
    assert ov.stage_s.tolist() == [14.05]
