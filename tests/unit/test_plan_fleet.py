"""``jalapeno plan --chips N``: what a fleet of N chips serves at a per-user speed floor.

Expected values by brute force over the frontier, independently of ``fleet_throughput``: for every
point above the floor, floor(N / chips per instance) whole instances times its chips times its rate.
"""

from __future__ import annotations

import math

import pytest
from cli_runner import check_error, run
from frontiers import gb200_deepseek_fp8_1k1k_agg

from jalapeno.analysis.fleet import fleet_throughput
from jalapeno.errors import InfeasibleDeployment, SpecError


@pytest.fixture(scope="module")
def gb200():
    return gb200_deepseek_fp8_1k1k_agg()


@pytest.mark.parametrize("chips", [72, 1000, 1152])
def test_fleet_serves_the_most_whole_instances_fit(gb200, chips):
    fr, s = gb200
    ft = fleet_throughput(fr, s, chips, "output", 30.0)

    def whole(p) -> int:
        """Instances whose g-chip stage groups (agg: one size, workers x pp of them) sit whole in 72-GPU racks:
        floor(72 / g) a full rack, floor(rest / g) the partial one; at most floor(chips / chips per instance)."""
        pool = p.deployment.decode
        g, k = pool.layout.stage_chips, pool.workers * pool.layout.pp
        full, rest = divmod(chips, 72)
        return min(chips // p.deployment.chips, (full * (72 // g) + rest // g) // k)

    pts = [p for p in fr.frontier if p.feasible and p.interactivity >= 30.0 and p.deployment.chips <= chips
           and p.deployment.decode.layout.stage_chips <= 72]
    by_hand = max(whole(p) * p.deployment.chips * p.output_throughput_per_chip for p in pts)
    assert ft.delivered_tok_per_s >= by_hand * (1 - 1e-9)  # points of groups > 72 chips can only add
    if ft.point.deployment.decode.layout.stage_chips <= 72:
        assert ft.instances == whole(ft.point)
    assert ft.point.interactivity >= 30.0
    assert ft.chips_used == ft.instances * ft.point.deployment.chips <= chips
    assert f"floor({chips:,} chips" in "\n".join(ft.arithmetic())


def test_fleet_refuses_bad_inputs(gb200):
    fr, s = gb200
    for bad in (0, -4, 2.5, True):
        with pytest.raises(SpecError, match="--chips") as ei:
            fleet_throughput(fr, s, bad)
        assert "--chips 1152" in ei.value.fix
    with pytest.raises(SpecError, match="plausibility bound"):  # a 20-digit typo planned 1e23 tok/s silently
        fleet_throughput(fr, s, 10**20)
    assert fleet_throughput(fr, s, 10**9).instances > 0  # the bound itself plans
    with pytest.raises(SpecError, match="--target-kind"):
        fleet_throughput(fr, s, 72, "input")
    with pytest.raises(InfeasibleDeployment, match="reaches at most"):
        fleet_throughput(fr, s, 72, "output", 1e5)
    least = min(p.deployment.chips for p in fr.frontier if p.feasible)
    if least > 1:
        with pytest.raises(InfeasibleDeployment, match=f"the smallest needs {least:,} chips"):
            fleet_throughput(fr, s, least - 1)


def test_plan_cli_chips(capsys):
    code, out, err = run(capsys, "plan", "--system", "b200", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
                         "--chips", "64", "--min-interactivity", "20")
    assert code == 0, err
    assert "64 chips at >= 20 tok/s/user" in out and "instances: floor(64 chips" in out and "delivered:" in out
    assert "no per-user speed floor" not in out
    code, out, err = run(capsys, "plan", "--system", "b200", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
                         "--chips", "64")
    assert code == 0, err  # no floor: the batch point, said as --target says it
    assert "no per-user speed floor: this is the batch (peak-throughput) point" in " ".join(out.split())
    check_error(*run(capsys, "plan", "--system", "b200", "-w", "1k1k"), "--target/--chips", "--chips 1152")
    check_error(*run(capsys, "plan", "--system", "b200", "-w", "1k1k", "--target", "1e5", "--chips", "8"),
                "--target/--chips", "exactly one")
    check_error(*run(capsys, "plan", "--system", "b200", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
                     "--chips", "0"), "--chips", "positive whole number")
    check_error(*run(capsys, "plan", "--system", "b200", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
                     "--chips", "99999999999999999999"), "--chips", "plausibility bound", "--chips 1152")


def test_plan_chips_prices_the_whole_fleet(capsys):
    """The fleet's power and cost are its own chips' (idle ones included), not a `--target` plan's: GB200 NVL72
    by hand from its system file (tdp_w 1,200 W, allin_kw_per_chip 2.10, usd_per_chip_hour 2.21; data/systems/
    gb200-nvl72.toml, InferenceX's figures): 100 chips draw 120 kW at TDP, 210 kW all-in, and cost $221/hour."""
    import json

    code, out, err = run(capsys, "plan", "--system", "gb200-nvl72", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
                         "--chips", "100", "--min-interactivity", "20", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["power_kw"]["chip"] == pytest.approx(120.0) and d["power_kw"]["all-in"] == pytest.approx(210.0)
    assert d["usd_per_hour"] == pytest.approx(221.0)
    code, out, err = run(capsys, "plan", "--system", "gb200-nvl72", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
                         "--chips", "100", "--min-interactivity", "20")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "100 x 2,100 W = 210.0 kW" in flat and "100 x $2.21/chip-hour = $221.00/hour" in flat
    per_m = 221.0 / (d["delivered_tok_per_s"] * 3600 / 1e6)
    digits = 2 - math.floor(math.log10(per_m))  # three significant figures, as plan --target and compare (newuser46)
    assert f"per M output tokens: ${per_m:.{digits}f}" in flat
    assert d["usd_per_mtok"] == pytest.approx(per_m)  # the JSON carries it too, as plan --target --json does


@pytest.fixture(scope="module")
def gb300_8k1k():
    """GB300 NVL72 DeepSeek-R1 FP4 8k/1k, both serving modes: its frontier's only points up to 72 chips are
    4-18-chip ones (the larger instances dominate the rest)."""
    from jalapeno.analysis.comparison import system_frontier
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    pr = load_pricer("gb300-nvl72")
    return system_frontier(load_model("deepseek-r1"), pr, get_workload(None, 8192, 1024), get_precision("fp4"),
                           SweepOptions(serving="both"))


@pytest.mark.parametrize("chips", [8, 72, 100, 1152])
def test_fleet_considers_every_instance_size_not_only_the_frontier(gb300_8k1k, chips):
    """By brute force over every feasible point of the sweep (not the frontier): the most whole instances x
    chips x output rate at >= 20 tok/s/user. The frontier alone gave 72 GB300 chips a 4-chip instance."""
    import numpy as np

    sf = gb300_8k1k
    p = sf.sweep.points
    per = np.array([d.chips for d in sf.sweep.deployments])[sf.sweep.dep_index]
    ok = p.feasible & (p.throughput_per_chip > 0) & (p.interactivity >= 20.0) & (per <= chips)
    by_hand = float(np.max(np.where(ok, (chips // per) * per * p.output_throughput_per_chip, -np.inf)))
    ft = fleet_throughput(sf.fleet_record(chips), sf.system, chips, "output", 20.0)
    assert ft.delivered_tok_per_s == pytest.approx(by_hand)
    if chips == 72:  # the frontier's best: a 4-chip instance far below what 72 chips run
        assert by_hand > 1.5 * fleet_throughput(sf.record(), sf.system, chips, "output", 20.0).delivered_tok_per_s


def test_plan_cli_chips_uses_every_instance_size(capsys, gb300_8k1k):
    """The CLI plans from every size up to the fleet: at least the FP4 sweep's brute-force best (it also sweeps
    the chip's other native presets), and its 72-chip error still names the smallest instance for 2 chips."""
    import json

    import numpy as np

    sf = gb300_8k1k
    p = sf.sweep.points
    per = np.array([d.chips for d in sf.sweep.deployments])[sf.sweep.dep_index]
    ok = p.feasible & (p.throughput_per_chip > 0) & (p.interactivity >= 20.0) & (per <= 72)
    by_hand = float(np.max(np.where(ok, (72 // per) * per * p.output_throughput_per_chip, -np.inf)))
    code, out, err = run(capsys, "plan", "--system", "gb300-nvl72", "--isl", "8192", "--osl", "1024",
                         "--chips", "72", "--min-interactivity", "20", "--json")
    assert code == 0, err
    assert json.loads(out)["delivered_tok_per_s"] >= by_hand * (1 - 1e-9)
    least = int(per[p.feasible & (p.throughput_per_chip > 0)].min())  # not the frontier's smallest
    check_error(*run(capsys, "plan", "--system", "gb300-nvl72", "--isl", "8192", "--osl", "1024",
                     "--chips", str(least - 1)), "--chips", f"the smallest needs {least:,} chips")


@pytest.mark.parametrize("target", [2e4, 1e6])
def test_plan_target_fewest_searches_every_instance_size(gb300_8k1k, target):
    """``plan --target``'s fewest-chips alternative by brute force over every feasible sweep point at >= 50
    tok/s/user: min over points of ceil(target / (output rate x chips per instance)) x chips per instance.
    The system's frontier alone (the old search) missed the small instances a larger one dominates: for
    2e4 output tok/s it offered 80 chips where a 28-chip instance serves it."""
    import numpy as np

    from jalapeno.analysis.capacity import plan_capacity

    sf = gb300_8k1k
    p = sf.sweep.points
    per = np.array([d.chips for d in sf.sweep.deployments])[sf.sweep.dep_index]
    ok = p.feasible & (p.output_throughput_per_chip > 0) & (p.interactivity >= 50.0)
    need = np.ceil(target / (p.output_throughput_per_chip[ok] * per[ok])) * per[ok]
    by_hand = int(need.min())
    cp = plan_capacity(sf.record(), sf.system, target, "output", 50.0, alternatives=sf.fleet_record())
    assert cp.chips == by_hand  # the plan leads with the fewest chips (round 49)
    assert cp.highest_rate is not None and cp.highest_rate.chips > by_hand  # the best-per-chip point, named
    old = plan_capacity(sf.record(), sf.system, target, "output", 50.0)  # the system's frontier alone
    if target == 2e4:
        assert old.chips > by_hand
    with pytest.raises(SpecError, match="alternatives"):
        plan_capacity(sf.record(), sf.system, target, "output", 50.0, alternatives=sf)
