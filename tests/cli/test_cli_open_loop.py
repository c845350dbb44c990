"""Open-loop predictions, fixed lengths and a concurrency list on the CLI."""

from __future__ import annotations

import json

import pytest
from cli_runner import run

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.point import serve_at_concurrency, serve_at_rate
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


def _run(args, capsys):
    return run(capsys, *args)


def test_rate_and_concurrency_are_the_same_steady_state():
    """Little's law: serving at the rate a concurrency produces gives back that concurrency."""
    m, s, p = load_model("deepseek-r1"), load_pricer("gb200-nvl72"), get_precision("fp8")
    dep, wl = Deployment(p, Pool(Layout(dp=8, ep=8))), get_workload("8k1k")
    # the steady state (no idle-start wave, which serve_at_rate's open loop never has)
    closed = serve_at_concurrency(m, s, dep, wl, [64.0], idle_start=False)
    opened = serve_at_rate(m, s, dep, wl, closed.request_rate_per_s)
    assert opened.concurrency[0] == pytest.approx(64.0, rel=0.03)
    assert opened.throughput_per_chip[0] == pytest.approx(closed.throughput_per_chip[0], rel=0.03)


def test_predict_rate_json_and_overload(capsys):
    code, out, _ = _run(["predict", "--system", "gb200-nvl72", "--dp", "8", "--ep", "8", "--rate", "2", "--json"],
                        capsys)
    assert code == 0
    rec = json.loads(out)
    # throughput per chip = rate x (mean ISL + mean OSL) / chips (InferenceX lengths: 0.9 L)
    assert rec["throughput_per_chip"] == pytest.approx(2 * 0.9 * (8192 + 1024) / 8, rel=0.03)
    code, _, err = _run(["predict", "--system", "gb200-nvl72", "--dp", "8", "--ep", "8", "--rate", "1e6"], capsys)
    assert code == 2 and "overloaded" in err and err.startswith("error:")
    code, _, err = _run(["predict", "--system", "gb200-nvl72", "--dp", "8", "--ep", "8"], capsys)
    assert code == 2 and "--concurrency/--rate" in err


def test_frontier_concurrency_list_and_fixed_lengths(capsys):
    code, out, _ = _run(["frontier", "--system", "h200", "--serving", "agg", "-c", "4,64", "--fixed-lengths",
                         "--json"], capsys)
    assert code == 0
    d = json.loads(out)
    assert d["workload"]["range_ratio"] == 1.0
    assert {round(p["concurrency"]) for p in d["frontier"]} <= {4, 64}
