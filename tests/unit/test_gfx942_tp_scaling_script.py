"""scripts/gfx942_tp_scaling.py: the TP1 -> TP2 split of the gfx942 gpt-oss rows, checked by hand."""

from __future__ import annotations

import pytest
from script_module import load_script

tps = load_script("gfx942_tp_scaling")


def test_rows_are_the_like_for_like_gptoss_rows():
    # InferenceX points 51/53 (1k/1k C 64: MI325X TP2, MI300X TP1) and 44/45 (8k/1k C 64, TP1 both)
    assert tps.ROWS == {"mi325x_tp2_1k": "inferencex_points:51", "mi300x_tp1_1k": "inferencex_points:53",
                        "mi325x_tp1_8k": "inferencex_points:44", "mi300x_tp1_8k": "inferencex_points:45"}


def test_scaling_by_hand_on_the_published_tpots():
    # published TPOTs, ms: row 51 13.8, row 53 32.2, row 44 43.5, row 45 49.0
    s = tps.scaling(13.8e-3, 32.2e-3, 43.5e-3, 49.0e-3)
    assert s["chip"] == pytest.approx(49.0 / 43.5)                    # 1.12644
    assert s["t1"] == pytest.approx(32.2e-3 * 43.5 / 49.0)            # 28.586 ms
    assert s["tp"] == pytest.approx(28.5857e-3 / 13.8e-3, rel=1e-4)   # 2.0714
    assert s["f_plus_2l"] == pytest.approx(27.6e-3 - 28.5857e-3, rel=1e-3)  # -0.986 ms: no F, L >= 0 fits
    assert s["chip_at_zero"] == pytest.approx(32.2 / 27.6)            # 1.16667


def test_a_tp_linear_step_gives_its_own_fixed_costs_back():
    # T(1) = F + V, T(2) = F + V / 2 + L with F = 2 ms, V = 30 ms, L = 1 ms, chip ratio 1 (same chip):
    # 2 T(2) - T(1) = 2 (2 + 15 + 1) - 32 = 4 ms = F + 2 L
    s = tps.scaling(18e-3, 32e-3, 40e-3, 40e-3)
    assert s["f_plus_2l"] == pytest.approx(4e-3)
    assert s["tp"] == pytest.approx(32 / 18)
