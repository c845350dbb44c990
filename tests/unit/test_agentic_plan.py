"""analysis/agentic_plan: an agentic fleet sized on compare -w agentic:…'s frontier, figures checked by hand."""

from __future__ import annotations

import math

import pytest

from jalapeno.analysis.agentic import agentic_frontier, compare_agentic
from jalapeno.analysis.agentic_plan import agentic_fleet, output_tokens_per_task, plan_agentic, target_tasks_per_hour
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.specs.agentic import get_agentic
from jalapeno.specs.catalog import load_model

OPTS = SweepOptions(serving="agg", max_stage_factor=1)  # compare -w agentic:…'s sweep (cli/agentic_cmd)


@pytest.fixture(scope="module")
def gb300():
    m, pr, spec = load_model("deepseek-r1"), load_pricer("gb300-nvl72"), get_agentic("coding-agent")
    return m, pr, spec, agentic_frontier(m, pr, spec, ["fp4"], OPTS)


def test_target_in_output_tokens_becomes_tasks_per_hour():
    spec = get_agentic("coding-agent")  # 40 turns x 350 reply tokens = 14,000 output tokens per task
    assert output_tokens_per_task(spec) == 14_000
    assert target_tasks_per_hour(1e5, "output", spec) == pytest.approx(1e5 * 3600 / 14_000)  # 25,714.3 tasks/h
    assert target_tasks_per_hour(500, "tasks", spec) == 500.0
    with pytest.raises(SpecError, match="--target-kind.*tasks"):
        target_tasks_per_hour(1e5, "total", spec)
    with pytest.raises(SpecError, match="--target"):
        target_tasks_per_hour(-1, "tasks", spec)


def test_plan_is_compare_peak_point_times_whole_instances(gb300):
    m, pr, spec, af = gb300
    peak = compare_agentic(m, [pr], spec, {pr.system.name: ["fp4"]}, options=OPTS).systems["gb300-nvl72"]["peak"]
    plan = plan_agentic(af, spec, 10_000.0)
    assert plan.point["deployment"] == peak["deployment"]
    tph = peak["tasks_per_hour_per_chip"]
    assert plan.point["tasks_per_hour_per_chip"] == pytest.approx(tph)
    n = math.ceil(10_000.0 / (tph * plan.chips_per_instance))  # instances = ceil(demand / per-instance rate)
    assert plan.instances == n and plan.chips == n * plan.chips_per_instance
    assert plan.tasks_per_hour >= 10_000.0 > plan.tasks_per_hour - tph * plan.chips_per_instance
    assert plan.power_w["all-in"][2] == pytest.approx(plan.chips * 2100.0)  # GB300 all-in 2,100 W per chip (file)
    assert plan.usd_per_hour == pytest.approx(plan.chips * pr.system.usd_per_chip_hour)
    assert plan.sessions == pytest.approx(n * peak["sessions"])
    assert plan.packaging[-1] == ("rack", 72, math.ceil(plan.chips / 72))


def test_ceiling_picks_the_densest_point_within_it_and_fleet_counts_whole_instances(gb300):
    _, _, spec, af = gb300
    plan = plan_agentic(af, spec, 1000.0, max_task_min=10)
    pts = [p for p in af.points("all-in") if p["task_time_s"] <= 600]
    assert plan.point["task_time_s"] <= 600
    assert plan.point["tasks_per_hour_per_chip"] == max(p["tasks_per_hour_per_chip"] for p in pts)
    fleet = agentic_fleet(af, spec, 7, max_task_min=10)
    assert fleet.instances == 7 // fleet.chips_per_instance and fleet.fleet_chips == 7
    with pytest.raises(InfeasibleDeployment, match="--max-task-min"):
        plan_agentic(af, spec, 1000.0, max_task_min=0.5)
    with pytest.raises(SpecError, match="--max-task-min"):
        plan_agentic(af, spec, 1000.0, max_task_min=-1)
