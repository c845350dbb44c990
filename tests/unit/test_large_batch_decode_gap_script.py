"""scripts/large_batch_decode_gap.py: the measured steps it derives (by hand from the published figures) and the
ordering of its model steps."""

from __future__ import annotations

import math

import pytest
from script_module import load_script

gap = load_script("large_batch_decode_gap")


def test_blog_steps_are_the_published_per_user_rates():
    b200, h200 = gap.BLOG
    # 11.7967 tok/s/user -> 84.77 ms a token; 17.5825 req/s x 84.77 ms = 1.4905 prompts a step
    assert b200[-1] == pytest.approx(0.08477, rel=1e-4) and b200[-2] == pytest.approx(1.4905, rel=1e-4)
    assert h200[-1] == pytest.approx(0.09533, rel=1e-4) and h200[-2] == pytest.approx(0.4952, rel=1e-3)


def test_mlperf_server_batch_is_littles_law():
    cases = {c[0]: c for c in gap.mlperf_cases()}
    srv = cases["MLPerf B200 Server ~155/rank"]
    # published per chip 2324.0 output tok/s (18,592.24 / 8) x mean TPOT 66.46 ms = 154.5 decoding per chip
    assert srv[3] == pytest.approx(2324.0 * 0.06646, rel=2e-3)
    off = cases["MLPerf B200 Offline 512/rank"]
    assert off[-1] == pytest.approx(512 / 4172.4, rel=2e-3)  # 33,379 / 8 = 4,172.4 output tok/s per chip


def test_model_steps_are_ordered_and_the_hot_share_is_poisson():
    m = gap.model_steps("b200", "fp4", 384, 2048, 1024, 1.49)
    assert m["decode"] < m["even"] < m["hot"]  # a prompt on one rank costs more than the same prompt spread
    assert m["q"] == pytest.approx(1 - math.exp(-1.49))
