"""mend54: the leftovers round 54's helpers named (ux54, break54)."""

from __future__ import annotations

from cli_runner import run

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
