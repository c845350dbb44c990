"""Engine token-budget scope: TensorRT-LLM limits per attention-DP rank, SGLang's per instance.

Expected values by hand: a per-rank budget B on an instance of DP d carries d·B tokens per step;
an instance-wide one carries B (SGLang divides --chunked-prefill-size over the DP ranks).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from jalapeno.cli.app import _register, app
from jalapeno.cli.engine_opts import limit_kwargs, load_recipe
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.engines import get_recipe, identified_config
from jalapeno.deploy.recipe import _recipe
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.agg_batch_cap import aggregated_batch_cap
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import PRESETS

FP4 = get_precision("fp4")
DEP8 = Layout(tp=1, dp=8, ep=8)


def test_trtllm_dp8_prefill_worker_carries_eight_per_rank_budgets():
    kw = get_recipe("dynamo-trt-dsr1-fp4").for_workload("8k1k").deployment_kwargs()
    dep = Deployment(FP4, Pool(DEP8), prefill=Pool(DEP8, 1), **kw)
    assert dep.budget_per == "rank" and dep.token_budget == 16640
    assert dep.prefill_budget(DEP8) == 133_120          # 8 ranks x 16,640
    assert dep.prefill_budget(Layout(tp=8, ep=8)) == 16_640  # no attention DP: one rank


def test_sglang_dp8_worker_carries_the_chunked_prefill_size_once():
    kw = get_recipe("sglang-b200-dsr1-fp4").deployment_kwargs()
    dep = Deployment(FP4, Pool(DEP8), **kw)
    assert dep.budget_per == "instance" and dep.prefill_budget(DEP8) == 16_384


def test_default_deployment_is_per_instance_and_unchanged():
    dep = Deployment(FP4, Pool(DEP8))
    assert dep.budget_per == "instance" and dep.prefill_budget(DEP8) == 8192
    assert "budget_per" not in dep.as_dict()


def test_per_rank_limits_scale_running_and_tokens_per_step():
    dep = Deployment(FP4, Pool(DEP8), max_running=256, max_tokens_per_step=512, budget_per="rank")
    assert dep.running_limit(DEP8) == 2048 and dep.step_token_cap(DEP8) == 4096
    # the jalapeno backstop is instance-wide, never scaled
    assert Deployment(FP4, Pool(DEP8), budget_per="rank").running_limit(DEP8) == 4096


def test_bad_budget_per_is_refused_with_the_fix():
    with pytest.raises(SpecError, match="budget_per.*unknown budget scope 'node'.*instance.*rank"):
        Deployment(FP4, Pool(DEP8), budget_per="node")


def test_recipe_budget_per_needs_and_has_a_source():
    assert "py_executor.py" in get_recipe("dynamo-trt-dsr1-fp4").sourced()["budget_per"]
    assert "server_args.py" in get_recipe("sglang-b200-dsr1-fp4").sourced()["budget_per"]
    raw = {"name": "x", "engine": "trtllm", "version": "1", "systems": ["b200"], "model": "deepseek-r1",
           "source": "s", "precision": "fp4", "serving": "agg", "budget_per": "rank"}
    with pytest.raises(SpecError, match="budget_per_source.*without its source"):
        _recipe(raw, 0)
    with pytest.raises(SpecError, match="budget_per.*unknown budget scope"):
        _recipe({**raw, "budget_per": "gpu", "budget_per_source": "s"}, 0)


@pytest.fixture(scope="module")
def r1():
    return load_model("deepseek-r1")


def test_disagg_point_prices_the_prefill_pool_at_the_per_rank_budget(r1):
    """serve/point.py: a per-rank budget B on DEP4 prefill workers prices as 4·B per instance."""
    pricer = load_pricer("gb200-nvl72")
    wl = PRESETS["8k1k"]
    pools = dict(decode=Pool(Layout(tp=1, dp=16, ep=16), 1), prefill=Pool(Layout(tp=1, dp=4, ep=4), 11))
    rank = Deployment(FP4, token_budget=16640, budget_per="rank", **pools)
    inst = Deployment(FP4, token_budget=4 * 16640, **pools)
    small = Deployment(FP4, token_budget=16640, **pools)
    a, b, c = (serve_at_concurrency(r1, pricer, d, wl, [2000.0]) for d in (rank, inst, small))
    assert np.allclose(a.throughput_per_chip, b.throughput_per_chip) and np.allclose(a.ttft_s, b.ttft_s)
    assert not np.allclose(a.ttft_s, c.ttft_s)


def test_aggregated_prefill_budget_cap_counts_per_rank(r1):
    pricer = load_pricer("b200")
    wl = PRESETS["8k1k"]
    rank = Deployment(FP4, Pool(DEP8), token_budget=1024, budget_per="rank")
    inst = Deployment(FP4, Pool(DEP8), token_budget=8 * 1024)
    assert aggregated_batch_cap(r1, pricer, rank, wl) == pytest.approx(aggregated_batch_cap(r1, pricer, inst, wl))


def test_simulator_instances_get_the_per_rank_budget(r1):
    from jalapeno.serve.sim.simulation import Simulation

    dep = Deployment(FP4, Pool(DEP8), token_budget=2048, max_tokens_per_step=4096, max_running=64,
                     budget_per="rank")
    sim = Simulation(r1, load_pricer("b200"), dep)
    inst = sim.instances[0]
    assert inst.budget == 8 * 2048 and inst.max_tokens == 8 * 4096 and inst.max_running == 8 * 64


def test_sweep_with_the_recipe_enumerates_dep_prefill_workers_at_the_per_rank_budget(r1):
    from jalapeno.analysis.deployed import recipe_options
    from jalapeno.analysis.sweep import SweepOptions, sweep

    rec = get_recipe("dynamo-trt-dsr1-fp4").for_workload("8k1k")
    opt = recipe_options(rec, SweepOptions(eplb=None, overlap="none", batches=(256.0,)), "engine: t")
    assert opt.budget_per == "rank" and opt.token_budget == 16640 and opt.prefill_attention_dp
    res = sweep(r1, load_pricer("gb200-nvl72"), PRESETS["8k1k"], FP4, opt)
    dep4 = [d for d in res.deployments if d.prefill is not None and d.prefill.layout.dp == 4]
    assert dep4 and dep4[0].budget_per == "rank" and dep4[0].prefill_budget(dep4[0].prefill.layout) == 66_560


#: InferenceX row 22 (src/jalapeno/data/validation/inferencex_points.csv): public measured data with its source
ROW22 = ('hardware,model,precision,framework,spec,disagg,isl,osl,conc,topology,num_gpus,tput_per_gpu,output_tput_per_gpu,tok_s_user,tpot_ms,tpot_stat,ttft_ms,ttft_stat,e2el_s,cost_per_mtok_usd,date,point_type,check_ratio,notes,source',
         'GB200 NVL72,DeepSeek-R1-0528,FP4,dynamo-trt,unspecified (may be MTP),1,8192,1024,4301,,,14952.0,,27.1,36.9,median,2298.3,median,,0.04,2026-03-23,max_throughput_per_gpu,,one row per GPU = highest tput config; tok_s_user derived = 1000/TPOT,InferenceX-app packages/app/content/blog/best-gpu-for-dsr1-inference.mdx @2d1d3d65df4d6cb7773de89d548becc15dafab44 (published 2026-04-06)')


def test_row22_is_matched_with_the_identified_recipe_entry(tmp_path):
    from jalapeno.fit.ix_points import load_inferencex

    path = tmp_path / "inferencex_points.csv"
    path.write_text(ROW22[0] + "\n" + ROW22[1] + "\n")
    pts, _ = load_inferencex(path)
    p = pts[0]
    d = p.deployment
    assert p.mapping == "matched"
    assert d.prefill.workers == 11 and d.prefill.layout == Layout(tp=1, dp=4, ep=4)
    assert d.decode.workers == 1 and d.decode.layout == Layout(tp=1, dp=16, ep=16, eplb=0)
    assert d.chips == 60  # 11 x 4 + 16 (the recipe name ctx11_gen1_dep16)
    # acceptance: the Dynamo + TRT-LLM engine profile's on DeepSeek-R1 (data/stacks.toml / stack_fits.toml)
    from jalapeno.specs.stacks import get_stack

    assert (d.mtp.draft_tokens, d.mtp.acceptance) == (1, get_stack("dynamo-trtllm").acceptance("deepseek-r1", 1))
    assert d.budget_per == "rank" and d.token_budget == 16640
    assert any("ctx11_gen1_dep16_batch256_eplb256_mtp1" in n and "nvidia-master.yaml" in n for n in p.notes)
    # the rule is general: another concurrency is not identified
    assert identified_config("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 8192, 1024, 4300) is None


def test_cli_engine_applies_the_per_rank_budget_and_explicit_limits_override():
    rec = load_recipe("dynamo-trt-dsr1-fp4", "8k1k")
    assert limit_kwargs(rec, None, None, None, None)["budget_per"] == "rank"
    kw = limit_kwargs(rec, None, None, 5000, None)
    assert kw["max_tokens_per_step"] == 5000 and kw["token_budget"] == 16640
    _register()
    args = ["predict", "-s", "gb200-nvl72", "-w", "8k1k", "-c", "2000", "--engine", "dynamo-trt-dsr1-fp4",
            "--prefill", "dp=4,ep=4,workers=11", "--decode", "dp=16,ep=16,workers=1", "--json"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    dep = json.loads(out.output)["deployment"]
    assert dep["budget_per"] == "rank" and dep["token_budget"] == 16640
    out = CliRunner().invoke(app, [*args, "--max-tokens-per-step", "4096"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["deployment"]["max_tokens_per_step"] == 4096


def test_a_recipe_setting_can_differ_by_system():
    """InferenceX's B200 Dynamo-TRT recipes set prefill max_num_tokens 10240 (1k1k) and 16896 (8k1k)
    where the GB200 ones set 16384 and 16640 (ctx3_gen4_dep8_batch128_eplb0_mtp1.yaml,
    ctx5_gen1_dep8_batch192_eplb0_mtp1.yaml): the ``@b200`` keys override the workload's value."""
    r = get_recipe("dynamo-trt-dsr1-fp4")
    assert r.for_workload("1k1k").token_budget == 16384
    assert r.for_workload("1k1k", "b200").token_budget == 10240
    assert r.for_workload("8k1k", "b200").token_budget == 16896
    assert r.for_workload("8k1k", "gb200-nvl72").token_budget == 16640
    assert load_recipe("dynamo-trt-dsr1-fp4", "1k1k", "deepseek-r1", ["b200"]).token_budget == 10240
