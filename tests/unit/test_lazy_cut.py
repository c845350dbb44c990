"""cost/lazy_cut.py: a step's per-op tables at every point of a batch, cut when first read.

step_cost prices a batch's distinct points once and indexes its figures to every point. The op and
collective tables at every point are now cut lazily; the claim checked here is that a read gives the
very array the eager cut gives (cost/priced.columns, bitwise), that nothing is cut before it is read,
and that the lazy objects behave as the classes they stand for (isinstance, fields, replace, pickle).
The expected arrays come from a second path: priced.columns on the distinct points' own step cost.
"""

from __future__ import annotations

import pickle
from dataclasses import fields, replace

import numpy as np
import pytest

from jalapeno.cost.lazy_cut import lazy_columns, lazy_fields
from jalapeno.cost.optable import CollectiveTable, OpTable
from jalapeno.cost.priced import columns
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.roofline import OpTimes
from jalapeno.cost.step import Batch, StepCost, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

# points 0, 2 and 3 are the same point: three distinct points, five in all
BATCH = Batch.make(decode_seqs=[64.0, 128.0, 64.0, 64.0, 0.0], decode_ctx=4800.0,
                   prefill_tokens=[0.0, 0.0, 0.0, 0.0, 8192.0], prefill_seqs=[0.0, 0.0, 0.0, 0.0, 1.0])


def _same(a, b) -> bool:
    """Bitwise equal values (arrays: dtype, shape and bytes; object arrays element by element)."""
    if isinstance(a, np.ndarray):
        if a.dtype == object:
            return a.shape == b.shape and a.tolist() == b.tolist()
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.fixture(scope="module")
def costs():
    m, p = load_model("deepseek-r1"), load_pricer("gb200-nvl72")
    lay, pr = Layout(tp=1, dp=8, ep=8), get_precision("fp8")
    distinct, at = BATCH.distinct()
    assert distinct.n == 3 and at.tolist() == [0, 1, 0, 0, 2]
    return step_cost(m, p, lay, pr, BATCH), step_cost(m, p, lay, pr, distinct), at


def test_every_table_read_is_the_eager_cut(costs):
    full, alone, at = costs
    for name, cls in (("ops", OpTable), ("times", OpTimes), ("collectives", CollectiveTable)):
        lazy, eager = getattr(full, name), columns(getattr(alone, name), at)
        assert isinstance(lazy, cls)
        for f in fields(cls):
            assert _same(getattr(lazy, f.name), getattr(eager, f.name)), (name, f.name)
    assert _same(full.coll_time_s, np.take(alone.coll_time_s, at, axis=1))
    assert _same(full.coll_algorithm, np.take(alone.coll_algorithm, at, axis=1))
    # and the per-point views read them: point 2 is point 0
    assert full.op_rows(2) == full.op_rows(0) == alone.op_rows(0)
    assert full.collective_rows(3) == alone.collective_rows(0)
    assert full.summary(4) == alone.summary(2)


def test_nothing_is_cut_before_it_is_read():
    calls = []
    base = OpTimes(compute_s=np.arange(6.0).reshape(2, 3), memory_s=np.ones((2, 3)), overhead_s=np.zeros((2, 3)),
                   time_s=np.full((2, 3), 2.0))
    cut = lazy_columns(base, np.array([2, 0]))
    pending = cut.__dict__["_pending"]
    assert set(pending) == {"compute_s", "memory_s", "overhead_s", "time_s"}  # network_s None: kept
    assert cut.network_s is None
    pending["memory_s"] = lambda f=pending["memory_s"]: calls.append("memory_s") or f()
    assert cut.compute_s.tolist() == [[2.0, 0.0], [5.0, 3.0]]  # columns 2 and 0 by hand
    assert calls == []
    assert cut.memory_s.tolist() == [[1.0, 1.0], [1.0, 1.0]] and cut.memory_s is cut.memory_s
    assert calls == ["memory_s"]  # once: the cut is kept


def test_a_read_that_raised_can_be_retried():
    base = OpTimes(compute_s=np.arange(6.0).reshape(2, 3), memory_s=np.ones((2, 3)), overhead_s=np.zeros((2, 3)),
                   time_s=np.full((2, 3), 2.0))
    cut = lazy_columns(base, np.array([1]))
    pending, tries = cut.__dict__["_pending"], []

    def flaky(f=pending["time_s"]):
        tries.append(1)
        if len(tries) == 1:
            raise MemoryError("first read")
        return f()

    pending["time_s"] = flaky
    with pytest.raises(MemoryError):
        _ = cut.time_s
    assert cut.time_s.tolist() == [[2.0], [2.0]]  # the thunk kept, not lost to an AttributeError


def test_lazy_objects_behave_as_their_class(costs):
    full, _, _ = costs
    assert type(full) is not StepCost and isinstance(full, StepCost)
    again = pickle.loads(pickle.dumps(full))
    assert type(again) is StepCost and type(again.ops) is OpTable
    assert _same(again.coll_time_s, full.coll_time_s) and _same(again.ops.flop, full.ops.flop)
    moved = replace(full, overlap="none")
    assert _same(moved.step_time_s, full.step_time_s)
    with pytest.raises(AttributeError, match="no_such_field"):
        _ = full.no_such_field
    with pytest.raises(ValueError, match="every field once"):
        lazy_fields(OpTimes, {"compute_s": None}, {})
