"""Silent accepts at the public API (round 41, second pass): each now one SpecError naming the field and the fix,
or a documented normalisation, where before it was served or read wrongly without a word."""

import copy

import pytest

import jalapeno as J
from jalapeno.cost.batch import Batch
from jalapeno.cost.collectives import collective_time
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.serve.limits import padded_to_sizes
from jalapeno.specs.design_space import design_space_from_dict

FP8 = J.get_precision("fp8")
TP8 = J.Pool(layout=J.Layout(tp=8, ep=8))


def test_eager_prompt_alone_must_be_a_bool():
    with pytest.raises(SpecError, match=r"eager_prompt_alone: must be True or False, got 'yes'"):
        J.Deployment(FP8, TP8, eager_prompt_alone="yes")  # 'yes' was read as on
    assert J.Deployment(FP8, TP8, eager_prompt_alone=True).eager_prompt_alone is True


def test_recipe_must_be_a_label_and_the_error_lists_the_recipes():
    # 'bogus' (or a recipe's bare name) was accepted and printed as the config; no setting of a recipe applied
    for bad in ("bogus", "sglang-b200-dsr1-fp8", 5):
        with pytest.raises(
            SpecError,
            match=r"Deployment: recipe: .* is not a recipe label.*known recipes: .*"
            r"dynamo-trt-dsr1-fp4",
        ):
            J.Deployment(FP8, TP8, recipe=bad)
    for label in ("engine: sglang-b200-dsr1-fp8", "as deployed: x", "identified: a (b)", None):
        assert J.Deployment(FP8, TP8, recipe=label).config == (label or "as stated")


def test_padded_to_sizes_sorts_the_captured_sizes_as_the_engines_do():
    # one sequence on one rank, captured (4, 2): the smallest size >= 1 is 2 -> 1 dummy of one token,
    # context (1·100 + 1)/2 = 50.5 (unsorted, searchsorted took 4: context (100 + 3)/4 = 25.75)
    b = padded_to_sizes((4, 2), 1, Batch.make(decode_seqs=1.0, decode_ctx=100.0))
    assert b.decode_seqs.tolist() == [2.0] and b.pad_seqs.tolist() == [1.0] and b.decode_ctx.tolist() == [50.5]


def test_a_fractional_concurrency_is_labelled_as_served():
    m, pr, wl = J.load_model("deepseek-r1"), J.load_pricer("b200"), J.get_workload("1k1k")
    r = J.predict_point(m, pr, J.Deployment(FP8, TP8), wl, 1.5)
    assert abs(r.concurrency - 1.5) < 1e-9  # served at 1.5
    assert "at concurrency 1.50:" in repr(r)  # was 'at concurrency 2'


def test_collective_group_below_one_and_empty_algorithms_are_refused():
    p = J.load_pricer("b200")
    for g in (0, -4):  # returned 0 s, as a group of one does
        with pytest.raises(SpecError, match=r"group: must be at least 1 chip"):
            collective_time("all_reduce", g, 1e6, p.system, p.efficiency)
    with pytest.raises(SpecError, match=r"algorithms: is empty"):  # fell back to every candidate
        collective_time("all_reduce", 8, 1e6, p.system, p.efficiency, algorithms=())
    # a generator of names restricts the choice as the tuple does (it was read up by the name check: all candidates)
    one = collective_time("all_reduce", 8, [1e4], p.system, p.efficiency, algorithms=(a for a in ["ring"]))
    assert list(one.algorithm) == ["ring"]  # automatic: one_shot at 10 kB on B200


SPACE = {
    "name": "t",
    "base": "jalapeno",
    "objective": {"metrics": ["tok_s_per_kw"]},
    "cases": [{"model": "deepseek-r1", "workload": "8k1k"}],
    "params": {"chip.hbm_stacks": {"choices": [4, 6]}},
    "sweep": {"batches": [1, 4]},
}


def test_a_design_space_case_listed_twice_is_refused():
    d = copy.deepcopy(SPACE)
    d["cases"] = d["cases"] * 2  # doubled the case's weight in the objective, silently
    with pytest.raises(SpecError, match=r"cases: the case deepseek-r1 8k1k is listed twice"):
        design_space_from_dict(d)
    d["cases"][1] = {**d["cases"][1], "precision": "fp4"}  # another precision is another case
    assert len(design_space_from_dict(d).cases) == 2


def test_an_unreachable_min_interactivity_is_refused_before_any_trial_with_the_reachable_figure():
    from jalapeno.analysis.explore import make_evaluator

    d = copy.deepcopy(SPACE)
    d["objective"]["min_interactivity"] = 1e12
    with pytest.raises(
        InfeasibleDeployment,
        match=r"never reaches 1e\+12 tok/s/user \(max \d+\.\d\).*lower "
        r"objective.min_interactivity",
    ):
        make_evaluator(design_space_from_dict(d))


@pytest.mark.parametrize("name", ["", "   ", None])
def test_a_workload_needs_a_name(name):
    with pytest.raises(SpecError, match=r"Workload: name: must be a non-empty label"):
        J.Workload(name, 1024, 1024)
