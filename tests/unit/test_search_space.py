"""Recipes state the layouts their benchmark searched (issue 18): a best-at-concurrency point is the
best of those, not of every layout jalapeno enumerates."""

from __future__ import annotations

import pytest

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.engines import get_recipe
from jalapeno.deploy.recipe import _search_space
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.search_space import searched_layouts
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import MeasuredPoint, point_stack, predict_points
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import stack_for_framework
from jalapeno.specs.workload import INFERENCEX_RANGE_RATIO, Workload


def test_recipes_carry_the_searched_layouts():
    # amd-master.yaml dsr1-fp8-mi300x-sglang / -mi325x-sglang: { tp: 8, conc-start: 4, conc-end: 64 }
    assert get_recipe("sglang-mi300x-dsr1-fp8").search_space == ((8, 1, 1),)
    assert get_recipe("sglang-mi355x-dsr1-fp4").search_space == ((4, 1, 1), (8, 1, 1))
    assert get_recipe("dynamo-trt-dsr1-fp4").search_space == ()  # not stated


@pytest.mark.parametrize("bad", [[{"tp": 0}], [{"ep": 8}], [{"tp": 8, "pp": 2}], ["tp8"]])
def test_bad_search_space_names_the_entry(bad):
    with pytest.raises(SpecError) as ei:
        _search_space(bad, "recipe x.search_space")
    assert ei.value.field == "recipe x.search_space[0]"


def _point(system, framework, precision="fp8"):
    return MeasuredPoint("inferencex", "t", system, "deepseek-r1", precision, framework, 8192, 1024, 64.0, None,
                         {"throughput_per_chip": 1000.0, "interactivity": None, "tpot_s": None, "ttft_s": None},
                         "best@concurrency")


def test_searched_layouts_need_the_recipes_engine_and_precision():
    assert searched_layouts(_point("mi325x", "sglang"), stack_for_framework("sglang", "mi325x")) == ((8, 1, 1),)
    assert searched_layouts(_point("mi325x", "vllm"), stack_for_framework("vllm", "mi325x")) == ()
    assert searched_layouts(_point("mi325x", "sglang", "fp4"), stack_for_framework("sglang", "mi325x")) == ()


def test_best_at_concurrency_is_the_searched_layout():
    """MI325X SGLang searched TP8 only: the best-at-64 prediction equals the TP8 (EP1) deployment
    served at concurrency 64 in the steady state, priced the same way (a sweep reads the steady
    state); the matched point reads the run, lower by the idle start's wave (serve/point.run_throughput)."""
    best = predict_points([_point("mi325x", "sglang")])
    matched = _point("mi325x", "sglang")
    matched.mapping = "matched"
    matched.deployment = Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=1)))
    tp8 = predict_points([matched])
    b = best[best.metric == "throughput_per_chip"].predicted.iloc[0]
    m = tp8[tp8.metric == "throughput_per_chip"].predicted.iloc[0]
    pricer = load_any_pricer("mi325x", "calibrated", pricer="roofline", stack=point_stack(matched))
    wl = Workload("8192/1024", 8192, 1024, INFERENCEX_RANGE_RATIO)
    steady = serve_at_concurrency(load_model("deepseek-r1"), pricer, matched.deployment, wl, [64], idle_start=False)
    assert b == pytest.approx(steady.throughput_per_chip[0], rel=1e-6)
    assert 0.9 * b < m < b
