"""Round 27 new-user pass and break-it (newuser27): what a newcomer typed and what it did."""

from __future__ import annotations

import os

import pytest
from cli_runner import run


@pytest.mark.parametrize("argv", [
    ("hardware", "show", "{d}/loop.toml"),
    ("compare", "-s", "{d}/loop.toml"),
    ("models", "show", "{d}/loop.json"),
    ("hardware", "show", "{d}/dangling.toml"),
])
def test_a_symlink_to_nothing_is_refused_by_name(capsys, tmp_path, argv):
    """`hardware show ./loop1` with loop1 -> loop2 -> loop1 raised pathlib's RuntimeError ('Symlink
    loop from ...') as a traceback: the system loader resolved the path before reading it; a
    dangling link said 'file not found' of a file `ls` lists."""
    for ext in ("toml", "json"):
        os.symlink(tmp_path / f"other.{ext}", tmp_path / f"loop.{ext}")
        os.symlink(tmp_path / f"loop.{ext}", tmp_path / f"other.{ext}")
    os.symlink(tmp_path / "nowhere.toml", tmp_path / "dangling.toml")
    code, out, err = run(capsys, *(a.format(d=tmp_path) for a in argv))
    assert code == 2, out
    assert "Traceback" not in err + out
    assert ("is a symbolic link that leads to no file (broken, or looping back on itself). Fix: point the "
            "link at a real file, or pass a") in " ".join(err.split())
