"""scripts/trt_rank_cost_by_release.py: the release map and the what-if rule, by hand."""

from __future__ import annotations

from script_module import load_script

from jalapeno.deploy.engines import get_recipe

rank = load_script("trt_rank_cost_by_release")


def test_release_of_a_row():
    # a tensorrt-llm/release image states its release; a Dynamo runtime's is the one it ships; else unknown
    assert rank.trtllm_release("trtllm 1.2.0rc2.post2", "1.2.0rc2.post2") == "1.2.0rc2.post2"
    assert rank.trtllm_release("trtllm 0.8.1.post3") == "1.2.0rc6.post3"
    assert rank.trtllm_release("trtllm 1.1.0-dev.2") == "1.3.0rc5.post1"  # lower end of 1.3.0rc5.post1-1.3.0rc11
    assert rank.trtllm_release("trtllm unstated") == rank.trtllm_release("trtllm gpt-oss-dev") == ""
    assert rank.trtllm_release("") == ""


def test_map_agrees_with_the_recipes():
    # data/engines.toml states the Dynamo 0.8.1.post2 / post3 runtimes' release from the same support matrix
    for name in ("dynamo-trt-dsr1-fp4", "dynamo-trt-dsr1-fp8"):
        r = get_recipe(name)
        dynamo = r.image.rsplit(":", 1)[1]
        assert rank.DYNAMO_RUNTIME_TRTLLM[dynamo][0] == r.engine_version


def test_rule_by_hand():
    assert rank.rule_applies("gb200-nvl72", "1.2.0rc2")  # the bound itself
    assert rank.rule_applies("gb300-nvl72", "1.3.0rc5.post1")
    assert not rank.rule_applies("b200", "1.2.0rc1")  # before the bound
    assert not rank.rule_applies("h200", "1.3.0rc5.post1")  # Hopper keeps the cost
    assert not rank.rule_applies("b200", "")  # unknown release keeps it
    assert not rank.rule_applies("b200", "gpt-oss-dev")  # not a release number
    assert rank.rule_applies("b200", "1.1.0rc5", since="1.1.0rc2.post2")
