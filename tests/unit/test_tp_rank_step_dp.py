"""The per-TP-rank step cost over TensorRT-LLM's attention-DP ranks (Efficiency.tp_rank_step_dp, cost/step.step_overhead)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost, step_overhead
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import _stack, get_stack


def test_overhead_by_hand():
    eff = replace(DEFAULT_EFFICIENCY, step_overhead_s=0.3e-3, tp_rank_step_s=62.5e-6)
    on = replace(eff, tp_rank_step_dp=True)
    # attention DP8: off, no TP rank beyond the first (0.3 ms); on, 7 ranks beyond it: 0.3 + 7 x 0.0625 = 0.7375 ms
    assert step_overhead(eff, Layout(dp=8, ep=8)) == pytest.approx(0.3e-3)
    assert step_overhead(on, Layout(dp=8, ep=8)) == pytest.approx(0.7375e-3)
    # attention TP2 x DP4: off, 1 rank (0.3625 ms); on, the 8 ranks of the group (0.7375 ms)
    assert step_overhead(eff, Layout(tp=2, dp=4, ep=8)) == pytest.approx(0.3625e-3)
    assert step_overhead(on, Layout(tp=2, dp=4, ep=8)) == pytest.approx(0.7375e-3)
    # attention TP8 (dp 1): the switch changes nothing
    assert step_overhead(on, Layout(tp=8)) == step_overhead(eff, Layout(tp=8)) == pytest.approx(0.7375e-3)


def test_profiles_and_default():
    assert DEFAULT_EFFICIENCY.tp_rank_step_dp is False
    for name in ("trtllm", "trtllm@1.1.0rc2.post2", "dynamo-trtllm"):
        assert get_stack(name).tp_rank_step_dp is True, name
        assert "tp_rank_step_dp" in get_stack(name).sources
    assert get_stack("vllm").tp_rank_step_dp is None and get_stack("sglang").tp_rank_step_dp is None
    assert load_pricer("b200", stack=get_stack("trtllm")).efficiency.tp_rank_step_dp is True


def test_step_pays_it_once_per_step():
    # a DeepSeek-R1 DEP8 decode step on B200 under the trtllm profile, with and without the switch: the
    # difference is (8 − 1) x the profile's tp_rank_step_s, whatever the batch
    pr = load_pricer("b200", stack=get_stack("trtllm"))
    off = pr.with_efficiency(replace(pr.efficiency, tp_rank_step_dp=False))
    model, prec, lay = load_model("deepseek-r1"), get_precision("fp4"), Layout(dp=8, ep=8)
    b = Batch.make(decode_seqs=np.array([64.0, 256.0]), decode_ctx=1536.0)
    d = step_cost(model, pr, lay, prec, b).step_time_s - step_cost(model, off, lay, prec, b).step_time_s
    assert pr.efficiency.tp_rank_step_s > 0
    np.testing.assert_allclose(d, 7 * pr.efficiency.tp_rank_step_s, rtol=1e-9)


def test_bad_inputs_name_the_field():
    with pytest.raises(SpecError, match="tp_rank_step_dp: must be true or false"):
        DEFAULT_EFFICIENCY.with_overrides({"tp_rank_step_dp": 1})
    with pytest.raises(SpecError, match="stack x.tp_rank_step_dp: must be true or false"):
        _stack({"name": "x", "label": "x", "source": "s", "tp_rank_step_dp": "yes"}, 0, {})
