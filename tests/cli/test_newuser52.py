"""Round 52 new-user fixes (newuser52): a hardware architect's variants of Jalapeño.

Expected values are worked by hand in each test's comments, not read off the code's printed text.
"""

from __future__ import annotations

import json

from cli_runner import run


def _variant(tmp_path, name: str, body: str):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'base = "jalapeno"\nname = "{name}"\n{body}')
    return str(path)


def test_a_variant_file_stating_a_lower_tdp_gets_the_power_cap_note(capsys, tmp_path, monkeypatch):
    """A variant TOML with chip.tdp_w = 500 / chip.sustained_w = 400 kept Jalapeño's all-in 1,150 W per chip
    (its source still 'chip 700 W + ...') and its step times, with no word; the same keys given by --set got the
    power-cap note. The file's keys now get it too, naming the file. All-in stays 1.15 kW: the catalog's figure."""
    from jalapeno.cli import system_opts

    monkeypatch.setattr(system_opts, "_NOTED", set())
    path = _variant(tmp_path, "jal-500w", "chip.tdp_w = 500\nchip.sustained_w = 400\n")
    code, out, err = run(capsys, "hardware", "show", path, "--json")
    assert code == 0, err
    assert "jal-500w.toml: chip.tdp_w, chip.sustained_w changes only the power the chip and sustained" in err
    assert "there is no power-capping (DVFS) model" in err
    data = json.loads(out)
    assert data["chip"]["tdp_w"] == 500
    assert abs(data["allin_power_w_per_chip"] - 1150) < 1e-6  # the base's 1.15 kW, unchanged: what the note says


def test_a_variant_file_without_power_keys_gets_no_power_cap_note(capsys, tmp_path, monkeypatch):
    """A variant that changes only the HBM bandwidth states no power key: no power-cap note (its power follows its
    components instead, specs/power.follow_variant)."""
    from jalapeno.cli import system_opts

    monkeypatch.setattr(system_opts, "_NOTED", set())
    path = _variant(tmp_path, "jal-bw", "chip.hbm_bandwidth_tb_per_s = 20.5\n")
    code, out, err = run(capsys, "hardware", "show", path, "--json")
    assert code == 0, err
    assert "power-capping" not in err


SPACE = """name = "tdp-space"
base = "jalapeno"
trials = 1

[objective]
metrics = ["tok_s_per_kw"]
min_interactivity = 50
power = "all-in"

[[cases]]
model = "gpt-oss-120b"
workload = "8k1k"

[params."chip.tdp_w"]
low = 600
high = 900

[derived]
"chip.sustained_w" = "{chip.tdp_w} * 550 / 700"
"""


def test_an_explore_space_searching_the_tdp_gets_the_power_cap_note(capsys, tmp_path, monkeypatch):
    """A space searching chip.tdp_w 600-900 W ranked its designs on all-in tok/s/kW, which a stated TDP never
    reaches (all-in stays the base's 1,150 W), and on chip tok/s/kW with no DVFS slowdown, with no word. The note
    names the space file and both keys (the param and the derived sustained power). The search itself is stopped
    before any trial (a stub evaluator): only the note is under test."""
    import pytest

    pytest.importorskip("optuna")
    from jalapeno.analysis import explore as explore_mod
    from jalapeno.cli import system_opts
    from jalapeno.errors import SpecError

    def stop(space):
        raise SpecError("stub", "stopped before any trial", "none: a test stub")

    monkeypatch.setattr(system_opts, "_NOTED", set())
    monkeypatch.setattr(explore_mod, "make_evaluator", stop)
    space = tmp_path / "tdp.toml"
    space.write_text(SPACE)
    code, out, err = run(capsys, "explore", str(space), "--store", str(tmp_path / "store"))
    assert code != 0
    assert "stopped before any trial" in err
    assert f"note: {space}: chip.tdp_w, chip.sustained_w changes only the power the chip and sustained" in err
