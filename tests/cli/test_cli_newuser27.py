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


@pytest.mark.parametrize(("kind", "typed", "hint"), [
    ("hardware", "GB300", "(did you mean 'gb300-nvl72'?)"),  # was 'b300': spelling distance, case kept
    ("hardware", "GB300-NVL72", "(did you mean 'gb300-nvl72'?)"),
    ("hardware", "h200-sxm", "(did you mean 'h200'?)"),  # was 'a100-sxm'
    ("hardware", "rubin", "(did you mean 'vera-rubin-nvl72'?)"),  # was no hint
    ("hardware", "nvl72", "(did you mean one of 'gb200-nvl72', 'gb300-nvl72', 'vera-rubin-nvl72'?)"),
    ("hardware", "Jalapeño", "(did you mean 'jalapeno'?)"),
    ("models", "r1", "(did you mean 'deepseek-r1'?)"),  # was no hint
    ("models", "deepseek-r1-0528", "(did you mean 'deepseek-r1'?)"),
    ("models", "Kimi-K2.5", "(did you mean 'kimi-k2.5'?)"),
    ("models", "qwen3", "(did you mean one of 'qwen3-235b-a22b', 'qwen3-32b'?)"),
])
def test_unknown_name_hint_ignores_case_and_finds_families(capsys, kind, typed, hint):
    """The README says 'GB300 NVL72'; `hardware show GB300` answered 'did you mean b300?' (a different
    system: spelling distance on the case-kept name), `h200-sxm` offered a100-sxm and `rubin` nothing."""
    code, out, err = run(capsys, kind, "show", typed)
    assert code == 2, out
    assert f"unknown {'system' if kind == 'hardware' else 'model'} {typed!r} {hint}" in " ".join(err.split())


def test_audit_says_why_a_measured_system_has_no_band(capsys):
    """`audit -s gb300-nvl72 ... --claim throughput_per_chip@50=5188` printed 'band (low-high) 5188-5188'
    with no word: read as a prediction without error, where the set simply has no low/high (measured
    kernels); a derived set (Jalapeño) has a band and no such line."""
    argv = ("audit", "-m", "llama-3.3-70b", "-w", "1k1k", "--claim", "max_interactivity=50")
    # measband27: a measured system priced as validated has its measured error band; a what-if set has none
    code, out, err = run(capsys, *argv, "-s", "h100", "--set", "efficiency.hbm_fraction=0.7")
    assert code == 0, err
    text = " ".join(out.split())
    assert ("band: none for h100+efficiency.hbm_fraction=0.7: only derived efficiency parameters (no kernel tables "
            "of their own: Jalapeño, Vera Rubin, AMD's borrowed part) carry a low/high set, and only a catalog system "
            "fitted on its own measured kernels, priced as validated, on a model validated there, its measured error "
            "band") in text
    code, out, err = run(capsys, *argv, "-s", "h100")
    assert code == 0, err
    assert "band: none" not in out and "band: h100: measured error" in " ".join(out.split())
    code, out, err = run(capsys, *argv, "-s", "jalapeno")
    assert code == 0, err
    assert "band: none" not in out


def test_scale_up_level_of_partial_trays_is_refused(capsys):
    """A 100-chip rack of 8-chip trays (newuser27's open case): refused, naming the level and the multiples."""
    code, out, err = run(capsys, "compare", "-s", "jalapeno", "--set", "levels.rack.chips=100")
    assert code != 0
    assert "'rack' (100 chips) is not a whole number of 'tray' domains (8 chips each)" in err
    assert "96 or 104" in err and "Traceback" not in out + err
