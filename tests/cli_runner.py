"""Run the ``jalapeno`` CLI in-process for tests."""

from __future__ import annotations

from jalapeno.cli.app import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    """Run ``jalapeno ARGS``; return (exit code, stdout, stderr)."""
    code = 0
    try:
        main(list(args))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


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
