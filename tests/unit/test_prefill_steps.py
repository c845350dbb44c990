"""Prefill-first engines (Deployment.prefill_steps = "separate"; ROCm/ATOM's scheduler).

Expected values come from the formula of serve/analytic.py's docstring evaluated here with
independent step-cost calls (a decode-only step, a prefill-only step), and from ATOM's scheduler
source (atom/model_engine/scheduler.py @7934d5e8f: an admitted prompt makes a prefill-only batch).
"""

from __future__ import annotations

import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.engines import get_recipe, launch_limits
from jalapeno.deploy.recipe import _recipe
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


@pytest.fixture(scope="module")
def mi355x():
    return load_model("deepseek-r1"), load_pricer("mi355x"), get_workload("1k1k", None, None)


def _dep(steps: str) -> Deployment:
    return Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=1)), token_budget=16384, prefill_steps=steps)


@pytest.mark.parametrize("b", [16.0, 256.0])
def test_separate_prefill_step_is_the_hand_formula(mi355x, b):
    """τ = step(B, 0) + f·step(0, chunk), f = p/chunk, p = B·ISL/D prefill tokens per decode step
    (p < chunk here: one prompt of ISL tokens per prefill step, every 1/f decode steps)."""
    model, pricer, wl = mi355x
    lay = Layout(tp=8, ep=1)
    d = wl.mean_osl - 1  # decode steps per request (no MTP)
    p = b * wl.mean_isl / d
    chunk = wl.mean_isl  # ISL < the 16384-token budget
    assert p < chunk
    ctx = wl.mean_isl + wl.mean_osl / 2
    dec = step_cost(model, pricer, lay, get_precision("fp8"), Batch.make(decode_seqs=[b], decode_ctx=ctx))
    pre = step_cost(model, pricer, lay, get_precision("fp8"),
                    Batch.make(decode_seqs=[0.0], prefill_tokens=[chunk], prefill_ctx=0.0, prefill_seqs=[1.0]))
    want = dec.step_time_s[0] + p / chunk * pre.step_time_s[0]
    got = aggregated_by_batch(model, pricer, _dep("separate"), wl, [b])
    assert got.tpot_s[0] == pytest.approx(want, rel=1e-9)


def test_separate_costs_more_the_more_prompts_a_step_waits_out(mi355x):
    """A prefill-only step reads the weights again where a mixed step shares the decode step's reads,
    so the penalty grows with the prompts per decode step (∝ B): small at B = 4, large at B = 256."""
    model, pricer, wl = mi355x
    sep = aggregated_by_batch(model, pricer, _dep("separate"), wl, [4.0, 256.0]).tpot_s
    mix = aggregated_by_batch(model, pricer, _dep("mixed"), wl, [4.0, 256.0]).tpot_s
    ratio = sep / mix
    assert (ratio > 1).all()
    assert ratio[0] < 1.02 < ratio[1]


def test_idle_start_wave_runs_the_prompts_alone(mi355x):
    """The first wave of a prefill-first engine prefills with no decode beside it, and the run's
    throughput still falls below the mixed engine's at high load."""
    model, pricer, wl = mi355x
    sep = serve_at_concurrency(model, pricer, _dep("separate"), wl, [256])
    mix = serve_at_concurrency(model, pricer, _dep("mixed"), wl, [256])
    assert sep.throughput_per_chip[0] < mix.throughput_per_chip[0]


def test_atom_recipes_run_prefill_first_and_others_mix():
    for name in ("atom-mi355x-dsr1-fp8-mtp", "atom-mi355x-dsr1-fp4-mtp"):
        assert get_recipe(name).prefill_steps == "separate"
    kw, _ = launch_limits("mi355x", "deepseek-r1", "atom", "fp8", 8, 1024, 1024, 64)
    assert kw["prefill_steps"] == "separate"
    kw, _ = launch_limits("b200", "deepseek-r1", "sglang", "fp8", 8, 1024, 1024, 32)
    assert "prefill_steps" not in kw  # mixed: the default, not restated
    assert _dep("separate").as_dict()["prefill_steps"] == "separate"
    assert "prefill_steps" not in _dep("mixed").as_dict()


def test_bad_prefill_steps_is_one_clear_error():
    with pytest.raises(SpecError) as e:
        _dep("interleaved")
    assert e.value.field == "prefill_steps" and "use mixed" in str(e.value)
    good = dict(name="x", engine="e", version="1", systems=["b200"], model="deepseek-r1", source="s",
                precision="fp8", serving="agg")
    with pytest.raises(SpecError, match="unknown prefill scheduling 'first'") as e:
        _recipe({**good, "prefill_steps": "first"}, 0)
    assert e.value.field.endswith(".prefill_steps")
