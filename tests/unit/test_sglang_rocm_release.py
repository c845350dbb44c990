"""SGLang-ROCm releases before 0.5.12 decode slower: a version rule of the sglang-rocm profile
(data/stacks.toml; scripts/sglang_rocm_release.py; docs/model.md §8.7 (11))."""

from __future__ import annotations

import numpy as np
import pytest
from cli_runner import check_error, run
from script_module import load_script

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.validate import MeasuredPoint, point_release, point_stack
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import _version_rules, get_stack
from jalapeno.specs.workload import Workload

#: the efficiency set's step overhead (specs/efficiency.py; the profile sets none)
BASE_STEP_S = 0.5e-3


def _points():
    pts, _ = load_inferencex(DEFAULT_POINTS)
    return {p.id.split(":")[1]: p for p in pts}


def test_releases_before_0_5_12_take_the_slower_step():
    st = get_stack("sglang-rocm")
    for v in ("0.5.7", "0.5.9", "0.5.11"):
        assert st.at_version(v).step_overhead_s == pytest.approx(6.60e-3)
        assert load_pricer("mi325x", stack=st.at_version(v)).efficiency.step_overhead_s == pytest.approx(6.60e-3)
    for v in ("0.5.12", "0.5.19"):
        assert st.at_version(v).step_overhead_s is None
        assert load_pricer("mi325x", stack=st.at_version(v)).efficiency.step_overhead_s == pytest.approx(BASE_STEP_S)
    assert "step_overhead_s = 0.0066 (sglang-rocm < 0.5.12)" in st.version_note("0.5.9")


def test_the_v0_5_9_rows_are_priced_at_their_release_and_the_others_are_not():
    pts = _points()
    # rows 26/28/34/35 ran 2026-02-27, after InferenceX PR #816 (merged 2026-02-27 01:40 UTC) moved the
    # MI300X/MI325X DeepSeek-R1 SGLang image to v0.5.9; their notes state the image
    for r in ("26", "28", "34", "35"):
        assert point_release(pts[r]) == "0.5.9"
        assert point_stack(pts[r]).step_overhead_s == pytest.approx(6.60e-3)
    for r in ("76", "80"):  # v0.5.19
        assert point_stack(pts[r]).step_overhead_s is None
    assert point_release(pts["119"]) == "0.5.12" and point_stack(pts["119"]).step_overhead_s is None


def test_shipped_size_is_issue_890s_gap_per_step():
    # by hand, from the issue's TPOTs (24.0 / 26.2 ms at C = 4 / 8) and the model's at the newest behaviour
    # (17.25 / 20.75 ms since round 35's stack refit, InferenceX issue #890 against row 76's deployment at 1k/1k):
    # each decode step is one token, so the step overhead grows by the gap: 0.5 + (6.75 + 5.45) / 2 = 6.60 ms; the
    # model's TPOT also
    # carries the few prefill steps interleaved (4 prompts over 1,023 tokens), which the script's solve
    # counts: a few hundredths of a millisecond less
    shipped = get_stack("sglang-rocm").at_version("0.5.9").step_overhead_s
    assert shipped == pytest.approx(6.60e-3, abs=0.1e-3)
    base, s, per = load_script("sglang_rocm_release").fitted_step_overhead()
    assert base == pytest.approx(BASE_STEP_S)
    assert s == pytest.approx(shipped, abs=0.05e-3)
    # the C = 4 gap is the larger: 24.0 - 17.25 = 6.75 ms against 26.2 - 20.75 = 5.45 ms
    assert per[4] - BASE_STEP_S == pytest.approx(6.75e-3, abs=0.6e-3)
    assert per[8] - BASE_STEP_S == pytest.approx(5.45e-3, abs=0.6e-3)
    assert per[4] > per[8]


def test_a_served_v0_5_9_point_decodes_slower_by_the_step():
    p = _points()["76"]  # MI325X TP8 DeepSeek-R1 SGLang deployment
    st = get_stack("sglang-rocm")
    wl = Workload("1k/1k", 1024, 1024, 0.8)
    model = load_model("deepseek-r1")

    def tpot(v):
        return serve_at_concurrency(model, load_pricer("mi325x", stack=st.at_version(v)), p.deployment, wl,
                                    [4.0]).tpot_s[0]

    # one step per output token plus the interleaved prefills (4 prompts over ~1,000 tokens): 6.10 ms x ~1.004
    assert tpot("0.5.9") - tpot("0.5.19") == pytest.approx(6.60e-3 - BASE_STEP_S, rel=0.03)
    assert np.isfinite(tpot("0.5.9"))


def test_a_negative_step_rule_is_refused_naming_the_field():
    with pytest.raises(SpecError) as e:
        _version_rules([{"field": "step_overhead_s", "value": -6e-3, "before": "0.5.12", "source": "s"}],
                       "data/stacks.toml stack sglang-rocm")
    assert e.value.field == "data/stacks.toml stack sglang-rocm.version_rules[0].value"
    assert "must be a finite number >= 0" in str(e.value)


