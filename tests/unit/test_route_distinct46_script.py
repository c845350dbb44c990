"""scripts/route_distinct46.py: distinct experts under uniform and skewed routing, where a popularity's saving peaks,
and the experts a gap would need saved (docs/gap_aic_itl.md, round 46, routeskew46). Expected values by hand from
the closed forms, not the script's output."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import route_distinct46 as s  # noqa: E402


def test_uniform_distinct_experts_by_hand():
    # 256·(1 − (31/32)^64): (31/32)^64 = exp(64·ln(31/32)) = 0.13109 → 222.44
    assert float(s.distinct_experts(64, 256, 8)[()]) == pytest.approx(256 * (1 - 0.131090), abs=0.01)
    # one token touches exactly its k experts
    assert float(s.distinct_experts(1, 256, 8)[()]) == pytest.approx(8.0)


def test_skew_never_touches_more_than_uniform():
    b = np.array([1.0, 2, 4, 8, 16, 32, 64, 128, 512, 4096])
    for sigma in (0.1, 0.5, 1.03, 2.0):
        assert (s.skew_saving(b, 256, 8, sigma) >= -1e-9).all()
    for sigma in (0.1, 0.5, 1.03):  # k·p_e < 1 for every expert: one token touches its k experts whatever the skew
        assert s.skew_saving(b, 256, 8, sigma)[0] == pytest.approx(0.0, abs=1e-9)


def test_small_skew_peak_solves_its_condition():
    # DeepSeek top-8 of 256: c = −ln(31/32) = 0.0317487; c·B² − (2 + c)·B + 1 = 0 → B = 63.50
    b = s.peak_batch_small_skew(256, 8)
    assert b == pytest.approx(63.50, abs=0.01)
    c = -math.log(31 / 32)
    assert 1 / b + 1 / (b - 1) == pytest.approx(c, rel=1e-9)
    # Qwen3 top-8 of 128: c = −ln(15/16) = 0.064539 → 31.50
    assert s.peak_batch_small_skew(128, 8) == pytest.approx(31.50, abs=0.01)


def test_numeric_peak_meets_the_small_skew_limit():
    # at a small σ the second-order form holds: the integer argmax sits next to 63.5
    assert s.peak_batch(256, 8, 0.05) in (63, 64)
    # a stronger skew peaks later, never earlier (cold experts keep saving at larger batches)
    assert s.peak_batch(256, 8, 1.03) >= 64


def test_peak_rejects_a_topk_with_nothing_to_save():
    with pytest.raises(ValueError, match="top_k"):
        s.peak_batch_small_skew(8, 8)
    with pytest.raises(ValueError, match="top_k"):
        s.peak_batch_small_skew(8, 0)


def test_implied_saved_experts():
    full = float(s.skew_saving(32, 256, 8, 1.03)[()])
    assert s.implied_saved_experts(2.0, 2.0, 32) == pytest.approx(full)
    assert s.implied_saved_experts(-1.0, 2.0, 32) == pytest.approx(-full / 2)
    assert math.isnan(s.implied_saved_experts(1.0, 0.0, 32))


def _table(rows):
    import pandas as pd

    base = dict(
        moe_dtype="fp8_block",
        hidden_size=7168,
        inter_size=2048,
        num_experts=256,
        topk=8,
        moe_tp_size=8,
        moe_ep_size=1,
        distribution="balanced",
    )
    return pd.DataFrame([{**base, **r} for r in rows])


def test_kernel_rows_take_the_shape_and_median():
    t = _table(
        [
            {"num_tokens": 8, "latency": 0.1},
            {"num_tokens": 8, "latency": 0.3},  # repeated row: median 0.2 ms
            {"num_tokens": 2, "latency": 0.05},
            {"num_tokens": 4, "latency": 9.0, "moe_tp_size": 4},  # another layout: left out
            {"num_tokens": 4, "latency": 9.0, "distribution": "power_law_1.01"},
        ]
    )
    tok, lat = s.kernel_rows(t)
    assert tok.tolist() == [2.0, 8.0]
    assert lat.tolist() == pytest.approx([0.05e-3, 0.2e-3])
    with pytest.raises(ValueError, match="power_law_1.2"):
        s.kernel_rows(t, "power_law_1.2")


def test_read_at_is_log_log():
    tok, lat = np.array([2.0, 8.0]), np.array([1e-4, 4e-4])
    # 4 tokens: the geometric midpoint of 2 and 8, so the geometric mean of the latencies, 2e-4
    assert s.read_at(tok, lat, [4.0])[0] == pytest.approx(2e-4)
    assert s.read_at(tok, lat, [1.0, 100.0]).tolist() == pytest.approx([1e-4, 4e-4])  # clamped at the ends
