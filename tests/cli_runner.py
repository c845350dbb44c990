"""Run the ``jalapeno`` CLI in-process for tests."""

from __future__ import annotations

import contextlib
import io

from jalapeno.cli.app import main


def _code(e: SystemExit) -> int:
    return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)


def run(capsys, *args: str) -> tuple[int, str, str]:
    """Run ``jalapeno ARGS``; return (exit code, stdout, stderr)."""
    code = 0
    try:
        main(list(args))
    except SystemExit as e:
        code = _code(e)
    out, err = capsys.readouterr()
    return code, out, err


def run_captured(*args: str) -> tuple[int, str, str]:
    """``run`` without ``capsys``, for a module- or session-scoped fixture that runs one command for several tests
    (capsys is per test): stdout and stderr are caught by swapping ``sys.stdout`` / ``sys.stderr`` for strings, as
    capsys does; the CLI's consoles (cli/common.py, rich) write to whichever stream is ``sys.stdout`` /
    ``sys.stderr`` when they print. Returns (exit code, stdout, stderr)."""
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as e:
            code = _code(e)
    return code, out.getvalue(), err.getvalue()


def error_line(code: int, out: str, err: str) -> str:
    """The one stderr line of a user error (exit 2, no traceback), checked and returned."""
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def check_error(code: int, out: str, err: str, *words: str) -> None:
    """A user error whose one line contains every word (case-insensitive)."""
    line = error_line(code, out, err).lower()
    for w in words:
        assert w.lower() in line, (w, err)
