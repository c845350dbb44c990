"""The shortcuts that keep ``jalapeno compare`` fast change no result (issue 15, part 2).

- cost/step.py reuses the priced tables of the previous call with the very same inputs (a
  sweep prices each EP layout serially and then under two-batch overlap with the same batch);
- on a layout with an EP all-to-all it prices the batch and its two-batch-overlap halves in one
  build (Batch.joined) and cuts the tables apart;
- the sweep shares KV hand-off times between its (prefill, decode) layout pairs (keyed by the
  lanes and group size they depend on);
- the default roofline pricer is built without the table-pricer machinery (and so without pandas);
- cost/roofline.op_times takes its per-op terms (peaks, efficiency fractions, launch floors) from a
  memo keyed by the chip, the efficiency set and the table's formats, keys, kinds and kernel families;
- cost/overlap.tbo_stage takes its row selections from a memo keyed by the tables' names, kinds and
  stage flags;
- cost/step.step_cost prices each distinct point of a batch once (Batch.distinct) and indexes the
  results back to every point;
- serve/analytic prices the chunks of the long prompts (mean and quantile lengths) once per distinct
  (tokens, prefix) chunk: the lengths share their full chunks.

Each check compares against the same quantity computed with the shortcut out of the way, value
for value (bitwise), not against stored figures. The speed itself is a benchmark
(benchmarks/bench_compare.py), not a test.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import numpy as np
import pytest

import jalapeno.cost.overlap as overlap_mod
import jalapeno.cost.priced as priced_mod
import jalapeno.cost.roofline as roofline_mod
from jalapeno.analysis.sweep import SweepOptions, sweep
from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.serve.disagg import decode_curve, disaggregated_points, prefill_perf
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

R1 = load_model("deepseek-r1")
FP8 = get_precision("fp8")


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == object or b.dtype == object:
        return a.shape == b.shape and a.tolist() == b.tolist()
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _fresh(fn, *args, **kw):
    priced_mod._PRICED.clear()
    return fn(*args, **kw)


class _NoMemo(dict):
    """A memo that never answers (every call computes afresh)."""

    def get(self, key, default=None):
        return default


@pytest.fixture
def no_memos(monkeypatch):
    """Every shortcut's memo out of the way."""
    monkeypatch.setattr(priced_mod, "_PRICED_KEEP", 0)
    monkeypatch.setattr(roofline_mod, "_PER_OP", _NoMemo())
    monkeypatch.setattr(overlap_mod, "_ROWS", _NoMemo())
    monkeypatch.setattr(Batch, "distinct", lambda self: (self, None))


def test_serial_then_overlapped_step_equals_a_fresh_overlapped_step():
    pr = load_pricer("gb200-nvl72")
    lay = Layout(tp=1, dp=8, ep=8)
    b = Batch.make(decode_seqs=[8.0, 256.0, 2048.0], decode_ctx=8704, prefill_tokens=[0.0, 4096.0, 8192.0],
                   prefill_ctx=1024)
    fresh = _fresh(step_cost, R1, pr, lay, FP8, b, overlap="tbo")
    serial = _fresh(step_cost, R1, pr, lay, FP8, b)
    reused = step_cost(R1, pr, lay, FP8, b, overlap="tbo")
    assert reused.ops is serial.ops and reused.ops is not fresh.ops  # served from the serial call
    for name in ("step_time_s", "interval_s", "bound", "bound_margin", "hidden_comm_s", "feasible"):
        assert _same(getattr(reused, name), getattr(fresh, name)), name
    for k in fresh.attribution_s:
        assert _same(reused.attribution_s[k], fresh.attribution_s[k]), k


def test_the_batch_and_its_halves_priced_in_one_build_equal_their_own_builds():
    pr, lay = load_pricer("gb200-nvl72"), Layout(tp=1, dp=8, ep=8)
    b = Batch.make(decode_seqs=[8.0, 256.0, 2048.0, 64.0], decode_ctx=8704, prefill_tokens=[0.0, 4096.0, 8192.0, 0.0],
                   prefill_ctx=1024, pad_seqs=[0.0, 0.0, 0.0, 16.0], pad_routing="masked")
    priced_mod._PRICED.clear()
    whole, halves = priced_mod.priced_tables(R1, pr, lay, FP8, b, 2, halves=True)
    assert priced_mod.priced_tables(R1, pr, lay, FP8, b, 2)[0] is whole  # the memo serves the serial call
    for got, batch in ((whole, b), (halves, b.halved())):
        ops, colls = build_step_ops(R1, pr.system.chip, lay, FP8, batch, pr.efficiency, 2,
                                    priced_mod.moe_all_to_all(pr, lay, R1))
        own = (ops, colls, pr.op_times(ops), pr.collective_times(colls))
        for g, w in zip(got, own):
            for f in fields(w):
                gv, wv = getattr(g, f.name), getattr(w, f.name)
                if isinstance(wv, np.ndarray):
                    assert _same(gv, wv), f.name
                elif f.name == "kn":
                    assert all(_same(x, y) for gk, wk in zip(gv, wv) for x, y in zip(gk, wk)), f.name
                else:
                    assert gv == wv, f.name


