"""End-to-end CLI: ``jalapeno simulate`` — JSON contract, workloads, files, and bad input.

Runs the console script in-process (``jalapeno.cli.app.main``) with stdout/stderr captured, as
tests/cli/test_cli_serving.py does. Contract (issue): the summary has throughput per chip,
TTFT/TPOT/E2E/wait to first step with mean/p50/p90/p99, preemptions and the prefix-cache hit rate;
a time series of running and waiting requests and KV occupancy; agentic runs add tasks and the
task completion time. Bad input: one ``error:`` line on stderr naming the field, exit code 2.
"""

from __future__ import annotations

import csv
import json

import pytest
from cli_runner import check_error, run

BASE = ["simulate", "--system", "gb200-nvl72", "--dp", "8", "--ep", "8"]
STATS = {"mean", "p50", "p90", "p99"}




def run_json(capsys, *args: str) -> dict:
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    assert "Traceback" not in out + err
    return json.loads(out)


def check_summary(sm: dict, requests: int) -> None:
    assert sm["requests"] == requests
    assert sm["throughput_per_chip"] > 0
    for k in ("ttft_s", "tpot_s", "e2e_s", "queue_s"):
        assert STATS <= set(sm[k]), (k, sm[k])
        assert sm[k]["p50"] <= sm[k]["p90"] <= sm[k]["p99"]
    assert sm["ttft_s"]["p99"] > 0 and sm["tpot_s"]["p50"] > 0 and sm["e2e_s"]["mean"] > 0
    assert sm["e2e_s"]["mean"] > sm["ttft_s"]["mean"]
    assert isinstance(sm["preemptions"], int) and sm["preemptions"] >= 0
    assert 0.0 <= sm["prefix_hit_rate"] <= 1.0


def check_timeseries(ts: dict) -> None:
    assert {"t_s", "running", "waiting", "kv_occupancy"} <= set(ts)
    n = len(ts["t_s"])
    assert n > 0 and all(len(ts[k]) == n for k in ("running", "waiting", "kv_occupancy"))
    assert all(0 <= x <= 1 + 1e-9 for x in ts["kv_occupancy"])
    assert ts["t_s"] == sorted(ts["t_s"])


def test_closed_loop_json(capsys):
    d = run_json(capsys, *BASE, "--concurrency", "8")
    check_summary(d["summary"], 80)  # 10 x concurrency counted
    assert d["summary"]["chips"] == 8
    check_timeseries(d["timeseries"])
    assert max(d["timeseries"]["running"]) <= 8
    cfg = d["config"]
    assert cfg["system"] == "gb200-nvl72" and cfg["concurrency"] == 8 and cfg["seed"] == 0
    assert cfg["workload"]["isl"] == 8192 and cfg["workload"]["osl"] == 1024


def test_disaggregated_recipe_runs(capsys):
    """--prefill/--decode with a disaggregated recipe: the run completes (it raised an
    UnboundLocalError after the run: the aggregated layout note was never set) on 8 + 8 chips."""
    d = run_json(capsys, "simulate", "-s", "h200", "-m", "deepseek-r1", "-w", "1k1k", "-c", "4", "--engine",
                 "dynamo-trt-dsr1-fp8", "--prefill", "dp=8,ep=8,workers=1", "--decode", "dp=8,ep=8,workers=1",
                 "--requests", "8")
    check_summary(d["summary"], 8)
    assert d["summary"]["chips"] == 16


def test_warmup_zero_is_inferencex_idle_start(capsys):
    """--warmup 0: the 10·C counted requests start at once into an idle server (InferenceX), so
    the first wave queues behind itself: mean TTFT above the steady state's, same count."""
    idle = run_json(capsys, *BASE, "--concurrency", "16", "--warmup", "0")
    steady = run_json(capsys, *BASE, "--concurrency", "16")
    check_summary(idle["summary"], 160)
    assert idle["summary"]["ttft_s"]["mean"] > steady["summary"]["ttft_s"]["mean"]


def test_agentic_json_has_tasks(capsys):
    d = run_json(capsys, *BASE, "--workload", "agentic", "--concurrency", "4", "--sessions", "4")
    sm = d["summary"]
    assert sm["tasks"] == 4
    assert STATS <= set(sm["task_completion_s"])
    assert sm["task_completion_s"]["mean"] > sm["e2e_s"]["mean"]  # a task is many turns
    assert sm["prefix_hit_rate"] > 0.5  # each turn resends the growing context
    check_timeseries(d["timeseries"])


