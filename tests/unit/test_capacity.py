"""Capacity planning (analysis/capacity.py, ``jalapeno plan``).

Expected values by hand: GB200 NVL72 is 72 GPUs per rack, 1,200 W TDP, 2.10 kW all-in per GPU
and $2.21 per GPU-hour (InferenceX's figures, DESIGN.md §3); the plan must meet the target, and
one instance fewer must not; its point must be the best of the frontier above the floor
(checked by brute force over the frontier).
"""

from __future__ import annotations

import math

import pytest
from cli_runner import check_error, run
from frontiers import gb200_deepseek_fp8_1k1k_agg

from jalapeno.analysis.capacity import plan_capacity
from jalapeno.analysis.comparison import system_frontier
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


@pytest.fixture(scope="module")
def gb200():
    return gb200_deepseek_fp8_1k1k_agg()


@pytest.mark.parametrize("kind", ["output", "total"])
def test_plan_meets_the_target_with_the_fewest_instances(gb200, kind):
    fr, s = gb200
    cp = plan_capacity(fr, s, 1e6, kind, 30.0)
    rate = (lambda p: p.output_throughput_per_chip) if kind == "output" else (lambda p: p.throughput_per_chip)
    above = [p for p in fr.frontier if p.interactivity >= 30.0]
    assert cp.point.interactivity >= 30.0 and rate(cp.point) == max(rate(p) for p in above)
    k = cp.chips_per_instance
    assert cp.chips == cp.instances * k
    assert cp.chips * rate(cp.point) >= 1e6 > (cp.instances - 1) * k * rate(cp.point)
    assert cp.packaging == (("rack", 72, math.ceil(cp.chips / 72)),)
    assert cp.power_w["chip"][2] == pytest.approx(cp.chips * 1200)
    assert cp.power_w["all-in"][2] == pytest.approx(cp.chips * 2100)
    assert cp.usd_per_hour == pytest.approx(cp.chips * 2.21)
    text = "\n".join(cp.arithmetic())
    assert f"= {cp.chips:,}" in text and "racks: ceil(" in text


def test_plan_refuses_bad_inputs(gb200):
    fr, s = gb200
    with pytest.raises(SpecError, match="--target"):
        plan_capacity(fr, s, 0.0)
    with pytest.raises(SpecError, match="--target-kind"):
        plan_capacity(fr, s, 1e6, "input")
    # a daily total typed as a rate: 1e17 tok/s is ~2e8x Google's ~5e8 tok/s of 2025
    with pytest.raises(SpecError, match="plausibility bound") as ei:
        plan_capacity(fr, s, 1e17)
    assert "tokens per SECOND" in ei.value.fix
    assert plan_capacity(fr, s, 1e9).chips > 0  # a large but plausible target plans
    with pytest.raises(InfeasibleDeployment, match="reaches at most"):
        plan_capacity(fr, s, 1e6, "output", 1e5)


def test_plan_cli(capsys):
    code, out, err = run(capsys, "plan", "--system", "b200", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
                         "--target", "1e5", "--target-kind", "total", "--min-interactivity", "20")
    assert code == 0, err
    assert "nodes: ceil(" in out and "power (all-in" in out and "$1.95/chip-hour" in out and "deployment: agg" in out
    check_error(*run(capsys, "plan", "--system", "b200", "--target", "1e5", "--target-kind", "input"),
                "--target-kind", "output or total")
    check_error(*run(capsys, "plan", "--system", "b200", "-p", "fp8", "--serving", "agg", "--target", "1e5",
                     "--min-interactivity", "100000"), "--min-interactivity")


def test_plan_leads_with_the_fewest_chips_and_names_the_best_per_chip_point():
    """Instances are whole: for a target of a few instances a smaller instance of lower throughput
    per chip can need fewer chips, and the plan leads with it (round 49: it led with the highest
    throughput per chip and named the fewer-chips point last). Brute force over the frontier above the
    floor: the fewest chips any point needs is min over p of ceil(T / (rate(p) x n_p)) x n_p; the
    highest-rate point is then named with its own (larger) count."""
    pr = load_pricer("h200")
    fr = system_frontier(load_model("deepseek-r1"), pr, get_workload("1k1k"), get_precision("fp8")).record()
    above = [p for p in fr.frontier if p.feasible and p.interactivity >= 20.0]
    named = 0
    top = max(above, key=lambda p: p.output_throughput_per_chip)
    for target in (1e3, 1e5, 1e6):
        cp = plan_capacity(fr, pr.system, target, "output", 20.0)
        need = {id(p): math.ceil(target / (p.output_throughput_per_chip * p.deployment.chips)) * p.deployment.chips
                for p in above}
        least = min(need.values())
        assert cp.chips == least == need[id(cp.point)] and cp.delivered_tok_per_s >= target
        assert cp.point.interactivity >= 20.0
        assert cp.arithmetic()[0].startswith("operating point: the fewest chips that serve the target at >= 20 ")
        if need[id(top)] > least:
            named += 1
            h = cp.highest_rate
            assert h.point is top and h.chips == need[id(top)] and h.rate > cp.tok_per_s_per_chip
            line = next(s for s in cp.arithmetic() if s.startswith("highest output throughput per chip"))
            # H200 nodes hold 8 GPUs and every group here is 8 chips: nodes = chips / 8, on both sides
            assert f"serves the target with {h.chips:,} chips in {h.chips // 8:,} nodes" in line
            assert f"this plan's point needs {cp.chips:,} chips in {cp.chips // 8:,} nodes" in line
            assert f"({(h.chips / cp.chips - 1) * 100:+.0f}% chips" in line
        else:
            assert cp.highest_rate is None and "highest output" not in "\n".join(cp.arithmetic())
    assert named >= 1  # a target of a few instances is among them


