"""The round-26 shortcuts of the fixed-concurrency sweep (``jalapeno compare -c``) change no result.

- cost/batch.first_seen compares a few rows through their bytes in a dict instead of ``np.unique``, and
  more rows through a hash of their bits, checked row by row (np.unique where two rows hash alike);
- Batch.distinct answers a batch asked again (the same object, the same bytes) from a memo;
- cost/optable.OpBuilder makes a scalar's (N,) row once per builder;
- cost/priced.columns keeps an op table's (k, n) tuple when it holds no array;
- cost/pricer.check_pricer remembers the pricer classes that passed; cost/step remembers the
  (model, system, layout, precision, MTP) it checked; deploy/memory_fit remembers weight bytes;
- cost/step_bounds.rank_bounds indexes the sorted stack directly.

Each is an equivalence test: the expected values come from the same computation with the shortcut out
of the way (bitwise), or from NumPy's own ``np.unique`` / ``np.take_along_axis``, not from stored figures.
"""

from __future__ import annotations

import numpy as np
import pytest

import jalapeno.cost.batch as batch_mod
import jalapeno.cost.pricer as pricer_mod
import jalapeno.cost.step_checks as checks_mod
import jalapeno.deploy.memory_fit as fit_mod
from jalapeno.analysis.sweep import SweepOptions, sweep
from jalapeno.cost.batch import Batch, first_seen
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import check_pricer, load_pricer
from jalapeno.cost.priced import columns
from jalapeno.cost.step import step_cost
from jalapeno.cost.step_bounds import BOUNDS, rank_bounds
from jalapeno.deploy.layout import Layout
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

R1 = load_model("deepseek-r1")
FP8 = get_precision("fp8")


def _bits(pts) -> list:
    out = []
    for name in pts.__dataclass_fields__:
        v = np.asarray(getattr(pts, name))
        out.append((name, v.tolist() if v.dtype == object else (v.dtype.str, v.shape, v.tobytes())))
    return out


