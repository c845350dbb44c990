"""cost/roofline.power_clock and Chip.dense_clock_ratio (round 41, mi3xx41): a board held below the calibrated clock
by its power limit runs its dense compute-bound ops slower, and nothing else. Expected values: AMD's published
median clocks under the max-achievable dense FP8 GEMM (ROCm blog "Measuring Max-Achievable FLOPs - Part 2",
Table 1: MI300X 1,230 MHz, MI325X 1,464 MHz), not the code's output."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost import roofline
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.cli.system_opts import system_pricer

BLOG_RATIO = 1230.0 / 1464.0  # MI300X / MI325X median MAF clock


def _ops(system: str, decode: int, prefill: int) -> dict:
    model = load_model("deepseek-r1")
    sc = step_cost(
        model,
        system_pricer(system, "calibrated", [], "sglang-rocm@0.5.19", "roofline"),
        for_model(Layout(tp=8, dp=1, ep=1), model),
        get_precision("fp8"),
        Batch.make(decode_seqs=decode, decode_ctx=2048 if decode else 0, prefill_tokens=prefill),
    )
    return {r["op"]: r for r in sc.op_rows(0)}


def test_catalog_ratio_is_the_blog_clocks():
    assert load_system("mi300x").chip.dense_clock_ratio == pytest.approx(BLOG_RATIO, abs=5e-4)
    assert load_system("mi325x").chip.dense_clock_ratio == 1.0  # the calibration's own clock (named assumption)
    assert load_system("h200").chip.dense_clock_ratio == 1.0


def test_dense_prefill_attention_is_slower_by_the_clock_ratio(monkeypatch):
    # an 8,192-token prompt's MLA prefill attention runs above 25% of the BF16 peak: MI300X / MI325X compute = 1.190
    monkeypatch.setattr(roofline, "POWER_CLOCK", True)
    a, b = _ops("mi300x", 0, 8192), _ops("mi325x", 0, 8192)
    assert a["attn.mla_prefill"]["compute_s"] / b["attn.mla_prefill"]["compute_s"] == pytest.approx(
        1464 / 1230, rel=1e-3
    )


def test_few_row_decode_gemm_is_not_throttled(monkeypatch):
    monkeypatch.setattr(roofline, "POWER_CLOCK", True)
    # 8 decode rows: the few-row rule holds the GEMM far under 25% of peak, so both chips price it alike
    a, b = _ops("mi300x", 8, 0), _ops("mi325x", 8, 0)
    assert a["attn.q_b_proj"]["compute_s"] == pytest.approx(b["attn.q_b_proj"]["compute_s"], rel=1e-5)


def test_switch_off_prices_both_chips_alike(monkeypatch):
    monkeypatch.setattr(roofline, "POWER_CLOCK", False)
    a, b = _ops("mi300x", 0, 8192), _ops("mi325x", 0, 8192)
    assert a["attn.mla_prefill"]["compute_s"] == pytest.approx(b["attn.mla_prefill"]["compute_s"], rel=1e-5)


def test_power_clock_by_hand():
    out = roofline.power_clock(np.array([[2.0, 3.0], [4.0, 5.0]]), np.array([[0.25, 0.2], [0.9, 0.0]]), 0.8)
    assert out.tolist() == [[2.5, 3.0], [5.0, 5.0]]  # 2 / 0.8, below threshold, 4 / 0.8, below threshold


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.2])
def test_power_clock_refuses_a_ratio_outside_0_1(bad):
    with pytest.raises(SpecError, match="chip.dense_clock_ratio"):
        roofline.power_clock(np.ones((1, 1)), np.ones((1, 1)), bad)


def test_file_value_above_one_is_refused_naming_the_key():
    with pytest.raises(SpecError, match="chip.dense_clock_ratio"):
        load_system("mi300x", (("chip.dense_clock_ratio", 1464.0),))  # MHz given where a ratio is asked
