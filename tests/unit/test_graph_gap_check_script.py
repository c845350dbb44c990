"""scripts/graph_gap_check.py: the excess line and the TPOT group summary it prints (values by hand)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from script_module import load_script

gg = load_script("graph_gap_check")


def test_excess_line_through_exact_points():
    # excess = 0.5 ms + 50 us per sequence at B = 2, 6, 10: 0.6, 0.8, 1.0 ms
    a, b = gg.excess_line([2, 6, 10], [0.6e-3, 0.8e-3, 1.0e-3])
    assert a == pytest.approx(0.5e-3, rel=1e-9)
    assert b == pytest.approx(50e-6, rel=1e-9)


def test_excess_line_least_squares_by_hand():
    # x 0..3, y 1,3,2,4: Sxy = 2.25 - 0.25 - 0.25 + 2.25 = 4, Sxx = 5, b = 0.8, a = 2.5 - 0.8 * 1.5 = 1.3
    a, b = gg.excess_line([0, 1, 2, 3], [1, 3, 2, 4])
    assert (a, b) == (pytest.approx(1.3), pytest.approx(0.8))


def test_excess_line_refuses_one_load():
    with pytest.raises(ValueError, match="at least two distinct values"):
        gg.excess_line([8, 8, 8], [1e-3, 2e-3, 3e-3])


def test_tpot_groups_median_and_bias():
    rows = pd.DataFrame({
        "model": ["m"] * 4, "system": ["s"] * 4, "precision": ["fp4"] * 4, "mode": ["agg"] * 4,
        "metric": ["tpot_s", "tpot_s", "ttft_s", "tpot_s"],
        "error": [0.1, -0.3, 5.0, math.nan],
    })
    g = gg.tpot_groups(rows).loc[("m", "s", "fp4", "agg")]
    # the TTFT row and the row without an error are left out: |errors| 0.1, 0.3 -> 0.2; signed -> -0.1
    assert g.n == 2
    assert g.median_ape == pytest.approx(0.2)
    assert g.bias == pytest.approx(-0.1)
