"""scripts/mlperf_ttft_tail.py: the implied prefill rate and its tail, by hand.

One prompt length (M/D/1): 1,000-token prompts at 1 per s, a fixed 0.1 s beside the queue. At a prefill rate
of 4,000 tok/s the service is 0.25 s, ρ = 0.25, the P-K mean wait λ·S²/(2(1 − ρ)) = 0.0625/1.5 = 0.041667 s,
so the mean TTFT is 0.25 + 0.1 + 0.041667 = 0.391667 s; asked for that mean, the script's bisection returns
4,000 tok/s back.
"""

from __future__ import annotations

import numpy as np
import pytest
from script_module import load_script

tail = load_script("mlperf_ttft_tail")


def test_queue_by_hand():
    rho, mean, p99 = tail.queue_ttft(1.0, np.array([1000.0]), 4000.0, np.array([0.1]))
    assert rho == pytest.approx(0.25)
    assert mean == pytest.approx(0.25 + 0.1 + 0.0625 / 1.5)
    assert p99 > mean


def test_implied_rate_inverts_the_mean():
    r = tail.implied_rate(1.0, np.array([1000.0]), np.array([0.1]), 0.25 + 0.1 + 0.0625 / 1.5)
    assert r == pytest.approx(4000.0, rel=1e-6)
    assert np.isnan(tail.implied_rate(1.0, np.array([1000.0]), np.array([0.5]), 0.4))  # the fixed part alone is over


def test_rows_read_the_six_runs():
    got = tail.rows()
    assert len(got) == 6
    for r in got:
        assert 0 < r["rho"] < 1 and r["p99"] > r["ttft_mean"]
    b200 = next(r for r in got if r["key"] == "NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Server")
    # 1,240.42 output tok/s over 653 tokens a sample, two TP4 instances (mlperf_points.csv, the config)
    assert b200["rate"] == pytest.approx(1240.42 / 653 / 2)
