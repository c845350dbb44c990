"""scripts/adp_server_step36.py: the MLPerf DeepSeek-R1 Server step at the runs' loads, term by term — the
resident-context spread by hand, the prompt-step share on TensorRT-LLM's balancing clock, and the claim that no
table-read term carries what is left (docs/gap_large_batch_decode.md "Round 36")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from script_module import load_script

st = load_script("adp_server_step36")
NVIDIA_B200 = "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server"


def test_context_spread_by_hand():
    # one request, ISL 100, OSL 201, two midpoints u = 0.25, 0.75: contexts 150.25 and 250.75, equal weight
    m, cv = st.context_cv(np.array([100.0]), np.array([201.0]), grid=2)
    assert m == pytest.approx(200.5) and cv == pytest.approx(50.25 / 200.5)
    # two requests: the longer output is met in proportion to its decode steps (OSL − 1: 1 and 3)
    m, _ = st.context_cv(np.array([0.0, 0.0]), np.array([2.0, 4.0]), grid=1)
    assert m == pytest.approx((1 * 1.0 + 3 * 2.0) / 4)


def test_server_terms():
    pytest.importorskip("aiconfigurator_core")
    rows = {r: st.row_terms(r) for r in st.ROWS}
    assert len(rows) == 3
    t = rows[NVIDIA_B200]
    a = t["arrivals_per_step"]
    # prompts a step: 154 a rank x 8 ranks over the mean output's 3,747 decode steps = 0.33
    assert a == pytest.approx(t["per_rank"] * 8 / 3747.0, rel=1e-6) and a == pytest.approx(0.33, abs=0.005)
    # the clock's share a/E[min(N, 8) | N ≥ 1], N ~ Poisson(9a), against a/dp; at 9a ≈ 3 within 0.3% of (1 − e^(−9a))/9
    pmf = [math.exp(k * math.log(9 * a) - 9 * a - math.lgamma(k + 1)) for k in range(200)]
    release = sum(min(k, 8) * p for k, p in enumerate(pmf)) / -math.expm1(-9 * a)
    assert t["share"] == pytest.approx(a / release, rel=1e-9)
    assert t["share"] == pytest.approx(-math.expm1(-9 * a) / 9, rel=0.003)
    assert t["share_dp"] == pytest.approx(a / 8, rel=1e-12)
    for r in rows.values():
        assert 112 <= round(r["per_rank"]) <= 162  # the CUDA graph above: 128 or 256
        assert r["padded"] == (128.0 if r["per_rank"] <= 128 else 256.0)
        assert r["share"] > 2.3 * r["share_dp"]  # the clock releases 2.3-3.3x as often as a round of dp prompts
        assert r["kv_skew"] < 0.001  # the fullest rank's extra KV: under 1 ms a step
        assert r["left"] > 0.010  # 14-19 ms a step left after the tables and both ADP terms
        assert r["need_x"] > 1.8  # the measured experts would have to be ~2x slower to carry it alone
