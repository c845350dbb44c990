"""Attention-DP prefill (issue 18, adpprefill13): an engine with attention DP runs a whole prompt on
one rank, so the step lasts as long as the rank holding the most prompts, while the routed experts
(EP) see every rank's tokens. Expected values are written out from DeepSeek-R1's config.json
(hidden 7,168, 128 heads of v_head_dim 128, 61 layers, top-8 of 256 experts), not read from the code."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jalapeno.cost.ops import build_step_ops, busiest_rank_prompts
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sim.step_time import StepTimer
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import get_precision

H, HEADS, V_DIM, LAYERS = 7168, 128, 128, 61


@pytest.fixture(scope="module")
def r1():
    return load_model("deepseek-r1"), load_system("b200").chip, get_precision("fp8")


def _tables(r1, layout, tokens, seqs, decode=0.0):
    m, chip, p = r1
    b = Batch.make(decode_seqs=decode, decode_ctx=1000.0 if decode else 0.0, prefill_tokens=tokens,
                   prefill_seqs=seqs)
    return build_step_ops(m, chip, layout, p, b, Efficiency())


def _op(tables, name, field="flop"):
    ops, colls = tables
    t = ops if name in ops.name else colls
    return float(getattr(t, field)[t.name.index(name), 0])


def test_busiest_rank_prompts_by_hand():
    # n <= 1: the step's prompt whole on one rank; 1 <= n <= dp: one prompt (ceil(n/dp) = 1);
    # n = 16 over 8 ranks: two each; dp = 1: every prompt on the one rank
    got = busiest_rank_prompts(np.array([0.0, 0.25, 1.0, 3.0, 8.0, 16.0]), 8)
    assert got.tolist() == [0.0, 0.25, 1.0, 1.0, 1.0, 2.0]
    assert busiest_rank_prompts(np.array([3.0]), 1).tolist() == [3.0]


def test_one_prompt_on_dep8_runs_its_attention_side_on_one_rank(r1):
    """One 8,192-token prompt on DEP8 costs the attention-side ops of one TP1 chip: o_proj
    2·8192·(128·128)·7168 FLOPs per layer over 61 layers, not an eighth of it."""
    dep8 = _tables(r1, Layout(dp=8, ep=8), 8192.0, 1.0)
    tp1 = _tables(r1, Layout(), 8192.0, 1.0)
    want = 2 * 8192 * HEADS * V_DIM * H * LAYERS
    assert _op(dep8, "attn.o_proj") == pytest.approx(want, rel=1e-12)
    for name in ("attn.qkv_a_proj", "attn.kv_b_proj", "attn.mla_prefill", "dense_ffn.gate_up",
                 "moe.shared_expert.down", "moe.router"):
        assert _op(dep8, name) == pytest.approx(_op(tp1, name), rel=1e-12), name
    assert _op(dep8, "layer.elementwise", "act_bytes") == pytest.approx(_op(tp1, "layer.elementwise", "act_bytes"))


def test_prompts_spread_one_per_rank_and_experts_see_the_whole_instance(r1):
    """8 prompts of 1,024 on DEP8: one per rank (o_proj at 1,024 rows); 16 of 512: two per rank,
    the mean rank's 1,024 tokens. The routed experts take the same 8,192 tokens in every case."""
    one = _tables(r1, Layout(dp=8, ep=8), 8192.0, 1.0)
    eight = _tables(r1, Layout(dp=8, ep=8), 8192.0, 8.0)
    sixteen = _tables(r1, Layout(dp=8, ep=8), 8192.0, 16.0)
    want = 2 * 1024 * HEADS * V_DIM * H * LAYERS
    assert _op(eight, "attn.o_proj") == pytest.approx(want, rel=1e-12)
    assert _op(sixteen, "attn.o_proj") == pytest.approx(want, rel=1e-12)
    assert _op(one, "moe.experts") == pytest.approx(_op(eight, "moe.experts"), rel=1e-12)
    assert _op(one, "moe.experts", "weight_bytes") == pytest.approx(_op(eight, "moe.experts", "weight_bytes"))


def test_the_dispatch_waits_for_the_rank_sending_the_prompt(r1):
    """The rank holding the 8,192-token prompt sends each token once per rank holding one of its
    8 experts: 8·(1 − (7/8)^8) copies of 7,168 FP8 bytes (DeepEP normal dispatch), once per layer."""
    one = _tables(r1, Layout(dp=8, ep=8), 8192.0, 1.0)
    copies = 8 * (1 - (7 / 8) ** 8)
    assert _op(one, "moe.dispatch", "bytes") == pytest.approx(8192 * copies * H * 1.0, rel=1e-9)
    assert _op(one, "moe.combine", "bytes") == pytest.approx(8192 * copies * H * 2.0, rel=1e-9)


def test_decode_rows_stay_the_mean_ranks(r1):
    """Decode keeps b/dp rows per rank: 64 sequences on DEP8 give o_proj 2·8·16384·7168·61."""
    dec = _tables(r1, Layout(dp=8, ep=8), 0.0, 0.0, decode=64.0)
    assert _op(dec, "attn.o_proj") == pytest.approx(2 * 8 * HEADS * V_DIM * H * LAYERS, rel=1e-12)


def test_simulator_prices_the_same_busiest_rank_step():
    """The simulator's step timer goes through step_cost: a lone 8,192-token prompt on DEP8 costs
    what step_cost gives it (8,192 is not a power of 1.03: the timer's bucket is priced), and more
    than the same tokens as eight prompts, one per rank."""
    m, pr, p = load_model("deepseek-r1"), load_pricer("b200"), get_precision("fp8")
    lay = Layout(dp=8, ep=8)
    timer = StepTimer(m, pr, lay, p)
    toks = math.exp(round(math.log(8192) / math.log(1.03)) * math.log(1.03))
    sc = step_cost(m, pr, lay, p, Batch.make(prefill_tokens=np.array([toks, toks]), prefill_seqs=np.array([1.0, 8.0])))
    assert timer(0, 0, 8192, 0, 1) == pytest.approx(float(sc.step_time_s[0]), rel=1e-12)
    assert timer(0, 0, 8192, 0, 8) == pytest.approx(float(sc.step_time_s[1]), rel=1e-12)
    assert sc.step_time_s[0] > 2 * sc.step_time_s[1]


def test_full_budget_prefill_step_fills_every_rank():
    """A DEP8 prefill worker at an instance budget of 16,384 tokens (2,048 per rank) chunks 8,192-token
    prompts at 2,048 per rank, so its full-budget step is eight 2,048-token chunks, one per rank, as
    for 2,048-token prompts: the same throughput within 2% (neither has a cached prefix at that step;
    the workloads' lengths still differ in the step's memory terms), where one whole 8,192-token prompt
    on a rank would give a quarter of it."""
    from jalapeno.serve.disagg import prefill_perf
    from jalapeno.specs.workload import Workload

    m, pr, p = load_model("deepseek-r1"), load_pricer("b200"), get_precision("fp8")
    lay = Layout(dp=8, ep=8)
    long = prefill_perf(m, pr, lay, p, Workload("8k1k", 8192, 1024, 0.8), 16384)
    short = prefill_perf(m, pr, lay, p, Workload("2k1k", 2048, 1024, 0.8), 16384)
    assert long.tokens_per_s == pytest.approx(short.tokens_per_s, rel=0.02)
