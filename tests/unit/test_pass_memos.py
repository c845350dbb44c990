"""Round 27: the step memos hold a whole fixed-concurrency pass, and a joined table is cut field by field once.

serve/lockstep.py interleaves every deployment of the sweep in each pass (``compare -c 64``: about 55), so a
memo of the last 4-8 calls (Batch.distinct, cost/step_checks._checked, deploy/memory_fit._weights) never hit; they now
keep 256 entries by key, oldest out first, and cost/priced drops its oldest entries in O(1). Each
test checks a memo answer against the computation done afresh (bitwise), counts the computations a pass
needs (one per distinct input, worked out by hand), or checks the cut of a joined table against the
definition of a column cut written out here, not against stored figures.
"""

from __future__ import annotations

import numpy as np

import jalapeno.cost.batch as batch_mod
import jalapeno.cost.priced as priced_mod
import jalapeno.cost.step_checks as checks_mod
import jalapeno.deploy.memory_fit as fit_mod
from jalapeno.cost.batch import Batch
from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.priced import _cut, moe_all_to_all
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

R1 = load_model("deepseek-r1")
FP8 = get_precision("fp8")
LAYOUTS = [
    Layout(tp=tp, dp=dp, ep=ep, pp=pp)
    for tp in (1, 2, 4, 8)
    for dp in (1, 2, 4, 8)
    for ep in (8, 16)
    for pp in (1, 2)
    if tp * dp * pp <= 64 and ep <= tp * dp
]


def test_distinct_is_computed_once_per_batch_over_a_pass_of_sixty(monkeypatch):
    """A pass asks each of its batches twice (to price, then to step) with the other 59 in between: 60 calls
    of the real computation, not 120, and every answer equals a fresh one."""
    calls = []
    real = Batch._distinct

    def counted(self):
        calls.append(self)
        return real(self)

    monkeypatch.setattr(Batch, "_distinct", counted)
    batch_mod._DISTINCT.clear()
    batches = [Batch.make(decode_seqs=[float(i), float(i), 2.0 * i + 1], decode_ctx=1024) for i in range(1, 61)]
    first = [b.distinct() for b in batches]
    again = [b.distinct() for b in batches]
    assert len(calls) == 60
    for b, f, a in zip(batches, first, again):
        assert a is f
        fresh = real(b)
        assert fresh[0].decode_seqs.tobytes() == f[0].decode_seqs.tobytes() and fresh[1].tolist() == f[1].tolist()
    assert len(batch_mod._DISTINCT) <= batch_mod._DISTINCT_KEEP


def test_distinct_memo_lets_the_oldest_go_first(monkeypatch):
    monkeypatch.setattr(batch_mod, "_DISTINCT_KEEP", 3)
    batch_mod._DISTINCT.clear()
    batches = [Batch.make(decode_seqs=[float(i), 1.0, float(i)], decode_ctx=64) for i in range(1, 6)]
    for b in batches:
        b.distinct()
    assert [e[0] for e in batch_mod._DISTINCT.values()] == batches[2:]


def test_checked_layouts_over_a_pass_equal_fresh_checks(monkeypatch):
    """Every layout checked twice, interleaved (a pass's order), returns what a fresh check returns, and the
    checks run once per layout."""
    system = load_pricer("gb200-nvl72").system
    ran = []
    real = checks_mod.validate_layout
    monkeypatch.setattr(checks_mod, "validate_layout", lambda *a: (ran.append(a[0]), real(*a))[1])
    checks_mod._CHECKED.clear()
    assert len(LAYOUTS) > 20
    got = [[checks_mod._checked(R1, system, lay, FP8, None) for lay in LAYOUTS] for _ in range(2)]
    assert ran == LAYOUTS
    for lay, a, b in zip(LAYOUTS, *got):
        assert a is b and a == for_model(lay, R1)


def test_weight_bytes_over_a_pass_equal_fresh_ones(monkeypatch):
    system = load_pricer("gb200-nvl72").system
    ran = []
    real = fit_mod.weight_bytes_per_chip
    monkeypatch.setattr(fit_mod, "weight_bytes_per_chip", lambda *a: (ran.append(a[1]), real(*a))[1])
    fit_mod._WEIGHTS.clear()
    got = [[fit_mod._weights(R1, lay, FP8, 0, system, None) for lay in LAYOUTS] for _ in range(2)]
    assert ran == LAYOUTS
    for lay, a, b in zip(LAYOUTS, *got):
        assert a == b == real(R1, lay, FP8, 0, system, None)


def test_priced_memo_keeps_the_newest_entries_in_order(monkeypatch):
    monkeypatch.setattr(priced_mod, "_PRICED_KEEP", 4)
    priced_mod._PRICED.clear()
    for i in range(7):
        priced_mod._remember(R1, None, FP8, [("k", i)], [i])
    assert [k[-1] for k in priced_mod._PRICED] == [("k", i) for i in range(3, 7)]
    priced_mod._remember(R1, None, FP8, [("k", 4)], ["again"])  # asked again: the newest
    assert [k[-1][1] for k in priced_mod._PRICED] == [3, 5, 6, 4]
    priced_mod._PRICED.clear()


def _cut_by_definition(table, a: int, z: int) -> dict:
    """Columns a:z of ``table`` field by field: every (rows, N) array sliced, an array (k, n) item of ``kn``
    sliced, everything else as it is."""
    out = {}
    for name in table.__dataclass_fields__:
        v = getattr(table, name)
        if isinstance(v, np.ndarray) and v.ndim == 2:
            v = v[:, a:z]
        elif name == "kn":
            v = tuple(tuple(x[a:z] if isinstance(x, np.ndarray) and x.ndim == 1 else x for x in kn) for kn in v)
        out[name] = v
    return out


def test_a_joined_table_cut_into_parts_equals_each_part_cut_by_definition():
    pr = load_pricer("gb200-nvl72")
    parts = [
        Batch.make(decode_seqs=[8.0, 64.0], decode_ctx=8704, prefill_tokens=[0.0, 512.0], prefill_ctx=1024),
        Batch.make(decode_seqs=[4.0, 16.0, 256.0], decode_ctx=8704),
        Batch.make(decode_seqs=[2.0, 2.0], decode_ctx=1024, prefill_tokens=[4096.0, 0.0]),
    ]
    for lay in (Layout(tp=8), Layout(tp=1, dp=8, ep=8), Layout(tp=2, dp=4, ep=8, pp=2)):
        lay = for_model(lay, R1)
        ops, colls = build_step_ops(
            R1, pr.system.chip, lay, FP8, Batch.joined(*parts), pr.efficiency, 1, moe_all_to_all(pr, lay, R1)
        )
        joined = (ops, colls, pr.op_times(ops), pr.collective_times(colls))
        ends = np.cumsum([0] + [p.n for p in parts])
        for (a, z), got in zip(zip(ends[:-1], ends[1:]), _cut(joined, parts)):
            for t, g in zip(joined, got):
                want = _cut_by_definition(t, int(a), int(z))
                for name, w in want.items():
                    v = getattr(g, name)
                    if isinstance(w, np.ndarray):
                        assert v.shape == w.shape and v.tobytes() == w.tobytes(), name
                    elif name == "kn":
                        assert len(v) == len(w) and all(
                            np.array_equal(x, y) for p, q in zip(v, w) for x, y in zip(p, q)
                        ), name
                    else:
                        assert v is w or v == w, name
