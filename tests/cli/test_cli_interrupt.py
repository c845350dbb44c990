"""Ctrl-C during a command exits non-zero (cli/app.main).

typer (>= 0.16) turns a KeyboardInterrupt inside a command into ``Exit(130)`` and, with
``standalone_mode=False``, returns that code instead of raising it; main dropped the returned code,
so an interrupted ``jalapeno compare`` (its sweeps in worker processes, analysis/workers.py) exited 0
with nothing printed, and ``jalapeno compare ... > out && next`` went on as if it had finished.
"""

from __future__ import annotations

import pytest

from jalapeno.cli.app import main


def test_an_interrupted_command_exits_non_zero(monkeypatch, capsys):
    import jalapeno.analysis.comparison as comparison

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(comparison, "compare_systems", interrupted)
    with pytest.raises(SystemExit) as got:
        main(["compare", "-s", "h200,b200"])
    # 130 (128 + SIGINT, the shell's convention) where typer returns it; 1 where an older typer raises Abort
    assert got.value.code in (130, 1)
    assert capsys.readouterr().out == ""


def test_a_finished_command_still_exits_zero(capsys):
    main(["hardware", "list"])  # returns: no SystemExit
    assert capsys.readouterr().out
