"""Round-41 new-user pass: a simulate figure a new user misread."""

from __future__ import annotations

import csv
import json
import re
import statistics
from pathlib import Path

from cli_runner import run

# Jalapeño's front end: its efficiency set keeps the documented defaults (specs/efficiency.py, fitted by
# scripts/fit_frontend.py; its stack profile 'jalapeno' does not set them): 0.15 s per request + 6.4 µs per prompt token
FRONT_S, FRONT_S_PER_TOKEN = 0.15, 6.4e-6


def test_simulate_wait_to_first_step_is_named_with_its_front_end(capsys, tmp_path, monkeypatch):
    # An idle Jalapeño instance printed 'wait to first step (arrival → scheduled)  p50 199 ms': read as queueing,
    # but the simulator's arrival is when the client sends and the request reaches the router one front end later
    # (serve/sim/simulation.py), so on an idle instance the wait is the front end alone. The row now says so, and
    # each request's wait is its own front end by hand plus at most a fraction of a step.
    monkeypatch.setenv("COLUMNS", "300")
    out_csv = tmp_path / "requests.csv"
    code, out, err = run(
        capsys,
        "simulate",
        "-s",
        "jalapeno",
        "--dp",
        "8",
        "--ep",
        "8",
        "-w",
        "8k1k",
        "--rate",
        "0.02",
        "--requests",
        "6",
        "--out",
        str(out_csv),
    )
    assert code == 0, err
    assert "wait to first step (arrival → scheduled, front end included)" in " ".join(out.split())
    rows = list(csv.DictReader(out_csv.open()))
    assert rows
    beyond = [float(r["queue_s"]) - (FRONT_S + FRONT_S_PER_TOKEN * float(r["input_tokens"])) for r in rows]
    assert min(beyond) >= -1e-9, beyond  # never less than its front end
    assert statistics.median(beyond) < 0.03, beyond  # idle: no queue beyond it (a decode step is ~10-20 ms)


def _doc_block() -> str:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "simulator.md").read_text()
    sec = doc[doc.index("## 11. A worked example") :]
    return sec[sec.index("```\n                 deepseek-r1 on jalapeno") : sec.index("Reading it by hand")]


def test_simulator_doc_worked_example_is_what_simulate_prints(capsys):
    # docs/simulator.md §11 showed 8,566.8 tok/s/chip, TTFT mean 406 ms and 301 s tasks where the command printed
    # 6,785.1, 1,964 ms and 375 s
    block = _doc_block()
    code, out, err = run(
        capsys,
        "simulate",
        "--system",
        "jalapeno",
        "--dp",
        "8",
        "--ep",
        "8",
        "--workload",
        "agentic",
        "--concurrency",
        "8",
        "--sessions",
        "8",
        "--json",
    )
    assert code == 0, err
    s = json.loads(out)["summary"]
    rows = {
        r"requests \(counted\)\s+│ (\d+)": s["requests"],
        r"throughput per chip \(in\+out\)\s+│ ([\d,.]+) tok/s": s["throughput_per_chip"],
        r"output throughput per chip\s+│ ([\d,.]+) tok/s": s["output_throughput_per_chip"],
        r"over the ([\d.]+) s": s["duration_s"],
        r"interactivity \(1/median TPOT\)\s+│ ([\d.]+)": s["interactivity"],
        r"TTFT\s+│ mean ([\d,]+)": 1e3 * s["ttft_s"]["mean"],
        r"E2E\s+│ mean ([\d.]+)": s["e2e_s"]["mean"],
        r"front end included\) │ mean ([\d,]+)": 1e3 * s["queue_s"]["mean"],
        r"front end included\) │ mean [\d,]+ · p50 ([\d,]+)": 1e3 * s["queue_s"]["p50"],
        r"concurrency by Little's law\s+│ ([\d.]+)": s["mean_concurrency_littles_law"],
        r"task completion\s+│ mean ([\d.]+)": s["task_completion_s"]["mean"],
        r"tasks per hour per chip\s+│ ([\d.]+)": s["tasks_per_hour_per_chip"],
    }
    stale = []
    for pat, v in rows.items():
        m = re.search(pat, block)
        assert m, f"docs/simulator.md §11 lost {pat!r}"
        q = m.group(1)
        digits = len(q.partition(".")[2])
        if abs(float(q.replace(",", "")) - v) > 0.5 * 10**-digits + 1e-9:
            stale.append(f"{pat}: quoted {q}, now {v:,.3f}")
    assert not stale, "docs/simulator.md §11 is stale: " + "; ".join(stale) + "; rerun the command and update it"
