"""scripts/mi325x_decode_linear42.py: touched experts, the sweep's least squares and the per-touched-expert cost of
aiter's rows (docs/gap_large_batch_decode.md, round 42). Expected values are worked by hand or are published rows
(src/jalapeno/data/validation/inferencex_points.csv, aiter PR #3951's row), not the script's output."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jalapeno.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import mi325x_decode_linear42 as s  # noqa: E402


def test_sweep_rows_are_the_published_runs():
    rows = [s.points_row(i) for i in s.SWEEP_ROWS]
    assert [r["conc"] for r in rows] == ["4", "8", "16", "32", "64"]
    assert (rows[0]["hardware"], rows[0]["tpot_ms"], rows[-1]["tpot_ms"]) == ("MI325X", "18.53", "66.55")


def test_touched_experts_uniform_by_hand():
    assert s.touched_experts(1) == pytest.approx(8.0)  # one token touches its top-8
    # two tokens: 256 (1 - (248/256)^2) = 256 x 0.0615234 = 15.75
    assert s.touched_experts(2) == pytest.approx(15.75)
    assert s.touched_experts(0) == 0.0


def test_skewed_routing_touches_fewer_experts_but_one_token_still_eight():
    # the hottest expert of sigma 1.03 is ~11.6x the mean (specs/routing.py): 8 x 11.6 / 256 < 1, so one token: 8
    assert s.touched_experts(1, sigma=1.03) == pytest.approx(8.0)
    assert s.touched_experts(64, sigma=1.03) < s.touched_experts(64) - 20


def test_decompose_recovers_a_line_and_an_hbm_term():
    c = np.array([4.0, 8, 16, 32, 64])
    coef, res = s.decompose(c, 10.0 + 0.5 * c)
    assert coef == pytest.approx([10.0, 0.5]) and np.abs(res).max() < 1e-9
    gb = np.array([1.0, 2.0, 3.5, 5.0, 6.0])
    coef, res = s.decompose(c, 10.0 + gb / 4.0 + 0.5 * c, gb, hbm_tbs=4.0)  # 4 TB/s: 0.25 ms a GB
    assert coef == pytest.approx([10.0, 0.5]) and np.abs(res).max() < 1e-9


def test_per_touched_expert_of_the_mi325x_one_token_row_by_hand():
    # aiter PR #3951, cu_num 304: 1 token, 33 experts, top-9, 99.21 us -> 9 experts touched, 11.023 us each;
    # 3 x 7168 x 2048 = 44,040,192 B / 11.023 us = 3.995 TB/s
    row = pd.DataFrame({"token": [1], "expert": [33], "topk": [9], "us": [99.21]})
    out = s.per_touched_expert_us(row, 3 * 7168 * 2048)
    assert out.us_per_expert.iloc[0] == pytest.approx(11.0233, abs=1e-3)
    assert out.tb_s.iloc[0] == pytest.approx(3.9952, abs=1e-3)


def test_bad_inputs_name_the_field():
    with pytest.raises(SpecError, match="tokens"):
        s.touched_experts(-1)
    with pytest.raises(SpecError, match="top_k"):
        s.touched_experts(4, top_k=0)
    with pytest.raises(SpecError, match="gb"):
        s.decompose(np.arange(5.0), np.arange(5.0), hbm_tbs=4.0)
    with pytest.raises(SpecError, match="tpot_ms"):
        s.decompose(np.arange(2.0), np.arange(2.0))
    with pytest.raises(SpecError, match="row_id"):
        s.points_row(1)
