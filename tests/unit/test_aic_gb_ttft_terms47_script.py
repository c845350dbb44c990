"""scripts/aic_gb_ttft_terms47.py: the floor-and-share TTFT, the loss, the grid fit on rows built from a known floor
and share, the shipped variant and the table it writes, all by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

tt = load_script("aic_gb_ttft_terms47")


def _rows(floor: float, share: float) -> pd.DataFrame:
    """Rows whose measured TTFT is steady + floor + share·late exactly (w0 0.65, late = burst / w0)."""
    steady = np.array([0.2, 0.3, 0.5, 1.0, 2.0])
    late = np.array([0.0, 0.4, 1.0, 3.0, 8.0])
    return pd.DataFrame(
        {
            "steady_s": steady,
            "burst_s": 0.65 * late,
            "w0": 0.65,
            "measured": steady + floor + share * late,
            "split": "fit",
            "engine": "sglang",
            "concurrency": [4, 16, 256, 2048, 8192],
        },
        index=[f"r{i}" for i in range(5)],
    )


def test_ttft_at_by_hand():
    # steady 0.5 s, burst 1.3 s at the shipped 0.65 (late 2 s): floor 0.1, share 0.2 -> 0.5 + 0.1 + 0.4
    assert float(tt.ttft_at(0.5, 1.3, 0.65, 0.1, 0.2)) == pytest.approx(1.0)
    # the shipped share gives the shipped TTFT: steady + burst
    assert float(tt.ttft_at(0.5, 1.3, 0.65, 0.0, 0.65)) == pytest.approx(1.8)


def test_loss_by_hand():
    assert tt.loss([1.0, 2.0], [1.0, 2.0]) == 0.0
    assert tt.loss([1.0], [np.e]) == pytest.approx(1.0)


@pytest.mark.parametrize(("floor", "share"), [(0.1, 0.3), (0.0375, 0.6), (0.25, 0.1)])
def test_fit_recovers_a_known_floor_and_share(floor, share):
    d = _rows(floor, share)
    f, w = tt.fit(d, "both")
    assert (f, w) == pytest.approx((floor, share))
    # the share variant has no floor: a positive floor it must meet with a larger share
    assert tt.fit(d, "share")[0] == 0.0
    # the wave variant holds the share at one wave in ten
    assert tt.fit(d, "wave")[1] == pytest.approx(0.1)


def test_shipped_variant_is_the_rows_own_share():
    d = _rows(0.0, 0.65)
    f, w = tt.fit(d, "shipped")
    assert f == 0.0 and np.isnan(w)
    np.testing.assert_allclose(tt.predict(d, f, w), d.measured)


def test_apply_writes_only_the_priced_ttft_rows(tmp_path):
    d = _rows(0.1, 0.3)
    table = pd.DataFrame(
        {
            "id": ["r1", "r1", "x"],
            "metric": ["ttft_s", "tpot_s", "ttft_s"],
            "measured": [1.0, 0.02, 1.0],
            "predicted": [9.0, 0.03, 2.0],
            "error": [8.0, 0.5, 1.0],
        }
    )
    src, out = tmp_path / "t.csv", tmp_path / "o.csv"
    table.to_csv(src, index=False)
    tt.apply(d, {("sglang", "both"): (0.1, 0.3)}, str(src), str(out))
    o = pd.read_csv(out)
    # r1: steady 0.3 + 0.1 + 0.3 x 0.4 = 0.52 s against 1.0 measured
    assert o.predicted.tolist() == pytest.approx([0.52, 0.03, 2.0])
    assert o.error.tolist() == pytest.approx([-0.48, 0.5, 1.0])
