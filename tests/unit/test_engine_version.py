"""Engine version as a property of a stack/recipe (issue 18): version-dependent behaviour is chosen
by the engine release a recipe runs (specs/engine_versions.VersionRule, deploy/engine_version.py).

The rule checked here is TensorRT-LLM's MoE exchange before 1.2.0rc3 (NVIDIA/TensorRT-LLM
fused_moe_cutlass.py select_alltoall_method_type before PR #8950: the all-to-all only when
moe_ep_size > experts_per_token): DeepSeek-R1 routes each token to 8 experts (config.json
num_experts_per_tok = 8), so at EP8 the engine gathers every token of the stage instead
(hidden 7168 x 2 bytes BF16 per token, worked by hand). Releases: InferenceX's H200 TRT-LLM image
nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2; Dynamo 0.8.1.post3's TensorRT-LLM runtime
1.2.0rc6.post3 (Dynamo support matrix).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_runner import check_error, run

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.engine_version import point_engine_version, recipe_engine_version, recipe_stack
from jalapeno.deploy.engines import get_recipe
from jalapeno.deploy.recipe import _recipe
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError, UnknownNameError
from jalapeno.fit import kernel_tables
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.cost.moe_exchange import moe_all_to_all_on
from jalapeno.specs.engine_versions import version_key
from jalapeno.specs.stacks import _version_rules, get_stack

H = 7168


def test_release_numbers_order_as_pep440():
    order = ["1.1.0rc2", "1.1.0rc2.post2", "1.1.0", "1.2.0rc2", "1.2.0rc3", "1.2.0rc6.post3", "1.2.0", "1.2.0.post1"]
    keys = [version_key(v) for v in order]
    assert keys == sorted(keys)
    assert version_key("v0.5.9") == version_key("0.5.9.0")
    with pytest.raises(SpecError) as e:
        version_key("dynamo 0.8.1", "--stack")
    assert e.value.field == "--stack" and "not a release number" in str(e.value) and "1.2.0rc6.post3" in e.value.fix


def test_kernel_table_folders_order_by_release():
    # written out by hand: pre-releases before their release, post-releases after, numeric parts
    # compared as numbers, a folder name that is not a release before every release
    newest_last = ["0.1.dev19262", "0.5.6.post2", "0.5.9", "0.5.10", "1.2.0rc5", "1.3.0rc10", "1.3.0rc20",
                   "1.3.0", "1.3.0.post1", "2.27", "2.27.3"]
    shuffled = [newest_last[i] for i in (7, 2, 10, 0, 5, 8, 1, 9, 3, 6, 4)]
    assert sorted(shuffled, key=kernel_tables._vkey) == newest_last


def test_exchange_above_top_k():
    # EP8 with top-8: not more ranks than experts per token -> all-gather + reduce-scatter
    assert not moe_all_to_all_on("nvlink_all_to_all_above_top_k", 8, 8, top_k=8)
    assert moe_all_to_all_on("nvlink_all_to_all", 8, 8, top_k=8)  # the newer rule keeps the all-to-all
    assert moe_all_to_all_on("nvlink_all_to_all_above_top_k", 16, 72, top_k=8)  # EP16 in one NVL72 domain
    assert not moe_all_to_all_on("nvlink_all_to_all_above_top_k", 16, 8, top_k=8)  # still one domain only
    assert moe_all_to_all_on("nvlink_all_to_all_above_top_k", 8, 8, top_k=4)  # gpt-oss top-4 at EP8


def test_trtllm_profile_by_release():
    old, new = get_stack("trtllm@1.1.0rc2.post2"), get_stack("trtllm@1.2.0rc6.post3")
    assert (old.name, old.version, old.moe_exchange) == ("trtllm@1.1.0rc2.post2", "1.1.0rc2.post2",
                                                         "nvlink_all_to_all_above_top_k")
    assert "PR #8950" in old.sources["moe_exchange"] and "< 1.2.0rc3" in old.sources["moe_exchange"]
    assert new.moe_exchange == "nvlink_all_to_all" and get_stack("trtllm@1.2.0rc3").moe_exchange == "nvlink_all_to_all"
    assert get_stack("trtllm@1.2.0rc2").moe_exchange == "nvlink_all_to_all_above_top_k"
    assert get_stack("trtllm").moe_exchange == "nvlink_all_to_all" and get_stack("trtllm").version == ""
    assert get_stack("dynamo-trtllm@1.1.0rc5").moe_exchange == "nvlink_all_to_all_above_top_k"
    # the pricer names the pinned profile, and the efficiency source reads back to it
    eff = load_pricer("h200", stack="trtllm@1.1.0rc2.post2").efficiency
    assert eff.moe_exchange == "nvlink_all_to_all_above_top_k" and eff.source.endswith("+ stack trtllm@1.1.0rc2.post2")


def test_bad_stack_versions_are_refused():
    with pytest.raises(SpecError) as e:
        get_stack("trtllm@latest")
    assert e.value.field == "--stack" and "'latest' is not a release number" in str(e.value)
    with pytest.raises(UnknownNameError) as e:
        get_stack("trtlm@1.1.0")
    assert "unknown software stack 'trtlm'" in str(e.value) and "NAME@VERSION" in e.value.fix
    # a profile without version rules: the version was dropped silently (kernel@1.0 priced as kernel)
    # (sglang took a version rule in round 47, disagg_prebuilt before 0.5.10: the rule-less profile is now kernel)
    with pytest.raises(SpecError) as e:
        get_stack("kernel@0.5.9")
    assert e.value.field == "--stack" and "'kernel' has no version rules" in str(e.value)
    assert e.value.fix == ("drop '@0.5.9', or pin a profile that takes versions: sglang, trtllm, dynamo-trtllm, vllm, "
                           "sglang-rocm")


def test_vllm_takes_a_release_its_moe_rule_reads():
    """vllm has no version_rules of its own but a deployment rule reads its release (deploy/vllm_fp8_moe.py):
    vllm@0.16.0 is taken and priced by the vllm profile itself (the rule acts on the deployment)."""
    assert get_stack("vllm@0.16.0") is get_stack("vllm")


@pytest.mark.parametrize("rule, field, msg", [
    ({"field": "fusion2", "value": 1, "before": "1", "source": "s"}, ".field", "'fusion2'"),
    ({"field": "moe_exchange", "value": "deepep", "before": "1", "source": "s"}, ".value", "not a moe_exchange"),
    ({"field": "moe_exchange", "value": "all_to_all", "source": "s"}, "version_rules[0]", "needs a version bound"),
    ({"field": "moe_exchange", "value": "all_to_all", "before": "1.2"}, "version_rules[0]", "and a source"),
    ({"field": "moe_exchange", "value": "all_to_all", "before": "soon", "source": "s"}, ".before", "not a release"),
    ({"field": "kernel_launch_s", "value": -1, "since": "1", "source": "s"}, ".value", "finite number >= 0"),
])
def test_malformed_version_rules_name_the_field(rule, field, msg):
    with pytest.raises(SpecError) as e:
        _version_rules([rule], "data/stacks.toml stack x")
    assert field in e.value.field and msg in str(e.value)


def test_recipes_state_their_engine_release():
    assert recipe_engine_version(get_recipe("trtllm-h200-dsr1-fp8-mtp")) == "1.1.0rc2.post2"
    assert recipe_engine_version(get_recipe("trtllm-b200-dsr1-fp4-mtp")) == "1.2.0rc6.post3"
    assert recipe_engine_version(get_recipe("dynamo-trt-dsr1-fp8")) == "1.2.0rc6.post3"  # Dynamo 0.8.1.post3
    assert recipe_engine_version(get_recipe("dynamo-trt-gptoss-fp4")) == ""  # Dynamo 0.7.0.post2: runtime not stated
    assert recipe_stack(get_recipe("trtllm-h200-dsr1-fp8-mtp"), "h200").name == "trtllm@1.1.0rc2.post2"
    assert recipe_stack(get_recipe("dynamo-trt-dsr1-fp8"), "h200").name == "dynamo-trtllm@1.2.0rc6.post3"
    # an explicit release wins; an explicit profile without one is pinned at the recipe's
    assert recipe_stack(get_recipe("trtllm-h200-dsr1-fp8-mtp"), "h200", "trtllm@1.3.0").moe_exchange == "nvlink_all_to_all"
    assert recipe_stack(get_recipe("trtllm-h200-dsr1-fp8-mtp"), "h200", "trtllm").name == "trtllm@1.1.0rc2.post2"
    assert point_engine_version("h200", "deepseek-r1", "trt", "fp8", "agg") == "1.1.0rc2.post2"
    assert point_engine_version("h200", "deepseek-r1", "vllm", "fp8", "agg") == ""


def test_engine_version_needs_its_source():
    raw = {"name": "x", "engine": "dynamo-trt", "version": "dynamo 9", "systems": ["h200"], "model": "deepseek-r1",
           "source": "s", "precision": "fp8", "serving": "disagg", "engine_version": "1.2.0"}
    with pytest.raises(SpecError) as e:
        _recipe(raw, 0)
    assert e.value.field.endswith("engine_version_source") and "without its source" in str(e.value)


def _moe(stack: str) -> dict[str, float]:
    sc = step_cost(load_model("deepseek-r1"), load_pricer("h200", stack=stack), Layout(dp=8, ep=8),
                   get_precision("fp8"), Batch.make(decode_seqs=np.array([256.0]), decode_ctx=8000.0))
    c = sc.collectives
    return {n: float(c.bytes[i][0]) for i, n in enumerate(c.name) if n.startswith("moe.")}


def test_h200_dep8_step_gathers_on_trtllm_1_1_and_all_to_alls_on_1_2():
    old = _moe("trtllm@1.1.0rc2.post2")
    assert set(old) == {"moe.all_gather", "moe.reduce_scatter"}
    assert old["moe.all_gather"] == pytest.approx(256 * H * 2)  # every token of the 8 ranks, BF16
    assert "moe.dispatch" in _moe("trtllm@1.2.0rc6.post3") and "moe.all_gather" not in _moe("trtllm@1.2.0rc6.post3")


def test_validation_prices_a_point_at_its_recipes_release():
    from jalapeno.fit.validate import MeasuredPoint, point_stack

    p = MeasuredPoint("inferencex", "x:1", "h200", "deepseek-r1", "fp8", "trt", 8192, 1024, 256.0, None, {}, "x")
    assert point_stack(p).name == "trtllm@1.1.0rc2.post2"
    q = MeasuredPoint("inferencex", "x:2", "h200", "deepseek-r1", "fp8", "dynamo-trt", 1024, 1024, 1024.0, None, {},
                      "x", disagg=True)
    assert point_stack(q).name == "dynamo-trtllm@1.2.0rc6.post3"


def _aic_row(**kw) -> dict:
    """One aggregated aiconfigurator TRT-LLM row (silicon_sample.csv columns): H200 DeepSeek-R1 FP8,
    attention DP8 + EP8, 1k/1k at concurrency 64."""
    row = {"id": "x_agg_1024x1024_c64_tp8_ep8_1", "backend": "trtllm", "backend_version": "1.1.0rc2.post2",
           "model_path": "deepseek-ai/DeepSeek-R1", "system": "h200_sxm", "precision": "fp8", "mode": "agg",
           "isl": 1024, "osl": 1024, "batch_size": 64.0, "tp_size": 1.0, "pp_size": 1.0, "attention_dp_size": 8.0,
           "moe_tp_size": 1.0, "moe_ep_size": 8.0, "silicon_ttft_ms": 300.0, "silicon_tpot_ms": 30.0,
           "silicon_data_source": "source_file=x.csv"}
    return {**row, **kw}


@pytest.mark.parametrize("source, release", [
    ("source_file=x.csv; measured=2025-12-01; image=nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2", "1.1.0rc2.post2"),
    ("source_file=x.csv; image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc2; dynamo_version=none", "1.2.0rc2"),
    # a Dynamo runtime's tag is Dynamo's release, not TensorRT-LLM's; a dev tag is no release; no image says nothing
    ("source_file=x.csv; image=nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1", ""),
    ("source_file=x.csv; image=nvcr.io/nvidia/tensorrt-llm/release:gpt-oss-dev", ""),
    ("source_file=x.csv", ""),
])
def test_aiconfigurator_trtllm_rows_are_pinned_to_their_release_image(source, release):
    import pandas as pd

    from jalapeno.fit.validate import load_aiconfigurator, point_stack

    (p,), _ = load_aiconfigurator(pd.DataFrame([_aic_row(silicon_data_source=source)]))
    assert p.engine_version == release
    st = point_stack(p)
    # the image pins the release; without one the row's own label "trtllm 1.1.0rc2.post2" states it (round 32,
    # fit/aic_release.label_release; tests/unit/test_aic_label_release.py). Before 1.2.0rc3 (every release here) the
    # EP8 exchange of a top-8 model gathers (data/stacks.toml version rule)
    assert st.moe_exchange == "nvlink_all_to_all_above_top_k"
    assert st.name == f"trtllm@{release or '1.1.0rc2.post2'}"


def test_a_release_image_pins_only_trtllm_rows():
    import pandas as pd

    from jalapeno.fit.validate import load_aiconfigurator

    row = _aic_row(backend="sglang", backend_version="0.5.9",
                   silicon_data_source="image=nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2")
    (p,), _ = load_aiconfigurator(pd.DataFrame([row]))
    assert p.engine_version == ""


def test_the_stack_fit_prices_each_point_at_its_release(monkeypatch):
    """fit/stack_fit prices every candidate pinned at the point's release, as validation does."""
    from jalapeno.fit import stack_fit
    from jalapeno.fit.validate import MeasuredPoint

    seen = {}

    def fake_predict(points, stack_of):
        for p in points:
            seen[p.id] = stack_of(p)
        return None

    monkeypatch.setattr(stack_fit, "predict_points", fake_predict)
    old = MeasuredPoint("aiconfigurator", "a:1", "h200", "deepseek-r1", "fp8", "trtllm 1.1.0rc2.post2", 1024, 1024,
                        64.0, None, {}, "matched", engine_version="1.1.0rc2.post2")
    new = MeasuredPoint("aiconfigurator", "a:2", "h200", "deepseek-r1", "fp8", "trtllm 1.2.0rc6.post3", 1024, 1024,
                        64.0, None, {}, "matched")
    stack_fit._predict([old, new], get_stack("trtllm"))
    assert seen["a:1"].moe_exchange == "nvlink_all_to_all_above_top_k" and seen["a:1"].version == "1.1.0rc2.post2"
    # no image, but its label states the release (fit/aic_release.label_release): pinned there, no rule holds
    assert seen["a:2"].moe_exchange == "nvlink_all_to_all" and seen["a:2"].version == "1.2.0rc6.post3"


