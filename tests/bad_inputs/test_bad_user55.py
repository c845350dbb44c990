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


# ---- a full system file: a misspelt optional key is named with its right spelling ---------------------------------


def _h200_with(tmp_path, old: str, new: str) -> str:
    """The shipped h200.toml (a full system file, no base) with one line's key respelt."""
    from jalapeno.specs.catalog import system_path

    text = system_path("h200")[1].read_text()
    assert old in text
    path = tmp_path / "mine.toml"
    path.write_text(text.replace(old, new, 1))
    return str(path)


def test_a_misspelt_optional_key_of_a_full_file_names_the_key(tmp_path, capsys):
    """chip.sram_mib is optional (docs/catalog.md), so pydantic reports only the unknown sram_mb, no missing key to
    match: the fix read 'remove chip.sram_mb or correct its spelling', while the variant path and --set name it."""
    path = _h200_with(tmp_path, "\nsram_mib = ", "\nsram_mb = ")
    line = error_line(*run(capsys, "hardware", "show", path))
    assert (
        line
        == "error: mine.toml: chip.sram_mb: is not a key this table knows. Fix: write sram_mib (a key of this table), not sram_mb"
    )


def test_a_misspelt_key_of_a_link_level_and_of_the_top_level(tmp_path, capsys):
    """A level's optional note (levels.node.note) and the top-level base of a file (read before the schema,
    specs/variants.py): 'notes' and 'bse' were told only to be removed."""
    line = error_line(
        *run(capsys, "hardware", "show", _h200_with(tmp_path, '\nnote = "NVSwitch', '\nnotes = "NVSwitch'))
    )
    assert line.endswith(
        "levels.node.notes: is not a key this table knows. Fix: write note (a key of this table), not notes"
    )
    (tmp_path / "v.toml").write_text('name = "v"\ndescription = "d"\nbse = "h200"\n')
    line = error_line(*run(capsys, "hardware", "show", str(tmp_path / "v.toml")))
    assert line == "error: v.toml: bse: is not a key this table knows. Fix: write base (a key of this table), not bse"