def test_plan_states_cost_per_million_tokens_and_whether_the_price_is_an_estimate(gb200):
    # GB200's $2.21/GPU-hour is InferenceX's published TCO figure (not an estimate); $/M tok by hand:
    # $2.21 over the tokens one GPU serves in an hour, rate x 3600 / 1e6 million
    fr, s = gb200
    cp = plan_capacity(fr, s, 1e6, "output", 30.0)
    assert not cp.usd_estimate
    assert cp.usd_per_mtok == pytest.approx(2.21 / (cp.point.output_throughput_per_chip * 3600 / 1e6))
    text = "\n".join(cp.arithmetic())
    assert "cost per M output tokens: $2.21 / (" in text and "estimate" not in text
    # Jalapeño's $1.43/chip-hour is an estimate (data/systems/jalapeno.toml: estimate = true): said on the cost line
    jal = load_pricer("jalapeno")
    sf = system_frontier(load_model("deepseek-r1"), jal, get_workload("1k1k"), get_precision("fp8"),
                         SweepOptions(serving="agg"))
    cj = plan_capacity(sf.record(), jal.system, 1e6, "total", 30.0)
    assert cj.usd_estimate
    assert cj.usd_per_mtok == pytest.approx(1.43 / (cj.point.throughput_per_chip * 3600 / 1e6))
    cost = next(line for line in cj.arithmetic() if line.startswith("cost: "))
    assert "$1.43/chip-hour (an estimate: jalapeno publishes no price" in cost


