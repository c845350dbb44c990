"""Round 53's break pass (break53): a closed pipe, an interrupt, and inputs that ran without a word. Each case below
fails on main 3c415dc2."""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest
from cli_runner import check_error, error_line, run, run_captured

from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cli.app import main
from jalapeno.errors import SpecError


def _exit_code_into_closed_pipe(*args: str) -> tuple[int, str]:
    """Run the CLI with stdout a pipe whose reader has gone (``jalapeno ... | head -1`` after head's first line):
    every write fails with EPIPE (Python ignores SIGPIPE). Returns (exit code, stderr)."""
    r, w = os.pipe()
    os.close(r)
    err = io.StringIO()
    with open(w, "w", encoding="utf-8") as out, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as e:
            return (e.code if isinstance(e.code, int) else (0 if e.code is None else 1)), err.getvalue()
    return 0, err.getvalue()


@pytest.mark.parametrize(
    "args",
    [
        ("hardware", "show", "h200"),  # a rich table: rich's own on_broken_pipe exited 1
        ("hardware", "show", "h200", "--json"),  # print() past its 8 KiB buffer: typer's main caught it, exit 1
    ],
)
def test_a_closed_pipe_exits_quietly_with_code_0(args):
    """`jalapeno hardware show h200 | head -1` under `set -o pipefail` failed the pipeline: exit 1 from rich's
    console or typer's main, where cli/app._output_failed (the CLI's own closed-pipe handler) exits 0. Both paths
    now reach that handler: code 0, nothing on stderr."""
    code, err = _exit_code_into_closed_pipe(*args)
    assert code == 0 and err == "", (code, err)


def test_an_open_pipe_still_prints():
    """The handler changes nothing when stdout can be written."""
    code, out, err = run_captured("hardware", "show", "h200")
    assert code == 0 and "h200" in out, (code, err)


# ---- Ctrl-C: one line and exit 130, at any point of a run ---------------------------------------------------------


def _interrupt(*a, **k):
    raise KeyboardInterrupt


