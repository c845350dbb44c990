"""Round 31 new user in a notebook (newuser31): the README's "Results print short" held for StepCost only.

Typing ``res``, ``fr``, ``plan`` or ``pr`` as a cell's last line printed the generated dataclass repr: a
Comparison of two systems ran to ~100,000 characters of numpy arrays, a FrontierRecord 71,000, a pricer
11,000, a System 8,000. And plan_capacity took any system beside the frontier: a name raised
AttributeError ('str' object has no attribute 'levels'), another catalog system silently priced this
frontier's chips with its racks, power and $/chip-hour.
"""

from __future__ import annotations

import pytest

import jalapeno as jp
from jalapeno.errors import SpecError

#: a repr a notebook cell shows whole: a line or two, not pages
SHORT = 400


@pytest.fixture(scope="module")
def frontier():
    m = jp.load_model("deepseek-r1")
    return jp.system_frontier(m, jp.load_pricer("gb200-nvl72"), jp.get_workload("1k1k"), jp.get_precision("fp8"),
                              jp.SweepOptions(serving="agg"))


def test_frontier_and_its_record_print_short(frontier):
    rec = frontier.record()
    n = len(rec.frontier)
    peak = max(p.throughput_per_chip for p in rec.frontier if p.feasible)
    for obj, head in ((frontier, "SystemFrontier(gb200-nvl72: deepseek-r1 · 1k1k · fp8, "),
                      (rec, "FrontierRecord(gb200-nvl72: deepseek-r1 · 1k1k · fp8, ")):
        r = repr(obj)
        assert len(r) < SHORT and "\n" not in r and r.startswith(head), r
        assert f"{peak:,.0f} in+out tok/s/chip" in r  # the peak as compare's table prints it
    assert f"{n} frontier points of {len(frontier.sweep.points.interactivity):,} swept" in repr(frontier)
    assert f", {n} points, " in repr(rec)


def test_comparison_prints_each_systems_peak_and_ratio():
    m = jp.load_model("gpt-oss-120b")
    res = jp.compare_systems(m, [jp.load_pricer("b200"), jp.load_pricer("h200")], jp.get_workload("1k1k"),
                             jp.get_precision("mxfp4"), baseline="h200", options=jp.SweepOptions(serving="agg"))
    r = repr(res)
    assert len(r) < SHORT and r.startswith("Comparison(gpt-oss-120b · 1k1k · mxfp4 · all-in, baseline h200: "), r
    b, h = (res.headlines[n].peak_throughput_per_chip for n in ("b200", "h200"))
    assert f"b200 peak {b:,.0f} in+out tok/s/chip ({b / h:.2f}x)" in r and "(1.00x)" in r
    rr = repr(res.record())
    assert len(rr) < SHORT and rr.startswith("ComparisonRecord(gpt-oss-120b · 1k1k · mxfp4 · all-in, baseline h200: ")


def test_plan_pricer_and_system_print_short(frontier):
    plan = jp.plan_capacity(frontier.record(), frontier.system, 1e6, "output", 30.0)
    r = repr(plan)
    assert len(r) < SHORT and r.startswith("CapacityPlan(gb200-nvl72: 1e+06 output tok/s at >= 30 tok/s/user: ")
    # chips = instances x chips per instance, the plan's own arithmetic
    assert f"{plan.chips:,} chips ({plan.instances:,} x {plan.chips_per_instance:,})" in r
    assert f"{plan.tok_per_s_per_chip:,.1f} output tok/s/chip" in r
    pr = jp.load_pricer("gb200-nvl72")
    assert repr(pr) == f"RooflinePricer(gb200-nvl72, efficiency: {pr.efficiency.source})"
    assert repr(pr.system).startswith("System(gb200-nvl72: NVIDIA GB200 NVL72") and len(repr(pr.system)) < SHORT


def test_plan_capacity_refuses_a_system_name(frontier):
    with pytest.raises(SpecError) as e:
        jp.plan_capacity(frontier.record(), "gb200-nvl72", 1e6)
    assert str(e.value) == ("plan_capacity: system: expected a System, got str. Fix: pass the frontier's own system: "
                            "system_frontier(...).system, or load_system(name)")


def test_plan_capacity_refuses_another_systems_racks_and_prices(frontier):
    with pytest.raises(SpecError) as e:
        jp.plan_capacity(frontier.record(), jp.load_system("b200"), 1e6)
    assert str(e.value) == ("plan_capacity: system: 'b200' is not the frontier's system 'gb200-nvl72'. Fix: pass the "
                            "system the frontier was swept on (system_frontier(...).system)")


def test_a_point_prints_short(frontier):
    p = max(frontier.record().frontier, key=lambda q: q.throughput_per_chip)
    r = repr(p)
    assert len(r) < SHORT and r.startswith(f"PointRecord(gb200-nvl72: {p.deployment.label} at concurrency ")
    assert f"{p.throughput_per_chip:,.1f} in+out tok/s/chip, {p.interactivity:,.1f} tok/s/user" in r
    assert f"TPOT {p.tpot_s * 1e3:.2f} ms, {p.bound}-bound)" in r


def test_predict_point_prints_short_and_refuses_a_label_for_a_deployment():
    m, pr, prec = jp.load_model("deepseek-r1"), jp.load_pricer("gb200-nvl72"), jp.get_precision("fp8")
    dep = jp.Deployment(prec, jp.Pool(jp.Layout(dp=8, ep=8)))
    r = repr(jp.predict_point(m, pr, dep, jp.get_workload("1k1k"), 64))
    assert len(r) < SHORT and r.startswith("PredictionRecord(gb200-nvl72: agg attn TP1 DP8 · MoE TP1 EP8 [fp8] at "
                                           "concurrency 64: ")
    with pytest.raises(SpecError) as e:  # was AttributeError: 'str' object has no attribute 'for_model'
        jp.predict_point(m, pr, "dp8 ep8", jp.get_workload("1k1k"), 64)
    assert str(e.value) == ("predict_point: dep: expected a Deployment, got str. Fix: pass "
                            "Deployment(get_precision(name), Pool(Layout(...)))")


@pytest.mark.parametrize("workers", [0, -2, 0.5, float("nan"), "2"])
def test_a_pool_of_no_workers_is_refused(workers):
    """Pool(layout, workers=0) was taken; predict_point then divided by zero and raised IndexError."""
    with pytest.raises(SpecError) as e:
        jp.Pool(jp.Layout(dp=8, ep=8), workers=workers)
    assert str(e.value) == f"pool.workers: must be at least 1, got {workers!r}. Fix: give workers >= 1"
