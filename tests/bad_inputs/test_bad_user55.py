"""Round 55's break pass (break55): inputs that still read wrong. Each case below fails on main 9cbe5a57."""

from __future__ import annotations

from cli_runner import error_line, run

# ---- compare: the NAME:KEY=VALUE hint names a system that takes the value, or is left out ------------------------


def test_a_value_no_compared_system_takes_gets_no_per_system_hint(capsys):
    """chip.hbm_stacks must be positive on every system (specs/schema), so -8 is refused on h200 as on b200: the hint
    "give it to one as --set h200:chip.hbm_stacks=-8" sent the user to a spelling refused the same way."""
    line = error_line(*run(capsys, "compare", "-s", "b200,h200", "--set", "chip.hbm_stacks=-8", "--json"))
    assert line == (
        "error: --set: chip.hbm_stacks: must be positive, got -8 (on b200, one of the 2 compared systems). "
        "Fix: give chip.hbm_stacks a positive value"
    )


def test_the_per_system_hint_names_a_system_that_takes_the_value(capsys):
    """Of b200, h200 and jalapeno only jalapeno has a 'tray' link level (data/systems: b200's and h200's are node,
    cluster); the hint named h200, the first other system, which refuses levels.tray as b200 does."""
    line = error_line(*run(capsys, "compare", "-s", "b200,h200,jalapeno", "--set", "levels.tray.chips=1", "--json"))
    assert line.endswith("give it to one as --set NAME:levels.tray.chips=1, e.g. --set jalapeno:levels.tray.chips=1")
