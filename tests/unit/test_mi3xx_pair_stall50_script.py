"""scripts/mi3xx_pair_stall50.py: the MI300X / MI325X same-image pairs with the prompts' stall taken out
(docs/gap_large_batch_decode.md, round 50). Expected values are arithmetic by hand and the published rows, not the
script's output."""

from __future__ import annotations

import pytest

from jalapeno.errors import SpecError
from script_module import load_script

s = load_script("mi3xx_pair_stall50")
H = 6.0 / 5.3  # MI325X / MI300X datasheet HBM, 1.132075


def test_hbm_split_by_hand():
    # 56.1 - 52.6 = 3.5 ms = (h - 1) H -> H = 3.5 / 0.132075 = 26.50 ms, F = 52.6 - 26.50 = 26.10 ms
    hbm, fixed = s.hbm_split(52.6, 56.1)
    assert hbm == pytest.approx(26.50, abs=0.01)
    assert fixed == pytest.approx(26.10, abs=0.01)
    # no difference between the chips: nothing scales with HBM
    assert s.hbm_split(40.0, 40.0) == (0.0, 40.0)
    with pytest.raises(SpecError, match="HBM ratio"):
        s.hbm_split(1.0, 2.0, h=1.0)


def test_stall_scales_with_the_measured_over_modelled_ttft():
    # 15.8 ms x 661.5 / 591 = 15.8 x 1.11929 = 17.68 ms
    assert s.stall_at_ttft(15.8, 661.5, 591.0) == pytest.approx(17.685, abs=0.001)
    with pytest.raises(SpecError, match="ttft"):
        s.stall_at_ttft(15.8, 0.0, 591.0)


def test_efficiency_and_clock_needed_by_hand():
    hbm, fixed = 26.5, 26.1
    model_ratio = (H * hbm + fixed) / (hbm + fixed)  # (30.000 + 26.1) / 52.6 = 1.0665
    # the model's own ratio needs no per-chip term
    assert s.hbm_efficiency_needed(model_ratio, hbm, fixed) == pytest.approx(1.0)
    assert s.clock_needed(model_ratio, hbm, fixed) == pytest.approx(1.0)
    # the measured 8k TPOT ratio 85.3 / 74.8 = 1.14037: e = (1.14037 x 52.6 - 26.1) / (1.132075 x 26.5)
    # = (59.983 - 26.1) / 30.000 = 1.1294; c = (59.983 - 30.000) / 26.1 = 1.1488
    r = 85.3 / 74.8
    assert s.hbm_efficiency_needed(r, hbm, fixed) == pytest.approx(1.1294, abs=0.0005)
    assert s.clock_needed(r, hbm, fixed) == pytest.approx(1.1488, abs=0.0005)
    with pytest.raises(SpecError, match="HBM-scaled"):
        s.hbm_efficiency_needed(r, 0.0, fixed)
    with pytest.raises(SpecError, match="chip-independent"):
        s.clock_needed(r, hbm, 0.0)


def test_implied_step_readings():
    assert s.implied_step("whole", 85.3, 15.8, 661.5, 591.0) == 85.3
    assert s.implied_step("equal_stall", 85.3, 15.8, 661.5, 591.0) == pytest.approx(69.5)
    # 85.3 - 17.685 = 67.615
    assert s.implied_step("ttft_stall", 85.3, 15.8, 661.5, 591.0) == pytest.approx(67.615, abs=0.001)
    with pytest.raises(SpecError, match="reading"):
        s.implied_step("median", 85.3, 15.8, 661.5, 591.0)


def test_pairs_are_same_run_rows_on_the_two_chips():
    pts = s._points()
    for a, b, _ in s.PAIRS:
        pa, pb = pts[a], pts[b]
        assert (pa.system, pb.system) == ("mi325x", "mi300x")
        assert (pa.model, pa.isl, pa.osl, pa.concurrency) == (pb.model, pb.isl, pb.osl, pb.concurrency)
        assert pa.deployment.label == pb.deployment.label
    # the published medians (inferencex_points.csv): DeepSeek-R1 8k/1k C 64 TPOT 74.8 / 85.3 ms, TTFT 489.8 / 661.5 ms
    assert pts[26].measured["tpot_s"] == pytest.approx(0.0748)
    assert pts[28].measured["ttft_s"] == pytest.approx(0.6615)


def test_served_step_is_slower_on_mi300x_and_partly_hbm_bound():
    pts = s._points()
    a, b = s.served(pts[34]), s.served(pts[34], "mi300x")
    assert b["step"] > a["step"]
    hbm, fixed = s.hbm_split(a["step"], b["step"])
    # a DeepSeek-R1 TP8 decode step at C 64 streams its routed experts: a real part of it is HBM-bound, not all
    assert 0.2 < hbm / a["step"] < 0.9
    assert fixed > 0
    assert a["tpot"] == pytest.approx(a["step"] + a["stall"])
