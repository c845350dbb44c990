"""aiconfigurator's sample writes 0 for a parallel size a run did not set: read as unset, not as EP0.

The row below is aiconfigurator-core 0.12.0's ``qwen3_235b_a22b_qwen3_235b_a22b_h100_sxm_vllm_disagg_4000x1000_c_
tpnone_epnone_1`` (fields copied from ``systems/silicon_sample.csv``): prefill TP1 x attention DP4, one worker; decode
TP4, three workers of batch 24; every MoE TP/EP size 0 (vLLM without expert parallelism). It was priced as EP0 and
refused ('ep: must be a positive integer, got 0'), so it never reached the figures.
"""

from __future__ import annotations

import pandas as pd

from jalapeno.fit.validate import load_aiconfigurator

ROW = {"id": "qwen3_235b_a22b_qwen3_235b_a22b_h100_sxm_vllm_disagg_4000x1000_c_tpnone_epnone_1", "backend": "vllm",
       "backend_version": "0.12.0",
       "silicon_data_source": ("source_file=/x/h100_sxm/vllm/0.12.0/qwen3_235b_a22b.csv; gtl_job_id=23364591; "
                               "measured=2026-01-25; image=nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0"),
       "model_path": "Qwen/Qwen3-235B-A22B-FP8", "system": "h100_sxm", "precision": "fp8", "mode": "disagg",
       "isl": 4000, "osl": 1000, "gemm_quant_mode": "fp8", "moe_quant_mode": "fp8",
       "prefill_batch_size": 1.0, "prefill_num_workers": 1.0, "prefill_tp_size": 1.0, "prefill_pp_size": 1.0,
       "prefill_attention_dp_size": 4.0, "prefill_moe_tp_size": 0.0, "prefill_moe_ep_size": 0.0,
       "decode_batch_size": 24.0, "decode_num_workers": 3.0, "decode_tp_size": 4.0, "decode_pp_size": 1.0,
       "decode_attention_dp_size": 1.0, "decode_moe_tp_size": 0.0, "decode_moe_ep_size": 0.0,
       "silicon_ttft_ms": 898.339221, "silicon_tpot_ms": 11.383278}


def test_a_zero_moe_size_is_unset():
    points, skipped = load_aiconfigurator(pd.DataFrame([ROW]))
    assert not skipped
    (p,) = points
    pre, dec = p.deployment.prefill.layout, p.deployment.decode.layout
    assert (pre.tp, pre.dp, pre.ep, p.deployment.prefill.workers) == (1, 4, 1, 1)
    assert (dec.tp, dec.dp, dec.ep, p.deployment.decode.workers) == (4, 1, 1, 3)
    assert p.concurrency == 24 * 3  # decode batch x decode workers (the id names no concurrency)
