"""Bad input at the public API (round 41): each refused with one SpecError naming the argument and the fix,
where before it raised ValueError/AttributeError/TypeError deep inside or was served silently."""

import pytest

import jalapeno as J
from jalapeno.errors import SpecError


@pytest.fixture(scope="module")
def parts():
    dep = J.Deployment(precision=J.get_precision("fp8"), decode=J.Pool(layout=J.Layout(tp=8, ep=8)))
    return J.load_model("deepseek-r1"), J.load_pricer("b200"), dep, J.get_workload("1k1k")


@pytest.mark.parametrize(
    "overrides", ["chip.hbm_stacks=8", ("chip.hbm_stacks",), ("chip.hbm_stacks=8",), {"chip.hbm_stacks": 8}, 4]
)
@pytest.mark.parametrize("load", [J.load_system, J.load_efficiency, J.load_pricer])
def test_overrides_that_are_not_pairs_are_refused_by_every_loader(load, overrides):
    with pytest.raises(SpecError, match=r"overrides: must be \(key, value\) pairs.*parse_sets"):
        load("b200", overrides=overrides)


def test_pairs_given_as_lists_or_a_generator_still_load():
    want = J.load_system("b200", (("chip.hbm_stacks", 4),)).chip.hbm_stacks
    assert want == 4  # the override's own value
    assert J.load_system("b200", [["chip.hbm_stacks", 4]]).chip.hbm_stacks == 4
    assert J.load_system("b200", (p for p in [("chip.hbm_stacks", 4)])).chip.hbm_stacks == 4


def test_load_pricer_refuses_a_system_object_and_a_stack_that_is_not_a_name():
    with pytest.raises(SpecError, match=r"load_pricer: system: got the System 'b200'.*load_pricer\('b200'\)"):
        J.load_pricer(J.load_system("b200"))
    with pytest.raises(SpecError, match=r"load_pricer: stack: expected a stack name or a Stack, got int"):
        J.load_pricer("b200", stack=5)


@pytest.mark.parametrize("arg, field", [(0, "model"), (1, "pricer"), (3, "wl")])
def test_predict_point_refuses_a_name_where_an_object_goes(parts, arg, field):
    args = list(parts)
    args[arg] = ["deepseek-r1", "b200", None, "1k1k"][arg]
    with pytest.raises(SpecError, match=rf"predict_point: {field}: expected a"):
        J.predict_point(*args, 8)


def test_predict_point_refuses_both_a_concurrency_and_a_rate(parts):
    # the rate was served and the concurrency dropped without a word
    with pytest.raises(SpecError, match=r"concurrency/rate: give exactly one.*pass concurrency=None with rate="):
        J.predict_point(*parts, 8, rate=1.0)


def test_predict_point_refuses_a_switch_that_is_not_a_bool(parts):
    with pytest.raises(SpecError, match=r"recurring_waves: must be True or False, got 'no'"):
        J.predict_point(*parts, 8, recurring_waves="no")


@pytest.mark.parametrize("switch", ["idle_start", "recurring_waves", "saturate"])
def test_serve_at_concurrency_refuses_a_switch_that_is_not_a_bool(parts, switch):
    with pytest.raises(SpecError, match=rf"serve_at_concurrency: {switch}: must be True or False, got 'no'"):
        J.serve_at_concurrency(*parts, [8.0], **{switch: "no"})
