"""A TP degree that neither divides a GQA model's KV heads nor is a multiple of them is refused (round 24, newuser24).

The engines shard the KV heads over TP, or replicate them when TP exceeds them, and refuse any other degree: vLLM's
QKVParallelLinear asserts total_num_kv_heads % tp_size == 0 when tp_size < total_num_kv_heads, else
tp_size % total_num_kv_heads == 0 (vllm/model_executor/layers/linear.py). Head counts from the models' config.json:
MiniMax-M2.5 48 query / 8 KV heads, Qwen3-235B-A22B 64 / 4, DeepSeek-R1 MLA (no KV-head sharding).
"""

from __future__ import annotations

import pytest
from cli_runner import check_error, run

from jalapeno.deploy.layout import Layout, validate_layout
from jalapeno.errors import InfeasibleDeployment
from jalapeno.specs.catalog import load_model, load_system


@pytest.mark.parametrize("model, tp", [("minimax-m2.5", 3), ("minimax-m2.5", 6), ("minimax-m2.5", 12)])
def test_tp_that_neither_divides_nor_multiplies_the_kv_heads_is_refused(model, tp):
    m = load_model(model)
    assert m.attention.num_heads % tp == 0  # 48 query heads: the query-head check lets these through
    with pytest.raises(InfeasibleDeployment, match=rf"TP{tp} neither divides nor is a multiple of .*KV heads") as e:
        validate_layout(Layout(tp=tp), m, load_system("gb300-nvl72"))
    assert "divides the KV heads or a multiple of them" in e.value.fix


@pytest.mark.parametrize("model, tp", [("minimax-m2.5", 2), ("minimax-m2.5", 8), ("minimax-m2.5", 16),
                                       ("qwen3-235b-a22b", 8), ("deepseek-r1", 8)])
def test_dividing_or_replicating_degrees_run(model, tp):
    validate_layout(Layout(tp=tp), load_model(model), load_system("gb300-nvl72"))


def test_the_cli_names_the_option(capsys):
    check_error(*run(capsys, "predict", "-s", "b300", "-m", "minimax-m2.5", "-p", "fp8", "--tp", "3", "-c", "8"),
                "--tp", "TP3 neither divides nor is a multiple of minimax-m2.5's 8 KV heads",
                "a TP degree that divides the KV heads")
