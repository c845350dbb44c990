"""Findings of round 22's break-it pass (hostile but realistic input). Expected figures by hand."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from cli_runner import check_error, run

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.specs.formats import get_precision


def test_step_budget_below_the_attention_dp_degree_is_refused(capsys):
    # was: accepted; 4 tokens a step over dp=8 gave each rank's prompt chunks 4/8 = 0.5 tokens a step
    # (Deployment.prompt_budget) in the analytic model while the simulator rounded it up to 1
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "deepseek-r1", "--tp", "1", "--dp", "8", "--ep", "8",
                         "-w", "1k1k", "-c", "64", "--max-tokens-per-step", "4")
    check_error(code, out, err, "--max-tokens-per-step", "4 tokens a step", "8 attention-DP ranks",
                "under one prompt token", "give at least 8 tokens a step")


def test_token_budget_below_dp_names_the_field_and_one_a_rank_is_enough():
    with pytest.raises(SpecError, match="token_budget.*2 tokens a step split over the 4 attention-DP ranks"):
        Deployment(get_precision("fp8"), Pool(Layout(dp=4, ep=4)), token_budget=2)
    # one token per rank (8 over dp=8) is the smallest budget that lets a prompt start: 8 / 8 = 1 token a step
    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), token_budget=8)
    assert dep.prompt_budget(Layout(dp=8, ep=8)) == 1.0
    # a per-rank budget is each rank's own: 2 tokens a rank over dp=4 is 2 a step for one prompt
    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=4, ep=4)), token_budget=2, budget_per="rank")
    assert dep.prompt_budget(Layout(dp=4, ep=4)) == 2.0


def test_a_sweep_skips_the_layouts_a_small_budget_cannot_feed(capsys):
    # a sweep's attention-DP layouts wider than the budget are skipped, not an error for the whole frontier
    code, out, err = run(capsys, "frontier", "-s", "h200", "-m", "deepseek-r1", "-w", "1k1k",
                         "--max-tokens-per-step", "4", "--json")
    assert code == 0, err
    points = json.loads(out)["frontier"]
    assert points and all(p["deployment"]["layout"]["dp"] <= 4 for p in points)


def test_a_disaggregated_decode_pool_does_not_prefill_so_its_dp_is_not_checked():
    # the prefill pool (TP8, dp 1) gets all 4 tokens; the decode pool's dp=8 ranks run no prompt
    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), prefill=Pool(Layout(tp=8)), token_budget=4)
    assert dep.prompt_budget(Layout(tp=8)) == 4.0
    with pytest.raises(SpecError, match="8 attention-DP ranks"):
        Deployment(get_precision("fp8"), Pool(Layout(tp=8)), prefill=Pool(Layout(dp=8, ep=8)), token_budget=4)


def _sglang_h200_recipe(**changes) -> dict:
    import copy
    import tomllib
    from importlib import resources

    raw = tomllib.loads(resources.files("jalapeno.data").joinpath("engines.toml").read_text())["recipe"]
    r = copy.deepcopy(next(r for r in raw if r["name"] == "sglang-h200-dsr1-fp8"))
    r.update(changes)
    return r


@pytest.mark.parametrize("key, value", [("cuda_graph_max_batch", 0), ("cuda_graph_max_batch", "256"),
                                        ("cuda_graph_max_batch", 256.5), ("token_budget", True),
                                        ("max_running", -3)])
def test_a_recipe_limit_that_is_not_a_positive_whole_number_names_the_recipe_key(key, value):
    # was: loaded; a string or fractional CUDA-graph ceiling then captured no sizes (no padding, silently),
    # and 0 or -3 failed only when a deployment was built, blaming --cuda-graph-max-batch / --max-running
    from jalapeno.deploy.recipe import _recipe

    with pytest.raises(SpecError, match=rf"sglang-h200-dsr1-fp8\.{key}: must be a positive whole number.*{key} = N"):
        _recipe(_sglang_h200_recipe(**{key: value}), 0)


def test_a_workload_override_is_checked_like_the_recipe():
    from jalapeno.deploy.recipe import _recipe

    with pytest.raises(SpecError, match=r"workload\.1k1k\.cuda_graph_max_batch: must be a positive whole number"):
        _recipe(_sglang_h200_recipe(workload={"1k1k": {"max_running": 512, "cuda_graph_max_batch": 0}}), 0)
    with pytest.raises(SpecError, match=r"workload\.1k1k\.memory_fraction: must be in \(0, 1\]"):
        _recipe(_sglang_h200_recipe(workload={"1k1k": {"memory_fraction": 1.5}}), 0)


def test_a_trace_says_how_many_one_token_outputs_ran_as_two(capsys, tmp_path):
    # was: silent; a request of 1 output token ran as 2 (docs/simulator.md §10.4), so 1 and 2 gave the same E2E
    f = tmp_path / "t.csv"
    f.write_text("arrival_s,input_tokens,output_tokens\n0,100,1\n0.5,100,1\n1,100,5\n")
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-w", str(f), "--json")
    assert code == 0, err
    assert "note: 2 of the trace's requests ask for 1 output token; each runs as 2" in err
    f.write_text("arrival_s,input_tokens,output_tokens\n0,100,2\n")
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-w", str(f), "--json")
    assert code == 0, err
    assert "output token" not in err


def test_a_points_row_whose_disagg_column_contradicts_its_topology_is_skipped_with_the_reason(capsys, tmp_path):
    # was: priced as the topology says (disaggregated), the disagg = 0 column unread
    src = resources.files("jalapeno.data").joinpath("validation/inferencex_points.csv").read_text().splitlines()
    header, row = src[0].split(","), next(r for r in src[1:] if r.startswith("GB200 NVL72,") and ",1,1024,1024," in r)
    cells = row.split(",")
    assert cells[header.index("disagg")] == "1" and cells[header.index("topology")].startswith("prefill ")
    cells[header.index("disagg")] = "0"
    f = tmp_path / "p.csv"
    f.write_text(src[0] + "\n" + ",".join(cells) + "\n")
    code, out, err = run(capsys, "validate", "--points", str(f), "--no-aiconfigurator", "--no-mlperf")
    check_error(code, out, err, "--points", "1 row(s) skipped", "disagg 0 contradicts topology 'prefill ")
