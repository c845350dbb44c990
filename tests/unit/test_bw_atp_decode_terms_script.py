"""scripts/bw_atp_decode_terms.py (round 32, gbtp32): the line fit by hand, and the checkable claims of its doc
section on a priced attention-TP decode step — the per-layer all-reduce carries B x hidden x 2 bytes (a bf16
hidden state per sequence: 14 kB a call at one sequence), and from B = 1 to B = 16 the routed experts, not the
all-reduce, the attention or the host cost, are what the model's step grows by."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack

sp = load_script("bw_atp_decode_terms")


def test_line_by_hand():
    # y = 2 + 0.5 x through three points: intercept 2, slope 0.5
    a, s = sp.line(pd.Series([1.0, 4.0, 8.0]), pd.Series([2.5, 4.0, 6.0]))
    assert (a, s) == (pytest.approx(2.0), pytest.approx(0.5))
    # one distinct x: no line
    assert all(math.isnan(v) for v in sp.line(pd.Series([2.0, 2.0]), pd.Series([1.0, 3.0])))


def _steps():
    pr = load_pricer("gb300-nvl72", stack=get_stack("trtllm"))
    model, prec, lay = load_model("deepseek-r1"), get_precision("fp8"), Layout(tp=8, ep=8)
    return [step_cost(model, pr, lay, prec, Batch.make(decode_seqs=np.array([b]), decode_ctx=1500.0)) for b in (1.0, 16.0)]


def test_all_reduce_message_by_hand():
    # DeepSeek-R1 hidden size 7168 (config.json), bf16: 7168 x 2 = 14,336 bytes a sequence a call
    for sc, b in zip(_steps(), (1.0, 16.0)):
        ar = [c for c in sc.collective_rows(0) if c["collective"] == "attn.all_reduce"]
        assert ar and ar[0]["bytes_per_call"] == pytest.approx(b * 7168 * 2)
        assert ar[0]["calls"] == 61  # one after each layer's attention, 61 layers


def test_step_growth_is_the_routed_experts():
    one, sixteen = _steps()
    t1, t16 = sp.terms(one), sp.terms(sixteen)
    grow = float(sixteen.step_time_s[0] - one.step_time_s[0])
    assert grow > 0
    # uniform top-8 of 256 experts over EP8 (32 a rank): ~1 expert a rank touched at B = 1, ~13 at B = 16
    # (32 x (1 - (1 - 8/256)^16) = 12.8), so the expert bytes — and the step — grow several-fold
    assert (t16["experts"] - t1["experts"]) / grow > 0.8
    assert (t16["ar"] - t1["ar"]) / grow < 0.05
    assert (t16["attn"] - t1["attn"]) / grow < 0.15


def test_host_cost_is_the_models_per_rank_cost():
    # the trtllm profile pays tp_rank_step_s per rank of attention TP x DP (tp_rank_step_dp, data/stacks.toml): a DP8
    # pool 7 x, as a TP8 one; vllm pays it per attention-TP rank only: DP8 nothing, TP8 7 x (by hand from the values)
    trt = load_pricer("gb300-nvl72", stack=get_stack("trtllm")).efficiency
    vllm = load_pricer("gb300-nvl72", stack=get_stack("vllm")).efficiency
    assert trt.tp_rank_step_dp and not vllm.tp_rank_step_dp and trt.tp_rank_step_s > 0 and vllm.tp_rank_step_s > 0
    assert sp.host_s(trt, Layout(dp=8, ep=8)) == pytest.approx(7 * trt.tp_rank_step_s)
    assert sp.host_s(trt, Layout(tp=8, ep=8)) == pytest.approx(7 * trt.tp_rank_step_s)
    assert sp.host_s(vllm, Layout(dp=8, ep=8)) == pytest.approx(0.0, abs=1e-15)
    assert sp.host_s(vllm, Layout(tp=4, ep=4)) == pytest.approx(3 * vllm.tp_rank_step_s)
