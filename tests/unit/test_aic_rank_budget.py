"""Disaggregated aiconfigurator rows of TensorRT-LLM count the prefill token budget per attention-DP rank.

TensorRT-LLM runs one PyExecutor scheduler per attention-DP rank, each with its own ``max_num_tokens``
(tensorrt_llm/_torch/pyexecutor/py_executor.py; data/engines.toml, recipe dynamo-trt-dsr1-fp4), default 8192.
The rows carry no launch recipe, so a DP4 prefill worker gets 8192 tokens on each of its 4 ranks: 32,768 a step,
and one 8192-token prompt fits one rank's step (one chunk). SGLang's ``chunked_prefill_size`` is the instance's
(divided by dp_size): its rows keep 8192 for the whole worker. Figures by hand from those rules.
"""

from __future__ import annotations

import pandas as pd

from jalapeno.fit.validate import load_aiconfigurator


def _row(rid: str, backend: str, version: str, p_tp: int, p_dp: int) -> dict:
    return {"id": rid, "silicon_data_source": "db-dump/2026-04-27; measured=2026-02-07T00:00:00.000Z",
            "backend": backend, "backend_version": version, "model_path": "deepseek-ai/DeepSeek-R1",
            "system": "gb300", "precision": "fp8", "mode": "disagg", "isl": 8192, "osl": 1024,
            "gemm_quant_mode": "fp8_block", "moe_quant_mode": "fp8_block", "prefill_batch_size": 1.0,
            "prefill_num_workers": 1.0, "prefill_tp_size": float(p_tp), "prefill_pp_size": 1.0,
            "prefill_attention_dp_size": float(p_dp), "prefill_moe_tp_size": 1.0,
            "prefill_moe_ep_size": float(p_tp * p_dp), "decode_batch_size": 1.0, "decode_num_workers": 4.0,
            "decode_tp_size": 8.0, "decode_pp_size": 1.0, "decode_attention_dp_size": 1.0, "decode_moe_tp_size": 1.0,
            "decode_moe_ep_size": 8.0, "silicon_ttft_ms": 500.0, "silicon_tpot_ms": 8.0}


def test_trtllm_prefill_budget_is_per_rank_and_sglang_per_instance():
    rows = [_row("dsr1_gb300_trtllm_fp8_disagg_8192x1024_c4_cfg1", "trtllm", "1.1.0", 1, 4),
            _row("dsr1_gb300_sglang_fp8_disagg_8192x1024_c4_cfg2", "sglang", "0.5.5", 1, 4)]
    trt, sgl = load_aiconfigurator(pd.DataFrame(rows))[0]
    pre = trt.deployment.prefill.layout
    assert trt.deployment.budget_per == "rank"
    assert trt.deployment.prefill_budget(pre) == 4 * 8192
    assert trt.deployment.prompt_budget(pre) == 8192  # the 8K prompt: one chunk on its rank
    assert any("per attention-DP rank" in n for n in trt.notes)
    assert sgl.deployment.budget_per == "instance"
    assert sgl.deployment.prompt_budget(sgl.deployment.prefill.layout) == 8192 / 4

