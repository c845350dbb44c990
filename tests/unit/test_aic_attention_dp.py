"""TensorRT-LLM attention-DP rows of aiconfigurator's sample: rule 4 of fit/aic_layout (issue 18).

Expected layouts are read by hand from real rows of aiconfigurator-core 0.12.0's ``systems/silicon_sample.csv``
(fields copied below, not computed by the code under test):
- ``..._b200_sxm_trtllm_agg_4000x1000_c96_tp8_epnone_4``: tp_size 8, no attention_dp_size, moe_tp 2, moe_ep 4,
  batch_size 12; its source names ``silicon_concurrency=96`` = 12 x 8, so each of the 8 ranks ran its own
  batch of 12: attention DP8 (TP1), MoE TP2 x EP4 over the same 8 chips.
- ``..._h100_sxm_trtllm_agg_4000x1000_c192_tp4_epnone_1``: tp 4, moe_tp 4, moe_ep 1, batch 48; 192 = 48 x 4.
- every row that states a DP degree has concurrency = batch_size x attention_dp_size (e.g. TRT-LLM
  1.1.0rc2.post2 DeepSeek-R1, tp 1, dp 8); a TP row without DP has concurrency = batch_size.
"""

from __future__ import annotations

import pandas as pd

from jalapeno.deploy.layout import Layout
from jalapeno.fit.aic_layout import aic_agg_layout
from jalapeno.fit.validate import load_aiconfigurator

B200_ID = "nvidia_deepseek_r1_nvfp4_nvidia_deepseek_r1_nvfp4_b200_sxm_trtllm_agg_4000x1000_c96_tp8_epnone_4"


def test_concurrency_of_batch_times_tp_is_trtllm_attention_dp():
    tp, dp, ep, note = aic_agg_layout(8, None, 2, 4, B200_ID, 12)
    assert (tp, dp, ep) == (1, 8, 4)
    assert "attention DP8" in note and "MoE TP2 EP4" in note
    assert Layout(tp=tp, dp=dp, ep=ep).moe_tp == 2  # 8 chips / EP4
    h100 = "openai_gpt_oss_120b_openai_gpt_oss_120b_h100_sxm_trtllm_agg_4000x1000_c192_tp4_epnone_1"
    assert aic_agg_layout(4, None, 4, 1, h100, 48)[:3] == (1, 4, 1)


def test_batch_equal_to_concurrency_stays_tensor_parallel():
    # the same fields with batch_size 96 = the concurrency: one TP8 attention group, read as written
    assert aic_agg_layout(8, None, 2, 4, B200_ID, 96) == (8, 1, 4, "")
    # no batch size: nothing to compare, read as written
    assert aic_agg_layout(8, None, 2, 4, B200_ID) == (8, 1, 4, "")
    # a stated DP degree is never overridden (TRT-LLM 1.1.0rc2.post2 tp 1, dp 8, C = 8 x batch)
    assert aic_agg_layout(1, 8, 1, 8, "deepseek_r1_b200_trtllm_agg_1024x1024_c64_cfg1", 8)[:3] == (1, 8, 8)


def test_loader_prices_the_row_on_eight_attention_ranks():
    row = {"id": B200_ID, "backend": "trtllm", "backend_version": "1.3.0rc1",
           "silicon_data_source": ("source_file=/x/b200_sxm/trtllm/1.3.0rc1/nvidia_DeepSeek-R1-NVFP4.csv; "
                                   "silicon_concurrency=96; measured=2026-03-17"),
           "model_path": "nvidia/DeepSeek-R1-NVFP4", "system": "b200_sxm", "precision": "nvfp4", "mode": "agg",
           "isl": 4000, "osl": 1000, "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4", "batch_size": 12.0,
           "tp_size": 8.0, "pp_size": 1.0, "attention_dp_size": float("nan"), "moe_tp_size": 2.0,
           "moe_ep_size": 4.0, "silicon_ttft_ms": 531.5, "silicon_tpot_ms": 89.3}
    points, skipped = load_aiconfigurator(pd.DataFrame([row]))
    assert not skipped
    (p,) = points
    lay = p.deployment.decode.layout
    assert (lay.tp, lay.dp, lay.ep, lay.moe_tp, lay.chips) == (1, 8, 4, 2, 8)
    assert p.concurrency == 96
