"""Findings of a new-user / hostile-tester pass (round 10, user10): an option combination the
command could not tell from its default, a plan that printed its target as 0, an engine release
priced by a version rule without a word, a misspelt trace column dropped silently, and list
options that dropped an empty item. Each refusal is one line naming the option and the fix."""

from __future__ import annotations

import json

import pytest

from cli_runner import check_error, run

STEP = ("step", "-s", "jalapeno", "-m", "deepseek-r1", "--dp", "8", "--ep", "8", "--batch", "64", "--context", "8192")
SIM = ("simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8")


@pytest.mark.parametrize("chip_model", ["flat", "tiled"])
def test_slices_with_another_chip_model_is_refused(capsys, chip_model):
    """``step --slices --chip-model flat`` priced the sliced model: flat was the option's default,
    so an explicit flat could not be told from none."""
    check_error(*run(capsys, *STEP, "--slices", "--chip-model", chip_model), "--slices",
                f"--chip-model {chip_model} was given", "drop --slices, or use --chip-model sliced")


def test_slices_alone_and_with_sliced_price_the_sliced_chip(capsys):
    outs = []
    for extra in ((), ("--chip-model", "sliced")):
        code, out, err = run(capsys, *STEP, "--slices", *extra, "--json")
        assert code == 0, err
        outs.append(json.loads(out))
    assert "slices" in outs[0] and outs[0]["slices"] == outs[1]["slices"]
    code, out, err = run(capsys, *STEP, "--json")  # no option at all: the flat chip, no slice table
    assert code == 0, err
    assert "slices" not in json.loads(out)


def test_a_plan_prints_a_tiny_target_as_given(capsys):
    """``plan --target 1e-30`` printed 'target 0' and 'ceil(0 / 7,470) = 1'."""
    args = ("plan", "-s", "gb200-nvl72", "-m", "gpt-oss-120b", "-w", "1k1k", "--serving", "agg", "--target")
    code, out, err = run(capsys, *args, "1e-30")
    assert code == 0, err
    text = " ".join(out.split())
    assert "target 1e-30 output tok/s" in text and "instances: ceil(1e-30 / " in text and ">= target 1e-30" in text
    assert "target 0 " not in text
    code, out, err = run(capsys, *args, "7.5")
    assert code == 0, err
    assert "instances: ceil(7.5 / " in " ".join(out.split())
    code, out, err = run(capsys, *args, "1e6")
    assert code == 0, err
    assert "target 1,000,000 output tok/s" in " ".join(out.split())


@pytest.mark.parametrize("stack, words", [
    # data/stacks.toml: trtllm's rules, prompt_step_s_per_token from 1.1.0rc2 before 1.2.0rc2 (round 43) and
    # moe_exchange = nvlink_all_to_all_above_top_k before 1.2.0rc3
    ("trtllm@0.0.1", ["note: --stack trtllm@0.0.1 takes the version rule moe_exchange = "
                      "nvlink_all_to_all_above_top_k (trtllm < 1.2.0rc3)", "other fields are the profile's newest"]),
    ("trtllm@99.0", ["note: --stack trtllm@99.0 takes no version rule (trtllm's rules: prompt_step_s_per_token "
                     ">= 1.1.0rc2, < 1.2.0rc2, moe_exchange < 1.2.0rc3)",
                     "the profile's newest behaviour"]),
])
def test_a_pinned_engine_release_says_which_version_rule_it_takes(capsys, stack, words):
    """``--stack trtllm@0.0.1`` was priced by the rule ``< 1.2.0rc3`` without a note."""
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "deepseek-r1", "--dp", "8", "--ep", "8", "--batch", "64",
                         "--stack", stack, "--json")
    assert code == 0, err
    line = " ".join(err.split())
    for w in words:
        assert w in line, (w, err)
    # the rule is what prices it: below 1.2.0rc3 DeepSeek-R1 (top-8) at EP8 gathers instead of dispatching
    names = {c["collective"] for c in json.loads(out)["collectives"]}
    assert ("moe.dispatch" in names) == (stack == "trtllm@99.0")


def test_a_plain_stack_or_a_refused_version_prints_no_note(capsys):
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "--stack", "trtllm")
    assert code == 0 and "note: --stack" not in err
    check_error(*run(capsys, "step", "-s", "h200", "--stack", "trtllm@newest"), "--stack", "not a release number")


@pytest.mark.parametrize("name, text, words", [
    ("t.csv", "arrival_s,input_tokens,output_tokens,sesion_id\n0,100,50,1\n",
     ["t.csv: sesion_id", "unknown column (did you mean 'session_id'?)", "rename or drop it"]),
    ("t.jsonl", '{"arrival_s": 0, "input_tokens": 100, "output_tokens": 50, "prefix": 3}\n',
     ["t.jsonl: line 1: prefix", "did you mean 'prefix_group'?"]),
    ("t.csv", "arrival_s,input_tokens,output_tokens,model\n0,100,50,x\n", ["t.csv: model", "unknown column. fix"]),
])
def test_a_trace_column_the_reader_does_not_read_is_refused(capsys, tmp_path, name, text, words):
    """A misspelt optional column was dropped silently: the trace replayed without its sessions."""
    p = tmp_path / name
    p.write_text(text)
    check_error(*run(capsys, *SIM, "-w", str(p)), *words)


