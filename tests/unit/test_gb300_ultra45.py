"""scripts/gb300_ultra45.py: the per-score attention times, the SFU saving, the band labels and the step ratio,
against values worked by hand (no aiconfigurator tables needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import gb300_ultra45 as g  # noqa: E402


def test_per_score_decode_by_hand():
    # DeepSeek-R1 absorbed MLA decode on GB200: 2 * (576 + 512) = 2176 FLOP at 5e15 FLOP/s = 0.4352 ps; one
    # exponential at 5e12/s = 0.2 ps; 576 B shared by 128 heads x 1 query token at 8e12 B/s = 0.5625 ps
    t = g.per_score_s(576, 512, 5e15, 5e12, 576.0, 128, 8e12)
    assert t["tensor"] == pytest.approx(2176 / 5e15)
    assert t["exp"] == pytest.approx(0.2e-12)
    assert t["hbm"] == pytest.approx(576 / (128 * 8e12))
    # prefill: no HBM term (keys come from on-chip tiles)
    assert g.per_score_s(192, 128, 2.5e15, 5e12, 0.0, 0, 8e12)["hbm"] == 0.0
    with pytest.raises(ValueError, match="must be > 0"):
        g.per_score_s(576, 512, 0.0, 5e12, 576.0, 128, 8e12)


def test_exp_saving_overlapped_and_serial():
    # decode at 128 heads, 1 query token: HBM 0.5625 bounds both racks when overlapped -> 1.0; serial: GB200
    # max(0.4352 + 0.2, 0.5625) = 0.6352, GB300 max(0.4352 + 1/10.7, 0.5625) = 0.5625 -> 0.5625 / 0.6352 = 0.8856
    t200 = g.per_score_s(576, 512, 5e15, 5e12, 576.0, 128, 8e12)
    t300 = g.per_score_s(576, 512, 5e15, 10.7e12, 576.0, 128, 8e12)
    over, serial = g.exp_saving(t200, t300)
    assert over == pytest.approx(1.0)
    assert serial == pytest.approx(0.5625 / 0.6352, rel=1e-3)


def test_sfu_table_rows():
    t = g.sfu_table()
    assert len(t) == 5 and set(t.kernel) == {"decode", "prefill"}
    tp8 = t[(t.kernel == "decode") & (t.heads == 16) & (t.q_tokens == 1)].iloc[0]
    assert tp8.bound == "hbm" and tp8.ratio_serial == 1.0  # 576 / 16 / 8e12 = 4.5 ps, far above 0.64
    pre = t[t.kernel == "prefill"].iloc[0]
    # BF16 prefill: 640 FLOP / 2.5e15 = 0.256 ps; serial (0.256 + 1/10.7) / (0.256 + 0.2) = 0.766
    assert pre.tensor_ps == pytest.approx(0.256) and pre.ratio_serial == pytest.approx(0.766, abs=1e-3)


def test_band_and_step_ratio():
    assert g.band(pd.Series([16, 17, 300]), [0, 16, 256, 512]).tolist() == ["(0, 16]", "(16, 256]", "(256, 512]"]
    # half the step 10% faster, a quarter 4% faster: 1 - 0.05 - 0.01 = 0.94
    assert g.step_ratio({"a": 0.5, "b": 0.25}, {"a": 0.9, "b": 0.96}) == pytest.approx(0.94)
    with pytest.raises(ValueError, match="sum to <= 1"):
        g.step_ratio({"a": 0.8, "b": 0.3}, {"a": 1.0, "b": 1.0})
    with pytest.raises(ValueError, match="needs a ratio"):
        g.step_ratio({"a": 0.5}, {})


def test_power_clock_is_a_no_op_on_both_racks():
    rows = g.power_clock_rows().set_index("system")
    assert rows.loc["gb300-nvl72", "tdp_w"] == 1400 and rows.loc["gb200-nvl72", "tdp_w"] == 1200
    assert (rows.dense_clock_ratio == 1.0).all()
