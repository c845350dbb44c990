"""scripts/aic_gb_ttft_axes43.py: the concurrency bands, the pools' attention axes, the median if a group were exact,
the per-axis split and the closed-loop λ of the knee table, worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

ax = load_script("aic_gb_ttft_axes43")

DEP_DP = "disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]"
DEP_TP = "disagg P 1x(attn TP4 DP1 · MoE TP1 EP4) + D 4x(attn TP8 DP1 · MoE TP1 EP8) MTP3@0.8 [fp4]"


def test_bands_edges_inclusive():
    assert [ax.c_band(c) for c in (1, 8, 8.5, 64, 65, 512, 2048)] == [
        "C<=8",
        "C<=8",
        "C<=64",
        "C<=64",
        "C<=512",
        "C<=512",
        "C>512",
    ]


def test_pool_axes():
    assert ax.pool_axes(DEP_DP) == {"prefill_attn": "DP4", "decode_attn": "DP32", "mtp": "no MTP"}
    assert ax.pool_axes(DEP_TP) == {"prefill_attn": "TP", "decode_attn": "TP", "mtp": "MTP"}
    assert ax.pool_axes("agg attn TP8 DP1 · MoE TP1 EP8 [fp4]")["decode_attn"] == "agg"


def test_median_if_fixed_by_hand():
    # |e| = 0.5, 0.1, 0.4, 0.3, 0.2 -> median 0.3; zero the 0.5 and 0.4 rows -> 0, 0.1, 0, 0.3, 0.2 -> median 0.1
    e = [0.5, -0.1, -0.4, 0.3, 0.2]
    assert ax.median_if_fixed(e, [False] * 5) == pytest.approx(0.3)
    assert ax.median_if_fixed(e, [True, False, True, False, False]) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="one flag per row"):
        ax.median_if_fixed(e, [True])


def test_split_counts_and_med_if_fixed():
    d = pd.DataFrame({"error": [0.5, -0.1, -0.4, 0.3, 0.2], "c_band": ["C>512", "C<=8", "C<=64", "C>512", "C<=8"]})
    s = ax.split(d, "c_band")
    hi = s.loc["C>512"]
    assert (hi.n, hi.within, hi.over, hi.under) == (2, 0, 2, 0)
    # zero the two C>512 rows: |e| 0, 0.1, 0.4, 0, 0.2 -> median 0.1
    assert hi.med_if_fixed == pytest.approx(10.0)
    assert s.loc["C<=64"].under == 1 and s.loc["C<=8"].within == 2


def test_knee_lambda_by_hand(tmp_path):
    # C = 2048, TTFT 1 s, TPOT 20 ms, OSL 1001: cycle 1 + 1000 x 0.02 = 21 s, λ = 2048 / 21 = 97.52 req/s,
    # decoding λ x 20 s = 1950.5; the model's TTFT 3 s: cycle 23 s, λ 89.04
    base = {
        "source": "aiconfigurator",
        "system": "gb300-nvl72",
        "mode": "disagg",
        "id": "a",
        "quality": None,
        "deployment": DEP_DP,
        "concurrency": 2048.0,
        "osl": 1001,
        "isl": 1024,
        "split": "held_out",
        "stack": "sglang",
    }
    rows = [
        dict(base, metric="ttft_s", measured=1.0, predicted=3.0),
        dict(base, metric="tpot_s", measured=0.02, predicted=0.02),
        dict(base, id="b", concurrency=64.0, metric="ttft_s", measured=0.3, predicted=0.3),
        dict(base, id="b", concurrency=64.0, metric="tpot_s", measured=0.01, predicted=0.01),
    ]
    p = tmp_path / "all.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    k = ax.knee(str(p))
    assert list(k.index) == ["b", "a"]  # both rows of the deployment, by concurrency
    a = k.loc["a"]
    assert a.lam_meas == pytest.approx(2048 / 21) and a.lam_pred == pytest.approx(2048 / 23)
    assert a.decoding_meas == pytest.approx(2048 / 21 * 20)
    assert ax.knee(str(p), c_min=4096).empty


def test_knee_missing_column(tmp_path):
    p = tmp_path / "v.csv"
    pd.DataFrame([{"source": "aiconfigurator"}]).to_csv(p, index=False)
    with pytest.raises(SystemExit, match="missing column.*validate --json"):
        ax.knee(str(p))
