"""Round 53's break pass (break53): a closed pipe, an interrupt, and inputs that ran without a word. Each case below
fails on main 3c415dc2."""

from __future__ import annotations

import contextlib
import io
import os

import pytest
from cli_runner import run_captured

from jalapeno.cli.app import main


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
