"""Per-turn TTFT of the analytic session model against the simulator (issue 18's agentic ask: within 15% on TTFT).

tests/golden/test_agentic_vs_sim.py holds task time and throughput on an 8-turn cut of coding-agent; nothing held the
TTFT a planner reads per turn, on the full 40-turn preset (6K system prompt, 2.5K-token tool outputs, 350-token replies,
2 s tool time, context to ~120K). DeepSeek-R1 FP8, attention DP8 + EP8, closed loop of C sessions (4·C tasks, seed 0).
Analytic: the mean over the 40 turns of ``SessionPoints.ttft_turn_s`` (τ/2 + reload + chunked prefill + front end,
serve/sessions.py). Simulated: the mean TTFT of the requests of tasks that start in the steady window (after the first
C tasks have finished, as test_agentic_vs_sim.steady_state). Both price steps with the same step cost, so a gap is the
session bookkeeping (when chunks share a step), not the costs.

Measured round 54 (agentic54), analytic / simulated mean TTFT: GB200 32 sessions 1.559 / 1.679 s (-7.2%), GB200 16
1.548 / 1.681 (-7.9%), GB300 16 1.444 / 1.564 (-7.7%), Jalapeño 32 1.797 / 2.039 (-11.9%), Jalapeño 16 1.785 / 2.252
(-20.7%: the convoy point of docs/agentic.md §3, an xfail here). The analytic TTFT is low at every point: it prices a
turn's chunks in steps that carry one prompt chunk each, while in the simulator turns that returned together share
prefill steps (docs/agentic.md §3 "Open: convoys of sessions", 3.07 chunks per prefill step on Jalapeño at 16).
"""

from __future__ import annotations

import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sessions import sessions_at
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.agentic import AGENTIC_PRESETS
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

TOL = 0.15  # issue 18: analytic TTFT within 15% of the simulator's
SPEC = AGENTIC_PRESETS["coding-agent"]
#: the convoy (docs/agentic.md §3): analytic 1.785 s against 2.252 s simulated, -20.7%, measured round 54
CONVOY = pytest.mark.xfail(
    strict=True, reason="convoy of synchronised sessions shares prefill steps (docs/agentic.md §3)"
)
GRID = [
    ("gb200-nvl72", 32),
    ("gb200-nvl72", 16),
    ("gb300-nvl72", 16),
    ("jalapeno", 32),
    pytest.param("jalapeno", 16, marks=CONVOY),
]


@pytest.fixture(scope="module")
def setup():
    return load_model("deepseek-r1"), Deployment(get_precision("fp8"), Pool(Layout(tp=1, dp=8, ep=8)))


@pytest.mark.parametrize("system_name, c", GRID)
def test_mean_ttft_agrees_with_simulator(setup, system_name, c):
    model, dep = setup
    pr = load_pricer(system_name)
    ana = sessions_at(model, pr, dep, SPEC, [c])
    assert ana.feasible[0] and ana.kv_tier[0] == "hbm"
    res = simulate(model, pr, dep, agentic=SPEC, concurrency=c, sessions=4 * c, seed=0)
    tasks, reqs = res.tasks, res.requests
    t0 = tasks.end_s.nsmallest(c).max()
    steady = reqs[reqs.session.isin(set(tasks[tasks.start_s >= t0].session))]
    assert len(steady) >= SPEC.turns * c  # at least C whole tasks in the window
    assert res.summary["preemptions"] == 0
    sim_ttft = float(steady.ttft_s.mean())
    ana_ttft = float(ana.ttft_turn_s[0].mean())
    assert ana_ttft == pytest.approx(sim_ttft, rel=TOL), (ana_ttft, sim_ttft)
