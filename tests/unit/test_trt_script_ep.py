"""TensorRT-LLM sweeps of 2025-11-02 whose launch script passed ``--ep_size=$TP`` while aiconfigurator's sample writes
MoE TP = tp, EP 1 (round 28, ep28), and the layout-dependent host calls of an eager gpt-oss layer
(cost/host_calls.tp_ep_calls).

Expected values by hand: the script (SemiAnalysisAI/InferenceX benchmarks/gptoss_fp4_h200_trt_slurm.sh @9596d23d7 ..
@e06929c70) runs ``trtllm-serve --ep_size=$TP --tp_size=$TP``, so a TP4 row ran MoE EP4 (whole experts per chip); the
call counts are triton28's (scripts/trt_tp_host_calls.TP_CALLS, read in TensorRT-LLM and triton_kernels).
"""

import math

import pandas as pd
import pytest

from jalapeno.cost.host_calls import step_host_calls
from jalapeno.fit.validate import load_aiconfigurator
from jalapeno.specs.catalog import load_model

#: one row of aiconfigurator-core 0.12.0's silicon_sample.csv as written (H200 gpt-oss-120b TRT-LLM, 2025-11-02, TP4)
ROW = {"id": "2026_04_06_gpt_oss_120b_h200_sxm_trtllm_fp4_agg_1024x8192_c32_tp4_ep1_144",
       "silicon_data_source": "source_file=2026-04-06.csv; model=GPT-OSS-120B; silicon_concurrency=32; "
                              "measured=2025-11-02T00:00:00.000Z; wip=False",
       "backend": "trtllm", "backend_version": math.nan, "model_path": "openai/gpt-oss-120b", "system": "h200_sxm",
       "precision": "fp4", "mode": "agg", "isl": 1024, "osl": 8192, "gemm_quant_mode": "nvfp4",
       "moe_quant_mode": "nvfp4", "batch_size": 32.0, "tp_size": 4.0, "pp_size": 1.0, "attention_dp_size": 1.0,
       "moe_tp_size": 4.0, "moe_ep_size": 1.0, "silicon_ttft_ms": 128.09, "silicon_tpot_ms": 7.603}
for _k in ("prefill_batch_size", "prefill_num_workers", "prefill_tp_size", "prefill_pp_size",
           "prefill_attention_dp_size", "prefill_moe_tp_size", "prefill_moe_ep_size", "decode_batch_size",
           "decode_num_workers", "decode_tp_size", "decode_pp_size", "decode_attention_dp_size", "decode_moe_tp_size",
           "decode_moe_ep_size"):
    ROW[_k] = math.nan


def _layout(**fields):
    pts, skipped = load_aiconfigurator(pd.DataFrame([{**ROW, **fields}]))
    assert len(pts) == 1, skipped
    return pts[0].deployment.decode.layout, pts[0].notes


def test_the_2025_11_02_h200_gptoss_rows_run_moe_ep_as_their_script_did():
    lay, notes = _layout()
    assert (lay.tp, lay.dp, lay.ep, lay.moe_tp) == (4, 1, 4, 1)
    assert any("--ep_size = --tp_size" in n for n in notes)


@pytest.mark.parametrize("system, model, precision", [("h200_sxm", "deepseek-ai/DeepSeek-R1", "fp8"),
                                                      ("b200_sxm", "deepseek-ai/DeepSeek-R1", "fp8"),
                                                      ("b200_sxm", "deepseek-ai/DeepSeek-R1", "fp4")])
def test_the_other_scripts_of_that_generation_that_passed_ep_tp_are_read_alike(system, model, precision):
    lay, _ = _layout(system=system, model_path=model, precision=precision, tp_size=8.0, moe_tp_size=8.0,
                     gemm_quant_mode=precision, moe_quant_mode=precision,
                     id=ROW["id"].replace("gpt_oss_120b_h200_sxm", "deepseek_r1").replace("tp4", "tp8"))
    assert (lay.tp, lay.ep, lay.moe_tp) == (8, 8, 1)


def test_a_later_gptoss_sweep_keeps_its_fields():
    # 2025-12-15 (gpt-oss-dev): the script takes EP_SIZE from the configuration; no expert_parallel restatement
    lay, _ = _layout(backend_version="gpt-oss-dev",
                     silicon_data_source=ROW["silicon_data_source"].replace("2025-11-02", "2025-12-16"))
    assert (lay.tp, lay.ep) == (4, 1)


def test_the_eager_gptoss_layer_counts_its_tp_and_ep_calls():
    m = load_model("gpt-oss-120b")
    # TP1: two fused add + RMSNorm calls; TP > 1: two all-reduces (contiguous + tunable_allreduce each) in their place;
    # MoE EP > 1 on TRITON: the EP router's two launches + compaction's two empty_like and one launch
    assert step_host_calls(m, True, moe_backend="triton", layout=(1, 1, 1)) == 36 * (65 - 4 + 2)
    assert step_host_calls(m, True, moe_backend="triton", layout=(8, 1, 1)) == 36 * 65
    assert step_host_calls(m, True, moe_backend="triton", layout=(8, 1, 8)) == 36 * (65 + 5)
    assert step_host_calls(m, True, moe_backend="trtllm", layout=(8, 1, 8)) == 36 * 16  # no TRITON EP router
    assert step_host_calls(m, True, moe_backend="trtllm", layout=(1, 1, 1)) == 36 * 14
    # attention DP: TransformerBlock runs forward_normal (the 2 norms, no all-reduce), but MLPBlock.forward_attn_dp
    # all-gathers the TRITON MoE's input and the MoE reduce-scatters its output (modeling_gpt_oss.py @050b6cb9,
    # MoE.reducescatter_or_allreduce under use_dp): contiguous + view + op + view each in distributed/ops.py @0071496d
    assert step_host_calls(m, True, moe_backend="triton", layout=(1, 4, 4)) == 36 * (65 - 4 + 2 + 5 + 2 * 4)
    # attention DP on the TRTLLM backend takes its own (unread) attention-DP MoE path: the TP > 1 count stands in
    assert step_host_calls(m, True, moe_backend="trtllm", layout=(1, 4, 4)) == step_host_calls(m, True) == 36 * 16
    # other architectures keep their TP > 1 count (read there only)
    ds = load_model("deepseek-r1")
    assert step_host_calls(ds, True, layout=(1, 1, 1)) == step_host_calls(ds, True) == 5622