def test_trace_csv_replays(capsys, tmp_path):
    p = tmp_path / "trace.csv"
    rows = [(0.0, 1000, 100), (0.5, 2000, 50), (0.25, 500, 80), (3.0, 1200, 30)]
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["arrival_s", "input_tokens", "output_tokens"])
        w.writerows(rows)
    out = tmp_path / "req.csv"
    d = run_json(capsys, *BASE, "--workload", str(p), "--out", str(out))
    assert d["summary"]["requests"] == 4
    with out.open() as f:
        got = list(csv.DictReader(f))
    assert sorted(float(r["arrival_s"]) for r in got) == sorted(r[0] for r in rows)
    assert sorted(int(r["input_tokens"]) for r in got) == sorted(r[1] for r in rows)


def test_open_loop_rate(capsys):
    d = run_json(capsys, *BASE, "--rate", "2", "--requests", "50")
    check_summary(d["summary"], 50)
    assert d["config"]["rate"] == 2.0 and d["config"]["concurrency"] is None


def test_html_written(capsys, tmp_path):
    target = tmp_path / "sim.html"
    code, out, err = run(capsys, *BASE, "--concurrency", "2", "--requests", "8", "--html", str(target))
    assert code == 0, err
    assert target.is_file() and target.stat().st_size > 1000
    assert "<html" in target.read_text()[:5000].lower()


def test_out_csv_has_one_row_per_counted_request(capsys, tmp_path):
    target = tmp_path / "f.csv"
    code, out, err = run(capsys, *BASE, "--concurrency", "4", "--out", str(target))
    assert code == 0, err
    with target.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 40
    assert {"ttft_s", "tpot_s", "e2e_s", "queue_s", "input_tokens", "output_tokens"} <= set(rows[0])
    assert all(float(r["e2e_s"]) > float(r["ttft_s"]) > 0 for r in rows)


