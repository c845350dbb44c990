"""TensorRT-LLM's FP8 context FMHA for an FP8 per-tensor attention projection (fit/aic_row_engine.FP8_CONTEXT_FMHA).

The rule is read from TensorRT-LLM's source (tensorrt_llm/_torch/modules/attention.py: the attention output is
quantized for an FP8 ``o_proj``; cpp/tensorrt_llm/thop/attentionOp.cpp: an FP8 output selects the E4M3 context FMHA),
so the expected values below are the rule itself: which (engine, checkpoint) pairs change and which do not. The
prefill check prices one Llama-3.3-70B attention op both ways on B200: the FP8 math must be faster than the BF16
math and no faster than the ratio of the chip's dense FP8 to BF16 peaks (data/systems/b200.toml: 4.5 / 2.25
PFLOP/s = 2), since the op is compute-bound at 8,192 tokens and no efficiency may exceed its roofline.
"""

from __future__ import annotations

import pandas as pd
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit.aic_row_engine import FP8_CONTEXT_FMHA, with_row_attention_math
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack


def _dep(precision: str) -> Deployment:
    return Deployment(get_precision(precision), Pool(Layout(tp=8)))


def test_trtllm_per_tensor_fp8_runs_fp8_attention_math():
    dep, note = with_row_attention_math(_dep("fp8-tensor"), "trtllm")
    assert dep.precision.attention_compute == "fp8"
    assert dep.precision.name == "fp8-tensor,attn=fp8"  # the override is recorded in the name
    assert dep.precision.kv_cache == get_precision("fp8-tensor").kv_cache  # only the attention math moves
    assert "FP8_CONTEXT_FMHA" in note and "o_proj" in note


@pytest.mark.parametrize(("precision", "engine"), [
    ("fp8-tensor", "vllm"),    # vLLM: not the TensorRT-LLM attention op
    ("fp8-tensor", "sglang"),
    ("fp8", "trtllm"),         # block-scaled FP8 (DeepSeek's MLA, Qwen3): left as the preset states
    ("bf16", "trtllm"),        # a BF16 o_proj takes BF16 activations: no FP8 output
    ("nvfp4", "trtllm"),       # the NVFP4 preset already states FP8 attention math
])
def test_other_engines_and_formats_are_left_alone(precision, engine):
    dep = _dep(precision)
    got, note = with_row_attention_math(dep, engine)
    assert got is dep and note == ""


def test_only_trtllm_is_listed():
    assert FP8_CONTEXT_FMHA == {"trtllm": ("fp8_e4m3",)}


def test_fp8_prefill_attention_is_faster_within_the_peak_ratio():
    pr = load_pricer("b200", stack=get_stack("trtllm"))
    model = load_model("llama-3.3-70b")

    def attention_s(precision) -> float:
        c = step_cost(model, pr, Layout(tp=8), precision, Batch.make(decode_seqs=0, decode_ctx=0.0,
                                                                     prefill_tokens=8192.0))
        return next(r["time_s"] for r in c.op_rows(0) if r["op"] == "attn.prefill_full")

    bf16 = attention_s(get_precision("fp8-tensor"))
    fp8 = attention_s(with_row_attention_math(_dep("fp8-tensor"), "trtllm")[0].precision)
    assert fp8 < bf16 <= 2.0 * fp8 * (1 + 1e-9)


def _row(rid: str, backend: str) -> dict:
    return {"id": rid, "silicon_data_source": "db-dump/2026-04-27; measured=2025-10-29T00:00:00.000Z", "backend": backend,
            "backend_version": "1.1.0rc2.post2" if backend == "trtllm" else "", "model_path": "meta-llama/Llama-3.1-70B",
            "system": "b200_sxm", "precision": "fp8", "mode": "agg", "isl": 8192, "osl": 1024, "gemm_quant_mode": "fp8",
            "moe_quant_mode": "", "batch_size": 4.0, "tp_size": 8.0, "pp_size": 1.0, "attention_dp_size": 1.0,
            "moe_tp_size": 8.0, "moe_ep_size": 1.0, "silicon_ttft_ms": 217.4, "silicon_tpot_ms": 6.41}


def test_aiconfigurator_rows_take_the_rule_by_engine():
    from jalapeno.fit.aic_rows import load_aiconfigurator

    points, skipped = load_aiconfigurator(pd.DataFrame([_row("trt_c4", "trtllm"), _row("vllm_c4", "vllm")]))
    got = {p.id: p for p in points}
    assert not skipped, skipped
    trt, vllm = got["aic:trt_c4"], got["aic:vllm_c4"]
    assert trt.deployment.precision.attention_compute == "fp8"
    assert any("FP8_CONTEXT_FMHA" in n for n in trt.notes)
    assert vllm.deployment.precision.attention_compute == "bf16"
    assert not any("FP8_CONTEXT_FMHA" in n for n in vllm.notes)
