"""Issue 17 kinds 5-7 and the heavy ``-c``: ``simulate`` makes the checks every other path makes
(the model's context, MTP), refuses options its workload would ignore, and refuses a run that
would plan millions of requests, each with one line naming the option, why and the fix."""

from __future__ import annotations

import json

import pytest
from cli_runner import check_error, run

from jalapeno.serve.sim.run_plan import MAX_PLANNED_REQUESTS

SIM = ["simulate", "-s", "h200", "-m", "gpt-oss-120b"]
HEADER = "arrival_s,input_tokens,output_tokens\n"


def _trace(tmp_path, rows: str) -> str:
    p = tmp_path / "t.csv"
    p.write_text(HEADER + rows)
    return str(p)


# ---- kind 5: the model's context length, one check on every path --------------------------------

def test_trace_row_past_the_context_is_refused(capsys, tmp_path):
    """gpt-oss-120b's max_position_embeddings is 131,072 (its config.json)."""
    p = _trace(tmp_path, "0,1000,10\n1,300000,10\n")
    check_error(*run(capsys, *SIM, "-w", p), "trace row 2", "300000 + 10", "131072")


def test_a_50m_token_row_is_blamed_on_the_context_not_on_hbm(capsys, tmp_path):
    p = _trace(tmp_path, "0,50000000,10\n")
    check_error(*run(capsys, *SIM, "-w", p), "context of 131072", "max_position_embeddings")


@pytest.mark.parametrize("cmd", ["simulate", "predict"])
def test_isl_past_the_context_is_refused_alike(capsys, cmd):
    check_error(*run(capsys, cmd, "-s", "h200", "-m", "gpt-oss-120b", "--isl", "400000", "--osl", "10", "-c", "1"),
                "--isl/--osl", "400000 + 10", "131072")


def test_step_context_past_the_model(capsys):
    check_error(*run(capsys, "step", "-s", "h200", "-m", "gpt-oss-120b", "--batch", "1", "--context", "200000"),
                "--context", "131072")


# ---- kind 6: options that do not apply ------------------------------------------------------------

@pytest.mark.parametrize("extra, words", [
    (["-c", "64"], ["--concurrency", "trace", "own arrivals"]),
    (["-r", "1000"], ["--rate", "trace"]),
    (["--arrival", "burst"], ["--arrival", "trace"]),
    (["--sessions", "3"], ["--sessions", "trace"]),
    (["--isl", "100", "--osl", "10"], ["--isl", "trace"]),
])
def test_trace_refuses_options_it_would_ignore(capsys, tmp_path, extra, words):
    """(``-n`` applies to a trace since round 9: it replays the first N requests by arrival,
    tests/cli/test_cli_usability_user9.py.)"""
    p = _trace(tmp_path, "0,100,10\n")
    check_error(*run(capsys, *SIM, "-w", p, *extra), *words, "drop")


@pytest.mark.parametrize("extra, words", [
    (["--isl", "100", "--osl", "10", "-c", "1"], ["--isl", "agentic", "own lengths"]),
    (["-r", "2"], ["--rate", "agentic", "closed loop"]),
    (["-c", "1", "-n", "3"], ["--requests", "agentic", "--sessions"]),
    (["-c", "1", "--arrival", "gamma"], ["--arrival", "agentic"]),
])
def test_agentic_refuses_options_it_would_ignore(capsys, extra, words):
    check_error(*run(capsys, *SIM, "-w", "agentic", *extra), *words)


@pytest.mark.parametrize("extra, words", [
    (["-c", "2", "--sessions", "4"], ["--sessions", "fixed-length", "only agentic"]),
    (["-c", "2", "--arrival", "gamma"], ["--arrival", "closed loop", "--rate"]),
])
def test_fixed_length_refuses_options_it_would_ignore(capsys, extra, words):
    check_error(*run(capsys, *SIM, *extra), *words)


def test_open_loop_with_arrival_process_still_runs(capsys):
    code, out, err = run(capsys, *SIM, "-r", "5", "-n", "20", "--arrival", "burst", "--json")
    assert code == 0, err
    assert json.loads(out)["summary"]["requests"] == 20


# ---- kind 7: MTP on a model without an MTP module ------------------------------------------------

@pytest.mark.parametrize("cmd", ["simulate", "predict"])
def test_mtp_without_an_mtp_module_is_refused_on_every_path(capsys, cmd):
    check_error(*run(capsys, cmd, "-s", "h200", "-m", "gpt-oss-120b", "-c", "2", "--mtp", "2",
                     "--mtp-acceptance", "0.7"), "mtp", "no MTP module")


# ---- heavy: a plausible typo plans millions of requests --------------------------------------------

def test_huge_concurrency_is_refused_with_the_limit(capsys):
    """-c 1,000,000 plans 10,000,000 counted + 2,000,000 warm-up requests (12 x C, InferenceX)."""
    check_error(*run(capsys, *SIM, "-c", "1000000"), "--concurrency", "12,000,000",
                f"{MAX_PLANNED_REQUESTS:,}", "lower --concurrency")


def test_huge_request_count_is_refused(capsys):
    check_error(*run(capsys, *SIM, "-r", "10", "-n", "50000000"), "--requests", "50,000,000")


def test_huge_agentic_run_is_refused(capsys):
    """coding-agent has 40 turns: 100,000 sessions are 4,000,000 requests."""
    check_error(*run(capsys, *SIM, "-w", "agentic", "-c", "8", "--sessions", "100000"), "--sessions",
                "4,000,000")
