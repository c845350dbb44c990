"""scripts/mlperf_server_vs_offline.py: the model's DeepSeek-R1 Server figure is above its Offline one because no
limit binds, not because the engines differ (docs/gap_large_batch_decode.md "Round 31")."""

from __future__ import annotations

import pytest
from script_module import load_script

sv = load_script("mlperf_server_vs_offline")


@pytest.fixture(scope="module")
def rows():
    return sv.dsr1_rows()


def test_server_runs_every_slot_within_the_limits(rows):
    """The Server engine's best load within the rules is every slot: 512 per rank x 8 ranks x instances (1 on the
    8-GPU systems, 9 on GB200-NVL72 x72), and its p99 TPOT there is under the rules' 80 ms."""
    for r in rows:
        assert r["server_load"] == pytest.approx(512 * 8 * (9 if "x72" in r["row"] else 1))
        assert r["tpot99_cap_s"] < r["tpot_limit_s"] == 0.080


def test_same_steady_state_different_run_factors(rows):
    """At that load the Server and Offline engines' steady throughput agree within 1% (the same 512 per rank), and
    each figure is its steady state times its run's factor: the Offline drain (all 26,328 samples at once) costs
    more than the Server run's last query, which is what puts the Server figure above the Offline one."""
    for r in rows:
        assert r["server_steady"] == pytest.approx(r["offline_steady"], rel=0.01)
        assert r["offline_model"] == pytest.approx(r["offline_steady"] * r["drain"], rel=1e-9)
        assert r["server_model"] == pytest.approx(r["server_steady"] * r["run"], rel=0.01)
        assert r["drain"] < r["run"] < 1.0
        assert r["server_model"] > r["offline_model"] and r["server_measured"] < r["offline_measured"]


def test_step_line_by_hand():
    """Two points (10 requests, 20 ms) and (110, 30 ms): slope 0.1 ms per request, intercept 19 ms."""
    rows = [{"system": "s", "model": "m", "scenario": "Interactive", "load": 10.0, "tpot_measured_s": 0.020,
             "tpot_model_s": 0.010},
            {"system": "s", "model": "m", "scenario": "Server", "load": 110.0, "tpot_measured_s": 0.030,
             "tpot_model_s": 0.030}]
    (ln,) = sv.step_lines(rows)
    assert ln["measured_line"] == pytest.approx((0.019, 1e-4))
    assert ln["model_line"] == pytest.approx((0.008, 2e-4))
