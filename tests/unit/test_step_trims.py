"""Round 28: the per-step shortcuts of a fixed-concurrency pass give the numbers of the paths they skip.

Each shortcut (the hand-off of a pass's priced tables by batch identity, the collective-row masks kept per row
layout, the scalar-first products of the op builder, the serial-k floor of every op in one go, the two-batch
step where every point splits or none does, the sharding and window memos) is checked against the
computation it replaces, written out here or run with the shortcut off, bitwise: no stored figure.
"""

from __future__ import annotations

import numpy as np

import jalapeno.cost.priced as priced_mod
import jalapeno.cost.step as step_mod
import jalapeno.deploy.sharding as sharding_mod
from jalapeno.cost.batch import Batch
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.priced import price_layouts, priced_tables
from jalapeno.cost.roofline import K_BLOCK, _k_serial
from jalapeno.cost.step import step_cost
from jalapeno.cost.step_rows import coll_rows, tbo_rows
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.deploy.sharding import has_ep_all_to_all, sharding
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

R1 = load_model("deepseek-r1")
FP8 = get_precision("fp8")
PRICER = load_pricer("gb200-nvl72")
LAYOUTS = [for_model(lay, R1) for lay in (Layout(tp=8), Layout(tp=1, dp=8, ep=8), Layout(tp=2, dp=4, ep=8, pp=2),
                                          Layout(tp=4, dp=1, ep=4))]


def _batch(scale: float) -> Batch:
    return Batch.make(decode_seqs=[64.0 * scale, 32.0, 8.0 * scale], decode_ctx=[8704.0, 4096.0, 1024.0],
                      prefill_tokens=[0.0, 2048.0 * scale, 512.0], prefill_ctx=[0.0, 100.0, 0.0])


def _arrays(x) -> list:
    """Every array of a (possibly nested) table tuple, in field order (None where a field is None)."""
    out = []
    for t in x if isinstance(x, tuple) else (x,):
        if t is None:
            out.append(None)
            continue
        for name in t.__dataclass_fields__:
            v = getattr(t, name)
            if isinstance(v, np.ndarray):
                out.append((name, v.dtype.str, v.shape, v.tobytes()))
    return out


def test_a_pass_hands_each_step_the_tables_its_own_build_gives(monkeypatch):
    """price_layouts over four layouts, then priced_tables of each batch: the very tables handed over, and
    bitwise those of a build of that batch alone with every memo off."""
    jobs, batches = [], []
    for i, lay in enumerate(LAYOUTS):
        bs = [_batch(1.0 + i), _batch(2.5 + i)]
        batches.append(bs)
        jobs.append((lay, FP8, bs, 1, has_ep_all_to_all(R1, lay)))
    price_layouts(R1, PRICER, jobs)
    handed = [[priced_tables(R1, PRICER, lay, FP8, b, 1, halves) for b in bs]
              for (lay, _, bs, _, halves) in jobs]
    for (lay, _, bs, _, halves), outs in zip(jobs, handed):
        for b, out in zip(bs, outs):
            assert priced_mod._HANDOFF[id(b)][5] is out
            assert (out[1] is not None) == halves
    price_layouts(R1, PRICER, [])  # the pass ends: nothing is handed any more
    assert not priced_mod._HANDOFF
    monkeypatch.setattr(priced_mod, "_PRICED_KEEP", 0)
    priced_mod._PRICED.clear()
    for (lay, _, bs, _, halves), outs in zip(jobs, handed):
        for b, out in zip(bs, outs):
            fresh = priced_tables(R1, PRICER, lay, FP8, b, 1, halves)
            assert _arrays(fresh[0]) == _arrays(out[0])
            assert _arrays(fresh[1]) == _arrays(out[1]) if halves else fresh[1] is None


def test_a_handed_batch_asked_with_another_layout_is_priced_for_that_layout():
    lay_a, lay_b = LAYOUTS[1], LAYOUTS[3]
    b = _batch(1.0)
    price_layouts(R1, PRICER, [(lay_a, FP8, [b], 1, True)])
    got = priced_tables(R1, PRICER, lay_b, FP8, b, 1, False)
    price_layouts(R1, PRICER, [])
    assert got[1] is None and len(got[0][0].name) and got[0][1].group != ()
    assert max(got[0][1].group) == lay_b.tp  # lay_b's TP all-reduces, not lay_a's all-to-all over 8
    assert "all_to_all" not in got[0][1].kind


def test_collective_row_masks_equal_the_step_formulas_on_four_layouts():
    for lay in LAYOUTS:
        (_, colls, _, cts), halves = priced_tables(R1, PRICER, lay, FP8, _batch(1.0), 1, has_ep_all_to_all(R1, lay))
        for pp in (1, lay.pp, 3):
            cr = coll_rows(colls, cts.scope, pp)
            p2p = np.array([k == "send_recv" for k in colls.kind], dtype=bool) & ~colls.per_stage
            scope = np.array(cts.scope, dtype=object)
            assert cr.is_p2p.tolist() == p2p.tolist()
            assert cr.stage.tolist() == (colls.per_stage & ~p2p).tolist()
            assert cr.edge.tolist() == (~colls.per_stage & ~p2p).tolist()
            for s in ("scale_up", "scale_out"):
                assert cr.stage_scope[s].tolist() == ((colls.per_stage & ~p2p) & (scope == s)).tolist()
                assert cr.edge_scope[s].tolist() == (~(colls.per_stage & ~p2p) & (scope == s)).tolist()
            assert cr.edge_weight[:, 0].tolist() == [pp - 1.0 if p else 1.0 for p in p2p]
            assert cr.step_weight[:, 0].tolist() == [pp - 1.0 if p else (float(pp) if st else 1.0)
                                                     for p, st in zip(p2p, colls.per_stage)]
            assert coll_rows(colls, cts.scope, pp) is cr
        if halves is not None:
            h_colls, h_scope = halves[1], halves[3].scope
            tr = tbo_rows(h_colls, h_scope)
            a2a = [k == "all_to_all" and st for k, st in zip(h_colls.kind, h_colls.per_stage)]
            assert tr.a2a.tolist() == a2a and any(a2a)
            for s in ("scale_up", "scale_out"):
                assert tr.a2a_scope[s].tolist() == [a and sc == s for a, sc in zip(a2a, h_scope)]
                assert tr.blocking_scope[s].tolist() == [st and not a and sc == s
                                                         for a, st, sc in zip(a2a, h_colls.per_stage, h_scope)]


