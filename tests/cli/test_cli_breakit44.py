"""Findings of round 44's break-it pass (break44), each a silent acceptance or a raw error before its fix:
``--set efficiency.prompt_step_s_per_token`` (its switch cost/step.PROMPT_TOKEN_STEP_ON ships off) priced exactly as
without it; ``--efficiency low|high`` on a system with one set priced as calibrated; a ``--points`` row pasted twice
was predicted and counted twice; a trace's text session id was told to 'use finite numbers' and an infinite one
printed as ``np.float64(inf)``; ``ServerRun.queries(inf)`` raised OverflowError and ``ServerRun(np.int64(n))`` was
refused as not whole."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from cli_runner import check_error, run

from jalapeno.errors import SpecError
from jalapeno.serve.finite_run import ServerRun

POINTS = Path(__file__).parents[2] / "src" / "jalapeno" / "data" / "validation" / "inferencex_points.csv"


def _json(out: str) -> dict:
    return json.loads(out[out.index("{") :])


def test_a_set_key_whose_switch_is_off_is_named_not_charged(capsys):
    args = ("predict", "-s", "b200", "-m", "deepseek-r1", "-c", "64", "--json")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    base = _json(out)
    code, out, err = run(capsys, *args, "--set", "efficiency.prompt_step_s_per_token=1e-3")
    assert code == 0, err
    # 1 ms a prompt token would add seconds to every 8k prompt step, were it charged; it is not (switch off)
    assert _json(out)["ttft_s"] == base["ttft_s"]
    assert (
        "note: --set efficiency.prompt_step_s_per_token is not charged: its switch cost/step.PROMPT_TOKEN_STEP_ON "
        "is off (shipped off), so the what-if changes nothing"
    ) in err
    # a key the model charges gets no such note
    code, out, err = run(capsys, *args, "--set", "efficiency.kernel_launch_s=1e-6")
    assert code == 0, err
    assert "not charged" not in err


def test_efficiency_low_on_a_system_with_one_set_says_it_is_the_calibrated_set(capsys):
    args = ("predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "16", "--json")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    mid = _json(out)
    code, out, err = run(capsys, *args, "--efficiency", "low")
    assert code == 0, err
    # h200's calibration is kind "measured": no [low] table (data/calibration/h200.toml), so the figures are the same
    assert _json(out)["throughput_per_chip"] == mid["throughput_per_chip"]
    assert "note: --efficiency low: h200 has no low set" in err
    assert "priced exactly as calibrated" in err
    # Jalapeño's set is derived, with its own [low] band: no note
    code, out, err = run(
        capsys, "predict", "-s", "jalapeno", "-m", "llama-3.3-70b", "-c", "16", "--json", "--efficiency", "low"
    )
    assert code == 0, err
    assert "has no low set" not in err


def _points(tmp_path: Path, second: dict[str, str] | None) -> Path:
    with POINTS.open(newline="") as f:
        rows = list(csv.DictReader(f))
    p = tmp_path / "pts.csv"
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerow(rows[0])
        w.writerow({**rows[0], **(second or {})})
    return p


def test_a_points_row_pasted_twice_is_refused(capsys, tmp_path):
    p = _points(tmp_path, None)
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--no-mlperf", "--json")
    # was: exit 0, n 2 for the one measurement (its error counted twice in every median)
    check_error(code, out, err, "--points pts.csv: line 3", "repeats line 2 cell for cell", "drop one of the two lines")


def test_the_same_deployment_measured_again_is_kept(capsys, tmp_path):
    p = _points(tmp_path, {"date": "2026-06-01"})  # another run of the same configuration: a point of its own
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--no-mlperf", "--json")
    assert code == 0, err
    (group,) = [g for g in _json(out)["summary"] if g["metric"] == "throughput_per_chip"]
    assert group["n"] == 2


@pytest.mark.parametrize(("cell", "shown"), [('"sess-a1"', "'sess-a1'"), ('"3f2a9c1e-0b7d"', "'3f2a9c1e-0b7d'")])
def test_a_text_session_id_is_named_as_text_with_the_numbering_to_use(capsys, tmp_path, cell, shown):
    p = tmp_path / "t.jsonl"
    p.write_text(
        '{"arrival_s": 0, "input_tokens": 1000, "output_tokens": 10, "session_id": 0}\n'
        f'{{"arrival_s": 1, "input_tokens": 1000, "output_tokens": 10, "session_id": {cell}}}\n'
    )
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w", str(p), "-n", "2")
    # was: "'sess-a1' is not a finite number. Fix: use finite numbers for times, lengths and ids"
    check_error(
        code,
        out,
        err,
        f"t.jsonl: row 2 (line 2): session_id: {shown} is text, not a numeric id",
        "number the session_ids 0, 1, 2, ... (the same number on every row of one session)",
    )


def test_a_text_prefix_group_in_a_csv_is_named_too(capsys, tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("arrival_s,input_tokens,output_tokens,prefix_group\n0,1000,10,sys-a\n")
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w", str(p), "-n", "1")
    check_error(
        code,
        out,
        err,
        "t.csv: row 1 (line 2): prefix_group: 'sys-a' is text, not a numeric id",
        "the same number on every row of one prefix group",
    )


def test_an_infinite_json_id_prints_as_inf(capsys, tmp_path):
    p = tmp_path / "t.jsonl"  # 1e400 is past double range: JSON reads it as inf
    p.write_text('{"arrival_s": 0, "input_tokens": 1000, "output_tokens": 10, "session_id": 1e400}\n')
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w", str(p), "-n", "1")
    check_error(code, out, err, "session_id: inf is not a finite number")
    assert "np.float64" not in err  # was: "session_id: np.float64(inf) is not a finite number"


@pytest.mark.parametrize("rate", [float("inf"), 1e308])
def test_server_run_queries_at_a_rate_past_float_range_is_a_spec_error(rate):
    with pytest.raises(SpecError, match="rate_per_s"):  # was OverflowError from math.ceil
        ServerRun(100, 1e10).queries(rate)


def test_server_run_takes_a_numpy_sample_count():
    # NVIDIA B200 Llama-2-70B Interactive (v5.1 log): 24,576 samples, 1,200 s at 220 q/s; equal-issue padding gives
    # 24,576 x max(ceil(100 / 24,576), ceil(220 x 1,200 / 24,576)) = 24,576 x 11 = 270,336 queries
    assert ServerRun(np.int64(24576), 1200.0).queries(220.0) == 270336
    with pytest.raises(SpecError, match="samples"):
        ServerRun(np.float64(24576.0))
    with pytest.raises(SpecError, match="samples"):
        ServerRun(np.bool_(True))


def test_validate_stack_at_a_version_names_the_rules_it_takes(capsys, tmp_path):
    # predict / frontier / compare said which version rules trtllm@1.1.0rc2 takes and that its prompt-step rule is
    # not charged; validate, which prices every point with that stack, said nothing
    p = _points(tmp_path, {"date": "2026-06-01"})
    code, out, err = run(
        capsys,
        "validate",
        "--points",
        str(p),
        "--no-aiconfigurator",
        "--no-mlperf",
        "--json",
        "--stack",
        "trtllm@1.1.0rc2",
    )
    assert code == 0, err
    assert "note: --stack trtllm@1.1.0rc2 takes the version rules prompt_step_s_per_token" in err
    assert "NOT CHARGED" in err
