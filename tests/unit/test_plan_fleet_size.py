"""``jalapeno plan`` fleet sizes a planner gives (``--racks``, ``--power-mw``), the ``--chips`` fleet's tie rule,
and the lines it shares with ``--target`` (the estimate mark, ``lengths:``, ``how sure``).

Expected values by hand from the system files (src/jalapeno/data/systems): GB200 NVL72 racks of 72 GPUs, 2.10 kW
all-in per GPU; B200 nodes of 8 GPUs, 2.17 kW all-in, no rack level; Jalapeño racks of 128 chips, 1.15 kW all-in,
$1.43/chip-hour marked ``(estimate)``.
"""

from __future__ import annotations

import json
import math

import pytest
from cli_runner import check_error, run

import jalapeno.analysis.fleet as fleet_mod
from jalapeno.analysis.fleet import fleet_chips, fleet_throughput
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_system


def test_fleet_chips_from_racks_and_megawatts(monkeypatch):
    gb200, b200 = load_system("gb200-nvl72"), load_system("b200")
    assert fleet_chips(gb200, racks=4)[0] == 4 * 72
    # 20 MW / (2,100 W x 72) = 132.3 racks: 132 whole racks
    chips, line = fleet_chips(gb200, power_mw=20)
    assert chips == math.floor(20e6 / (2100 * 72)) * 72 == 9504 and "132 racks x 72" in line
    # b200 counts nodes: 20 MW / (2,170 W x 8) = 1,152.07 nodes
    assert fleet_chips(b200, power_mw=20)[0] == 1152 * 8
    assert fleet_chips(b200, power_mw=20, convention="chip")[0] == math.floor(20e6 / (1000 * 8)) * 8  # 1,000 W TDP
    with pytest.raises(SpecError, match="no rack level") as ei:
        fleet_chips(b200, racks=4)
    assert ei.value.field == "--racks" and "--chips 256" in ei.value.fix
    for bad in (0, -1, 2.5, True):
        with pytest.raises(SpecError, match="positive whole number of racks"):
            fleet_chips(gb200, racks=bad)
    for bad in (0.0, -3.0, float("nan"), float("inf")):
        with pytest.raises(SpecError, match="positive number of megawatts") as ei:
            fleet_chips(gb200, power_mw=bad)
        assert ei.value.field == "--power-mw"
    with pytest.raises(SpecError, match="holds no whole rack") as ei:  # one rack: 72 x 2,100 W = 151.2 kW
        fleet_chips(gb200, power_mw=0.15)
    assert "--power-mw 0.1512" in ei.value.fix
    # a node of 8 x 1,234.56 W = 9,876.48 W needs 0.00987648 MW: the hint rounds up to 4 digits (0.009877, not
    # 0.009876, which holds no node) and the hinted budget holds one
    monkeypatch.setattr(fleet_mod, "power_w_per_chip", lambda system, convention: (1234.56, "chip TDP"))
    with pytest.raises(SpecError, match="holds no whole node") as ei:
        fleet_chips(b200, power_mw=0.009, convention="chip")
    assert "--power-mw 0.009877 or more" in ei.value.fix
    assert fleet_chips(b200, power_mw=0.009877, convention="chip")[0] == 8
    monkeypatch.undo()
    # exactly 183 H100 nodes at 700 W TDP: 183 x 8 x 700 W = 1,024,800 W; 1.0248e6 / 5600 is 182.99999999999997
    # in floating point, which a bare floor took to 182 nodes
    chips, line = fleet_chips(load_system("h100"), power_mw=1.0248, convention="chip")
    assert chips == 183 * 8 and line.startswith("chips: floor(1.0248 MW")  # the budget as given, not 1.025
    assert fleet_chips(load_system("h100"), power_mw=1.0247, convention="chip")[0] == 182 * 8
    with pytest.raises(SpecError, match="plausibility bound") as ei:
        fleet_chips(gb200, power_mw=1e9)
    assert ei.value.field == "--power-mw"


