"""scripts/amd_1k8k_pairs45.py: AMD 1k/1k against 8k/1k pairs — the excess / slope-error split, the lost TP1 run and the
MoRI decode cap (docs/gap_large_batch_decode.md, round 45). Expected values are arithmetic by hand and the recipes' flags."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import amd_1k8k_pairs45 as s  # noqa: E402


def test_pair_split_by_hand():
    # rows 49 / 42: measured 14.20 / 25.10 ms, model 16.00 / 26.39 ms
    out = s.pair_split(14.20, 16.00, 25.10, 26.39)
    assert out["excess_1k"] == pytest.approx(1.80)
    assert out["excess_8k"] == pytest.approx(1.29)
    assert out["pct_1k"] == pytest.approx(180 / 14.20)
    assert out["pct_8k"] == pytest.approx(129 / 25.10)
    # model slope 10.39 against the measured 10.90
    assert out["slope_error"] == pytest.approx(10.39 - 10.90)


def test_a_constant_excess_has_no_slope_error():
    # the model = measured + 2 ms at both lengths: excess 2 at both, slope error 0, percentage larger at the shorter step
    out = s.pair_split(10.0, 12.0, 40.0, 42.0)
    assert out["excess_1k"] == pytest.approx(2.0) and out["excess_8k"] == pytest.approx(2.0)
    assert out["slope_error"] == pytest.approx(0.0, abs=1e-12)
    assert out["pct_1k"] == pytest.approx(20.0) and out["pct_8k"] == pytest.approx(5.0)


def test_pair_split_rejects_bad_measured():
    with pytest.raises(ValueError, match="measured TPOTs must be positive"):
        s.pair_split(0.0, 1.0, 2.0, 3.0)


def test_lost_run_bound_by_hand():
    # round 37: 64 x 0.9 x 2048 / (1 x 4521.2) = 26.091 s, less row 53's 143.6 ms TTFT, over 0.9 x 1024 - 1 = 920.6
    b37 = s._bound37()
    bound = b37.loser_tpot_bound_s(4521.2, 64, 1024, 1024, 1, 0.1436)
    assert bound == pytest.approx((64 * 0.9 * 2048 / 4521.2 - 0.1436) / 920.6)
    assert bound * 1e3 == pytest.approx(28.19, abs=0.01)


def test_points_and_the_lost_run():
    pts = s._points()
    lost = pts["51@tp1"]
    # row 51's workload and load on row 44's TP1 deployment
    assert (lost.isl, lost.osl, lost.concurrency) == (1024, 1024, 64)
    assert lost.deployment.decode.layout.tp == 1
    assert pts[51].deployment.decode.layout.tp == 2


def test_mori_decode_pool_sits_at_its_cap():
    # recipe sglang-mori-mi355x-dsr1-fp4-dep: 160 running a rank on a DEP8 decode instance -> 1,280 at C 2,048
    pts = s._points()
    for row in (31, 24):
        assert s.price(pts[row])["batch"] == pytest.approx(160 * 8)


def test_prefill_factors_by_hand():
    # MI300X rows 53 / 45: slope error -4.63 ms over a stall growth of 10.54 - 1.63 = 8.91 ms -> k_stall 1.520;
    # TTFT 443.0 measured against 284.5 with a 158.2 ms prefill part -> k_ttft 1 + 158.5 / 158.2 = 2.002
    k_stall, k_ttft = s.prefill_factors(-4.63e-3, 1.63e-3, 10.54e-3, 0.4430, 0.2845, 0.1582)
    assert k_stall == pytest.approx(1 + 4.63 / 8.91)
    assert k_ttft == pytest.approx(1 + 158.5 / 158.2)
    # a pair the model already meets asks no scale
    assert s.prefill_factors(0.0, 1e-3, 5e-3, 0.2, 0.2, 0.1) == pytest.approx((1.0, 1.0))


def test_prefill_factors_rejects_bad_input():
    with pytest.raises(ValueError, match="must exceed the 1k/1k one"):
        s.prefill_factors(-1e-3, 5e-3, 5e-3, 0.2, 0.2, 0.1)
    with pytest.raises(ValueError, match="ttft_prefill must be positive"):
        s.prefill_factors(-1e-3, 1e-3, 5e-3, 0.2, 0.2, 0.0)
