"""scripts/adp_rank_imbalance.py: the busiest attention-DP rank's expected batch under each assignment rule."""

from __future__ import annotations

import math

import pytest
from script_module import load_script

imb = load_script("adp_rank_imbalance")


def test_expected_max_of_standard_normals_closed_forms():
    # one rank: E[X] = 0; two: E[max] = 1/sqrt(pi); three: 3/(2 sqrt(pi)) (order statistics of the normal)
    assert imb.expected_max_std_normal(1) == pytest.approx(0.0, abs=1e-9)
    assert imb.expected_max_std_normal(2) == pytest.approx(1 / math.sqrt(math.pi), rel=1e-6)
    assert imb.expected_max_std_normal(3) == pytest.approx(3 / (2 * math.sqrt(math.pi)), rel=1e-6)


def test_busiest_rank_random_by_hand():
    # 2 ranks, 50 each on average: sigma = sqrt(50 * 1/2) = 5; 50 + 5/sqrt(pi) = 52.821
    assert imb.busiest_rank_batch(50, 2, "random") == pytest.approx(50 + 5 / math.sqrt(math.pi), rel=1e-6)
    # 3 ranks, 12 each: sigma = sqrt(12 * 2/3) = sqrt(8); 12 + sqrt(8) * 3/(2 sqrt(pi)) = 14.394
    assert imb.busiest_rank_batch(12, 3, "random") == pytest.approx(12 + math.sqrt(8) * 1.5 / math.sqrt(math.pi),
                                                                   rel=1e-6)
    # one rank holds everything: no spread
    assert imb.busiest_rank_batch(7, 1, "random") == pytest.approx(7.0)


def test_busiest_rank_balanced_is_within_one_request():
    assert imb.busiest_rank_batch(10, 8, "balanced") == 11.0
    assert imb.busiest_rank_batch(10, 1, "balanced") == 10.0


def test_bad_inputs_name_the_field():
    with pytest.raises(ValueError, match="rule = 'fifo': unknown. Fix: use 'balanced' or 'random'"):
        imb.busiest_rank_batch(10, 8, "fifo")
    with pytest.raises(ValueError, match="ranks = 0: the attention-DP width must be >= 1"):
        imb.busiest_rank_batch(10, 0, "random")
    with pytest.raises(ValueError, match="ranks = 0: the attention-DP width must be >= 1"):
        imb.busiest_rank_batch(10, 0, "balanced")
    with pytest.raises(ValueError, match="mean_per_rank = -1: must be >= 0"):
        imb.busiest_rank_batch(-1, 8, "random")
