"""scripts/qwen3_fa3_splits45.py: FA3's static split bound and dynamic split (docs/gap_aic_itl.md, round 45).
Expected values worked by hand from the heuristics the script's docstring cites, not the script's output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

s = load_script("qwen3_fa3_splits45")


def test_static_bound_by_hand():
    # h_k 2: efficiency 2s/132 for s <= 66, best 1.0 at s = 66; smallest s with 2s/132 >= 0.85 is 57 (56.1 -> 57)
    assert s.static_splits(2, 40960, 1) == 57
    # h_k 1: s/132 up to s = 128 (cap), best 128/132; 0.85 x 128/132 x 132 = 108.8 -> 109
    assert s.static_splits(1, 40960, 1) == 109
    # 4 n-blocks or fewer never split: 512 tokens / kBlockN 128 (BF16) = 4
    assert s.static_splits(1, 512, 2) == 1
    # m-blocks filling 80% of the SMs: 106 KV heads x 1 m-block >= 105.6 -> 1
    assert s.static_splits(106, 40960, 1) == 1
    with pytest.raises(ValueError, match="h_k"):
        s.static_splits(0, 40960, 1)


def test_dynamic_split_by_hand():
    # C 4 at 2,000 tokens, FP8 (kBlockN 160): 13 blocks each, 52 in all; ceil(52 x 1.1 x 2 / 132) = 1 a SM -> 13
    assert s.dynamic_splits(np.full(4, 2000), 2, 57, 1).tolist() == [13] * 4
    # C 9 at 5,000 tokens, h_k 1: 32 blocks each, 288; ceil(288 x 1.1 / 132) = 3 a SM -> ceil(32 / 3) = 11
    assert s.dynamic_splits(np.full(9, 5000), 1, 109, 1).tolist() == [11] * 9
    # the static bound caps it: one sequence of 40,960 tokens, h_k 1: 256 blocks, ceil(256 x 1.1 / 132) = 3 -> 86
    assert s.dynamic_splits(np.array([40960]), 1, 50, 1).tolist() == [50]
    with pytest.raises(ValueError, match="empty batch"):
        s.dynamic_splits(np.array([]), 1, 8, 1)


def test_row_table_context_terms():
    d = pd.DataFrame({"tp": [2], "c": [2.0], "isl": [4000], "osl": [2000], "ctx": [5000.0], "gap_ms": [7.0]})
    t = s.row_table(d).iloc[0]
    # 32 blocks each, 64 in all; ceil(64 x 1.1 x 2 / 132) = 2 a SM -> 16 splits; 2 x 2 x 16 = 64 CTAs
    assert (t.h_k, t.static, t.split, t.ctas) == (2, 57, 16, 64)
    # 5,000 x 256 B x 94 layers over 4.8e12 / 132 B/s = 3.309 ms unsplit; /16 split
    assert t.unsplit_ms == pytest.approx(5000 * 256 * 94 / (4.8e12 / 132) * 1e3)
    assert t.split_ms == pytest.approx(t.unsplit_ms / 16)


def test_within_slopes_by_hand():
    # one (tp 4, isl 1000, c 9) group on gap = 1 + 0.002 L (2 us a token); an OSL-100 row and a lone group left out
    d = pd.DataFrame(
        {
            "tp": [4, 4, 4, 4, 2],
            "isl": [1000, 1000, 1000, 1000, 4000],
            "c": [9.0, 9.0, 9.0, 9.0, 2.0],
            "osl": [500, 1000, 2000, 100, 2000],
            "ctx": [1250.0, 1500.0, 2000.0, 1050.0, 5000.0],
            "gap_ms": [3.5, 4.0, 5.0, 99.0, 7.0],
        }
    )
    t = s.within_slopes(d)
    assert len(t) == 1
    r = t.iloc[0]
    assert (r.tp, r.isl, r.c, r.n) == (4, 1000, 9, 3)
    assert r.slope_us == pytest.approx(2.0)
    # the rank's KV a token of L: 9 x 1 KV head x 256 B x 94 = 216,576 B, over 2 us: 108.3 GB/s
    assert r.kv_rate_gbps == pytest.approx(9 * 256 * 94 / 2e-6 / 1e9)
