"""fit/mlperf_notes: every MLPerf row says the scenario rule that priced it, the lengths assumed and what is not
modelled (ux47). Limits by hand from mlcommons/inference @b66003e loadgen/mlperf.conf; the scheduled rates from the
runs' mlperf_log_summary.txt (data/validation/mlperf_server_runs.csv)."""

from __future__ import annotations

import pytest

from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.mlperf_notes import terminal_lines, unmodelled_note

#: loadgen/mlperf.conf: deepseek-r1.Server ttft 2000 ms / tpot 80 ms; llama2-70b Server 2000 / 200, Interactive
#: 450 / 40; llama3.1-405b Server 6000 / 175, Interactive 4500 / 80
LIMITS = {
    ("deepseek-r1", "Server"): "p99 TTFT <= 2 s and p99 TPOT <= 80 ms",
    ("llama-2-70b", "Server"): "p99 TTFT <= 2 s and p99 TPOT <= 200 ms",
    ("llama-2-70b", "Interactive"): "p99 TTFT <= 0.45 s and p99 TPOT <= 40 ms",
    ("llama-3.1-405b", "Server"): "p99 TTFT <= 6 s and p99 TPOT <= 175 ms",
    ("llama-3.1-405b", "Interactive"): "p99 TTFT <= 4.5 s and p99 TPOT <= 80 ms",
}


@pytest.fixture(scope="module")
def points():
    return load_mlperf()[0]


def test_every_row_names_its_rule_and_lengths(points):
    assert len(points) >= 30
    for p in points:
        scenario = p.id.rsplit("_", 1)[-1]
        first = p.notes[0]
        assert first.startswith(f"MLPerf {scenario} ("), p.id
        if scenario == "Offline":
            assert "no latency limit" in first, p.id
        else:
            assert "Poisson arrivals at a rate the submitter chooses" in first and LIMITS[(p.model, scenario)] in first
        assert "lengths: per-sample token counts of the MLCommons" in first and "an assumption" in first
        assert ("capped at 20,000 tokens" in first) == (p.model == "deepseek-r1")


def test_limited_rows_say_the_arrival_rate_is_the_submitters(points):
    by_id = {p.id: p for p in points}
    dsr1 = " ".join(by_id["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server"].notes)
    # its LoadGen summary scheduled 5.02 queries/s (mlperf_server_runs.csv); the prediction does not take it
    assert "not modelled: the arrival rate the submitter chose (5.02 queries/s scheduled" in dsr1
    for p in points:
        if p.mapping in ("matched@limits", "frontier@limits", "frontier@tpot_limit"):
            assert any(n.startswith("not modelled: the arrival rate the submitter chose") for n in p.notes), p.id
        if p.mapping == "frontier_peak":
            assert any("engine settings (not read for this row)" in n for n in p.notes), p.id


def test_unmodelled_note_by_case():
    assert unmodelled_note("Offline", "matched", None) is None  # the submitted engine, all samples at once
    assert "not in the data" in unmodelled_note("Server", "matched@limits", None)
    n = unmodelled_note("Server", "frontier@interactivity", None)
    assert "engine settings" in n and "Server limits" in n and "arrival rate" not in n


def test_terminal_lines_state_each_scenario_present(points):
    lines = terminal_lines((p.id, p.model) for p in points)
    assert lines[0].startswith("MLPerf Offline: ") and "no latency limit" in lines[0]
    assert "deepseek-r1 2 s / 80 ms" in lines[1] and "llama3.1-405b 6 s / 175 ms" in lines[1]
    assert lines[2].startswith("MLPerf Interactive: ") and "llama2-70b-99 0.45 s / 40 ms" in lines[2]
    assert "arrival rate is its submitter's choice" in lines[-1]
    assert terminal_lines([]) == []