def _racks_by_hand(p, target: float) -> tuple[int, int]:
    """(chips, 72-GPU racks) of an agg fleet of one group size g = tp * dp chips (pp = 1 on this
    frontier): each group whole in a rack, so floor(72 / g) groups per rack when g <= 72; a group of
    g > 72 takes floor(g / 72) whole racks and its remainder r one of floor(72 / r) slots in another."""
    dep = p.deployment
    assert dep.prefill is None and dep.decode.layout.pp == 1
    n = math.ceil(target / (p.output_throughput_per_chip * dep.chips))
    g = dep.decode.layout.stage_chips
    groups = n * dep.decode.workers
    whole, r = divmod(g, 72)
    return n * dep.chips, whole * groups + (math.ceil(groups / (72 // r)) if r else 0)


def test_plan_names_a_point_that_needs_fewer_racks():
    """plan prints racks packed whole (7c3bf98) but named alternatives by chips only. GB300 agg
    (DeepSeek-R1 8K/1K FP4, 1e6 output tok/s, >= 50 tok/s/user): the best-per-chip point, TP2 DP32 EP64,
    needs 34 instances of 64 GPUs, one per 72-GPU rack (8 GPUs of each idle): 2,176 chips in 34 racks;
    EP72 (TP2 DP36) fills its racks: 2,376 chips in 33 (one per rack). Racks computed by hand for every
    point above the floor. (Rounds 27-34 ran this at >= 60, where TP4 DP32 EP128 led at 4,096 chips in
    64 racks; since round 35's MoE recalibration a 4-chip TP4 instance leads there, which packs racks
    whole, so the case moved to the floor where a rack-sized group still leads.)"""
    pr = load_pricer("gb300-nvl72")
    fr = system_frontier(load_model("deepseek-r1"), pr, get_workload("8k1k"), get_precision("fp4"),
                         SweepOptions(serving="agg")).record()
    cp = plan_capacity(fr, pr.system, 1e6, "output", 50.0)
    hand = [(_racks_by_hand(p, 1e6), p) for p in fr.frontier if p.feasible and p.interactivity >= 50.0]
    (chips, racks), q = min(hand, key=lambda t: (t[0][1], t[0][0], -t[1].output_throughput_per_chip))
    assert "EP64" in cp.point.deployment.label
    assert (cp.chips, cp.packaging[-1][2]) == _racks_by_hand(cp.point, 1e6)
    n = math.ceil(1e6 / (cp.point.output_throughput_per_chip * 64))
    assert (cp.chips, cp.packaging[-1][2]) == (64 * n, n)  # one 64-GPU group per rack
    assert racks < n and "EP72" in q.deployment.label and chips == 72 * racks
    assert cp.highest_rate is None  # the best-per-chip point is also the fewest chips here
    f = cp.fewest_boxes
    assert f.point is q and (f.chips, f.packaging) == (chips, (("rack", 72, racks),))
    line = cp.arithmetic()[-1]
    assert line.startswith("fewer racks: agg attn TP2 DP36 · MoE TP1 EP72 [fp4] (72 chips per instance) at ")
    assert (f"serves the target with {chips:,} chips in {racks} racks at " in line
            and f"this plan's point needs {64 * n:,} chips in {n} racks (whole instances of 64)" in line)


def test_plan_json_carries_both_alternatives(capsys):
    import json

    def plan(floor):
        code, out, err = run(capsys, "plan", "--system", "gb300-nvl72", "--target", "1e6", "--min-interactivity",
                             str(floor), "--serving", "agg", "-p", "fp4", "--json")
        assert code == 0, err
        return json.loads(out)

    # >= 50: the EP64 point, one 64-GPU group per rack; the fewer-racks alternative EP72 fills them
    d = plan(50)
    n = d["packaging"]["rack"]
    assert d["chips"] == 64 * n and d["highest_rate"] is None and d["lead"].startswith("fewest chips")
    box = d["fewest_boxes"]
    assert box["level"] == "rack" and box["deployment"]["chips"] == 72 and box["chips"] == 72 * box["packaging"]["rack"]
    assert box["packaging"]["rack"] < n
    # >= 30: every instance size's own frontier (not only the system's) offers a 16-chip instance that needs the
    # fewest chips, ceil(1e6 / (rate x 16)) instances, four to a rack: the plan leads with it (round 49; it led with
    # the system frontier's best-per-chip point and named this one last), and names that point
    d = plan(30)
    assert d["deployment"]["chips"] == 16 and d["chips"] == 16 * math.ceil(1e6 / (d["tok_per_s_per_chip"] * 16))
    assert d["packaging"] == {"rack": math.ceil(d["chips"] / 64)}
    # ... and it is not on the system's frontier: no point there above the floor has 16 chips, and the fewest chips
    # any of them needs (by hand, ceil(1e6 / (rate x chips)) x chips) is more
    pr = load_pricer("gb300-nvl72")
    fr = system_frontier(load_model("deepseek-r1"), pr, get_workload("8k1k"), get_precision("fp4"),
                         SweepOptions(serving="agg")).record()
    above = [p for p in fr.frontier if p.feasible and p.interactivity >= 30.0]
    assert 16 not in {p.deployment.chips for p in above}
    fleets = [math.ceil(1e6 / (p.output_throughput_per_chip * p.deployment.chips)) * p.deployment.chips for p in above]
    assert min(fleets) > d["chips"]
    top = max(above, key=lambda p: p.output_throughput_per_chip)
    h = d["highest_rate"]
    assert h["tok_per_s_per_chip"] == top.output_throughput_per_chip > d["tok_per_s_per_chip"]
    assert h["chips"] == math.ceil(1e6 / (top.output_throughput_per_chip * top.deployment.chips)) * top.deployment.chips


def test_plan_costs_the_whole_racks_it_leaves_partly_idle(gb200):
    # GB200 NVL72: 72 GPUs a rack, 2.10 kW all-in and $2.21 per GPU-hour (module docstring). A fleet whose chips do
    # not fill its racks is bought and provisioned as whole racks: the idle GPUs are costed on their own line.
    frontier, system = gb200
    for target in (1e5, 3.3e5, 1e6):
        cp = plan_capacity(frontier, system, target, "output", 10.0)
        name, size, racks = cp.packaging[-1]
        assert (name, size) == ("rack", 72)
        prov = cp.provisioned()
        if racks * 72 == cp.chips:
            assert prov is None and cp.provisioned_chips == cp.chips
            continue
        assert prov["chips"] == racks * 72 and prov["idle_chips"] == racks * 72 - cp.chips > 0
        assert prov["usd_per_hour"] == pytest.approx(racks * 72 * 2.21, rel=1e-3)
        assert prov["all_in_power_kw"] == pytest.approx(racks * 72 * 2.10, rel=1e-3)
        assert any(line.startswith(f"provisioned (whole racks): {racks:,} x 72 = {racks * 72:,} chips")
                   for line in cp.arithmetic())