def test_a_different_batch_layout_or_pricer_is_not_served_from_the_memo():
    pr, lay = load_pricer("gb200-nvl72"), Layout(tp=1, dp=8, ep=8)
    b1 = Batch.make(decode_seqs=[64.0], decode_ctx=8704)
    b2 = Batch.make(decode_seqs=[65.0], decode_ctx=8704)
    first = _fresh(step_cost, R1, pr, lay, FP8, b1)
    assert not _same(step_cost(R1, pr, lay, FP8, b2).step_time_s, first.step_time_s)
    assert not _same(step_cost(R1, pr, Layout(tp=8), FP8, b1).step_time_s, first.step_time_s)
    other = load_pricer("gb200-nvl72", overrides=(("chip.hbm_bandwidth_tb_per_s", 4.0),))
    assert not _same(step_cost(R1, other, lay, FP8, b1).step_time_s, first.step_time_s)
    assert _same(step_cost(R1, pr, lay, FP8, b1).step_time_s, first.step_time_s)


@pytest.fixture(scope="module")
def gb300_sweeps():
    """The default compare's GB300 sweep with the shortcuts, and with every memo disabled."""
    pr, wl = load_pricer("gb300-nvl72"), get_workload("8k1k")
    with_memo = _fresh(sweep, R1, pr, wl, FP8, SweepOptions())
    with pytest.MonkeyPatch.context() as mp:
        no_memos.__wrapped__(mp)
        without = _fresh(sweep, R1, pr, wl, FP8, SweepOptions())
    return with_memo, without


def test_the_sweep_is_unchanged_by_the_shortcuts(gb300_sweeps):
    a, b = gb300_sweeps
    assert len(a.points) == len(b.points) > 1000
    for f in fields(a.points):
        assert _same(getattr(a.points, f.name), getattr(b.points, f.name)), f.name
    assert _same(a.dep_index, b.dep_index)
    assert [repr(d) for d in a.deployments] == [repr(d) for d in b.deployments]


