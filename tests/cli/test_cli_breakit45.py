"""Findings of round 45's break-it pass (break45), each a silent acceptance before its fix: ``shares_ports_with_inner``
on a system's innermost link level dropped that level's ports out of the link power (Jalapeño's TDP 700 -> 652 W)."""

from __future__ import annotations

import json

from cli_runner import check_error, run


def _json(out: str) -> dict:
    return json.loads(out[out.index("{") :])


def test_shares_ports_on_the_innermost_level_is_refused(capsys):
    args = ("predict", "-s", "jalapeno", "-m", "llama-3.3-70b", "-c", "8", "--power", "chip", "--json")
    code, out, err = run(capsys, *args, "--set", "levels.tray.shares_ports_with_inner=true")
    # was: exit 0 at 652 W a chip, Jalapeño's 700 W TDP (data/systems/jalapeno.toml) less the tray's ports
    check_error(
        code,
        out,
        err,
        "--set: levels: the innermost level 'tray' sets shares_ports_with_inner = true",
        "no level lies inside it to share ports with",
        "remove it there",
    )
    # on an outer level the flag is what it says (the rack's already shares the tray's ports in the catalog file)
    code, out, err = run(capsys, *args, "--set", "levels.global.shares_ports_with_inner=true")
    assert code == 0, err


def test_shares_ports_on_the_innermost_level_of_a_file_is_refused(capsys, tmp_path):
    p = tmp_path / "one.toml"
    p.write_text('base = "jalapeno"\nlevels.tray.shares_ports_with_inner = true\n')
    code, out, err = run(capsys, "hardware", "show", str(p))
    check_error(code, out, err, "one.toml", "innermost level 'tray'", "shares_ports_with_inner")
