"""Validation applies a disaggregated launch recipe's prefill token budget to a topology-parsed
row (round 11, item 9; docs/gap_disagg_overprediction.md candidate 2). Expected budgets are the
recipe files' chunked-prefill-size, read from InferenceX @e0e00cdeb11e
(benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/{1k1k,8k1k}/disagg/mtp/*.yaml):
32768 in every 1k1k file, 24576 in the 8k1k low-latency and throughput files."""

from __future__ import annotations

from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.engines import launch_budget
from jalapeno.deploy.layout import Layout
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS

TEP8 = Pool(Layout(tp=8, ep=8), 6)


def test_dynamo_sglang_budget_is_the_recipes_chunked_prefill_size():
    assert launch_budget("b200", "deepseek-r1", "dynamo-sglang", "fp4", TEP8, 1024, 1024, 32, True) == {
        "token_budget": 32768}
    assert launch_budget("b200", "deepseek-r1", "dynamo-sglang", "fp4", TEP8, 8192, 1024, 32, True)[
        "token_budget"] == 24576


def test_no_recipe_no_budget():
    """A run no launch recipe describes keeps the deployment's default budget (nothing returned)."""
    assert launch_budget("b200", "deepseek-r1", "no-such-engine", "fp4", TEP8, 1024, 1024, 32, True) == {}


def test_validation_rows_of_that_recipe_carry_its_budget():
    """Rows 123-126 (B200 FP4 Dynamo + SGLang MTP, 1k1k, disaggregated) were priced at the
    default 8192-token budget."""
    pts, _ = load_inferencex(DEFAULT_POINTS)
    rows = [p for p in pts if p.framework == "dynamo-sglang" and p.system == "b200" and p.deployment is not None
            and p.deployment.prefill is not None and (p.isl, p.osl) == (1024, 1024)]
    assert rows
    for p in rows:
        assert p.deployment.token_budget == 32768, p.id
        assert any("prefill budget 32768 tokens per instance (launch recipe token_budget)" in n for n in p.notes)
