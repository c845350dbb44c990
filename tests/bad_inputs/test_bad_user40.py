"""Round 40's break pass (break40): Python API entry points (README's ``import jalapeno as jp``) that crashed
with a bare TypeError/AttributeError or read a wrong type silently; each now one error naming the argument and
the fix. The CLI surfaces probed this round (every command's options, system TOML and config.json mutations,
traces, output paths) already refused their bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import jalapeno as jp
from jalapeno.errors import JalapenoError, SpecError


def _message(fn) -> str:
    with pytest.raises(JalapenoError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize(
    "systems, shown", [("gb200-nvl72", "'gb200-nvl72'"), ("h100", "'h100'"), (7, "int"), (("h100", 3), "3")]
)
def test_run_validation_systems_is_a_collection_of_names(systems, shown):
    """systems='gb200-nvl72' was filtered with `p.system in systems`, a substring test: 'b200' is in
    'gb200-nvl72', so B200's points were judged as GB200's, silently. Refused before any point is read."""
    msg = _message(lambda: jp.run_validation(use_aiconfigurator=False, systems=systems))
    assert msg.startswith("run_validation: systems:"), msg
    assert shown in msg and "system" in msg


@pytest.mark.parametrize("kw", [{"mlperf": "no"}, {"held_out": 1}, {"use_aiconfigurator": "False"}])
def test_run_validation_switches_are_booleans(kw):
    """mlperf='no' is a truthy string: the MLPerf rows were added to the figures."""
    ((name, value),) = kw.items()
    msg = _message(lambda: jp.run_validation(**kw))
    assert msg.startswith(f"run_validation: {name}: must be True or False, got {value!r}"), msg
    assert f"{name}=True or {name}=False" in msg


@pytest.fixture(scope="module")
def h100_frontier():
    m, p = jp.load_model("qwen3-32b"), jp.load_pricer("h100")
    sf = jp.system_frontier(
        m, p, jp.get_workload("1k1k"), jp.get_precision("bf16"), options=jp.SweepOptions(batches=(1, 4))
    )
    return sf.record(), sf.system


@pytest.mark.parametrize(
    "kw, name, shown",
    [
        ({"target_tok_per_s": "1e6"}, "target_tok_per_s", "'1e6'"),
        ({"target_tok_per_s": True}, "target_tok_per_s", "True"),
        ({"min_interactivity": "50"}, "min_interactivity", "'50'"),
        ({"min_interactivity": None}, "min_interactivity", "None"),
    ],
)
def test_plan_capacity_numbers_are_numbers(h100_frontier, kw, name, shown):
    """'1e6' raised TypeError ('>' between str and int); True planned a fleet for 1 tok/s."""
    fr, system = h100_frontier
    args = {"target_tok_per_s": 1e6, **kw}
    msg = _message(lambda: jp.plan_capacity(fr, system, **args))
    assert msg.startswith(f"plan_capacity: {name}: must be a number, got {shown}"), msg
    assert "Fix: pass a number" in msg


def test_plan_capacity_takes_numpy_numbers(h100_frontier):
    """A NumPy scalar is a number: 1e6 output tok/s at 145.8 tok/s/chip (the frontier's best) is
    ceil(1e6 / 145.8) = 6,859 chips or a little more (whole instances), the same as the float's plan."""
    fr, system = h100_frontier
    a = jp.plan_capacity(fr, system, np.float64(1e6), min_interactivity=np.int64(0))
    b = jp.plan_capacity(fr, system, 1e6)
    assert a.chips == b.chips >= math.ceil(1e6 / 146.0)


def test_compare_systems_takes_a_list_of_pricers():
    """One pricer in place of the list raised TypeError ('RooflinePricer' object is not iterable); a generator
    was consumed by the type check and left nothing to compare."""
    m, p = jp.load_model("qwen3-32b"), jp.load_pricer("h100")
    wl, prec = jp.get_workload("1k1k"), jp.get_precision("bf16")
    for systems, shown in ((p, "RooflinePricer"), ((q for q in [p]), "generator")):
        msg = _message(lambda: jp.compare_systems(m, systems, wl, prec))
        assert msg.startswith(f"compare_systems: systems: expected a list of pricers, got {shown}"), msg
        assert "[pricer]" in msg


@pytest.mark.parametrize(
    "name, words", [(5, ("expected a preset name, got int",)), ("", ("empty name",)), ("  ", ("empty name",))]
)
def test_get_workload_name_is_a_non_empty_string(name, words):
    """5 raised AttributeError ('int' object has no attribute 'removeprefix'); '' ran 8k1k, the default."""
    with pytest.raises(SpecError) as e:
        jp.get_workload(name)
    assert e.value.field == "workload"
    for w in words:
        assert w in str(e.value)
    assert "1k1k" in e.value.fix


def test_get_workload_fixed_is_a_bool():
    """fixed='no' read as true: the lengths became exact (range ratio 1) instead of InferenceX's 0.8 spread."""
    with pytest.raises(SpecError) as e:
        jp.get_workload(isl=100, osl=10, fixed="no")
    assert e.value.field == "fixed" and "got 'no'" in str(e.value)
    assert jp.get_workload(isl=100, osl=10).range_ratio == 0.8  # default spread still given
    assert jp.get_workload().name == "8k1k"  # no name: the documented default
