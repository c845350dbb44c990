"""Round 24 new-user pass (user24): what a newcomer typed and what it did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
