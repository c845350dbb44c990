"""scripts/dep32_decode_whatif.py: the slope fit and the layout key (values by hand)."""

from __future__ import annotations

import math
from types import SimpleNamespace as N

import pytest
from script_module import load_script

dw = load_script("dep32_decode_whatif")


def test_slope_is_ms_per_sequence():
    # 17.9 ms at 30 per rank, 32.3 ms at 164: (32.3 - 17.9) / 134 = 0.1075 ms per sequence
    assert dw.slope_ms_per_seq([30.0, 164.0], [0.0179, 0.0323]) == pytest.approx(14.4 / 134)
    assert math.isnan(dw.slope_ms_per_seq([64.0, 64.0], [0.02, 0.021]))  # one batch: no slope


def test_layout_key():
    assert dw.layout_key(N(tp=8, dp=1, ep=8)) == "D 8/1/8"
