"""scripts/disagg_ttft_sim49.py: the excess wait beyond the simulator (s and measured decode steps) and the per-band
medians, by hand; bad input refused."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

ds = load_script("disagg_ttft_sim49")


def test_excess_wait_by_hand():
    # GB300 cfg505 8k/1k C 1,024: measured 3.833 s, simulated 1.461 s, TPOT 18.5 ms -> 2.372 s = 128.2 steps
    e, steps = ds.excess_wait([3.833, 0.20], [1.461, 0.25], [0.0185, 0.010])
    assert e.tolist() == pytest.approx([2.372, -0.05])
    assert steps.tolist() == pytest.approx([2.372 / 0.0185, -5.0])


def test_excess_wait_refuses_bad_input():
    with pytest.raises(ValueError, match="TPOT"):
        ds.excess_wait([1.0], [0.5], [0.0])
    with pytest.raises(ValueError, match="shapes"):
        ds.excess_wait([1.0, 2.0], [0.5], [0.01])


def test_band_table_by_hand():
    rows = pd.DataFrame(
        {
            "concurrency": [4, 8, 32, 48, 96, 2048, 4096],
            "err_model": [-0.2, 0.2, -0.2, -0.4, -0.3, 0.3, 0.2],
            "err_sim": [-0.4, 0.0, -0.5, -0.4, -0.4, -0.6, -0.7],
            "excess_s": [0.2, 0.0, 0.2, 0.1, 0.2, 0.7, 1.7],
            "excess_steps": [20.0, 0.0, 20.0, 10.0, 20.0, 40.0, 80.0],
        }
    )
    t = ds.band_table(rows)
    # bands C<=8 (2 rows), C<=64 (2), C<=512 (1), C>512 (2), in load order
    assert list(t.index.astype(str)) == ["C<=8", "C<=64", "C<=512", "C>512"]
    assert t.n.tolist() == [2, 2, 1, 2]
    # C<=8: median of -20, +20 = 0; sim median of -40, 0 = -20
    assert t.loc["C<=8", "err_model"] == pytest.approx(0.0)
    assert t.loc["C<=8", "err_sim"] == pytest.approx(-20.0)
    # C<=64: model median of -20, -40 = -30; excess median of 0.2, 0.1 = 0.15 s, 15 steps
    assert t.loc["C<=64", "err_model"] == pytest.approx(-30.0)
    assert t.loc["C<=64", "excess_s"] == pytest.approx(0.15)
    assert t.loc["C<=64", "excess_steps"] == pytest.approx(15.0)
    # C>512: sim median of -60, -70 = -65; steps median of 40, 80 = 60
    assert t.loc["C>512", "err_sim"] == pytest.approx(-65.0)
    assert t.loc["C>512", "excess_steps"] == pytest.approx(60.0)


def test_band_table_leaves_empty_bands_out():
    rows = pd.DataFrame(
        {"concurrency": [600], "err_model": [0.1], "err_sim": [-0.1], "excess_s": [0.3], "excess_steps": [3.0]}
    )
    t = ds.band_table(rows)
    assert list(t.index.astype(str)) == ["C>512"] and t.n.tolist() == [1]