def test_the_mori_disagg_rows_are_priced_at_their_images_release():
    # InferenceX amd-master.yaml @5e2c705d3cbd: dsr1-fp4-mi355x-sglang-disagg[-mtp] both run
    # rocm/sgl-dev:sglang-0.5.9-rocm720-mi35x-mori-0227-3, SGLang 0.5.9 by its tag; the results rows name the
    # framework "mori-sglang" (the configs' "sglang-disagg") and are silent on MTP, so the release is the one
    # both recipes state
    from jalapeno.deploy.engine_version import point_engine_version

    pts = _points()
    for r in ("24", "31"):
        assert pts[r].framework == "mori-sglang" and pts[r].uses_mtp is None
        assert point_release(pts[r]) == "0.5.9"
        assert point_stack(pts[r]).step_overhead_s == pytest.approx(6.60e-3)
    args = ("mi355x", "deepseek-r1", "sglang-disagg", "quark-mxfp4", "disagg")
    assert point_engine_version(*args) == point_engine_version(*args, False) == point_engine_version(*args, True)
    # the aggregated pair disagree (sglang-mi355x-dsr1-fp4 0.5.9, its -mtp sibling 0.5.12): a silent row stays unknown
    agg = ("mi355x", "deepseek-r1", "sglang", "quark-mxfp4", "agg")
    assert (point_engine_version(*agg, False), point_engine_version(*agg, True)) == ("0.5.9", "0.5.12")
    assert point_engine_version(*agg) == ""


def test_the_mori_recipes_run_through_engine_take_the_same_profile_as_validation():
    # the recipe's engine is the configs' framework name "sglang-disagg": on an MI system it takes sglang-rocm at the
    # image's release (before round 32 it fell to the generic default profile), as validation's point_stack does
    from jalapeno.deploy.engine_version import recipe_stack
    from jalapeno.deploy.engines import get_recipe
    from jalapeno.specs.stacks import stack_for_framework

    assert stack_for_framework("sglang-disagg", "mi355x").name == "sglang-rocm"
    for name in ("sglang-mori-mi355x-dsr1-fp4-dep", "sglang-mori-mi355x-dsr1-fp4-dep-mtp"):
        st = recipe_stack(get_recipe(name), "mi355x")
        assert st.name == "sglang-rocm@0.5.9" and st.step_overhead_s == pytest.approx(6.60e-3)
    assert point_stack(_points()["31"]).step_overhead_s == recipe_stack(
        get_recipe("sglang-mori-mi355x-dsr1-fp4-dep"), "mi355x").step_overhead_s


@pytest.mark.parametrize("mtp, release", [(None, "0.5.9"), (MTP(1, 0.7), "0.5.12")])
def test_a_silent_row_with_a_deployment_takes_the_release_of_the_recipe_its_limits_came_from(mtp, release):
    # data/engines.toml: sglang-mi355x-dsr1-fp4 runs 0.5.9, its -mtp sibling 0.5.12 (InferenceX amd-master.yaml
    # @5e2c705d3cbd images). A matched row silent on MTP takes its limits from the recipe its deployment's MTP picks
    # (fit/validate: launch_limits(mtp=mtp is not None)); its release must come from that recipe, not from the
    # two recipes' agreement (they disagree: that gave "" and the profile's newest behaviour)
    dep = Deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8)), mtp=mtp)
    p = MeasuredPoint("inferencex", "t:1", "mi355x", "deepseek-r1", "quark-mxfp4", "sglang", 1024, 1024, 64.0, dep,
                      {}, "matched")
    assert p.uses_mtp is (True if mtp else None)
    assert point_release(p) == release
    silent = MeasuredPoint("inferencex", "t:1", "mi355x", "deepseek-r1", "quark-mxfp4", "sglang", 1024, 1024, 64.0,
                           None, {}, "frontier_peak")
    assert point_release(silent) == ""  # no deployment: no single recipe, the recipes disagree


@pytest.mark.parametrize("engine, system, profile", [("sglang-disagg", "b200", "sglang-rocm"),
                                                      ("mori-sglang", "h200", "sglang-rocm"),
                                                      ("atom", "gb200-nvl72", "atom-rocm")])
def test_a_rocm_only_engine_on_another_system_is_refused_naming_the_field(engine, system, profile):
    # data/stacks.toml lists these engines only in -rocm profiles (MoRI and ATOM are AMD's); on an NVIDIA system
    # they took the generic default profile without a word (review33). On an mi* system they keep their profile.
    from jalapeno.specs.stacks import stack_for_framework

    assert stack_for_framework(engine, "mi355x").name == profile
    with pytest.raises(SpecError) as e:
        stack_for_framework(engine, system)
    assert e.value.field == "framework" and engine in str(e.value) and system in str(e.value)
    assert "ROCm systems only" in str(e.value) and "mi355x" in e.value.fix and "dynamo-sglang" in e.value.fix


def test_validate_refuses_a_users_sglang_disagg_row_on_b200(tmp_path, capsys):
    rows = DEFAULT_POINTS.read_text().splitlines()
    b200 = next(r for r in rows if r.startswith("B200,") and r.split(",")[3] == "sglang")
    f = tmp_path / "one.csv"
    f.write_text(rows[0] + "\n" + b200.replace(",sglang,", ",sglang-disagg,", 1) + "\n")
    check_error(*run(capsys, "validate", "--points", str(f), "--no-aiconfigurator"),
                "framework", "sglang-disagg", "ROCm systems only", "b200", "fix")
