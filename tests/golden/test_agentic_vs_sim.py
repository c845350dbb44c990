"""The analytic session model against the simulator (issue 16: within 10% on task time and throughput).

DeepSeek-R1 FP8, attention DP8 + EP8, on GB200 NVL72 and Jalapeño; the coding-agent shape
(6K system prompt, 2.5K-token tool outputs, 350-token replies, 2 s tool time) cut to 8 turns to
keep the simulation short; closed loop of C sessions (4·C tasks). The simulator's steady state:
throughput = tasks finished between the end of the first C tasks and the start of the last
task, over that window; task time = mean over the tasks that started inside it. Both sides use
the same step cost, so this checks the session bookkeeping (Little's law on sessions, prefix
reuse, chunked prefill beside decode), not the costs. The larger grid (the full 40-turn preset,
a third concurrency) is scripts/check_agentic.py, reported in docs/agentic.md §4.
"""

from __future__ import annotations

import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sessions import sessions_at
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.agentic import AgenticSpec
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

TOL = 0.10  # issue: within 10%
SPEC = AgenticSpec("coding-8", 8, 6000, 2500, 350, 2.0)
#: round 24 (agentic24): the sessions run as a convoy (docs/agentic.md §3 "Open: convoys of sessions"): at
#: these points every session's turn k arrives within ~1.5-2 s of the others' and the closed form, which
#: takes turn arrivals as independent (Poisson), is 13-22% slow on task time; measured, not derived
CONVOY = pytest.mark.xfail(strict=True, reason="convoy of synchronised sessions not in the closed form "
                                               "(docs/agentic.md §3)")
GRID = [#: round 35 (the MoE kernel tables read with their own routing, docs/gap_aic_itl.md "round 35"): the edge point
        #: docs/agentic.md §3 names (+9.7% tasks/s, -7.5% task time) stepped past the band, +10.1% / -7.8% (simulated
        #: 0.1142 tasks/s against 0.1037 analytic), an xfail until round 53 (agentic53): with each turn's remainder
        #: chunk priced as its own tokens the analytic turn is shorter, 0.1039 tasks/s: +9.9% / -7.6%, inside the
        #: band by a hair (the same convoy-side gap)
        ("gb200-nvl72", 8),
        ("gb200-nvl72", 32),
        #: round 24: two more points where the turns stay close to Poisson (gap CV 1.3, 2.1) and the form holds
        ("gb200-nvl72", 16), ("jalapeno", 32),
        #: round 20 (adp20) / round 23 (ttft23) / round 24: task time 82.1 s analytic against 67.4 s simulated
        pytest.param("jalapeno", 16, marks=CONVOY),
        #: round 24: two more convoy points (+13.2%, +13.3% task time), not used before
        pytest.param("jalapeno", 8, marks=CONVOY),
        #: round 27 (gbitl27): with GB300's MoE all-to-all priced as GB200's (fit/kernel_tables.A2A_FABRIC_SIBLING)
        #: the simulated run no longer forms the convoy (task time 81.5 s -> 98.7 s simulated, 92.3 s -> 98.2 s
        #: analytic: -0.5%, rate -3.5%); the point now holds
        ("gb300-nvl72", 16)]


def steady_state(tasks, c: int) -> tuple[float, float]:
    """(tasks/s, mean task time s) of a closed-loop run's steady window."""
    t0 = tasks.end_s.nsmallest(c).max()
    t1 = tasks.start_s.max()
    done = tasks[(tasks.end_s >= t0) & (tasks.end_s <= t1)]
    started = tasks[tasks.start_s >= t0]
    return len(done) / (t1 - t0), float(started.completion_s.mean())


@pytest.fixture(scope="module")
def setup():
    return load_model("deepseek-r1"), Deployment(get_precision("fp8"), Pool(Layout(tp=1, dp=8, ep=8)))


@pytest.mark.parametrize("system_name, c", GRID)
def test_session_model_agrees_with_simulator(setup, system_name, c):
    model, dep = setup
    pr = load_pricer(system_name)
    ana = sessions_at(model, pr, dep, SPEC, [c])
    assert ana.feasible[0] and ana.kv_tier[0] == "hbm"
    res = simulate(model, pr, dep, agentic=SPEC, concurrency=c, sessions=4 * c, seed=0)
    rate, task_s = steady_state(res.tasks, c)
    assert res.summary["preemptions"] == 0
    assert task_s == pytest.approx(ana.task_time_s[0], rel=TOL), (task_s, ana.task_time_s[0])
    assert rate == pytest.approx(ana.tasks_per_s[0], rel=TOL), (rate, ana.tasks_per_s[0])
    assert res.summary["prefix_hit_rate"] == pytest.approx(ana.hit_rate[0], rel=0.02)