@pytest.mark.parametrize("args, opt, value", [
    (("frontier", "-s", "h200", "-m", "gpt-oss-120b", "-w", "1k1k", "-c"), "--concurrency", "4,,16"),
    (("collective", "-s", "h200", "--op", "all_to_all", "--group", "8", "--bytes"), "--bytes", "1e6,,1e8"),
    (("compare", "-m", "gpt-oss-120b", "-w", "1k1k", "--html", "", "--systems"), "--systems", "h200,,b200"),
    (("compare", "-s", "h200", "-m", "gpt-oss-120b", "-w", "1k1k", "--html", "", "--at"), "--at", "10,,20"),
    (("compare", "-s", "h200", "-m", "gpt-oss-120b", "-w", "1k1k", "--html", "", "--tiers"), "--tiers",
     "fast=100,,x=3"),
    (("report", "-o", "r.html", "--systems"), "--systems", "h200,,b200"),
])
def test_an_empty_item_in_a_list_option_is_refused(capsys, args, opt, value):
    """``-c 4,,16`` ran 4 and 16 (the empty item was dropped, as a typo that lost a value)."""
    check_error(*run(capsys, *args, value), opt, f"'{value}' has an empty item between commas",
                f"one value per item, e.g. {opt}")


def test_a_trailing_comma_is_still_taken(capsys):
    code, out, err = run(capsys, "collective", "-s", "h200", "--op", "all_to_all", "--group", "8", "--bytes",
                         "1e6,", "--json")
    assert code == 0, err


@pytest.mark.parametrize("args, serving, words", [
    # data/engines.toml: sglang-b200-dsr1-fp4 serving = "agg", dynamo-trt-dsr1-fp4 serving = "disagg"
    (("frontier", "-s", "b200", "--engine", "sglang-b200-dsr1-fp4"), "disagg",
     ["recipe sglang-b200-dsr1-fp4 serves aggregated (agg) and --serving disagg was given", "--serving agg"]),
    (("frontier", "-s", "b200", "--engine", "sglang-b200-dsr1-fp4"), "both", ["--serving both was given"]),
    (("compare", "-s", "b200,gb200-nvl72", "--engine", "dynamo-trt-dsr1-fp4", "--html", ""), "agg",
     ["recipe dynamo-trt-dsr1-fp4 serves disaggregated (disagg) and --serving agg", "--serving disagg"]),
])
def test_a_serving_mode_other_than_the_recipes_is_refused(capsys, args, serving, words):
    """``frontier --engine R --serving disagg`` with an aggregated recipe priced disaggregated pools
    with R's aggregated limits without a word (predict and simulate refuse the same mismatch)."""
    check_error(*run(capsys, *args, "-w", "1k1k", "--serving", serving), "--serving", *words, "drop --engine")


@pytest.mark.parametrize("opt, value, field, own", [
    # data/engines.toml sglang-b200-dsr1-fp4: max_running = 256, cuda_graph_max_batch = 256, memory_fraction = 0.85
    ("--memory-fraction", "0.3", "memory_fraction", "0.85"),
    ("--max-running", "16", "max_running", "256"),
    ("--cuda-graph-max-batch", "8", "cuda_graph_max_batch", "256"),
])
def test_an_engine_limit_over_the_recipes_is_noted(capsys, opt, value, field, own):
    """``--memory-fraction 0.3`` replaced the recipe's 0.85 without the note ``-p`` and ``--stack`` get."""
    code, out, err = run(capsys, "predict", "-s", "b200", "-m", "deepseek-r1", "--tp", "8", "--ep", "8", "-c", "64",
                         "--engine", "sglang-b200-dsr1-fp4", opt, value, "--json")
    assert code == 0, err
    note = f"{opt} {value} overrides recipe sglang-b200-dsr1-fp4's {field} {own}"
    assert f"note: {note}" in " ".join(err.split())
    assert note in json.loads(out)["recipe_overrides"]
    code, out, err = run(capsys, "predict", "-s", "b200", "-m", "deepseek-r1", "--tp", "8", "--ep", "8", "-c", "64",
                         "--engine", "sglang-b200-dsr1-fp4", opt, own, "--json")  # the recipe's own value: no note
    assert code == 0 and "overrides" not in err


@pytest.mark.parametrize("text", ["", "# a system to come\n\n"])
def test_an_empty_system_file_is_named_empty(capsys, tmp_path, text):
    """An empty system TOML was refused as 'name: Field required' (the first of many missing keys)."""
    f = tmp_path / "mine.toml"
    f.write_text(text)
    check_error(*run(capsys, "hardware", "show", str(f)), "mine.toml", "the file holds no keys (empty, or comments "
                "only)", 'base = "h200"')
