"""The simulator against the analytic model (issue: within 10% on throughput per chip and TPOT).

DeepSeek-R1 FP8 on GB200 NVL72 and on Jalapeño, attention DP8 + EP8 (Layout tp=1, dp=8, ep=8),
the InferenceX 8k1k workload (lengths uniform in [0.8·L, L]) in a closed loop at concurrencies
1, 16 and 256: 10·C counted requests after 2·C warm-up requests (InferenceX). The analytic
side is ``serve_at_concurrency`` (Little's-law fixed point, DESIGN.md §7); both use the same
step cost, so the comparison checks the simulator's batching and bookkeeping, not the costs.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.run import simulate
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

SYSTEMS = ("gb200-nvl72", "jalapeno")
CONCURRENCIES = (1, 16, 256)
TOL = 0.10  # issue: within 10%
#: wall-clock fields of the summary (how fast the simulator ran, not what it simulated)
WALL_CLOCK = {"wall_s", "speedup"}


@pytest.fixture(scope="module")
def setup():
    model = load_model("deepseek-r1")
    dep = Deployment(get_precision("fp8"), Pool(Layout(tp=1, dp=8, ep=8)))
    return model, dep, get_workload("8k1k")


@pytest.fixture(scope="module")
def systems():
    return {name: load_pricer(name) for name in SYSTEMS}


@pytest.mark.parametrize("system_name", SYSTEMS)
@pytest.mark.parametrize("c", CONCURRENCIES)
def test_simulator_agrees_with_analytic(setup, systems, system_name, c):
    model, dep, wl = setup
    system = systems[system_name]
    ana = serve_at_concurrency(model, system, dep, wl, [c]).record(0)
    assert ana["feasible"] and ana["queue_s"] == 0  # below the KV knee: a like-for-like point
    res = simulate(model, system, dep, workload=wl, concurrency=c, seed=0)
    sm = res.summary
    assert sm["requests"] == 10 * c
    assert sm["chips"] == 8 == ana["chips"]
    assert sm["preemptions"] == 0
    tput, tpot = sm["throughput_per_chip"], sm["tpot_s"]["mean"]
    assert tput == pytest.approx(ana["throughput_per_chip"], rel=TOL), (tput, ana["throughput_per_chip"])
    assert tpot == pytest.approx(ana["tpot_s"], rel=TOL), (tpot, ana["tpot_s"])
    # sanity of the simulated lengths: InferenceX draws uniform in [0.8·L, L], mean 0.9·L
    df = res.requests
    assert df.input_tokens.between(int(np.ceil(0.8 * 8192)), 8192).all()
    assert df.output_tokens.between(int(np.ceil(0.8 * 1024)), 1024).all()
    if c >= 16:
        assert df.input_tokens.mean() == pytest.approx(0.9 * 8192, rel=0.02)


def _comparable(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in WALL_CLOCK}


def test_same_seed_same_result(setup, systems):
    model, dep, wl = setup
    a = simulate(model, systems["gb200-nvl72"], dep, workload=wl, concurrency=16, seed=11)
    b = simulate(model, systems["gb200-nvl72"], dep, workload=wl, concurrency=16, seed=11)
    assert _comparable(a.summary) == _comparable(b.summary)
    assert a.requests.equals(b.requests)
    assert a.timeseries.equals(b.timeseries)


def test_different_seed_different_lengths(setup, systems):
    model, dep, wl = setup
    a = simulate(model, systems["gb200-nvl72"], dep, workload=wl, concurrency=16, seed=1)
    b = simulate(model, systems["gb200-nvl72"], dep, workload=wl, concurrency=16, seed=2)
    assert not np.array_equal(a.requests.input_tokens.to_numpy(), b.requests.input_tokens.to_numpy())
    assert not np.array_equal(a.requests.output_tokens.to_numpy(), b.requests.output_tokens.to_numpy())
    assert a.summary["throughput_per_chip"] != b.summary["throughput_per_chip"]
