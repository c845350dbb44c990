"""Expert popularity, the busiest EP rank and EPLB (specs/routing.py, deploy/eplb.py, cost/moe.py).

Expected values come from published measurements (TensorRT-LLM tech blog 4, Table 1: DeepSeek-R1,
EP32) or are computed by hand in the comments, never from the code's output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from jalapeno.cost.moe import busiest_rank_assignments, experts_touched_on_rank
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.eplb import busiest_rank_share, contiguous_max_share, eplb_rank_shares
from jalapeno.deploy.layout import Layout, validate_layout
from jalapeno.deploy.memory_fit import weight_bytes_per_chip
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.specs.routing import with_routing
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.routing import MEASURED_ROUTING_SIGMA, expert_popularity

# TensorRT-LLM tech blog 4, Table 1 (DeepSeek-R1, 32 GB200, EP32, 8 experts per rank, no EPLB /
# EPLB with 9 slots per rank): per expert mean 128, std 164.1, imbalance (max-mean)/mean 10.948;
# per rank mean 1024, imbalance 1.564 (no EPLB) and 0.109 (EPLB, 32 redundant experts)
EXPERT_MEAN, EXPERT_STD, EXPERT_IMB = 128.0, 164.1, 10.948
RANK_MEAN, RANK_IMB_NONE, RANK_IMB_EPLB = 1024.0, 1.564, 0.109


def _old_binomial(tokens, k, ep):
    """The pre-popularity formula, written out: A/ep + sqrt(A·(1/ep)(1-1/ep))·sqrt(2 ln ep)."""
    a = tokens * k
    return min(a, a / ep + math.sqrt(a * (1 / ep) * (1 - 1 / ep)) * math.sqrt(2 * math.log(ep)))


def test_measured_sigma_reproduces_the_per_expert_spread():
    # popularity CV = sqrt(CV_measured^2 - 1/mean) (binomial sampling removed) = 1.279
    cv = math.sqrt((EXPERT_STD / EXPERT_MEAN) ** 2 - 1 / EXPERT_MEAN)
    p = expert_popularity(256, MEASURED_ROUTING_SIGMA)
    assert p.sum() == pytest.approx(1.0)
    assert p.std() / p.mean() == pytest.approx(cv, rel=0.01)


def test_held_out_hottest_expert_and_busiest_rank_match_the_measurement():
    p = expert_popularity(256, MEASURED_ROUTING_SIGMA)
    assert p[0] * 256 == pytest.approx(1 + EXPERT_IMB, rel=0.10)
    # decode, EP32: A = 32 ranks x 1024 assignments; busiest rank / mean rank
    a_total = 32 * RANK_MEAN
    none = busiest_rank_assignments(a_total / 8, 8, 32, share=busiest_rank_share(256, MEASURED_ROUTING_SIGMA, 32, None))
    eplb = busiest_rank_assignments(a_total / 8, 8, 32, share=busiest_rank_share(256, MEASURED_ROUTING_SIGMA, 32, 32))
    assert float(none) / RANK_MEAN == pytest.approx(1 + RANK_IMB_NONE, rel=0.15)
    assert float(eplb) / RANK_MEAN == pytest.approx(1 + RANK_IMB_EPLB, rel=0.05)


@pytest.mark.parametrize("tokens,k,ep", [(1, 8, 8), (128, 8, 8), (4096, 8, 32), (16, 4, 4), (3e5, 8, 64)])
def test_uniform_without_eplb_recovers_the_binomial_result_exactly(tokens, k, ep):
    share = busiest_rank_share(256, 0.0, ep, None)
    assert share == 1 / ep
    assert float(busiest_rank_assignments(tokens, k, ep, share=share)) == pytest.approx(_old_binomial(tokens, k, ep),
                                                                                        rel=1e-12)
    # EPLB placement alone (R = 0) on uniform routing changes nothing
    assert busiest_rank_share(256, 0.0, ep, 0) == pytest.approx(1 / ep, rel=1e-12)


def test_uniform_touched_experts_are_the_closed_form():
    # 64 tokens, 256 experts, top-8: 256·(1 − (31/32)^64) = 222.43 (docs/model.md §3.6)
    assert float(experts_touched_on_rank(64 * 8, 256, 256, 8, 1)) == pytest.approx(256 * (1 - (31 / 32) ** 64))
    # a skewed router hits its popular experts repeatedly: fewer distinct experts at the same T
    assert float(experts_touched_on_rank(64 * 8, 256, 256, 8, 1, MEASURED_ROUTING_SIGMA)) < 222.0


def test_hand_computed_busiest_rank_for_a_small_popularity_vector():
    p = [0.4, 0.3, 0.2, 0.1]
    # contiguous, ids random: the 3 pairings {.4,.3|.2,.1}, {.4,.2|.3,.1}, {.4,.1|.3,.2} are equally
    # likely, with largest rank shares .7, .6, .5: expected .6
    assert contiguous_max_share(p, 2) == pytest.approx(0.6, rel=0.02)
    # EPLB, no replicas: .4 -> r0, .3 -> r1, .2 -> r1 (.5), .1 -> r0 (.5)
    assert [float(x) for x in eplb_rank_shares(p, 2, 0)] == pytest.approx([0.5, 0.5])
    # EPLB, 2 replicas of .6 (3 x .2): slots of .2,.2,.2,.2,.1,.1 pack to .5 + .5
    assert [float(x) for x in eplb_rank_shares([0.6, 0.2, 0.1, 0.1], 2, 2)] == pytest.approx([0.5, 0.5])
    # busiest of 2 ranks at q = .6, A = 100: 60 + sqrt(100·.6·.4)·sqrt(2 ln 2) = 60 + 4.899·1.1774 = 65.77
    assert float(busiest_rank_assignments(100, 1, 2, share=0.6)) == pytest.approx(65.77, abs=0.01)


def test_memory_grows_by_the_redundant_experts():
    m, p = with_routing(load_model("deepseek-r1"), "measured"), get_precision("fp8")
    per_expert = 3 * 7168 * 2048 * p.weight_bytes("routed_experts")  # gate, up, down of one expert
    for ep, r in ((32, 32), (8, 32), (64, 64)):
        off = weight_bytes_per_chip(m, Layout(dp=ep, ep=ep), p)
        on = weight_bytes_per_chip(m, Layout(dp=ep, ep=ep, eplb=r), p)
        assert on - off == pytest.approx(r / ep * per_expert * 58, rel=1e-9)  # 58 MoE layers


def test_eplb_layout_errors_name_the_field_and_the_fix():
    m, s = with_routing(load_model("deepseek-r1"), "measured"), load_pricer("gb200-nvl72").system
    with pytest.raises(InfeasibleDeployment, match=r"eplb.*256 experts \+ 5 redundant.*--eplb 32"):
        validate_layout(Layout(dp=32, ep=32, eplb=5), m, s)
    with pytest.raises(InfeasibleDeployment, match="eplb.*EP1"):
        validate_layout(Layout(tp=8, eplb=0), m, s)
    with pytest.raises(InfeasibleDeployment, match="eplb.*>= 0"):
        validate_layout(Layout(dp=8, ep=8, eplb=-8), m, s)
    with pytest.raises(SpecError, match="--routing.*uniform, measured"):
        with_routing(m, "zipf")


def test_eplb_label_and_dict():
    lay = Layout(dp=32, ep=32, eplb=32)
    assert lay.label == "attn TP1 DP32 · MoE TP1 EP32 EPLB+32"
    assert lay.as_dict()["eplb_redundant_experts"] == 32
    assert "eplb_redundant_experts" not in Layout(dp=32, ep=32).as_dict()


def _prefill_step(pricer, layout, ep):
    m, p = with_routing(load_model("deepseek-r1"), "measured"), get_precision("fp8")
    tokens = 16384 * ep  # 16K tokens per GPU, 4K prompts (SGLang large-scale-EP blog, prefill profile)
    b = Batch.make(prefill_tokens=tokens, prefill_seqs=tokens / 4096)
    return float(step_cost(m, pricer, layout, p, b).step_time_s[0])


@pytest.mark.parametrize("system,ep", [("h100", 8), ("gb200-nvl72", 8), ("gb200-nvl72", 16), ("gb200-nvl72", 32)])
def test_published_eplb_prefill_gain_in_order_of_magnitude(system, ep):
    """Published EPLB prefill gains for DeepSeek-V3/R1 at EP8-EP32 are +17 % to +49 % (SGLang
    large-scale-EP blog: +18 % simulated-perfect vs default at EP32, 1.49x in its EPLB ablation;
    SGLang PR #5524: ~37k -> ~44.5k tok/s at EP32, +20 %). Order of magnitude: between a third of
    the low end and three times the high end of 17-34 %. H100 EP16/EP32 cross InfiniBand, where the
    model, without two-batch overlap, predicts more (+55 %, +110 %; docs/model.md §3.6)."""
    pr = load_pricer(system)
    r = -(-(256 + 32) // ep) * ep - 256
    gain = _prefill_step(pr, Layout(dp=ep, ep=ep), ep) / _prefill_step(pr, Layout(dp=ep, ep=ep, eplb=r), ep) - 1
    assert 0.17 / 3 <= gain <= 0.34 * 3
    # and a uniform router (the old model) cannot produce it
    uni = with_routing(load_model("deepseek-r1"), "uniform")
    assert busiest_rank_share(uni.moe.num_experts, uni.moe.routing_sigma, ep, None) == 1 / ep


def test_sweep_frontier_with_eplb_never_below_without():
    from jalapeno.analysis.comparison import system_frontier
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.specs.workload import get_workload

    m, pr, p, wl = with_routing(load_model("deepseek-r1"), "measured"), load_pricer("gb200-nvl72"), get_precision("fp8"), get_workload("8k1k")
    on = system_frontier(m, pr, wl, p, SweepOptions(serving="agg"), "all-in")
    off = system_frontier(m, pr, wl, p, SweepOptions(serving="agg", eplb=None), "all-in")

    x_on, y_on = np.asarray(on.x), np.asarray(on.y)
    x_off, y_off = np.asarray(off.x), np.asarray(off.y)
    assert any("EPLB" in d.label for d in on.sweep.deployments)
    for x, y in zip(x_off, y_off):  # every no-EPLB frontier point is matched or beaten
        assert y_on[x_on >= x * (1 - 1e-9)].max(initial=0) >= y * (1 - 1e-9)
