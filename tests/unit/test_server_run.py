"""A LoadGen Server run counted as LoadGen counts it (serve/finite_run.ServerRun, server_run_factor;
fit/mlperf_server.py): its request count against the v5.1 logs, its factor by hand."""

from __future__ import annotations

import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.mlperf import MLPERF_RULES
from jalapeno.fit.mlperf_server import server_run, server_runs
from jalapeno.serve.finite_run import ServerRun, server_run_factor

_BENCH = {"deepseek-r1": "deepseek-r1", "llama2-70b-99": "llama2-70b-99", "llama3p1-405b": "llama3.1-405b"}


def test_request_count_matches_every_logged_run():
    """Each v5.1 Server / Interactive log's generated_query_count follows from its own settings and
    scheduled rate: equal-issue padding to whole dataset copies, one more while the schedule is
    shorter than min_duration (loadgen.cc GenerateQueries). E.g. AMD MI300X Llama-2 Server: 83.90/s x
    600 s = 50,340 -> 3 copies of 24,576 = 73,728; NVIDIA B200 DeepSeek-R1: min_query_count 26,328 (6 x
    4,388) above 5.02/s x 600 s = 3,012."""
    rows = server_runs()
    assert len(rows) == 20
    for key, r in rows.items():
        bench = next(v for k, v in _BENCH.items() if f"_{k}_" in key)
        run = server_run(key, MLPERF_RULES[bench].samples)
        assert run.queries(float(r["scheduled_per_s"])) == int(r["generated_query_count"]), key
    assert ServerRun(24576).queries(83.90) == 73728 and ServerRun(4388, 600.0, 26328).queries(5.02) == 26328


def test_rows_without_a_log_take_the_rules_defaults():
    run = server_run("no-such-row", 8313)
    assert (run.min_duration_s, run.min_query_count) == (600.0, 100)
    assert run.queries(0.45) == 8313  # 270 in 600 s, padded to one copy of the 8,313 samples


def test_factor_by_hand():
    """[1, 3]-token outputs: P(l > 1) = P(l > 2) = 0.5; the others' residual survival 0.5 and 0.25
    (Cox), two running, step 1 s flat: D = 0.5 TTFT + 0.5 + 0.5 = 1.5 s; T = 100 / 10 = 10 s:
    10 / 11.5. Two-token outputs, four running: the one decode step at 4 x 0.5 = 2 running, 0.2 s on
    the 0.1 -> 0.4 s line; D = 0.3 + 0.2; T = 50 / 5 = 10 s: 10 / 10.5."""
    assert server_run_factor([1, 3], 100, 10.0, 2, [1, 2], [1.0, 1.0], ttft_s=0.5) == pytest.approx(10 / 11.5)
    assert server_run_factor([2, 2], 50, 5.0, 4, [1, 4], [0.1, 0.4], ttft_s=0.3) == pytest.approx(10 / 10.5)


def test_a_longer_run_loses_less_to_its_last_query():
    short = server_run_factor([100, 300], 1000, 10.0, 50, [1, 50], [0.01, 0.02])
    long = server_run_factor([100, 300], 10000, 10.0, 50, [1, 50], [0.01, 0.02])
    assert short < long < 1.0


def test_bad_input_names_the_field():
    with pytest.raises(SpecError, match="rate_per_s"):
        ServerRun(4388).queries(0.0)
    with pytest.raises(SpecError, match="queries/rate_per_s/running"):
        server_run_factor([1, 3], 100, 10.0, 0, [1, 2], [1.0, 1.0])
    with pytest.raises(SpecError, match="reach the running"):
        server_run_factor([1, 3], 100, 10.0, 8, [1, 2], [1.0, 1.0])
    with pytest.raises(SpecError, match="file not found"):
        server_runs("/nonexistent/runs.csv")


@pytest.mark.parametrize("dur, count, field", [
    ("abc", "100", "min_duration_s / min_query_count"), ("-5", "100", "min_duration_s"),
    ("600", "0", "min_query_count"), ("600", "2.5", "min_duration_s / min_query_count"),
    ("", "100", "min_duration_s"),
])
def test_a_bad_settings_row_names_its_result_and_column(tmp_path, dur, count, field):
    p = tmp_path / "runs.csv"
    p.write_text(f"id,min_duration_s,min_query_count,source\nr1,{dur},{count},x/\n")
    with pytest.raises(SpecError, match=rf"runs\.csv: r1\.{field}.*whole number >= 1"):
        server_run("r1", 100, p)


def test_a_settings_file_without_rows_says_so(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("id,min_duration_s\n")
    with pytest.raises(SpecError, match="empty.csv: no rows"):
        server_runs(p)


@pytest.mark.parametrize("kw, field", [({"samples": 0}, "samples"), ({"min_query_count": 0}, "min_query_count"),
                                       ({"min_duration_s": float("nan")}, "min_duration_s"),
                                       ({"min_duration_s": -1.0}, "min_duration_s")])
def test_a_server_run_refuses_impossible_settings(kw, field):
    with pytest.raises(SpecError, match=field):
        ServerRun(**{"samples": 100, **kw})