def test_out_parquet(capsys, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    target = tmp_path / "f.parquet"
    code, out, err = run(capsys, *BASE, "--concurrency", "2", "--requests", "6", "--out", str(target))
    assert code == 0, err
    df = pd.read_parquet(target)
    assert len(df) == 6 and {"ttft_s", "tpot_s", "e2e_s", "queue_s"} <= set(df.columns)


def test_table_output_without_json(capsys):
    code, out, err = run(capsys, *BASE, "--concurrency", "2", "--requests", "4")
    assert code == 0, err
    assert "throughput per chip" in out and "TTFT" in out and "preemptions" in out
    # the title names the protocol: predict's TTFT is the idle start's, compared with --warmup 0
    title = " ".join(out.split())
    assert "steady state (4 warm-up requests in line; --warmup 0: InferenceX's idle start, as predict)" in title
    code, out, err = run(capsys, *BASE, "--concurrency", "2", "--requests", "4", "--warmup", "0")
    assert code == 0, err
    assert "idle start (InferenceX's protocol, as predict)" in " ".join(out.split())


def test_same_seed_same_json(capsys):
    a = run_json(capsys, *BASE, "--concurrency", "4", "--requests", "12", "--seed", "3")
    b = run_json(capsys, *BASE, "--concurrency", "4", "--requests", "12", "--seed", "3")
    for d in (a, b):
        for k in ("wall_s", "speedup"):  # how fast the simulator ran, not what it simulated
            d["summary"].pop(k)
    assert a == b


# ---------------------------------------------------------------- bad input


def _write(path, text: str):
    path.write_text(text)
    return str(path)


def test_both_concurrency_and_rate(capsys):
    check_error(*run(capsys, *BASE, "--concurrency", "4", "--rate", "2"), "--concurrency", "--rate")


def test_neither_concurrency_nor_rate(capsys):
    check_error(*run(capsys, *BASE), "--concurrency", "--rate")


def test_trace_missing_input_tokens(capsys, tmp_path):
    p = _write(tmp_path / "t.csv", "arrival_s,output_tokens\n0.0,100\n")
    check_error(*run(capsys, *BASE, "--workload", p), "input_tokens")


def test_unknown_workload_name(capsys):
    check_error(*run(capsys, *BASE, "--workload", "9k9k", "--concurrency", "4"), "workload", "9k9k")


def test_malformed_jsonl_line(capsys, tmp_path):
    p = _write(tmp_path / "t.jsonl", '{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}\n{"arrival_s": 1,\n')
    check_error(*run(capsys, *BASE, "--workload", p), "t.jsonl", "line 2")


def test_out_unknown_extension(capsys, tmp_path):
    target = tmp_path / "x.xlsx"
    check_error(*run(capsys, *BASE, "--concurrency", "2", "--requests", "4", "--out", str(target)),
                "--out", ".xlsx")
    assert not target.exists()


def test_zero_replicas(capsys):
    check_error(*run(capsys, *BASE, "--concurrency", "4", "--replicas", "0"), "--replicas")


@pytest.mark.parametrize("args,words", [
    (["--concurrency", "0"], ["--concurrency"]),
    (["--rate", "-1"], ["--rate"]),
    (["--workload", "agentic", "--rate", "2"], ["--rate"]),
    (["--rate", "2", "--arrival", "weekly"], ["arrival", "weekly"]),
    (["--concurrency", "4", "--warmup", "-1"], ["--warmup", "non-negative"]),
    (["--rate", "2", "--warmup", "0"], ["--warmup", "closed loop"]),
    (["--workload", "agentic", "--concurrency", "2", "--warmup", "0"], ["--warmup", "agentic"]),
])
def test_other_bad_options(capsys, args, words):
    check_error(*run(capsys, *BASE, *args), *words)


# The SGLang H200 DeepSeek-R1 FP8 recipe (data/engines.toml): its launch script passes no
# --kv-cache-dtype, so SGLang stores the KV cache in the model's BF16 (70,272 B per token), and it
# runs --mem-fraction-static 0.82; validation prices its runs with the sglang-0.5 memory profile.
SGL_H200 = ["-s", "h200", "--engine", "sglang-h200-dsr1-fp8"]


def test_simulate_engine_takes_the_recipe_kv_dtype_and_memory_profile_as_predict(capsys):
    """``simulate --engine R`` runs the recipe's KV dtype and SGLang memory profile, as ``predict
    --engine R`` does (both through cli/engine_opts.recipe_run); it ran FP8 KV and the catalog fit."""
    code, out, err = run(capsys, "predict", *SGL_H200, "-w", "8k1k", "-c", "64")
    assert code == 0, err
    assert "[fp8,kv=bf16]" in out
    d = run_json(capsys, "simulate", *SGL_H200, "-w", "8k1k", "-c", "64", "-n", "64")
    dep = d["config"]["deployment"]
    assert dep["precision"] == "fp8,kv=bf16"
    assert (dep["engine_memory"], dep["memory_fraction"]) == ("sglang-0.5", 0.82)
    code, out, err = run(capsys, "simulate", *SGL_H200, "-w", "8k1k", "-c", "64", "-n", "64")
    assert code == 0, err
    assert "[fp8,kv=bf16]" in out


def test_simulate_engine_admission_is_kv_bound_where_predict_is(capsys):
    """64k1k at 64 users: 8 users per attention-DP rank of ~59k-token prompts (mean of [0.8, 1] x
    65,536) hold ~470k tokens, and the SGLang pool of one H200 at 0.82 is (137.9 GiB free x 0.82 -
    93.9 GiB FP8 weights) / 70,272 B = ~0.29 M BF16 tokens: the engine admits ~4-5 of them, the rest
    queue. predict names the KV capacity as the cap; the simulator's KV fills and users queue (with
    FP8 KV and the catalog fit, as it ran before, the pool held them all: KV ~half full, ~2 s queue)."""
    p = run_json(capsys, "predict", *SGL_H200, "-w", "64k1k", "-c", "64")
    assert p["limit"].startswith("kv_capacity"), p["limit"]
    d = run_json(capsys, "simulate", *SGL_H200, "-w", "64k1k", "-c", "64", "-n", "64", "--warmup", "0")
    assert max(d["timeseries"]["kv_occupancy"]) > 0.9
    assert d["summary"]["queue_s"]["mean"] > 10.0  # most users wait for a slot (predict: ~93 s)
