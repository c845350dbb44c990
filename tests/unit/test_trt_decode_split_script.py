"""scripts/trt_decode_split.py: the log-log table interpolation the per-op comparison reads tables with."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

split = load_script("trt_decode_split")


def test_one_column_is_read_on_log_axes():
    # 100 us at 1 token, 400 us at 16: on log axes the value doubles per doubling of tokens
    # (log-linear slope 0.5), so 4 tokens read 100 * 4**0.5 = 200 us
    s = pd.Series([100.0, 400.0], index=[1, 16])
    assert split.interp_loglog(s, 4.0) == pytest.approx(200.0)
    # clamped at the edges, not extrapolated
    assert split.interp_loglog(s, 0.5) == pytest.approx(100.0)
    assert split.interp_loglog(s, 64.0) == pytest.approx(400.0)


def test_grid_is_bilinear_in_logs():
    # corners 10, 40 (batch 1, 4 at context 100) and 20, 80 (at context 10,000): batch 2, context 1,000
    # sits half way on both log axes: exp of the mean of the four logs = (10 * 40 * 20 * 80) ** 0.25 = 28.28
    g = pd.DataFrame([[10.0, 20.0], [40.0, 80.0]], index=[1, 4], columns=[100, 10_000])
    assert split.interp_loglog(g, 2.0, 1_000.0) == pytest.approx((10 * 40 * 20 * 80) ** 0.25)
    # on a grid node the node's value
    assert split.interp_loglog(g, 4.0, 100.0) == pytest.approx(40.0)


def test_a_one_point_slice_is_named():
    with pytest.raises(ValueError, match="grid needs two index values"):
        split.interp_loglog(pd.Series([1.0], index=[1]), 1.0)
