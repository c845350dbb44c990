"""Refill dispatch (round 41, h200int41): with every attention-DP rank at its running cap, each new prompt lands on the
random rank whose request finished (cost/adp_rank.expected_max_load, busiest_rank_prompts ``refill``), and the
TensorRT-LLM single-node MTP scripts' load-sized ``--max_num_tokens`` reaches the InferenceX rows of their recipes
(fit/searched.with_launch_token_limit, fit/aic_sweep_launch.sized_token_limit).

Expected values are worked by hand: the most of n balls in dp bins by enumeration (2 balls on 8 bins share one with
probability 1/8; 3 on 2 bins: all on one with probability 2/8), and the script's formula
``MAX_NUM_TOKENS=$(( ((MTP+1)*MAX_BATCH_SIZE+ISL+64+63)/64*64 ))`` (SemiAnalysisAI/InferenceX
benchmarks/dsr1_fp8_h200_trt_mtp_slurm.sh @008b91a9dd78) at MTP 1, max_batch 256/8 = 32, ISL 8192:
(64 + 8192 + 127) // 64 · 64 = 8320.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from jalapeno.cost.adp_rank import busiest_rank_decode, busiest_rank_prompts, expected_max_load
from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweep_launch import sized_token_limit
from jalapeno.fit.searched import with_launch_token_limit
from jalapeno.specs.formats import get_precision


def _enumerated_max(n: int, dp: int) -> float:
    """E[max load] by listing every one of the dp^n equally likely placements."""
    tot = 0
    for place in itertools.product(range(dp), repeat=n):
        tot += max(np.bincount(place, minlength=dp))
    return tot / dp**n


@pytest.mark.parametrize(("n", "dp"), [(2, 8), (3, 2), (4, 3), (5, 4)])
def test_expected_max_load_matches_enumeration(n, dp):
    assert expected_max_load(n, dp)[n] == pytest.approx(_enumerated_max(n, dp), rel=1e-9)


def test_refill_prompts_by_hand_and_balanced_unchanged():
    # 2 prompts on 8 random ranks: 1 + 1/8; under one prompt: itself; balanced keeps max(n/dp, min(n, 1))
    got = busiest_rank_prompts([0.5, 2.0, 16.0], 8, "refill")
    assert got[0] == pytest.approx(0.5) and got[1] == pytest.approx(1.125)
    assert got[2] > 2.0  # 16 on 8 random ranks: above the even 2
    assert busiest_rank_prompts([0.5, 2.0, 16.0], 8).tolist() == [0.5, 1.0, 2.0]
    # decodes stay balanced under refill (every rank holds its cap)
    assert busiest_rank_decode([256.0], 8, "refill").tolist() == [32.0]


def test_refill_far_tail_grows_past_the_table():
    n = np.array([96.0, 200.0, 400.0])
    got = busiest_rank_prompts(n, 8, "refill")
    assert np.all(np.diff(got) > 0) and np.all(got > n / 8)
    assert np.all(got - n / 8 < 3.0 * np.sqrt(n / 8))  # a few standard deviations of a Poisson(n/8) count


def test_sized_limit_and_refill_only_when_every_rank_is_full():
    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), mtp=MTP(1, 0.675))
    full, _ = sized_token_limit(dep, 8192, 256, 32, "script")
    assert full.max_tokens_per_step == 8 * 8320 and full.prompt_budget(full.decode.layout) == 8192
    assert full.decode.layout.dp_dispatch == "refill"
    slack, _ = sized_token_limit(dep, 8192, 256, 64, "script")  # conc/4 on DEP8: twice the slots the load fills
    assert slack.decode.layout.dp_dispatch == "balanced"


def test_row25_recipe_run_carries_the_script_limit():
    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), mtp=MTP(1, 0.675))
    got = with_launch_token_limit(dep, "h200", "deepseek-r1", "trt", "fp8", 8192, 256, True)
    assert got.max_tokens_per_step == 8 * 8320 and got.decode.layout.dp_dispatch == "refill"
    # a plain run the MTP recipe only stands in for ran another script: untouched
    plain = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)))
    assert with_launch_token_limit(plain, "h200", "deepseek-r1", "trt", "fp8", 8192, 256, False) is plain


def test_bad_max_batch_rule_names_the_field():
    from jalapeno.deploy.recipe import _recipe

    raw = {
        "name": "x",
        "engine": "trt",
        "version": "1",
        "systems": ["h200"],
        "model": "deepseek-r1",
        "source": "s",
        "precision": "fp8",
        "serving": "agg",
        "max_batch_dp_attention": "conc/half",
    }
    with pytest.raises(SpecError, match="max_batch_dp_attention"):
        _recipe(raw, 0)
    with pytest.raises(SpecError, match="max_num_tokens_sized"):
        _recipe({**raw, "max_batch_dp_attention": "conc/dp", "max_num_tokens_sized": "yes"}, 0)


def test_step_cli_takes_refill_and_a_prefill_pool_refusal_names_it(capsys):
    # `step --dp-dispatch refill` reaches the layout; its help and the prefill-pool refusal name refill (they named
    # balanced and random only after refill joined deploy/layout.DP_DISPATCH)
    from cli_runner import run

    from jalapeno.cli.pool_opts import parse_pool

    args = "-s h200 -p fp8 --dp 8 --ep 8 -b 256 --prefill-tokens 8192 --dp-dispatch refill --json".split()
    code, out, _ = run(capsys, "step", *args)
    assert code == 0 and '"dp_dispatch": "refill"' in out
    code, out, _ = run(capsys, "step", "--help")
    assert code == 0 and "refill" in " ".join(out.split())
    with pytest.raises(SpecError, match="refill: prompts on the rank a finished request left"):
        parse_pool("dp=8,ep=8,dp_dispatch=refill", "--prefill")


def test_refill_with_per_column_dp_is_refused_as_random_is():
    # a per-column build (cost/layout_columns.py) takes balanced dispatch only: refill raised TypeError from int(dp)
    with pytest.raises(ValueError, match="balanced dispatch only"):
        busiest_rank_prompts([2.0, 3.0], np.array([4, 8]), "refill")
    assert busiest_rank_prompts([2.0, 16.0], np.array([4, 8])).tolist() == [1.0, 2.0]
