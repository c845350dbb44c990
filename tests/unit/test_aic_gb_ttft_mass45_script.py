"""scripts/aic_gb_ttft_mass45.py: the engine x mode x ISL x band groups and their error mass, the rows at the median
rank, the GB300/GB200 twin pairing and ratios, the release family and the burst share a row asks for, by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

ms = load_script("aic_gb_ttft_mass45")

DEP = "disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]"
DEP_NOTE = "disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32 · DP dispatch rr) [fp4]"


def _rows(spec):
    """Held-out style rows from (framework, isl, concurrency, error) tuples."""
    return pd.DataFrame(
        [{"framework": f, "mode": "disagg", "isl": i, "concurrency": c, "error": e} for f, i, c, e in spec]
    )


def test_groups_mass_and_counts_by_hand():
    d = _rows(
        [
            ("sglang 0.5.8", 1024, 2048, 0.40),
            ("sglang 0.5.8", 1024, 4096, 0.30),
            ("sglang 0.5.8", 1024, 8192, -0.70),
            ("trtllm 0.8.1", 1024, 12, -0.40),
            ("trtllm 0.8.1", 1024, 24, -0.10),
        ]
    )
    g = ms.groups(d)
    big = g.loc[("sglang", "disagg", 1024, "C>512")]
    # 3 rows, all outside 20%: 2 over, 1 under; the system has 4 rows outside -> mass 75%
    assert (big.n, big.within, big.over, big.under) == (3, 0, 2, 1)
    assert big.mass == pytest.approx(75.0)
    assert big.med_abs == pytest.approx(40.0) and big["med"] == pytest.approx(30.0)
    # fixing it leaves |e| 0, 0, 0, 0.4, 0.1 -> median 0
    assert big.med_if_fixed == pytest.approx(0.0)
    small = g.loc[("trtllm", "disagg", 1024, "C<=64")]
    assert (small.n, small.within, small.under) == (2, 1, 1) and small.mass == pytest.approx(25.0)
    # fixing the TRT group: |e| 0.4, 0.3, 0.7, 0, 0 -> median 0.3
    assert small.med_if_fixed == pytest.approx(30.0)
    assert ms.largest_group(g) == ("sglang", "disagg", 1024, "C>512")


def test_groups_print_in_load_order():
    d = _rows([("sglang x", 1024, c, 0.1) for c in (4096, 4, 100, 32)])
    assert list(ms.groups(d).index.get_level_values("c_band")) == ["C<=8", "C<=64", "C<=512", "C>512"]


def test_median_rows_are_the_middle_ranks():
    d = pd.DataFrame({"id": list("abcdef"), "error": [0.05, -0.6, 0.2, -0.3, 0.9, 0.1]})
    # |e| sorted: a .05, f .1, c .2, d .3, b .6, e .9; median rank 3 -> k = 1 gives ranks 2..3: c, d
    assert list(ms.median_rows(d, k=1).id) == ["c", "d"]


def test_release_family():
    assert ms.release_family("sglang 0.5.8.post1") == ms.release_family("sglang 0.5.8") == "sglang 0.5.8"
    assert ms.release_family("sglang 0.5.5.post2") != ms.release_family("sglang 0.5.8")


def test_share_needed_by_hand():
    # model 3.0 s with a 2.4 s burst at share 0.6: steady 0.6 s, late 4 s; measured 1.6 s -> (1.6 - 0.6) / 4 = 0.25
    assert float(ms.share_needed(1.6, 3.0, 2.4, 0.6)) == pytest.approx(0.25)
    assert pd.isna(ms.share_needed(1.0, 1.0, 0.0, 0.35))


def _table(tmp_path, rows):
    base = {
        "source": "aiconfigurator",
        "model": "deepseek-r1",
        "precision": "fp4",
        "isl": 1024,
        "osl": 1024,
        "split": "held_out",
        "quality": None,
        "metric": "ttft_s",
    }
    path = tmp_path / "all.csv"
    pd.DataFrame([{**base, **r} for r in rows]).to_csv(path, index=False)
    return str(path)


def test_twins_pair_and_ratio_by_hand(tmp_path):
    path = _table(
        tmp_path,
        [
            {
                "id": "a",
                "system": "gb200-nvl72",
                "framework": "sglang 0.5.8",
                "concurrency": 2048,
                "deployment": DEP,
                "measured": 1.2,
                "predicted": 1.8,
                "error": 0.5,
            },
            {
                "id": "b",
                "system": "gb300-nvl72",
                "framework": "sglang 0.5.8.post1",
                "concurrency": 2048,
                "deployment": DEP_NOTE,
                "measured": 1.0,
                "predicted": 1.62,
                "error": 0.62,
            },
            # another concurrency: no twin
            {
                "id": "c",
                "system": "gb300-nvl72",
                "framework": "sglang 0.5.8.post1",
                "concurrency": 4096,
                "deployment": DEP,
                "measured": 2.0,
                "predicted": 2.0,
                "error": 0.0,
            },
            # a flagged GB200 row at 4096: not paired
            {
                "id": "d",
                "system": "gb200-nvl72",
                "framework": "sglang 0.5.8",
                "concurrency": 4096,
                "deployment": DEP,
                "measured": 9.0,
                "predicted": 2.0,
                "error": -0.78,
                "quality": "rule A",
            },
        ],
    )
    m = ms.twins(path)
    assert len(m) == 1
    r = m.iloc[0]
    assert r.meas_ratio == pytest.approx(1.0 / 1.2) and r.model_ratio == pytest.approx(1.62 / 1.8)
    assert bool(r.same_release)


def test_twins_refuses_a_table_without_split(tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame([{"source": "aiconfigurator", "metric": "ttft_s"}]).to_csv(path, index=False)
    with pytest.raises(SystemExit, match="missing column"):
        ms.twins(str(path))