def test_plan_cli_racks_and_power(capsys):
    code, out, err = run(capsys, "plan", "--system", "jalapeno", "-w", "8k1k", "--racks", "2",
                         "--min-interactivity", "50")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "chips: 2 racks x 128 chips per rack = 256" in flat and "256 chips at >= 50 tok/s/user" in flat
    assert "lengths: uniform in [0.8·L, L]" in flat and "how sure:" in flat  # the --target plan's lines too
    # Jalapeño's price is an estimate: the --chips cost line says so, as --target's does
    assert "256 x $1.43/chip-hour (an estimate: jalapeno publishes no price" in flat
    code, out, err = run(capsys, "plan", "--system", "gb200-nvl72", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
                         "--power-mw", "1", "--min-interactivity", "20", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["fleet_chips"] == 6 * 72 and d["usd_estimate"] is False  # 1 MW / 151.2 kW = 6.6 racks
    assert d["arithmetic"][0].startswith("chips: floor(1 MW / (2,100 W all-in")
    check_error(*run(capsys, "plan", "--system", "b200", "-w", "1k1k", "--racks", "4"), "--racks", "no rack level")
    check_error(*run(capsys, "plan", "--system", "b200", "-w", "1k1k", "--chips", "8", "--racks", "4"),
                "--target/--chips", "--chips and --racks")
    check_error(*run(capsys, "plan", "--system", "b200", "-w", "1k1k", "--chips", "8", "--power", "chip"),
                "--power", "--power-mw")
    check_error(*run(capsys, "plan", "--system", "b200", "-w", "1k1k", "--power-mw", "2", "--power", "wall"),
                "--power", "unknown power convention")


def test_plan_target_and_chips_mark_an_estimated_price_alike(capsys):
    code, out, err = run(capsys, "plan", "--system", "jalapeno", "-w", "8k1k", "--target", "1e5")
    assert code == 0, err
    # data/systems/jalapeno.toml: its source says "(no published price)"; its first clause "assumed all-in capex ..."
    mark = ("(an estimate: jalapeno publishes no price; assumed all-in capex $30k per chip; `jalapeno hardware show "
            "jalapeno`, cost.usd_per_chip_hour)")
    assert mark in " ".join(out.split())
    code, out, err = run(capsys, "plan", "--system", "jalapeno", "-w", "8k1k", "--chips", "1024")
    assert code == 0, err
    assert f"1,024 x $1.43/chip-hour {mark}" in " ".join(out.split())
    code, out, err = run(capsys, "plan", "--system", "b200", "-w", "1k1k", "--chips", "64")
    assert code == 0, err
    assert "an estimate" not in out  # a published price carries no mark


def test_fleet_ties_go_to_the_fewest_chips_used():
    """GB200 NVL72 DeepSeek-R1 FP4 8k/1k at >= 50 tok/s/user on 64 chips: disagg instances of 52, 56 and 64 chips
    (the larger with prefill chips to spare) deliver the same tok/s; the plan keeps the fewest chips busy. By
    brute force: among the points within 1e-9 of the most delivered, the fewest chips used."""
    from jalapeno.analysis.comparison import system_frontier
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    sf = system_frontier(load_model("deepseek-r1"), load_pricer("gb200-nvl72"), get_workload("8k1k"),
                         get_precision("fp4"), SweepOptions(serving="both"))
    fr = sf.fleet_record()
    for chips in (64, 100, 1152):
        pts = [p for p in fr.frontier if p.feasible and p.interactivity >= 50 and p.deployment.chips <= chips]
        d = {id(p): chips // p.deployment.chips * p.deployment.chips for p in pts}
        top = max(d[id(p)] * p.output_throughput_per_chip for p in pts)
        tied = [p for p in pts if d[id(p)] * p.output_throughput_per_chip >= top * (1 - 1e-9)]
        ft = fleet_throughput(fr, sf.system, chips, "output", 50.0)
        assert ft.chips_used == min(d[id(p)] for p in tied)
        if chips == 64:
            assert len(tied) > 1 and ft.chips_used < max(d[id(p)] for p in tied)


def test_fleet_instances_keep_each_group_whole_in_a_rack(capsys):
    """2 GB200 NVL72 racks (144 GPUs) hold 8 EP16 instances, not floor(144 / 16) = 9: a 72-GPU rack holds
    floor(72 / 16) = 4 sixteen-chip groups. 100 GPUs (a rack and 28) hold 4 + floor(28 / 16) = 5, not 6."""
    from frontiers import gb200_deepseek_fp8_1k1k_agg

    from jalapeno.analysis.fleet import fleet_instances

    fr, s = gb200_deepseek_fp8_1k1k_agg()
    p = next(p for p in fr.frontier if p.deployment.chips == 16 and p.deployment.decode.layout.stage_chips == 16)
    assert fleet_instances(p.deployment, s, 144) == (8, ("rack", 72))
    assert fleet_instances(p.deployment, s, 100) == (5, ("rack", 72))
    assert fleet_instances(p.deployment, s, 64) == (4, None)  # 4 groups in one rack: floor(64 / 16), no cut
    code, out, err = run(capsys, "plan", "--system", "gb200-nvl72", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
                         "--racks", "2", "--min-interactivity", "20", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["deployment"]["chips"] == 16  # the EP16 point wins here: its count and the cut are said
    assert d["instances"] == 8 and d["instances_cut_by"] == {"level": "rack", "chips": 72}
    assert "= 9, of which 8 fit with each worker's 16-chip group whole in a rack (2 racks of 72)" in " ".join(
        d["arithmetic"])
    q = next(p for p in fr.frontier if p.deployment.chips == 8 and p.deployment.decode.layout.stage_chips == 8)
    assert fleet_instances(q.deployment, s, 144) == (18, None)  # 8 tiles 72