def test_the_default_compare_pricer_does_not_import_pandas():
    code = ("import sys; from jalapeno.cli.system_opts import systems_pricers; "
            "systems_pricers(['jalapeno', 'gb300-nvl72']); print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_kv_hand_off_times_shared_across_layout_pairs_equal_fresh_ones():
    """One transfer cache for several (prefill, decode) layout pairs gives the times each pair
    computes alone: the hand-off depends on the pool sizes only through (lanes, group)."""
    pr, wl = load_pricer("gb200-nvl72"), get_workload("8k1k")
    xs, ys = np.array([1, 1, 2, 3, 4]), np.array([1, 2, 1, 1, 2])
    shared: dict = {}
    for pre_lay, dec_lay in ((Layout(tp=4), Layout(tp=1, dp=8, ep=8)), (Layout(tp=8), Layout(tp=1, dp=16, ep=16)),
                             (Layout(tp=4), Layout(tp=1, dp=16, ep=16))):
        pre = prefill_perf(R1, pr, pre_lay, FP8, wl, 8192)
        dec = decode_curve(R1, pr, dec_lay, FP8, wl, np.array([8.0, 64.0]))
        with_cache = disaggregated_points(R1, pr, FP8, wl, pre, dec, xs, ys, None, shared)
        alone = disaggregated_points(R1, pr, FP8, wl, pre, dec, xs, ys)
        assert _same(with_cache.kv_transfer_s, alone.kv_transfer_s)
        assert _same(with_cache.ttft_s, alone.ttft_s)
    assert len(shared) < 3 * xs.size  # pairs met the same (lanes, group) again


def test_op_times_from_the_per_op_memo_equal_fresh_ones(no_memos):
    """Tables of one shape priced on two chips and two efficiency sets, each after the others have
    filled the memo, equal the same tables priced with no memo at all (bitwise)."""
    lay = Layout(tp=1, dp=8, ep=8)
    b = Batch.make(decode_seqs=[1.0, 64.0, 2048.0], decode_ctx=8704, prefill_tokens=[0.0, 0.0, 8192.0],
                   prefill_ctx=1024)
    gb200 = load_pricer("gb200-nvl72")
    slow_gemm = gb200.efficiency.with_overrides({"gemm": {"fp8_block": {"peak_fraction": 0.3}}})
    pricers = [gb200, gb200.with_efficiency(slow_gemm), load_pricer("b200")]
    tables = [build_step_ops(R1, p.system.chip, lay, FP8, b, p.efficiency, 1, priced_mod.moe_all_to_all(p, lay, R1))[0]
              for p in pricers]
    fresh = [p.op_times(t) for p, t in zip(pricers, tables)]
    roofline_mod._PER_OP = {}  # a live memo (the fixture restores the disabled one)
    for _ in range(2):
        for p, t, want in zip(pricers, tables, fresh):
            got = p.op_times(t)
            for f in fields(want):
                assert _same(getattr(got, f.name), getattr(want, f.name)), f.name
    assert len(roofline_mod._PER_OP) == 3
    assert not _same(fresh[0].time_s, fresh[1].time_s)  # the sets differ: a shared entry would show


def _step_fields_equal(got, want) -> None:
    for name in ("step_time_s", "interval_s", "draft_s", "bound", "bound_margin", "bound_level", "feasible", "reason",
                 "hidden_comm_s", "coll_time_s", "coll_algorithm"):
        assert _same(getattr(got, name), getattr(want, name)), name
    for k in want.attribution_s:
        assert _same(got.attribution_s[k], want.attribution_s[k]), k
    for table in ("ops", "times", "collectives", "memory"):
        for f in fields(getattr(want, table)):
            g, w = getattr(getattr(got, table), f.name), getattr(getattr(want, table), f.name)
            if isinstance(w, np.ndarray):  # and each row contiguous, as built (NumPy sums them row by row)
                assert _same(g, w) and (g.ndim < 2 or g.strides[1] == g.itemsize), f"{table}.{f.name}"
            elif f.name == "kn":
                assert all(_same(x, y) for gk, wk in zip(g, w) for x, y in zip(gk, wk)), f.name
            else:
                assert g == w, f"{table}.{f.name}"


@pytest.mark.parametrize("overlap", ["none", "tbo"])
@pytest.mark.parametrize("decode_seqs, prefill_tokens", [
    ([64.0, 64.0, 64.0], [4096.0, 4096.0, 4096.0]),  # one distinct point
    ([8.0, 2048.0, 8.0, 8.0, 256.0, 2048.0], [0.0, 4096.0, 0.0, 4096.0, 0.0, 4096.0]),
])
def test_a_batch_with_repeated_points_prices_as_every_point_priced(decode_seqs, prefill_tokens, overlap, monkeypatch):
    """Each distinct point priced once and indexed back gives, field for field and bitwise, what pricing
    every point gives, its tables' rows contiguous as built — also with one distinct point (kept as two
    columns: NumPy would sum a one-column table over its rows pairwise)."""
    pr, lay = load_pricer("gb200-nvl72"), Layout(tp=1, dp=8, ep=8)
    b = Batch.make(decode_seqs=decode_seqs, decode_ctx=8704, prefill_tokens=prefill_tokens, prefill_ctx=1024)
    assert b.distinct()[1] is not None
    got = _fresh(step_cost, R1, pr, lay, FP8, b, overlap=overlap)
    monkeypatch.setattr(Batch, "distinct", lambda self: (self, None))
    want = _fresh(step_cost, R1, pr, lay, FP8, b, overlap=overlap)
    _step_fields_equal(got, want)


def test_long_prompt_chunks_priced_once_per_distinct_chunk_equal_every_chunk_priced(no_memos):
    """The prefill time of each long prompt length from its distinct chunks (serve/chunked.long_chunks)
    equals the one from every chunk of every length priced (bitwise), with fewer chunks priced."""
    from jalapeno.deploy.deployment import Pool
    from jalapeno.serve import analytic, chunked
    from jalapeno.serve.chunked import pipelined_prefill_s

    pr, wl = load_pricer("gb200-nvl72"), get_workload("8k1k")
    dep = SweepOptions().deployment(FP8, Pool(Layout(tp=1, dp=8, ep=8)))
    lay = dep.decode.layout
    lengths = {None: wl.mean_isl, **{q: wl.isl_quantile(q) for q in analytic.QUANTILES}}
    b = np.array([8.0, 64.0, 512.0])
    long, chunks, plan = chunked.long_chunks(dep, lengths, b, wl.decode_ctx)
    tok, pre, owner, col = plan
    assert len(long) == 4 and chunks.n == b.size * (col.max() + 1) < b.size * tok.size  # shared chunks, once
    sc = step_cost(R1, pr, lay, FP8, chunks)
    got = chunked.chunked_prefill_s(lengths, np.zeros(b.size), long, plan, sc.step_time_s, sc.interval_s)
    every = Batch.make(decode_seqs=np.repeat(b, tok.size), decode_ctx=wl.decode_ctx, prefill_tokens=np.tile(tok, b.size),
                       prefill_ctx=np.tile(pre, b.size))
    sc = step_cost(R1, pr, lay, FP8, every)
    want = pipelined_prefill_s(sc.step_time_s.reshape(b.size, -1), sc.interval_s.reshape(b.size, -1), owner, len(long))
    for i, k in enumerate(long):
        assert _same(got[k], want[:, i]), k
