"""scripts/atom_gptoss_floor43.py: ATOM's gpt-oss rows 42 / 49 — the front-end inventory, the two-row ask and the TPOT
floor (docs/gap_large_batch_decode.md, round 43). Expected values are arithmetic by hand and aiter's published row."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import atom_gptoss_floor43 as s  # noqa: E402


def test_padded_expert_bytes_by_hand():
    # gate+up (2 x 3072) and down (3072) of 3072 wide, 4 bits + one 8-bit scale per 32 elements = 4.25 bits
    assert s.PADDED_EXPERT_BYTES == pytest.approx(3 * 3072 * 3072 * 4.25 / 8)
    assert s.PADDED_EXPERT_BYTES == pytest.approx(15_040_512)


def test_aiter_read_rate_by_hand():
    # aiter gptoss_a16w4_tuned_fmoe.csv @c2b69b9b87, inter 3072, 128 tokens: 319.4357 us for 128 experts
    moe39 = s._moe39()
    rate = s.EXPERTS * s.PADDED_EXPERT_BYTES / moe39.a16w4_layer_s(128.0)[0]
    assert rate / 1e12 == pytest.approx(128 * 15_040_512 / 319.4357e-6 / 1e12, rel=1e-9)
    assert 6.0 < rate / 1e12 < 6.1  # below MI355X's 8 TB/s peak, as a measured kernel must be


def test_stall_by_hand():
    # 127.5 users, 921.6 mean output tokens: 0.1383 prompts a decode step; a 13.75 ms prompt step -> 1.902 ms
    assert s.stall_floor_s(127.5, 921.6, 0.01375) == pytest.approx(127.5 / 921.6 * 0.01375)
    assert s.stall_floor_s(127.5, 921.6, 0.01375) * 1e3 == pytest.approx(1.902, abs=1e-3)
    with pytest.raises(ValueError, match="positive"):
        s.stall_floor_s(0.0, 921.6, 0.01)


def test_front_end_solve_by_hand():
    # rooms 21.3 ms at 921.6 tokens and 73.1 ms at 7,372.8: b = 51.8 / 6,451.2 = 8.03 us, a = 21.3 - 7.40 = 13.9 ms
    a, b = s.front_end_solve((921.6, 7372.8), (0.0213, 0.0731))
    assert b * 1e6 == pytest.approx(51.8 / 6451.2 * 1e3, rel=1e-9)
    assert a * 1e3 == pytest.approx(21.3 - 921.6 * 51.8 / 6451.2, rel=1e-9)
    with pytest.raises(ValueError, match="different"):
        s.front_end_solve((1000.0, 1000.0), (0.02, 0.03))


def test_closed_loop_one_user_by_hand():
    # one user: every prompt finds an idle engine, so TTFT = front end + one prompt step (20 + 50 ms) and each
    # request decodes alone at the decode step (10 ms a token, no prompt step in between)
    tpot, ttft, per = s.closed_loop(0.01, lambda n: 0.05, 100, 100, 1, 0.02)
    assert tpot == pytest.approx(0.01) and ttft == pytest.approx(0.07) and per == pytest.approx(1.0)


def test_closed_loop_stall_lies_between_bounds():
    # 8 users, 10 ms decode steps, 40 ms prompt steps: the users wait out the others' prompts, so the median TPOT is
    # above the bare step; outputs are 80-100 tokens, so in one request's life each of the 7 others finishes at most
    # 2 requests: at most 14 prompt steps over at least 79 token intervals
    tpot, _, per = s.closed_loop(0.01, lambda n: 0.04, 100, 100, 8, 0.0)
    assert 0.01 < tpot < 0.01 + 14 * 0.04 / 79
    assert per >= 1.0
    with pytest.raises(ValueError, match="decode_s"):
        s.closed_loop(0.0, lambda n: 0.04, 100, 100, 8, 0.0)
