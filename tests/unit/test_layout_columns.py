"""One op-table build for several layouts (cost/layout_columns.py) changes no number.

A fixed-concurrency pass (cost/priced.price_layouts) builds the tables of the layouts that share rows (same
attention TP, MoE TP, exchange) in one call, their attention DP, EP, EPLB slots and stage chips varying by
column. Expected values: each layout's own build (cost/priced._price_parts, what a pass does for a layout of
its own), compared bit for bit — every array, per-row field and collective group — over the branches that
read the per-column numbers: the all-to-all and the all-gather exchange, EPLB beside contiguous placement,
mixed prompt/decode routing, every CUDA-graph padding routing and an MTP verify step.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest

import jalapeno.cost.priced as priced_mod
from jalapeno.cost.batch import Batch
from jalapeno.cost.layout_columns import joint_key
from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.deploy.sharding import has_ep_all_to_all
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

R1 = load_model("deepseek-r1")
#: DeepSeek-R1 with prompts routed uniformly and generated tokens skewed (σ 1.03): the mixed-routing branch
R1_MIXED = replace(R1, moe=replace(R1.moe, routing_sigma=0.0, decode_routing_sigma=1.03))
#: attention TP 1 and 2 with EP over the whole stage (MoE TP 1), EPLB on some: one key per TP
LAYOUTS = [Layout(tp=1, dp=4, ep=4), Layout(tp=1, dp=8, ep=8, eplb=32), Layout(tp=1, dp=16, ep=16),
           Layout(tp=1, dp=32, ep=32, eplb=32), Layout(tp=2, dp=4, ep=8), Layout(tp=2, dp=16, ep=32, eplb=32)]


def _batch(k: int, pad_routing: str) -> Batch:
    """A decode-only, a mixed and a padded point, scaled by ``k`` (each layout its own batch)."""
    return Batch.make(decode_seqs=[8.0 * k, 64.0 * k, 40.0 * k], decode_ctx=[1500.0, 4800.0, 900.0],
                      prefill_tokens=[0.0, 8192.0 * k, 0.0], prefill_ctx=[0.0, 2048.0, 0.0],
                      prefill_seqs=[0.0, 1.0 * k, 0.0], pad_seqs=[0.0, 0.0, 6.0 * k], pad_routing=pad_routing)


def _bits(table) -> list:
    out = []
    for f in fields(table):
        v = getattr(table, f.name)
        if isinstance(v, np.ndarray):
            out.append((f.name, v.tolist() if v.dtype == object else (v.dtype.str, v.shape, np.ascontiguousarray(v).tobytes())))
        elif f.name == "kn":
            out.append((f.name, [[np.asarray(x, dtype=float).tolist() for x in kn] for kn in v]))
        else:
            out.append((f.name, v))
    return out


@pytest.mark.parametrize("system, model, qlen, pad_routing", [
    ("gb200-nvl72", R1, 1, "masked"),
    ("gb200-nvl72", R1_MIXED, 4, "one_token"),
    ("h200", R1, 1, "routed"),
    ("gb300-nvl72", R1_MIXED, 1, "masked"),
])
def test_a_pass_prices_layouts_that_share_rows_in_one_build_bit_for_bit(monkeypatch, system, model, qlen, pad_routing):
    pr, prec = load_pricer(system), get_precision("fp8")
    lays = [for_model(lay, model) for lay in LAYOUTS]
    batches = [_batch(k + 1, pad_routing) for k in range(len(lays))]
    halves = [has_ep_all_to_all(model, lay) for lay in lays]  # as serve/lockstep._price_shared asks
    want = [priced_mod._price_parts(model, pr, lay, prec, [b, b.halved()] if h else [b], qlen)
            for lay, b, h in zip(lays, batches, halves)]
    builds = []
    real = priced_mod.build_step_ops
    monkeypatch.setattr(priced_mod, "build_step_ops", lambda *a, **k: builds.append(a[2]) or real(*a, **k))
    priced_mod.price_layouts(model, pr, [(lay, prec, [b], qlen, h) for lay, b, h in zip(lays, batches, halves)])
    keys = {(joint_key(model, lay, priced_mod.moe_all_to_all(pr, lay, model)), h) for lay, h in zip(lays, halves)}
    assert len(builds) == len(keys) < len(lays)  # one build per key
    for lay, b, h, w in zip(lays, batches, halves, want):
        got = priced_mod.priced_tables(model, pr, lay, prec, b, qlen, h)  # the pass's tables, handed over
        for g, e in zip([got[0]] + ([got[1]] if h else []), w):
            for tg, te in zip(g, e):
                assert _bits(tg) == _bits(te)
    priced_mod.price_layouts(model, pr, [])


@pytest.mark.parametrize("all_to_all", [True, False])
def test_one_build_by_column_equals_each_layouts_own(all_to_all):
    """build_step_ops with the layouts by column, cut per layout (priced._build_joint), against each layout's
    own build: every op and collective row, its values and its group (the all-gather exchange where False)."""
    pr, prec = load_pricer("gb200-nvl72"), get_precision("fp4")
    lays = [for_model(lay, R1) for lay in LAYOUTS[:4]]
    batches = [_batch(k + 1, "masked") for k in range(len(lays))]
    members = [(lay, prec, [b], [b], (lay, 1, False)) for lay, b in zip(lays, batches)]
    real = priced_mod.moe_all_to_all
    try:
        priced_mod.moe_all_to_all = lambda *a: all_to_all
        got = priced_mod._build_joint(R1, pr, members)
    finally:
        priced_mod.moe_all_to_all = real
    for lay, b, g in zip(lays, batches, got):
        ops, colls = build_step_ops(R1, pr.system.chip, lay, prec, b, pr.efficiency, 1, all_to_all)
        assert _bits(g[0]) == _bits(ops) and _bits(g[1]) == _bits(colls)
        assert _bits(g[2]) == _bits(pr.op_times(ops))
        stage = [grp for name, grp in zip(colls.name, colls.group) if name.startswith("moe.") and "shared" not in name]
        assert stage and set(stage) == {lay.stage_chips}


def test_joint_key_leaves_what_changes_rows_apart():
    m = R1
    assert joint_key(m, Layout(tp=1, dp=8, ep=8), True) == joint_key(m, Layout(tp=1, dp=32, ep=32, eplb=32), True)
    assert joint_key(m, Layout(tp=1, dp=8, ep=8), True) != joint_key(m, Layout(tp=2, dp=4, ep=8), True)  # TP
    assert joint_key(m, Layout(tp=1, dp=8, ep=8), True) != joint_key(m, Layout(tp=1, dp=8, ep=4), True)  # MoE TP
    assert joint_key(m, Layout(tp=1, dp=8, ep=8), True) != joint_key(m, Layout(tp=1, dp=8, ep=8), False)
    for alone in (Layout(tp=8, ep=8), Layout(tp=1, dp=8, ep=8, pp=2), Layout(tp=1, dp=8, ep=8, cp=2),
                  Layout(tp=1, dp=8, ep=8, dp_dispatch="random")):
        assert joint_key(m, alone, True) is None
    assert joint_key(load_model("llama-3.3-70b"), Layout(tp=2, dp=4), True) is None  # no MoE
