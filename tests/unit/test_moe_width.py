"""The routed experts' per-rank width term at MoE TP > 1 (cost/moe_width.py, fit/moe_width.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from jalapeno.cost.moe_width import width_factor, width_terms
from jalapeno.cost.expert_ops import add_routed_experts
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import load_pricer
from jalapeno.errors import SpecError
from jalapeno.fit.moe_width import fit_width, width_pairs
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.stacks import _stack, get_stack


def test_factor_by_hand():
    # c = 512, p = 1: overhead per MAC 512/256 = 2 at width 256, 512/2048 = 0.25 at full width 2048
    assert float(width_factor(256.0, 8, 1e15, 64.0, 512.0, 1.0)) == pytest.approx(1 + 2 - 0.25)
    # at m = half_rows the term is half on: 1 + 1.75 · 64/128
    assert float(width_factor(256.0, 8, 64.0, 64.0, 512.0, 1.0)) == pytest.approx(1.875)
    assert float(width_factor(2048.0, 1, 500.0, 64.0, 512.0, 1.0)) == 1.0  # MoE TP 1: the calibrated form
    # p = 0.5: sqrt(400/100) − sqrt(400/400) = 1; m = 3·half → 3/4 of it
    assert float(width_factor(100.0, 4, 30.0, 10.0, 400.0, 0.5)) == pytest.approx(1.75)


def _pairs_table(c: float, p: float, half: float) -> pd.DataFrame:
    rows = []
    for h, inter, e, k in [(4096, 1536, 128, 8), (2048, 768, 128, 8), (7168, 2048, 256, 8)]:
        for tokens in (4096, 8192, 16384):
            m = tokens * k / e
            for tp in (2, 4, 8):
                w = inter / tp
                ratio = 1 + ((c / w) ** p - (c / inter) ** p) * m / (m + half)  # the docstring's form, by hand
                base = dict(kernel_source="deepgemm", moe_dtype="fp8_block", distribution="balanced", num_tokens=tokens,
                            hidden_size=h, inter_size=inter, num_experts=e, topk=k)
                rows += [{**base, "moe_tp_size": tp, "moe_ep_size": 1, "latency": ratio},
                         {**base, "moe_tp_size": 1, "moe_ep_size": tp, "latency": 1.0}]
        rows.append({**base, "num_tokens": 1024, "moe_tp_size": 8, "moe_ep_size": 1, "latency": 99.0})  # decode: dropped
    return pd.DataFrame(rows)


def test_pairs_and_fit_recover_a_known_term_and_hold_deepseek_out():
    pairs = width_pairs(_pairs_table(600.0, 0.9, 50.0), "deepgemm", "fp8_block")
    assert len(pairs) == 27 and pairs.num_tokens.min() == 4096
    ds = pairs[pairs.held_out]
    assert len(ds) == 9 and set(ds.hidden_size) == {7168}
    row = pairs[(pairs.hidden_size == 4096) & (pairs.k == 4) & (pairs.num_tokens == 8192)].iloc[0]
    assert row.w == 384 and row.m == 512
    c, p, rep = fit_width(pairs, 50.0)
    assert c == pytest.approx(600.0, rel=1e-3) and p == pytest.approx(0.9, rel=1e-3)
    assert rep["fit"]["rows"] == 18 and rep["held_out_deepseek_shape"]["median_ape"] < 1e-4


def test_fit_needs_pairs():
    pairs = width_pairs(_pairs_table(600.0, 0.9, 50.0), "deepgemm", "fp8_block").head(3)
    with pytest.raises(ValueError, match="pairs: 3 fitted"):
        fit_width(pairs, 50.0)


def _moe_op(split: float, key: str = "", load: float = 8192 * 8 / 8):
    ob = OpBuilder(1)
    h, full = 7168.0, 2048.0
    inter = full / split
    # DeepSeek-R1 at 8,192 tokens: EP 1 (all 256 experts on the rank) at MoE TP ``split``, else EP 8
    touched = 256.0 if split > 1 else 32.0
    a = 8192 * 8 if split > 1 else load
    add_routed_experts(ob, "moe", "fp8", a, touched, h, inter, 3 * h * inter, 1.0, 1.0, weights=key, split=split)
    return ob.build()[0]


def test_trtllm_stack_prices_the_term_on_compute_only():
    on = load_pricer("b200", stack=get_stack("trtllm"))
    off = load_pricer("b200", stack=get_stack("sglang"))
    assert on.efficiency.moe_width_term and not off.efficiency.moe_width_term
    ops = _moe_op(8)
    t_on, t_off = on.op_times(ops), off.op_times(ops)
    c, p = width_terms("b200")["fp8"]
    m, half = 256.0, on.efficiency.moe_half("fp8")  # 65,536 assignments over 256 experts
    expect = 1 + ((c / 256) ** p - (c / 2048) ** p) * m / (m + half)
    assert float(t_on.compute_s[0, 0] / off.with_efficiency(on.efficiency.with_overrides(
        {"moe_width_term": False})).op_times(ops).compute_s[0, 0]) == pytest.approx(expect)
    assert float(t_on.memory_s[0, 0]) == pytest.approx(float(t_off.memory_s[0, 0]))
    # MoE TP 1 and MXFP4-stored experts (other kernels) keep the calibrated form
    one = _moe_op(1)
    assert float(on.op_times(one).compute_s[0, 0]) == pytest.approx(
        float(on.with_efficiency(on.efficiency.with_overrides({"moe_width_term": False})).op_times(one).compute_s[0, 0]))
    mx = _moe_op(8, "mxfp4")
    assert float(on.op_times(mx).compute_s[0, 0]) == pytest.approx(
        float(on.with_efficiency(on.efficiency.with_overrides({"moe_width_term": False})).op_times(mx).compute_s[0, 0]))


def test_the_term_is_fitted_for_the_systems_it_prices():
    for system in ("h100", "h200", "b200", "gb200-nvl72", "b300", "gb300-nvl72"):
        assert {"bf16", "fp8"} <= set(width_terms(system))
    # Blackwell Ultra (round 42, aicgb42): fitted on its own tables, NVFP4 included, as B200 / GB200
    for system in ("b200", "gb200-nvl72", "b300", "gb300-nvl72"):
        assert set(width_terms(system)) == {"bf16", "fp8", "fp4"}
    assert dict(width_terms("mi300x")) == {}
    # a narrower expert always costs more per MAC (c > 0, p > 0)
    for (c, p) in width_terms("b200").values():
        assert float(width_factor(256.0, 8, 1e9, 1.0, c, p)) > float(width_factor(512.0, 4, 1e9, 1.0, c, p)) > 1


def test_bad_inputs_name_the_field():
    with pytest.raises(SpecError, match="moe_width_term: must be true or false"):
        DEFAULT_EFFICIENCY.with_overrides({"moe_width_term": 1})
    with pytest.raises(SpecError, match="stack x.moe_width_term: must be true or false"):
        _stack({"name": "x", "label": "x", "source": "s", "moe_width_term": "yes"}, 0, {})


def test_gb300_trtllm_prices_its_own_term():
    # Until round 42 GB300 had no entry, so its TensorRT-LLM rows at MoE TP > 1 priced the full-width form (factor 1).
    # DeepSeek-R1 FP8 at MoE TP8 EP1, 8,192 tokens: w = 2048/8 = 256, m = 8192·8/256 = 256 rows per expert.
    on = load_pricer("gb300-nvl72", stack=get_stack("trtllm"))
    off = on.with_efficiency(on.efficiency.with_overrides({"moe_width_term": False}))
    c, p = width_terms("gb300-nvl72")["fp8"]
    m, half = 256.0, on.efficiency.moe_half("fp8")
    expect = 1 + ((c / 256) ** p - (c / 2048) ** p) * m / (m + half)
    ops = _moe_op(8)
    assert expect > 1.5  # the fitted term is large at an eighth of the width (c ~ 780, p ~ 0.93)
    assert float(on.op_times(ops).compute_s[0, 0] / off.op_times(ops).compute_s[0, 0]) == pytest.approx(expect)
