"""Batch.joined: one step_cost call on several point sets gives each set's figures end to end.

serve/analytic.py prices a step's decode-only, mixed and long-prompt chunk rows in one call to pay the
call's fixed Python cost once; that is only right if step_cost prices every row on its own. The
expected values here are the separate calls' own results (two evaluation paths that must agree),
over branches that could couple rows: MTP drafting, two-batch overlap, decode-only beside prefill
rows, and rows that do not fit in memory.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.cost.step_bounds import BOUNDS
from jalapeno.deploy.deployment import MTP
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

DECODE = Batch.make(decode_seqs=[8.0, 256.0, 4096.0], decode_ctx=[1500.0, 4800.0, 9000.0])
MIXED = Batch.make(decode_seqs=[64.0, 0.0], decode_ctx=4800.0, prefill_tokens=[8192.0, 16384.0],
                   prefill_ctx=[0.0, 4096.0], prefill_seqs=[1.0, 4.0])
HUGE = Batch.make(decode_seqs=[1e7], decode_ctx=[131072.0])  # far beyond HBM: infeasible


def test_joined_concatenates_every_field_in_order():
    j = Batch.joined(DECODE, MIXED)
    assert j.n == 5
    assert j.decode_seqs.tolist() == [8.0, 256.0, 4096.0, 64.0, 0.0]
    assert j.prefill_tokens.tolist() == [0.0, 0.0, 0.0, 8192.0, 16384.0]
    assert j.prefill_seqs.tolist() == [0.0, 0.0, 0.0, 1.0, 4.0]


@pytest.mark.parametrize("system, model, layout, prec, mtp, overlap", [
    ("gb200-nvl72", "deepseek-r1", Layout(tp=1, dp=8, ep=8), "fp8", MTP(3, 0.8), "tbo"),
    ("gb300-nvl72", "deepseek-r1", Layout(tp=8, ep=8), "fp4", None, "none"),
    ("h200", "gpt-oss-120b", Layout(tp=4), "fp8", None, "none"),
    ("jalapeno", "kimi-k2.5", Layout(tp=1, dp=16, ep=16), "fp4", None, "tbo"),
])
def test_one_call_on_joined_rows_equals_separate_calls(system, model, layout, prec, mtp, overlap):
    m, p, pr = load_model(model), load_pricer(system), get_precision(prec)
    parts = (DECODE, MIXED, HUGE)
    alone = [step_cost(m, p, layout, pr, b, mtp, overlap=overlap) for b in parts]
    joint = step_cost(m, p, layout, pr, Batch.joined(*parts), mtp, overlap=overlap)
    for name in ("step_time_s", "interval_s", "draft_s", "feasible", "bound", "bound_margin"):
        want = np.concatenate([getattr(a, name) for a in alone])
        got = getattr(joint, name)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, err_msg=name)
        else:
            assert got.tolist() == want.tolist(), name
    for k in BOUNDS:
        np.testing.assert_allclose(joint.attribution_s[k], np.concatenate([a.attribution_s[k] for a in alone]),
                                   rtol=1e-12, atol=1e-18, err_msg=k)
    assert not joint.feasible[-1]  # the memory check is per row too


def test_joined_keeps_the_padded_parts_routing_and_refuses_two():
    padded = Batch.make(decode_seqs=[256.0], decode_ctx=[900.0], pad_seqs=[56.0], pad_routing="one_token")
    plain = Batch.make(decode_seqs=[8.0], decode_ctx=[1500.0], prefill_tokens=[512.0])
    j = Batch.joined(plain, padded)
    assert j.pad_routing == "one_token" and j.pad_seqs.tolist() == [0.0, 56.0]
    masked = Batch.make(decode_seqs=[64.0], decode_ctx=[900.0], pad_seqs=[8.0], pad_routing="masked")
    with pytest.raises(ValueError, match="different routings"):
        Batch.joined(padded, masked)


def test_padded_rows_price_alike_alone_and_joined():
    m, p = load_model("deepseek-r1"), load_pricer("b200")
    lay, pr = Layout(tp=8, ep=8), get_precision("fp8")
    padded = Batch.make(decode_seqs=[256.0, 512.0], decode_ctx=[900.0, 2000.0], pad_seqs=[56.0, 0.0],
                        pad_routing="one_token")
    alone = [step_cost(m, p, lay, pr, b) for b in (DECODE, padded, MIXED)]
    joint = step_cost(m, p, lay, pr, Batch.joined(DECODE, padded, MIXED))
    np.testing.assert_allclose(joint.step_time_s, np.concatenate([a.step_time_s for a in alone]), rtol=1e-12)
