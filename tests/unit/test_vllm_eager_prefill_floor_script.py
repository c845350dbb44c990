"""scripts/vllm_eager_prefill_floor.py: vLLM's eager prefill forward of Kimi K2.5 counted in host calls, by hand; and
the model prices no eager floor for vLLM (the negative result of docs/gap_aic_ttft.md, round 28, vllmeager28)."""

from __future__ import annotations

import pytest
from script_module import load_script

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit.trt_prompt_graphs import with_prompt_graphs
from jalapeno.specs.formats import get_precision

vf = load_script("vllm_eager_prefill_floor")


def test_parts_by_hand():
    # MultiHeadLatentAttentionWrapper.forward: qkv_a GEMM 1, split 1, q_a norm 2, q_b GEMM 1, split 1, kv_a norm 2,
    # view + unsqueeze 2, rotary 4, attention output + op 2, o_proj 1 = 17
    assert vf.part_calls("mla") == 1 + 1 + 2 + 1 + 1 + 2 + 2 + 4 + 2 + 1
    # MLACommonImpl: 4 + 4 slices, cache write 3, fp8 view 1, kv_b 3, concat 5, ragged attention 2, output 3 = 25
    assert vf.part_calls("mla_impl") == 4 + 4 + 3 + 1 + 3 + 5 + 2 + 3
    assert vf.part_calls("layer") == 2
    # DeepseekV2MoE with SharedFusedMoE on DEP4: 1 + 2 + 2 + 4 + 4 + 3 + 4 + 2 + 2 + 2 = 26
    assert vf.part_calls("moe") == 26
    assert vf.part_calls("nothing") == 0


def test_step_by_hand():
    # Kimi K2.5: 61 layers, the first dense (first_k_dense_replace = 1): 1 x 48 + 60 x 70
    assert vf.step_calls() == 48 + 60 * 70 == 4248
    assert vf.step_calls(layers=2, dense=2) == 2 * 48
    # at TensorRT-LLM's fitted 24 µs a call: 102 ms, below the 212-378 ms the low-load rows would need
    assert vf.step_calls() * 24e-6 == pytest.approx(0.101952)


def test_every_call_names_a_source():
    assert all(src in vf.SOURCES and n > 0 and what for _, src, n, what in vf.CALLS)


def test_vllm_rows_carry_no_eager_floor():
    # the shipped model prices an eager prompt step for TensorRT-LLM only; the vLLM disaggregated rows keep 0
    d = Deployment(get_precision("fp4"), Pool(Layout(tp=4)), prefill=Pool(Layout(tp=1, dp=4, ep=4)))
    dep, note = with_prompt_graphs(d, "vllm 0.18.0", "kimi-k2.5", "fp4", "0.18.0", 1024, 1024, 4)
    assert dep.eager_prompt_call_s == 0.0 and note == ""
    dep, _ = with_prompt_graphs(d, "trtllm 1.2.0", "kimi-k2.5", "fp4", "1.2.0", 1024, 1024, 4)
    assert dep.eager_prompt_call_s == pytest.approx(24e-6)
