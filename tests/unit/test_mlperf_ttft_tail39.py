"""scripts/mlperf_ttft_tail39.py: the published first-token percentiles as read, and the diagnosis's claims at the
runs' own loads (the prefill queue's load is tiny; the clock binds; the gate's spread lifts the p99 but leaves it
short of the measured p99)."""

from __future__ import annotations

import pytest
from script_module import load_script

tt = load_script("mlperf_ttft_tail39")


def test_published_percentiles():
    # closed/NVIDIA/results/B200-SXM-180GBx8_TRT/deepseek-r1/Server/performance/run_1/mlperf_log_summary.txt:
    # 50.00 percentile first token latency 685863288 ns, 99.00 1695862246 ns, Mean 726163084 ns
    m = tt.measured()[("NVIDIA", "B200-SXM-180GBx8_TRT")]
    assert (m["p50"], m["p99"], m["mean"]) == pytest.approx((0.68586, 1.69586, 0.72616), abs=1e-5)
    # every run's percentiles rise with the quantile
    for r in tt.measured().values():
        assert r["min"] < r["p50"] < r["p90"] < r["p95"] < r["p97"] < r["p99"] < r["p999"] < r["max"]


def test_the_tail_is_not_the_prefill_queue():
    rows = tt.tail_rows()
    assert len(rows) == 7
    for r in rows:
        # prefill load per instance: ~4-6 prompts/s of 804 tokens on a pool that prefills 27,648 tokens a step
        assert r["rho"] < 0.05
        # the clock binds at these rates (< 8 arrivals in T steps): its mean G_c just under the residual T*tau/2, the
        # shipped closed-loop mean G the whole period T*tau
        assert 0.8 * r["timeout"] * r["tau"] / 2 < r["clock_gate"] <= r["timeout"] * r["tau"] / 2 + 1e-9
        assert r["gate"] == pytest.approx(r["timeout"] * r["tau"], rel=1e-9)
        # the spread lifts the shipped p99 above round 38's (constant gate), the median stays; still short of the
        # measured p99 on every run, by > 0.3 s on all but the GB200 x72 row
        assert r["shipped"][0.99] > r["r38"][0.99] + 0.1
        assert r["shipped"][0.5] == pytest.approx(r["r38"][0.5], abs=0.03)
        assert r["shipped"][0.99] < r["measured"]["p99"]
    assert sum(r["measured"]["p99"] - r["shipped"][0.99] > 0.3 for r in rows) == 6


def test_missing_columns_name_the_file(tmp_path):
    f = tmp_path / "p.csv"
    f.write_text("submitter,system\nNVIDIA,B200\n", encoding="utf-8")
    with pytest.raises(ValueError, match="p.csv"):
        tt.measured(f)
