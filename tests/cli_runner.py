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
