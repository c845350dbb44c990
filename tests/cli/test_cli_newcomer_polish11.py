"""Findings of a newcomer's README pass (round 11): each refusal names the option as the user typed
it (long form) and a fix that works when followed, in the syntax of where the value came from."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from cli_runner import check_error, error_line, run

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
PREDICT = ("predict", "-s", "h200", "-m", "llama-3.3-70b")


def test_readme_says_how_to_run_your_own_trace():
    """The simulate comment promised "your own trace" without the option that takes it."""
    m = re.search(r"^# request-level simulation.*?\n(?=\n)", README, re.S | re.M)
    assert m, "README.md lost its request-level simulation block"
    assert "--workload FILE.csv" in m.group(0)
    assert "jalapeno simulate" in m.group(0) and "--workload my-trace.csv" in m.group(0)


def test_concurrency_hint_gives_values_the_option_accepts(capsys):
    """The hint said 'such as 0.5 or 1e6', then -c 0.5 was refused (requests in flight, >= 1)."""
    for bad in ("abc", "4,abc"):
        code, out, err = run(capsys, *PREDICT, "-c", bad)
        check_error(code, out, err, "--concurrency:", f"got '{bad}'", "whole number", "such as 1 or 64")
        assert "0.5" not in error_line(code, out, err)
    # the other number options keep the generic examples: a rate of 0.5 requests/s is valid
    check_error(*run(capsys, *PREDICT, "--rate", "abc"), "--rate:", "such as 0.5 or 1e6")


def test_set_number_fix_is_written_as_set(capsys):
    """--set chip.hbm_stacks=eight said 'e.g. chip.hbm_stacks.value = 4.8': TOML syntax, the
    internal .value key and a fraction for a count of stacks."""
    code, out, err = run(capsys, "hardware", "show", "h200", "--set", "chip.hbm_stacks=eight")
    check_error(code, out, err, "--set: chip.hbm_stacks:", "must be a whole number", "got 'eight'",
                "e.g. --set chip.hbm_stacks=8")
    line = error_line(code, out, err)
    assert ".value" not in line and "4.8" not in line and " = " not in line
    check_error(*run(capsys, "hardware", "show", "h200", "--set", "chip.hbm_bandwidth_tb_per_s=fast"),
                "--set: chip.hbm_bandwidth_tb_per_s:", "must be a number",
                # newuser30: a placeholder, not 4.8 (which read as 4.8 W for chip.tdp_w)
                "e.g. --set chip.hbm_bandwidth_tb_per_s=<number>")


def test_file_number_fix_keeps_toml_syntax(capsys, tmp_path):
    text = (resources.files("jalapeno") / "data" / "systems" / "h200.toml").read_text()
    old = re.search(r"hbm_stacks = \{ value = \d+,", text).group(0)
    f = tmp_path / "bad.toml"
    f.write_text(text.replace(old, 'hbm_stacks = { value = "six",', 1))
    check_error(*run(capsys, "hardware", "show", str(f)), "chip.hbm_stacks.value", "must be a whole number",
                "without quotes, e.g. chip.hbm_stacks.value = 8")


def test_missing_files_name_their_option(capsys, tmp_path):
    """'error: mysys.toml: file not found' did not say which option the path was given to."""
    nope = str(tmp_path / "mysys.toml")
    check_error(*run(capsys, "predict", "-s", nope, "-m", "llama-3.3-70b", "-c", "4"),
                f"--system {nope}: file not found")
    check_error(*run(capsys, "predict", "--system", "h200", "--model", str(tmp_path / "m.json"), "-c", "4"),
                f"--model {tmp_path / 'm.json'}: file not found")
    check_error(*run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w", str(tmp_path / "t.csv")),
                f"--workload {tmp_path / 't.csv'}: file not found")
    check_error(*run(capsys, "validate", "--points", str(tmp_path / "p.csv")), "--points:", "not found")


def test_library_fields_are_shown_as_the_option(capsys):
    """-p fp6 said 'error: precision:' where -p fp4 on H100 said '--precision:'; a typo in
    compare --systems said 'error: system:'."""
    code, out, err = run(capsys, *PREDICT, "-c", "4", "-p", "fp6")
    check_error(code, out, err, "--precision: unknown precision preset 'fp6'")
    code, out, err = run(capsys, "compare", "--systems", "h100,foo", "-m", "llama-3.3-70b")
    check_error(code, out, err, "--systems: unknown system 'foo'")
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "nomodel", "-c", "4")
    check_error(code, out, err, "--model: unknown model 'nomodel'")


def test_explore_missing_file_names_the_argument(capsys, tmp_path):
    code, out, err = run(capsys, "explore", str(tmp_path / "none.toml"))
    check_error(code, out, err, "error: design-space file:", "not found", "SPACE.toml argument")
    assert "SPACE:" not in error_line(code, out, err)


def test_fractional_stack_count_names_the_key_and_a_whole_number(capsys, tmp_path):
    """--set chip.hbm_stacks=4.5 said 'chip: hbm_stacks must be a whole number. Fix: correct chip'."""
    code, out, err = run(capsys, "hardware", "show", "h200", "--set", "chip.hbm_stacks=4.5")
    check_error(code, out, err, "--set: chip.hbm_stacks: must be a whole number", "got 4.5",
                "e.g. --set chip.hbm_stacks=8")
    assert "correct chip" not in error_line(code, out, err)
    text = (resources.files("jalapeno") / "data" / "systems" / "h200.toml").read_text()
    old = re.search(r"hbm_stacks = \{ value = \d+,", text).group(0)
    f = tmp_path / "half.toml"
    f.write_text(text.replace(old, "hbm_stacks = { value = 6.5,", 1))
    check_error(*run(capsys, "hardware", "show", str(f)), "chip.hbm_stacks: must be a whole number", "got 6.5",
                "e.g. chip.hbm_stacks.value = 8")
