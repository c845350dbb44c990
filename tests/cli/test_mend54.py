"""mend54: the leftovers round 54's helpers named (ux54, break54)."""

from __future__ import annotations

import pytest
from cli_runner import check_error, error_line, run

SET = ("--set", "chip.tdp_w=1000")
# mi350x's $/chip-hour is an estimate (catalog: "as MI355X"), so plan's cost line carries the hardware show pointer.
SHOWN = "`jalapeno hardware show mi350x --set chip.tdp_w=1000`, cost.usd_per_chip_hour)"


def test_one_rack_is_singular_on_the_fleet_line():
    """plan --racks 1 printed 'chips: 1 racks x 72 chips per rack' (ux54); 2 racks stay plural."""
    from jalapeno.analysis.fleet import fleet_chips
    from jalapeno.specs.catalog import load_system

    gb200 = load_system("gb200-nvl72")
    assert fleet_chips(gb200, racks=1) == (72, "chips: 1 rack x 72 chips per rack = 72")
    assert fleet_chips(gb200, racks=2) == (144, "chips: 2 racks x 72 chips per rack = 144")


def test_cost_line_estimate_pointer_carries_the_set_options(capsys):
    """The cost line's `hardware show NAME` pointer dropped the run's --set (ux54): `hardware show mi350x` shows the
    catalog's 1,400 W chip, not the 1,000 W the run priced. Each plan form (--chips fleet, --target plan, agentic)
    now points at the command the power and price basis lines point at."""
    for extra in (("--chips", "64"), ("--target", "1e5")):
        code, out, err = run(capsys, "plan", "-m", "gpt-oss-120b", "-s", "mi350x", *SET, *extra)
        assert code == 0, err
        cost = [ln for ln in out.splitlines() if ln.strip().startswith("cost:")]
        assert len(cost) == 1 and SHOWN in cost[0], (extra, cost)
    code, out, err = run(capsys, "plan", "-s", "mi350x", *SET, "-w", "agentic:coding-agent", "--target", "1e5")
    assert code == 0, err
    cost = [ln for ln in out.splitlines() if ln.strip().startswith("cost:")]
    assert len(cost) == 1 and SHOWN in cost[0], cost
    # without --set the pointer is the bare name, as before
    code, out, err = run(capsys, "plan", "-m", "gpt-oss-120b", "-s", "mi350x", "--chips", "64")
    assert code == 0, err
    assert "`jalapeno hardware show mi350x`, cost.usd_per_chip_hour)" in out


def test_predict_price_note_carries_the_set_options():
    """predict's / simulate's $ rows mark an estimated price with the same pointer (report/cell_notes.price_note)."""
    from jalapeno.report.cell_notes import price_note
    from jalapeno.specs.catalog import load_system

    assert SHOWN in price_note(load_system("mi350x", (("chip.tdp_w", 1000),)))
    assert price_note(load_system("gb200-nvl72")) == ""


def test_efficiency_toml_that_is_a_directory_is_named_one(tmp_path, capsys):
    """--efficiency x.toml where x.toml is a directory said 'x.toml not found' (break54); it is named a directory,
    as audit --claims names one (specs/files.read_user_text), and a missing x.toml is still 'not found'."""
    d = tmp_path / "x.toml"
    d.mkdir()
    base = ("predict", "-m", "gpt-oss-120b", "-s", "h200", "--concurrency", "8", "--efficiency")
    line = error_line(*run(capsys, *base, str(d)))
    assert "--efficiency" in line and "is a directory, not a calibration TOML" in line and "not found" not in line
    assert "not found" in error_line(*run(capsys, *base, str(tmp_path / "y.toml")))


def _space(**params) -> dict:
    return {
        "name": "one",
        "base": "jalapeno",
        "objective": {"metrics": ["tok_s_per_kw"]},
        "cases": [{"model": "gpt-oss-120b", "workload": "1k1k"}],
        "params": params,
    }


def test_a_one_value_dimension_is_refused_in_either_form():
    """explore ran `choices = [6]` while `low = high = 6` was refused as 'need low < high' (break54): both hold one
    value, a fixed value and no dimension, and both are refused with one message naming the fix."""
    from jalapeno.errors import SpecError
    from jalapeno.specs.design_space import design_space_from_dict

    msgs = []
    for p in ({"choices": [6]}, {"low": 6, "high": 6, "integer": True}):
        with pytest.raises(SpecError) as e:
            design_space_from_dict(_space(**{"chip.hbm_stacks": p}), "space.toml")
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "params.chip.hbm_stacks: holds one value (6)" in msgs[0]
    assert "two or more choices" in msgs[0] and "base system" in msgs[0]
    # two values, and a true range, still load
    design_space_from_dict(_space(**{"chip.hbm_stacks": {"choices": [6, 8]}}), "space.toml")
    design_space_from_dict(_space(**{"chip.hbm_stacks": {"low": 6, "high": 8, "integer": True}}), "space.toml")


def test_two_tiers_of_one_floor_are_refused_as_at_is(capsys):
    """--tiers a=5,b=5 ran two rows of one point while --at 50,50 was refused as given twice (break54)."""
    cmd = ("compare", "-m", "gpt-oss-120b", "--systems", "h200")
    check_error(*run(capsys, *cmd, "--at", "50,50"), "--at", "50 is given twice")
    line = error_line(*run(capsys, *cmd, "--tiers", "a=5,b=5"))
    assert "--tiers: 5 is given twice (tiers 'a' and 'b')" in line and "its own floor" in line
