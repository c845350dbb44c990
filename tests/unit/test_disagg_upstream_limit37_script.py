"""scripts/disagg_upstream_limit37.py: the closed-loop split and the bounds worked by hand, and the claims
docs/gap_disagg_overprediction.md (round 37) draws from row 41."""

from __future__ import annotations

from importlib.resources import files

import pytest
from script_module import load_script

up = load_script("disagg_upstream_limit37")


def test_closed_loop_split_of_row_41_by_hand():
    # 53,952.5 tok/s/GPU x 4 GPUs over (0.9 x 8,192 + 0.9 x 1,024) = 8,294.4 tokens a request: 26.019 req/s;
    # decoding 26.019 x 920.6 x 0.0147 = 352.1; before the first token 26.019 x 5.0277 = 130.8
    lam, dec, first = up.closed_loop_split(53952.5, 4, 7372.8, 921.6, 5.0277, 0.0147)
    assert lam == pytest.approx(215810.0 / 8294.4)
    assert dec == pytest.approx(215810.0 / 8294.4 * 920.6 * 0.0147)
    assert first == pytest.approx(215810.0 / 8294.4 * 5.0277)
    assert dec + first == pytest.approx(483.0, abs=1.0)  # of C = 512: the medians close the loop within 6%


def test_prefill_rate_bound_and_its_threshold_by_hand():
    # 7 req/s of 8,000-token prompts while decoding 25 steps a second of 24 ms each: 40% of the time left for
    # 56,000 prompt tokens/s, so a prefill-only GPU does 140,000
    assert up.prefill_rate_bound(7.0, 8000.0, 0.040, 0.024) == pytest.approx(140_000.0)
    # the same row could be bound to 80,000 only with a decode step of 0.040 x (1 - 56/80) = 12 ms
    assert up.decode_step_threshold(0.040, 56_000.0, 80_000.0) == pytest.approx(0.012)
    with pytest.raises(SystemExit, match="no time left for prefill.*fix: check the row's decode batch"):
        up.prefill_rate_bound(7.0, 8000.0, 0.040, 0.041)


def test_lane_window():
    assert up.lane_window(1.8e9, 1.65e9) == (1.65e9, 1.8e9)
    assert up.lane_window(1.0e9, 1.65e9) is None


def test_an_unknown_row_names_the_fix():
    with pytest.raises(SystemExit, match="inferencex_points:99999: no such row.*fix: give a line number"):
        up.main(["99999", "--agg"])


@pytest.fixture(scope="module")
def row41():
    from jalapeno.fit.ix_points import load_inferencex

    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    p = up._point(points, "41")
    model, pricer, wl, dep = up._setup(p)
    return p, up.disagg_row(model, pricer, wl, dep, p)


def test_row_41_claims(row41):
    p, r = row41
    tpot = p.measured["tpot_s"]
    # the recipe's FP8 KV prices the measured batch's step within 5% of the measured TPOT; the BF16 validation uses
    # is over 15% slow there
    assert r["recipe_kv"]["kv"] == "fp8"
    assert abs(r["recipe_kv"]["tpot_s"] / tpot - 1) < 0.05
    assert r["as_validated"]["tpot_s"] / tpot - 1 > 0.15
    # the model's prefill pool is not near saturation at the measured rate, and the decode KV pool holds well over
    # twice the measured decoding batch even with each request's whole length reserved
    assert r["lam"] / r["prefill_cap_req_s"] < 0.65
    assert r["per_instance"] / r["recipe_kv"]["kv_cap_whole"] < 0.5