def test_op_builder_multiplies_a_scalar_first_with_the_same_bits():
    c = 61.0 / 3.0
    ob = OpBuilder(3)
    for x in (0.0, -0.0, 1.5e9, 7, 1e-300):
        row = ob._times(x, c)
        assert row.tobytes() == (np.full(3, float(x)) * c).tobytes()
    arr = np.array([1.0, -0.0, 3e7])
    assert ob._times(arr, c).tobytes() == (arr * c).tobytes()


def test_serial_k_floor_of_every_op_at_once_equals_the_op_by_op_loop():
    ob = OpBuilder(4)
    rows = np.array([0.0, 1.0, 64.0, 4096.0])
    ob.gemm("a", "fp8", rows, 7001.0, 1536.0, 1.0, 1.0, key="fp8_block", count=61.0, kernels=3.0)
    ob.op("mem", "memory", "bf16", act=rows * 3.0)
    ob.gemm("b", "fp8", rows[::-1].copy(), 2049, 7168.0, 1.0, 1.0, key="fp8_block", count=7.0, kernels=5.0)
    table = ob.build()[0]
    taus = (1.37e-7, 0.0, 2.29e-7)
    want = np.zeros((3, 4))
    for i, tau in enumerate(taus):  # cost/roofline.k_serial_s's arithmetic, op by op
        if tau > 0:
            want[i] = np.where(table.rows[i] > 0,
                               np.asarray(table.kn[i][0], dtype=float) / K_BLOCK * tau * table.kernels[i], 0.0)
    assert _k_serial(table, taus).tobytes() == want.tobytes()


def test_two_batch_points_that_all_split_or_none_equal_them_priced_beside_the_other_kind():
    """A TBO step of a batch whose points all split (or none does) takes the shortcut; beside points of the
    other kind the same points go through np.where: every column is bitwise the same."""
    lay = LAYOUTS[1]
    split = Batch.make(decode_seqs=[64.0, 128.0], decode_ctx=4096.0)  # 8 and 16 per rank: both split
    lone = Batch.make(decode_seqs=[8.0, 4.0], decode_ctx=[4096.0, 2048.0])  # 1 and 0.5 per rank: neither
    mixed = Batch.make(decode_seqs=[64.0, 8.0], decode_ctx=[4096.0, 4096.0])
    a = step_cost(R1, PRICER, lay, FP8, split, overlap="tbo")
    b = step_cost(R1, PRICER, lay, FP8, lone, overlap="tbo")
    m = step_cost(R1, PRICER, lay, FP8, mixed, overlap="tbo")
    assert m.step_time_s[0] == a.step_time_s[0] and m.step_time_s[1] == b.step_time_s[0]
    assert m.hidden_comm_s[0] == a.hidden_comm_s[0] > 0 and m.hidden_comm_s[1] == b.hidden_comm_s[0] == 0
    for k in m.attribution_s:
        assert m.attribution_s[k][0] == a.attribution_s[k][0] and m.attribution_s[k][1] == b.attribution_s[k][0]


def test_sharding_and_window_memos_answer_as_fresh(monkeypatch):
    monkeypatch.setattr(sharding_mod, "_SHARDING", {})
    for lay in LAYOUTS:
        first = sharding(R1, lay)
        assert sharding(R1, lay) is first
        sharding_mod._SHARDING.clear()
        assert sharding(R1, lay) == first
    counts: dict[int, int] = {}
    for w in R1.layer_windows:
        counts[w] = counts.get(w, 0) + 1
    assert R1.window_counts == tuple(sorted(counts.items())) and R1.window_counts is R1.window_counts


def test_a_step_with_every_shortcut_equals_one_without_the_row_memos(monkeypatch):
    """The collective-row masks of a memo and a fresh one give the same step, field by field."""
    lay = LAYOUTS[2]
    b = _batch(1.5)
    got = step_cost(R1, PRICER, lay, FP8, b)
    monkeypatch.setattr(step_mod, "coll_rows", _fresh_rows)
    fresh = step_cost(R1, PRICER, lay, FP8, b)
    assert got.step_time_s.tobytes() == fresh.step_time_s.tobytes()
    assert got.bound.tolist() == fresh.bound.tolist() and got.bound_level.tolist() == fresh.bound_level.tolist()
    for k in got.attribution_s:
        assert got.attribution_s[k].tobytes() == fresh.attribution_s[k].tobytes()


def _fresh_rows(colls, scopes, pp):
    import jalapeno.cost.step_rows as rows_mod
    saved = dict(rows_mod._ROWS)
    rows_mod._ROWS.clear()
    try:
        return coll_rows(colls, scopes, pp)
    finally:
        rows_mod._ROWS.clear()
        rows_mod._ROWS.update(saved)