def test_predict_engine_shows_the_release_and_its_rules(capsys):
    args = ["predict", "-m", "deepseek-r1", "-s", "h200", "--isl", "8192", "--osl", "1024", "--concurrency", "64",
            "--engine", "trtllm-h200-dsr1-fp8-mtp", "--tp", "1", "--dp", "8", "--ep", "8"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    text = " ".join(out.split())
    assert "stack trtllm@1.1.0rc2.post2" in text
    # round 43's rule holds at this release, but its switch is shipped off: the listing says it is not charged
    assert ("engine release 1.1.0rc2.post2: prompt_step_s_per_token = 1.56e-05 (NOT CHARGED: "
            "jalapeno.cost.step.PROMPT_TOKEN_STEP_ON is off; trtllm >= 1.1.0rc2, < 1.2.0rc2; its source in --json)"
            ) in text  # round 49: an uncharged rule's source only in --json (newuser49)
    assert "; moe_exchange = nvlink_all_to_all_above_top_k (trtllm < 1.2.0rc3:" in text
    code, out, err = run(capsys, *args, "--json")
    j = json.loads(out)
    assert j["engine_version"] == "1.1.0rc2.post2"
    assert [(x["field"], x["value"]) for x in j["version_rules"]] == [
        ("prompt_step_s_per_token", 1.56e-5),  # round 43's rule (paid only while cost/step.PROMPT_TOKEN_STEP_ON)
        ("moe_exchange", "nvlink_all_to_all_above_top_k")]
    assert [x["charged"] for x in j["version_rules"]] == [False, True]
    code, out, err = run(capsys, *args, "--stack", "trtllm@1.2.0rc6.post3")
    assert code == 0 and "no version rule of the stack applies" in " ".join(out.split())
    check_error(*run(capsys, *args, "--stack", "trtllm@newest"), "--stack", "not a release number")


def test_simulate_frontier_compare_pin_the_recipes_release(capsys):
    """`--engine R` prices with R's engine at its release on simulate, frontier and compare too (as
    predict and validation do): trtllm-h200-dsr1-fp8-mtp runs TensorRT-LLM 1.1.0rc2.post2."""
    wl = ["-m", "deepseek-r1", "--isl", "1024", "--osl", "128", "--engine", "trtllm-h200-dsr1-fp8-mtp"]
    code, out, err = run(capsys, "frontier", "-s", "h200", *wl, "--concurrency", "8,64")
    assert code == 0, err
    assert "stack trtllm@1.1.0rc2.post2" in " ".join(out.split())
    code, out, err = run(capsys, "simulate", "-s", "h200", *wl, "--concurrency", "8", "--requests", "16",
                         "--tp", "8")
    assert code == 0, err
    assert "stack trtllm@1.1.0rc2.post2" in " ".join(out.split())
    code, out, err = run(capsys, "compare", "--systems", "h200", *wl, "--concurrency", "8,64", "--html", "")
    assert code == 0, err
    assert "software stack (the engine recipe at its release): h200 trtllm@1.1.0rc2.post2" in " ".join(out.split())


@pytest.mark.parametrize("framework, notes, release", [
    ("sglang", "image lmsysorg/sglang:v0.5.12-cu130;", "0.5.12"),
    ("sglang", "image lmsysorg/sglang:v0.5.19-rocm700-mi30x;", "0.5.19"),
    ("sglang", "SGLang v0.5.7; e2el is mean;", "0.5.7"),
    ("trt", "image nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3; x", "1.2.0rc6.post3"),
    ("vllm", "vllm/vllm-openai:v0.13.0", "0.13.0"),
    # a Dynamo runtime's tag is Dynamo's release; another engine's image or name says nothing of this one's
    ("dynamo-trt", "image nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post3", ""),
    ("trt", "image lmsysorg/sglang:v0.5.12-cu130", ""),
    ("vllm", "SGLang v0.5.7", ""),
    ("sglang", "no release stated", ""),
])
def test_inferencex_notes_state_the_release_that_ran(framework, notes, release):
    from jalapeno.fit.ix_cells import stated_release

    assert stated_release(framework, notes) == release


def test_inferencex_rows_are_priced_at_the_release_their_source_states(tmp_path):
    """A row's notes name the release that ran it; without them, its launch recipe's release. The two
    shipped H200 SGLang DeepSeek-R1 FP8 sweeps of one configuration ran SGLang 0.5.12 (2026-05-17,
    image lmsysorg/sglang:v0.5.12-cu130) and 0.5.7 (2026-03-05), the recipe pins 0.5.7. A TRT-LLM row
    whose image is 1.2.0rc6.post3 all-to-alls at EP8 where the recipe's 1.1.0rc2.post2 would gather."""
    from importlib.resources import files

    from jalapeno.fit.validate import point_release, point_stack
    from jalapeno.fit.ix_points import load_inferencex

    pts, _ = load_inferencex(files("jalapeno") / "data" / "validation" / "inferencex_points.csv")
    by_id = {p.id: p for p in pts}
    assert point_release(by_id["inferencex_points:56"]) == "0.5.12"
    assert point_release(by_id["inferencex_points:81"]) == "0.5.7"
    head = "hardware,model,precision,framework,spec,disagg,isl,osl,conc,topology,num_gpus,tput_per_gpu,tok_s_user,notes"
    body = "H200,DeepSeek-R1-0528,FP8,trt,none,0,8192,1024,256,DEP8,8,1000,20,{}"
    path = tmp_path / "pts.csv"
    path.write_text("\n".join([head, body.format("image nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3"),
                               body.format("no image")]) + "\n")
    stated, unstated = load_inferencex(path)[0]
    assert (stated.engine_version, unstated.engine_version) == ("1.2.0rc6.post3", "")
    assert point_stack(stated).name == "trtllm@1.2.0rc6.post3"
    assert point_stack(unstated).name == "trtllm@1.1.0rc2.post2"
    assert (point_stack(stated).moe_exchange, point_stack(unstated).moe_exchange) == (
        "nvlink_all_to_all", "nvlink_all_to_all_above_top_k")


def test_a_switched_rule_reads_charged_when_its_switch_is_on(monkeypatch):
    """engine_rules' ``charged`` follows cost/step.PROMPT_TOKEN_STEP_ON (round 43), not a copy of its value."""
    from jalapeno.cli.engine_opts import engine_rules
    from jalapeno.cost import step
    from jalapeno.deploy.engines import get_recipe

    rec = get_recipe("trtllm-h200-dsr1-fp8-mtp")
    monkeypatch.setattr(step, "PROMPT_TOKEN_STEP_ON", True)
    on = {r["field"]: r for r in engine_rules(rec, "trtllm@1.1.0rc2.post2")}
    assert on["prompt_step_s_per_token"]["charged"] and "NOT CHARGED" not in on["prompt_step_s_per_token"]["span"]
    monkeypatch.setattr(step, "PROMPT_TOKEN_STEP_ON", False)
    off = {r["field"]: r for r in engine_rules(rec, "trtllm@1.1.0rc2.post2")}
    assert not off["prompt_step_s_per_token"]["charged"] and off["moe_exchange"]["charged"]
