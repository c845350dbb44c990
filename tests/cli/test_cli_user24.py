"""Round 24 new-user pass (user24): what a newcomer typed and what it did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _module(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "jalapeno", *args], capture_output=True, text=True, env=env)


def test_python_dash_m_jalapeno_runs_the_command_line():
    """``python -m jalapeno`` said "'jalapeno' is a package and cannot be directly executed"
    (no __main__.py), though it is the usual way to run a source tree without installing it."""
    p = _module("--version")
    assert p.returncode == 0 and p.stdout.strip().startswith("jalapeno "), (p.stdout, p.stderr)


def test_python_dash_m_jalapeno_keeps_the_one_line_errors():
    p = _module("hardware", "show", "no-such-system")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith("error: ") and "unknown system 'no-such-system'" in p.stderr, p.stderr


# ---- simulate's agentic context check: the figure it checks, said as such --------------------------

def test_agentic_context_refusal_states_the_length_it_checked(capsys):
    """``simulate -m gpt-oss-120b -w agentic:coding-agent`` said 'agentic preset coding-agent (context up
    to ~120,000 tokens) exceed gpt-oss-120b's context of 131072 tokens': 120,000 < 131,072 (the check
    was on 144,000 = 120,000 x 1.2). The simulator draws each tool output and reply up to 20% longer:
    6,000 + 40 x (2,500 x 1.2 + 350 x 1.2) = 6,000 + 40 x 3,420 = 142,800 tokens (docs/agentic.md §2)."""
    from cli_runner import check_error, run

    check_error(*run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", "agentic:coding-agent",
                     "-c", "1", "--sessions", "1"),
                "--workload: coding-agent's last turns (up to 142,800 tokens: the mean 120,000",
                "context of 131072", "fewer turns or a smaller jitter")


def test_agentic_file_whose_longest_draw_fits_is_simulated(capsys, tmp_path):
    """The system prompt is not jittered: S = 16,000, 10 x (9,000 + 400) -> mean 110,000, longest
    16,000 + 10 x (10,800 + 480) = 128,800 <= 131,072. The old bound (110,000 x 1.2 = 132,000) refused it."""
    from cli_runner import run

    f = tmp_path / "edge.toml"
    f.write_text("turns = 10\nsystem_prompt_tokens = 16000\ntool_output_tokens = 9000\nreply_tokens = 400\nthink_s = 2\n")
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", f"agentic:{f}",
                         "-c", "1", "--sessions", "1", "--json")
    assert code == 0, err


def test_longest_agentic_turn_by_hand():
    from jalapeno.specs.agentic import AgenticSpec

    # 1,000 + 3 x (int(101 x 1.5) + max(2, int(2 x 1.5))) = 1,000 + 3 x (151 + 3) = 1,462
    assert AgenticSpec("x", 3, 1000, 101, 2, 1.0, jitter=0.5).longest_context_tokens == 1462
    assert AgenticSpec("x", 3, 1000, 100, 10, 1.0, jitter=0.0).longest_context_tokens == 1330  # the mean


# ---- -c on compare/frontier: the words predict and simulate use, and no option the command lacks ----


@pytest.mark.parametrize("cmd", ["compare", "frontier"])
@pytest.mark.parametrize("c, words", [
    # was 'needs positive values. Fix: write e.g. --concurrency 10,50,100' (predict: the line below)
    ("0", ["--concurrency: 0 is not a closed-loop concurrency (requests in flight, >= 1)"]),
    ("-3", ["--concurrency: -3 is not a closed-loop concurrency"]),
    # was 'for a fractional mean load use --rate (requests/s)': compare and frontier have no --rate
    ("1.5", ["1.5 is not a whole number of requests in flight", "`jalapeno predict` or `simulate` with --rate"]),
])
def test_concurrency_on_sweeps_reads_as_on_predict(capsys, cmd, c, words):
    from cli_runner import check_error, run

    args = [cmd, "-m", "llama-3.3-70b", "-s", "h200", "-c", c] + (["--html", ""] if cmd == "compare" else [])
    check_error(*run(capsys, *args), *words)


def test_predict_keeps_its_own_rate_option_in_the_fix(capsys):
    from cli_runner import check_error, run

    check_error(*run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "0"),
                "0 is not a closed-loop concurrency", "for a request rate use --rate")


# ---- a file given to --workload of a command that does not read one ----------------------------------

@pytest.mark.parametrize("cmd", [["compare", "--html", ""], ["frontier", "-s", "h200"],
                                 ["predict", "-s", "h200", "--tp", "8", "-c", "4"]])
def test_a_trace_file_on_a_sweep_points_to_simulate(capsys, tmp_path, cmd):
    """README: 'a trace is a CSV/JSONL file given as --workload FILE.csv'; compare/frontier/predict said
    "unknown workload 'ok.csv'" for a file that exists (only simulate replays traces)."""
    from cli_runner import check_error, run

    p = tmp_path / "ok.csv"
    p.write_text("arrival_s,input_tokens,output_tokens\n0,100,10\n")
    check_error(*run(capsys, *cmd, "-m", "llama-3.3-70b", "-w", str(p)), "is a request trace (a file), which only "
                "simulate replays", f"run `jalapeno simulate --workload {p}`", "--isl n --osl n")


def test_an_agentic_toml_without_its_prefix_says_how_to_write_it(capsys, tmp_path):
    from cli_runner import check_error, run

    p = tmp_path / "agent.toml"
    p.write_text("turns = 3\nsystem_prompt_tokens = 100\ntool_output_tokens = 50\nreply_tokens = 20\nthink_s = 1\n")
    check_error(*run(capsys, "compare", "-s", "h200", "-m", "llama-3.3-70b", "--html", "", "-w", str(p)),
                "an agentic session file is written agentic:file.toml", f"--workload agentic:{p}")
    code, out, err = run(capsys, "compare", "-s", "h200", "-m", "llama-3.3-70b", "--html", "", "-w", f"agentic:{p}")
    assert code == 0, err


# ---- numbers written as a capacity planner writes them ------------------------------------------------

@pytest.mark.parametrize("args, words", [
    # was "--isl: must be a whole number, got '8k'. Fix: give --isl a whole number"
    (["predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "4", "--isl", "8k", "--osl", "1024"],
     ["--isl: must be a whole number, got '8k'", "write it in digits: --isl 8000 (or 8192:", "8 x 1024 tokens"]),
    (["step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--context", "32K"],
     ["--context 32000 (or 32768"]),
    # not a token count: no 1024 reading offered
    (["step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--batch", "1.5k"], ["write it in digits: --batch 1500"]),
    (["plan", "-s", "h200", "-m", "llama-3.3-70b", "--target", "1M"], ["write it in digits: --target 1000000"]),
])
def test_a_k_or_m_suffix_is_spelled_out(capsys, args, words):
    from cli_runner import check_error, error_line, run

    check_error(*run(capsys, *args), *words)
    if "--batch" in args or "--target" in args:
        assert "1024" not in error_line(*run(capsys, *args))


@pytest.mark.parametrize("typed", ["8K1K", "8k/1k", "8k-1k"])
def test_a_preset_typed_another_way_is_suggested(capsys, typed):
    from cli_runner import check_error, run

    check_error(*run(capsys, "compare", "-s", "h200", "-m", "llama-3.3-70b", "--html", "", "-w", typed),
                f"unknown workload '{typed.lower()}' (did you mean '8k1k'?)")
