"""Recipes as their launch scripts run (issue 18, recipes8 audit): limits set by load, per-workload draft rules,
the single-node TRT-LLM script's attention-DP settings. Expected values are read from the scripts quoted in each
recipe's source, not from the code."""

from __future__ import annotations

import pytest

from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.engines import get_recipe, launch_limits, launch_mtp
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.recipe import _recipe
from jalapeno.errors import SpecError


@pytest.mark.parametrize("name", ["sglang-mi355x-dsr1-fp4", "sglang-mi355x-dsr1-fp4-mtp"])
def test_mi355x_chunk_is_32768_only_above_concurrency_32_at_8k1k(name):
    # dsr1_fp4_mi355x{,_mtp}.sh: PREFILL_SIZE=196608; 32768 when ISL=8192, OSL=1024 and CONC > 32
    r = get_recipe(name)
    at = {w: {c: r.for_workload(w).deployment_kwargs(c)["token_budget"] for c in (4, 32, 33, 64)} for w in ("1k1k", "8k1k")}
    assert at["1k1k"] == {4: 196608, 32: 196608, 33: 196608, 64: 196608}
    assert at["8k1k"] == {4: 196608, 32: 196608, 33: 32768, 64: 32768}
    kw, _ = launch_limits("mi355x", "deepseek-r1", "sglang", "quark-mxfp4", 8, 8192, 1024, 16, mtp=False)
    assert kw["token_budget"] == 196608


def test_dynamo_sglang_8k1k_drafts_by_decode_layout():
    # 1k1k files: speculative-num-steps 2 on TEP8 and DEP8 decode; 8k1k: 3 on the TEP8 low-latency files,
    # 2 on the DEP8 throughput files
    args = ("b200", "deepseek-r1", "dynamo-sglang", "fp4")
    tep, dep = Pool(Layout(tp=8, ep=8), 5), Pool(Layout(tp=1, dp=8, ep=8))
    k = {(isl, name): launch_mtp(*args, pool, conc, "disagg", isl, 1024).draft_tokens
         for isl in (1024, 8192) for name, pool, conc in (("tep", tep, 32), ("dep", dep, 1024))}
    assert k == {(1024, "tep"): 2, (1024, "dep"): 2, (8192, "tep"): 3, (8192, "dep"): 2}
    r = get_recipe("dynamo-sglang-b200-dsr1-fp4-mtp")
    assert r.prefill_attention_dp and r.token_budget == 32768 and r.for_workload("8k1k").token_budget == 24576


def test_b200_trtllm_script_balances_attention_dp_and_sizes_slots_to_the_concurrency():
    # dsr1_fp4_b200_trt_mtp.sh: attention_dp_config timeout_iters 60; max_batch_size = CONC (CONC/4 per DP rank)
    kw = get_recipe("trtllm-b200-dsr1-fp4-mtp").deployment_kwargs(64)
    assert (kw["adp_balance_timeout_iters"], kw["max_running"]) == (60, 64)
    assert get_recipe("trtllm-h200-dsr1-fp8-mtp").moe_backend == "cutlass"  # moe_config.backend CUTLASS


def test_search_spaces_as_the_configs_list_them():
    space = {n: set(get_recipe(n).search_space) for n in ("sglang-b200-dsr1-fp4", "sglang-h200-dsr1-fp8",
                                                          "sglang-b200-dsr1-fp8", "sglang-b200-dsr1-fp8-tp4")}
    assert space == {"sglang-b200-dsr1-fp4": {(4, 1, 4), (8, 1, 8)}, "sglang-h200-dsr1-fp8": {(8, 1, 1)},
                     "sglang-b200-dsr1-fp8": {(8, 1, 1)}, "sglang-b200-dsr1-fp8-tp4": {(4, 1, 1)}}
    assert (1, 8, 8) in get_recipe("trtllm-b200-dsr1-fp4-mtp").search_space  # { tp: 8, ep: 8, dp-attn: true }


def test_workload_overrides_refuse_other_keys_and_check_their_tables():
    good = {"name": "x", "engine": "sglang", "version": "1", "systems": ["b200"], "model": "deepseek-r1",
            "source": "s", "precision": "fp4", "serving": "agg"}
    with pytest.raises(SpecError, match="overrides only limits, the memory fraction and by-load tables"):
        _recipe({**good, "workload": {"8k1k": {"overlap": "tbo"}}}, 0)
    with pytest.raises(SpecError, match=r"workload\.8k1k\.token_budget_by_concurrency.*bounds must ascend"):
        _recipe({**good, "workload": {"8k1k": {"token_budget_by_concurrency": [[32, 4096], [16, 8192]]}}}, 0)


def test_sglang_eagle_without_a_running_cap_runs_48_and_row_119_queues_the_rest():
    # dsr1_fp4_mi355x_mtp.sh passes no --max-running-requests; SGLang v0.5.12's ServerArgs
    # ._handle_speculative_decoding sets max_running_requests = 48 for EAGLE when it is unset. At 64
    # users 16 wait for a slot, so the run's published throughput and TPOT disagree by Little's law:
    # row 119's closed-loop ratio tput·GPUs / (C · (1/TPOT) · (ISL+OSL)/OSL) is 2841·8 / (64·55.25·9) = 0.714
    # (measured; 48/64 = 0.75 times the decode share of a request's life). The model must show the same.
    from jalapeno.fit.validate import predict_points
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    assert get_recipe("sglang-mi355x-dsr1-fp4-mtp").deployment_kwargs(64)["max_running"] == 48
    pts, _ = load_inferencex(DEFAULT_POINTS)
    row = next(p for p in pts if p.id == "inferencex_points:119")
    got = predict_points([row]).set_index("metric")["predicted"]
    ratio = got["throughput_per_chip"] * 8 / (64 * got["interactivity"] * (8192 + 1024) / 1024)
    assert abs(ratio - 2841 * 8 / (64 * 55.25 * 9)) < 0.05
    assert abs(got["tpot_s"] / 0.0181 - 1) < 0.15  # +27% when all 64 were priced running
