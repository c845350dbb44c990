"""scripts/gptoss_rocm_tp_bound37.py: the gfx942 gpt-oss-120b runs that lost InferenceX's best-per-GPU selection
bound the TP scaling of both chips (docs/gap_large_batch_decode.md, round 37). Expected values are the published
rows (InferenceX-app best-gpu-for-gptoss120b-inference.mdx @2d1d3d65) and arithmetic by hand, not the script's
output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import gptoss_rocm_tp_bound37 as s  # noqa: E402


def test_the_bound_by_hand():
    # MI300X TP2 at 1k/1k C 64 lost to TP1's 3,887.2 tok/s per GPU: 64 x 0.9 x 2048 / (2 x 3887.2) = 15.174 s of
    # E2E at least; less the TP1 row's 143.6 ms TTFT, over 0.9 x 1024 - 1 = 920.6 tokens: 16.33 ms
    assert s.loser_tpot_bound_s(3887.2, 64, 1024, 1024, 2, 0.1436) == pytest.approx(
        (64 * 0.9 * 2048 / (2 * 3887.2) - 0.1436) / 920.6)
    assert s.loser_tpot_bound_s(3887.2, 64, 1024, 1024, 2, 0.1436) * 1e3 == pytest.approx(16.33, abs=0.01)
    # MI325X TP1 lost to TP2's 4,521.2 tok/s per GPU: 64 x 0.9 x 2048 / 4521.2 = 26.092 s -> 28.19 ms
    assert s.loser_tpot_bound_s(4521.2, 64, 1024, 1024, 1, 0.1436) * 1e3 == pytest.approx(28.19, abs=0.01)


def test_bad_input_names_the_fields():
    with pytest.raises(ValueError, match="best_tput_per_gpu, concurrency and gpus must be positive"):
        s.loser_tpot_bound_s(0.0, 64, 1024, 1024, 2, 0.1)


def test_the_two_chips_scale_differently_from_tp1_to_tp2():
    b = s.bounds(s._points())
    # published TPOTs: row 51 13.8 ms (MI325X TP2), row 53 32.2 ms (MI300X TP1), rows 45 / 44 49.0 / 43.5 ms
    assert b["tp1_ratio"] == pytest.approx(49.0 / 43.5)
    assert b["mi325x_tp1_min"] / 0.0138 > 2.0  # MI325X: TP1 / TP2 >= 2.04, super-linear
    assert 0.0322 / b["mi300x_tp2_min"] < 2.0  # MI300X: TP1 / TP2 <= 1.97
    # at TP2 the pair is at least 1.18 apart, where TP1 (and the HBM ratio 6.0 / 5.3 = 1.132) gives 1.126
    assert b["tp2_ratio_min"] == pytest.approx(b["mi300x_tp2_min"] / 0.0138)
    assert b["tp2_ratio_min"] > 1.18 > 6.0 / 5.3 > b["tp1_ratio"]


def test_issue_828s_two_runner_pools_disagree_on_one_image():
    # InferenceX issue #828 (run 22601920598, MI300X TP4 C 4, vLLM v0.16.0): the 1k/1k run on mi300x-amds_1 decodes
    # slower (7.46 ms) than the 8k/1k run on mi300x-cr_0 (4.74 ms) although its decode context is ~5x shorter
    (r1, tpot_1k, _), (r8, tpot_8k, _) = s.ISSUE_828["mi300x_tp1_1k"], s.ISSUE_828["mi300x_tp1_8k"]
    assert (r1, r8) == ("mi300x-amds_1", "mi300x-cr_0")
    assert tpot_1k / tpot_8k == pytest.approx(7.46 / 4.74) and tpot_1k / tpot_8k > 1.5