def test_first_seen_of_a_few_rows_equals_the_unique_path(monkeypatch):
    rng = np.random.default_rng(7)
    for t in range(400):
        rows = rng.integers(0, 3, size=(int(rng.integers(1, batch_mod._SMALL + 1)), int(rng.integers(1, 7))))
        rows = rows.astype(float)
        if t % 5 == 0:
            rows[0, 0] = -0.0  # bitwise unlike 0.0: another row
        if t % 7 == 0:
            rows[-1, -1] = np.nan
        fast = first_seen(rows)
        ref = _unique_first_seen(rows)
        for a, b in zip(fast, ref):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _unique_first_seen(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """first_seen worked out the plain way (the reference: a loop over the rows' bytes, no sort, no hash):
    each distinct row's first index in order of first appearance, and every row's rank among them. Not
    np.unique on the bytes, which first_seen's own fallback runs (review34b: a reference that copies the
    fallback compares it with itself)."""
    rows = np.ascontiguousarray(rows, dtype=float)
    rank_of: dict[bytes, int] = {}
    keep, at = [], []
    for i, row in enumerate(rows):
        key = row.tobytes()
        if key not in rank_of:
            rank_of[key] = len(keep)
            keep.append(i)
        at.append(rank_of[key])
    return np.array(keep, dtype=np.intp), np.array(at, dtype=np.intp)


@pytest.mark.parametrize("collide", [False, True])
def test_first_seen_of_many_rows_equals_the_unique_path(monkeypatch, collide):
    """Past _SMALL rows first_seen groups rows by a hash of their bits, checked row by row: the same answer as
    np.unique on the bytes, also where every row hashes alike (the multiplier 0: the check fails, np.unique runs)."""
    if collide:
        monkeypatch.setattr(batch_mod, "_GOLDEN", np.uint64(0))
    rng = np.random.default_rng(11)
    for t in range(60):
        m = int(rng.integers(batch_mod._SMALL + 1, 3000))
        base = rng.integers(0, 4, size=(int(rng.integers(1, 40)), int(rng.integers(1, 7)))).astype(float)
        rows = base[rng.integers(0, base.shape[0], m)]
        if t % 3 == 0:
            rows[int(rng.integers(m)), 0] = -0.0  # bitwise unlike 0.0: another row
        if t % 4 == 0:
            rows[int(rng.integers(m)), -1] = np.nan
        for a, b in zip(first_seen(rows), _unique_first_seen(rows)):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    assert batch_mod._hashed_groups(np.zeros((3, 2)) + [[1.0, 2.0]])[0] is not None
    if collide:
        assert batch_mod._hashed_groups(np.array([[1.0], [2.0]]))[0] is None


def test_distinct_asked_again_is_served_unless_the_batch_changed():
    b = Batch.make(decode_seqs=[8.0, 64.0, 8.0], decode_ctx=1024)
    first = b.distinct()
    assert b.distinct() is first
    b.decode_seqs[2] = 9.0  # in place: the bytes differ, so it is computed afresh
    again = b.distinct()
    assert again is not first and again[1] is None and again[0] is b


def test_op_builder_scalar_rows_keep_their_value_and_sign():
    ob = OpBuilder(3)
    assert ob._arr(2.0) is ob._arr(2)  # made once
    assert np.signbit(ob._arr(-0.0)).all() and not np.signbit(ob._arr(0.0)).any()
    ob.op("a", "memory", "bf16", act=5.0)
    ob.op("b", "memory", "bf16", act=5.0, count=2.0)
    ops, _ = ob.build()
    assert ops.act_bytes.tolist() == [[5.0] * 3, [10.0] * 3] and ops.flop.tolist() == [[0.0] * 3] * 2


def test_columns_keeps_a_scalar_kn_and_cuts_an_array_one():
    ob = OpBuilder(3)
    ob.gemm("g", "fp8", np.array([1.0, 2.0, 3.0]), 16.0, 32.0, 1.0, 2.0)
    ops, _ = ob.build()
    assert columns(ops, slice(1, 3)).kn is ops.kn
    arr = type(ops)(
        **{**{n: getattr(ops, n) for n in ops.__dataclass_fields__}, "kn": ((np.array([1.0, 2.0, 3.0]), 32.0),)}
    )
    cut = columns(arr, np.array([2, 0]))
    assert cut.kn[0][0].tolist() == [3.0, 1.0] and cut.kn[0][1] == 32.0


def test_check_pricer_still_refuses_after_a_pricer_passed():
    pr = load_pricer("gb200-nvl72")
    check_pricer(pr)
    assert type(pr) in pricer_mod._PRICER_TYPES
    check_pricer(pr)
    with pytest.raises(SpecError, match="System"):
        check_pricer(pr.system)
    with pytest.raises(SpecError, match="expected a pricer"):
        check_pricer(object())


def test_a_refused_layout_is_refused_every_time():
    pr = load_pricer("gb200-nvl72")
    b = Batch.make(decode_seqs=[8.0, 64.0], decode_ctx=1024)
    ok = step_cost(R1, pr, Layout(tp=8), FP8, b)
    assert step_cost(R1, pr, Layout(tp=8), FP8, b).layout == ok.layout
    for _ in range(2):
        with pytest.raises(InfeasibleDeployment, match="EP16 does not divide"):
            step_cost(R1, pr, Layout(tp=8, ep=16), FP8, b)


def test_weight_bytes_from_the_memo_equal_fresh_ones():
    pr = load_pricer("gb200-nvl72")
    for lay in (Layout(tp=8), Layout(dp=8, ep=8), Layout(tp=4, pp=2)):
        for _ in range(2):
            got = fit_mod._weights(R1, lay, FP8, 0, pr.system, None)
            assert got == fit_mod.weight_bytes_per_chip(R1, lay, FP8, 0, pr.system, None)


def test_rank_bounds_equals_take_along_axis():
    rng = np.random.default_rng(3)
    stack = rng.random((len(BOUNDS), 9))
    stack[:, 4] = stack[0, 4]  # ties keep argsort's order
    bound, margin = rank_bounds(stack)
    order = np.argsort(-stack, axis=0)
    top = np.take_along_axis(stack, order[:1], axis=0)[0]
    second = np.take_along_axis(stack, order[1:2], axis=0)[0]
    assert bound.tolist() == np.asarray(BOUNDS, dtype=object)[order[0]].tolist()
    assert margin.tobytes() == (top / np.maximum(second, 1e-30)).tobytes()


def _no_shortcuts(mp) -> None:
    mp.setattr(batch_mod, "_SMALL", -1)
    mp.setattr(Batch, "distinct", Batch._distinct)
    mp.setattr(fit_mod, "_weights", fit_mod.weight_bytes_per_chip)
    mp.setattr(checks_mod, "_CHECKED", {})

    class _Never(set):
        def __contains__(self, item):
            return False

    mp.setattr(pricer_mod, "_PRICER_TYPES", _Never())


def test_a_fixed_concurrency_sweep_is_unchanged_by_the_shortcuts(monkeypatch):
    """The per-layout fixed-concurrency sweep (every layout's deployments in lockstep, serve/lockstep.py)
    with and without this round's shortcuts, point for point, bitwise."""
    pr, wl = load_pricer("gb300-nvl72"), get_workload("8k1k")
    opts = SweepOptions(concurrency=(4.0, 64.0))
    fast = sweep(R1, pr, wl, FP8, opts)
    real_checked = checks_mod._checked

    def checked_afresh(*a):
        checks_mod._CHECKED.clear()
        return real_checked(*a)

    with monkeypatch.context() as mp:
        _no_shortcuts(mp)
        mp.setattr(checks_mod, "_checked", checked_afresh)
        slow = sweep(R1, pr, wl, FP8, opts)
    assert len(fast.points) == len(slow.points) > 20
    assert _bits(fast.points) == _bits(slow.points)


def test_collectives_of_several_tables_priced_together_equal_each_table_priced_alone():
    """cost/pricer.collective_times_together against price_collectives, table by table (the per-layout path)."""
    from dataclasses import fields as dc_fields

    from jalapeno.cost.ops import build_step_ops
    from jalapeno.cost.pricer import collective_times_together, price_collectives
    from jalapeno.cost.priced import moe_all_to_all

    for system in ("gb200-nvl72", "h200"):  # h200: the engine's measured all-reduce table
        pr = load_pricer(system)
        b = Batch.make(
            decode_seqs=[8.0, 256.0, 64.0], decode_ctx=8704, prefill_tokens=[0.0, 4096.0, 512.0], prefill_ctx=1024
        )
        tables = []
        for lay in (Layout(tp=8), Layout(tp=1, dp=8, ep=8), Layout(tp=2, dp=4, ep=8), Layout(tp=4, dp=2, ep=8)):
            lay = lay if system != "h200" or lay.chips <= 8 else Layout(tp=8)
            tables.append(
                build_step_ops(R1, pr.system.chip, lay, FP8, b, pr.efficiency, 1, moe_all_to_all(pr, lay, R1))[1]
            )
        together = collective_times_together(pr, tables)
        assert sum(len(t.name) for t in tables) > len({(k, g) for t in tables for k, g in zip(t.kind, t.group)})
        for got, colls in zip(together, tables):
            own = price_collectives(pr, colls)
            for f in dc_fields(own):
                g, w = getattr(got, f.name), getattr(own, f.name)
                if isinstance(w, np.ndarray):
                    assert g.dtype == w.dtype and g.shape == w.shape and g.tolist() == w.tolist(), f.name
                    if w.dtype != object:
                        assert g.tobytes() == w.tobytes(), f.name
                else:
                    assert g == w, f.name


def test_deployments_of_several_layouts_in_lockstep_equal_each_solved_alone_without_memo(monkeypatch):
    """serve/lockstep over the deployments of four layouts (one build per layout and pass, the pass's
    collectives together) against each deployment solved on its own with the memo off (every step builds and
    prices its own tables, collective by collective)."""
    from dataclasses import replace

    import jalapeno.cost.priced as priced_mod
    from jalapeno.deploy.deployment import Pool
    from jalapeno.deploy.layout import for_model
    from jalapeno.serve.analytic import solve_concurrency
    from jalapeno.serve.lockstep import solve_concurrencies

    pr, wl = load_pricer("gb200-nvl72"), get_workload("8k1k")
    conc = np.array([4.0, 64.0, 700.0])
    opts = SweepOptions(serving="agg")
    deps = []
    for lay in (Layout(tp=8), Layout(tp=1, dp=8, ep=8), Layout(tp=2, dp=4, ep=8), Layout(tp=4, ep=4)):
        dep = opts.deployment(FP8, Pool(for_model(lay, R1)))
        deps += [dep, replace(dep, overlap="tbo")] if lay.dp > 1 else [dep]
    priced_mod._PRICED.clear()
    together = solve_concurrencies(R1, pr, deps, wl, conc)
    assert len(priced_mod._PRICED) <= priced_mod._PRICED_KEEP  # the pass's entries are let go after the solve
    monkeypatch.setattr(priced_mod, "_PRICED_KEEP", 0)
    for dep, got in zip(deps, together):
        assert _bits(got) == _bits(solve_concurrency(R1, pr, dep, wl, conc))