def _check_interrupted(code: int, out: str, err: str) -> None:
    """128 + SIGINT (2) = 130, the shell's code for Ctrl-C; one line on stderr, no traceback."""
    assert code == 130, (code, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines == ["interrupted (Ctrl-C): the command stopped before it finished; run it again for its output"], err


def test_ctrl_c_while_a_command_runs_is_one_line(monkeypatch):
    """Inside the command typer's main turned KeyboardInterrupt into Exit(130): exit 130 and not a word."""
    monkeypatch.setattr("jalapeno.cli.catalog_cmds.list_systems", _interrupt)
    _check_interrupted(*run_captured("hardware", "list"))


def test_ctrl_c_while_the_commands_load_is_one_line(monkeypatch):
    """Before typer's main runs (the commands' imports, ~0.3 s of every run) Ctrl-C printed a traceback."""
    monkeypatch.setattr("jalapeno.cli.app._register", _interrupt)
    try:
        result = run_captured("hardware", "list")
    except KeyboardInterrupt:  # escaped main: Python printed its traceback (and would stop pytest)
        pytest.fail("KeyboardInterrupt escaped main")
    _check_interrupted(*result)


# ---- Python API: a grid given as one number -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["concurrency", "batches"])
@pytest.mark.parametrize("value, shown", [(4, "4"), (np.int64(4), "4"), (np.array(4), "4"), (4.0, "4.0")])
def test_a_sweep_grid_of_one_number_is_named(name, value, shown):
    """``SweepOptions(concurrency=4)`` (meaning the one concurrency 4) raised TypeError "object of type 'int' has no
    len()" from the grid check; it now names the option and the tuple to write."""
    with pytest.raises(SpecError) as e:
        SweepOptions(**{name: value})
    assert str(e.value) == (
        f"options.{name}: must be a sequence of numbers, got {shown}. Fix: give a tuple, e.g. {name}=({shown},) for "
        f"one value or {name}=(1, 4, 16, 64)"
    )


def test_a_grid_of_one_value_still_sweeps():
    assert SweepOptions(concurrency=(4,)).concurrency == (4,)


# ---- explore: a trial count no search needs -----------------------------------------------------------------------

_SPACE = """name = "t"
base = "jalapeno"
trials = {trials}
[objective]
metrics = ["tok_s_per_kw"]
[[cases]]
model = "deepseek-r1"
workload = "8k1k"
[params."chip.hbm_stacks"]
choices = [4, 6]
"""


def test_a_space_of_1e11_trials_is_refused(tmp_path, capsys):
    """``trials = 100000000000`` started a search of ~17 million hours (0.63 s a trial measured here) behind a
    progress bar, and created the study first; 1,000,000 (specs/design_space.MAX_TRIALS) is ~10 days at the example's
    0.84 s a trial."""
    space = tmp_path / "s.toml"
    space.write_text(_SPACE.format(trials=10**11))
    check_error(
        *run(capsys, "explore", str(space), "--store", str(tmp_path / "st")),
        "s.toml: trials",
        "at most 1000000, got 100000000000",
    )
    assert not (tmp_path / "st").exists()


def test_trials_past_the_bound_on_the_command_line_are_refused(tmp_path, capsys):
    space = tmp_path / "s.toml"
    space.write_text(_SPACE.format(trials=200))
    check_error(
        *run(capsys, "explore", str(space), "-n", "1000001", "--store", str(tmp_path / "st")),
        "--trials",
        "1,000,001 trials is over the 1,000,000-trial plausibility bound",
        "--trials 200",
    )
    assert not (tmp_path / "st").exists()


# ---- compare: a plain --set refused on one of several systems names that system ----------------------------------


def test_a_shared_set_refused_on_one_system_names_it(capsys):
    """A plain --set sets every compared system; gb300-nvl72 has no tray level (rack, cluster) while jalapeno's first
    level is its 8-chip tray (data/systems): the error listed 'rack, cluster' as if of jalapeno, naming neither."""
    code, out, err = run(capsys, "compare", "-s", "jalapeno,gb300-nvl72", "--set", "levels.tray.chips=4", "--json")
    assert error_line(code, out, err) == (
        "error: --set: levels.tray.chips: no link level named 'tray' (on gb300-nvl72, one of the 2 compared systems). "
        "Fix: use one of rack, cluster (or an index 0-1); a plain --set sets every compared system: give it to one as "
        "--set NAME:levels.tray.chips=4, e.g. --set jalapeno:levels.tray.chips=4"
    )


def test_a_value_refused_on_one_system_names_it(capsys):
    """250 GiB usable fits gb300-nvl72's 288 GiB but not jalapeno's 216 GiB (data/systems): name jalapeno."""
    code, out, err = run(capsys, "compare", "-s", "jalapeno,gb300-nvl72", "--set", "chip.hbm_usable_gib=250", "--json")
    check_error(
        code,
        out,
        err,
        "usable 250 GiB exceeds chip.hbm_capacity_gib, 216 GiB (on jalapeno, one of the 2",
        "--set gb300-nvl72:chip.hbm_usable_gib=250",
    )


def test_a_named_set_keeps_its_message_without_the_plain_hint(capsys):
    code, out, err = run(
        capsys, "compare", "-s", "jalapeno,gb300-nvl72", "--set", "gb300-nvl72:levels.tray.chips=4", "--json"
    )
    line = error_line(code, out, err)
    assert "(on gb300-nvl72, one of the 2 compared systems)" in line and "a plain --set" not in line, line


# ---- a --memory-fraction that fits nothing is named ---------------------------------------------------------------


def test_a_memory_fraction_that_fits_no_layout_is_named(capsys):
    """1% of Jalapeño's 216 GiB usable HBM (data/systems/jalapeno.toml) is 2.2 GiB a chip: no layout the sweep tries
    holds DeepSeek-R1's 671B FP8 parameters (~625 GiB) in it. The error blamed the precision and the system and named
    neither the fraction given nor raising it."""
    code, out, err = run(capsys, "frontier", "-s", "jalapeno", "--memory-fraction", "0.01", "--json")
    check_error(
        code,
        out,
        err,
        "in the engine's memory fraction 0.01 of usable HBM",
        "Fix: raise the memory fraction (0.01 given",
    )


def test_an_agentic_memory_fraction_that_fits_no_layout_is_named(capsys):
    code, out, err = run(
        capsys, "compare", "-s", "jalapeno", "-w", "agentic:coding-agent", "--memory-fraction", "0.01", "--json"
    )
    check_error(
        code, out, err, "no aggregated layout of deepseek-r1 fits on jalapeno in the engine's memory fraction 0.01"
    )


# ---- a trace: one arrival far past the others is that row's slip, not an epoch clock ------------------------------


def test_one_huge_arrival_among_seconds_names_its_row(capsys, tmp_path):
    """Arrivals 0, 1e300, 2 s: the error guessed the first arrival's unit (0 s: 'epoch milliseconds?. Fix: divide by
    1e3', which leaves 1e297 s) and named no row; 1e300 s is past 1e11 s (3,200 years) while the trace starts at 0 s."""
    p = tmp_path / "t.csv"
    p.write_text("arrival_s,input_tokens,output_tokens\n0,100,10\n1e300,100,10\n2,100,10\n")
    code, out, err = run(capsys, "simulate", "-s", "jalapeno", "-w", str(p), "--json")
    assert error_line(code, out, err) == (
        "error: t.csv: row 2 (line 3): arrival_s: 1e+300 s is over 1e+11 s (3,200 years) while the first arrival is "
        "0 s. Fix: give every arrival_s in seconds on one clock"
    )
