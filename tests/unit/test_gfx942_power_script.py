"""scripts/gfx942_power.py: the power-cap ratio of a request split, checked by hand."""

from __future__ import annotations

import pytest
from script_module import load_script

power = load_script("gfx942_power")


def test_ratios_are_amds_clocks_and_the_datasheet_hbm():
    # ROCm blog "Measuring Max-Achievable FLOPs - Part 2", Table 1: FP8 median clock 1,230 / 1,464 MHz
    assert power.CLOCK_RATIO == pytest.approx(1464 / 1230)
    assert power.HBM_RATIO == pytest.approx(6.0 / 5.3)


def test_power_cap_ratio_by_hand():
    split = {"compute": 0.6, "dense": 0.5, "hbm_bandwidth": 0.3, "overhead": 0.1, "link": 0.0}
    dense, allc = power.power_cap_ratios(split)
    # dense only: 1 / (0.5 / 1.1902439 + 0.1 + 0.3 / 1.1320755 + 0.1) = 1 / 0.8850820 = 1.129839
    assert dense == pytest.approx(1.129839, rel=1e-5)
    # all compute: 1 / (0.6 / 1.1902439 + 0.3 / 1.1320755 + 0.1) = 1 / 0.8690984 = 1.150618
    assert allc == pytest.approx(1.150618, rel=1e-5)


def test_power_cap_ratio_is_bounded_by_the_clock_ratio():
    # a run wholly clock-limited moves by the clock ratio and no more; one with no compute by HBM at most
    assert power.power_cap_ratios(
        {"compute": 1.0, "dense": 1.0, "hbm_bandwidth": 0.0, "overhead": 0.0, "link": 0.0}
    ) == pytest.approx((1464 / 1230,) * 2)
    only_hbm = power.power_cap_ratios(
        {"compute": 0.0, "dense": 0.0, "hbm_bandwidth": 0.5, "overhead": 0.5, "link": 0.0}
    )
    # 1 / (0.5 / 1.1320755 + 0.5) = 1 / 0.9416667 = 1.061947
    assert only_hbm == pytest.approx((1.061947,) * 2, rel=1e-5)


def test_split_prices_mi300x_at_the_calibration_clock(monkeypatch):
    # the hypothesis's ratios apply the clock to an unthrottled split: with cost/roofline.POWER_CLOCK on (round 41)
    # MI300X's own pricer already slows its dense ops by 1,464 / 1,230, which the split must not carry
    from jalapeno.cost import roofline

    args = ("mi300x", "deepseek-r1", "fp8", "sglang-rocm@0.5.9", 8, 1, 8192, 64, 8, 1)
    on = power.request_split(*args)
    monkeypatch.setattr(roofline, "POWER_CLOCK", False)
    off = power.request_split(*args)
    assert on["dense"] > 0 and on["compute"] == pytest.approx(off["compute"], rel=1e-9)
    assert power.DENSE_UTILISATION == roofline.DENSE_UTILISATION == 0.25
