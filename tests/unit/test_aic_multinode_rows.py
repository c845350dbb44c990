"""fit/aic_layout.multinode_total_gpu_run: GB200 multi-node runs an InferenceX export stores as aggregated.

Until 2025-12-05 InferenceX ran GB200 only through its multi-node workflow, which wrote each disaggregated
run as ``TP=$gpus`` (the run's GPU count), ``EP_SIZE=1``, ``DP_ATTENTION=false`` and marked it ``disagg``
only when the result file named its ``_ctx_`` / ``_gen_`` GPU counts (SemiAnalysisAI/InferenceX @0ba7aa3ff
.github/workflows/benchmark-multinode-tmpl.yml "Process results", utils/process_result.py). The rows below
are built by hand in aiconfigurator-core 0.12.0's ``silicon_sample.csv`` format after its real rows
(ids, fields and times of ``2026_04_06_deepseek_r1_gb200_trtllm_fp4_agg_*``).
"""

import pandas as pd
import pytest

from jalapeno.fit.aic_layout import multinode_total_gpu_run
from jalapeno.fit.validate import load_aiconfigurator

IX_NOV = "source_file=2026-04-06.csv; model=DeepSeek-R1; silicon_concurrency={c}; measured={d}T00:00:00.000Z; wip=False"
GAP = ("source_file=/Users/harrli/projects/aic-auto-gap-analysis/data/gb200/trtllm/1.2.0rc6.post1/deepseek_r1.csv; "
       "measured=2026-01-23; image=nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.0; dynamo_version=0.8.0")


def _row(rid, tp, moe_ep, source, c, isl=8192, tpot=43.875116, ttft=5755.25138, version=None):
    """An aggregated GB200 DeepSeek-R1 FP4 TRT-LLM row; ``tp`` is written to tp_size and moe_tp_size as
    InferenceX's writer does (``EP_SIZE=1``: the MoE spans tp_size ranks of tensor parallelism)."""
    return {"id": rid, "silicon_data_source": source, "backend": "trtllm", "backend_version": version,
            "model_path": "deepseek-ai/DeepSeek-R1", "system": "gb200", "precision": "fp4", "mode": "agg",
            "isl": isl, "osl": 1024, "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4", "batch_size": float(c),
            "tp_size": float(tp), "pp_size": 1.0, "attention_dp_size": None if moe_ep > 1 else 1.0,
            "moe_tp_size": 1.0 if moe_ep > 1 else float(tp), "moe_ep_size": float(moe_ep),
            "silicon_ttft_ms": ttft, "silicon_tpot_ms": tpot}


def test_a_pre_integration_gb200_export_row_is_a_multinode_run_not_a_layout():
    why = multinode_total_gpu_run("gb200-nvl72", "inferencex-db", "2025-11-17", 1, 1)
    assert "multi-node disaggregated run" in why and "tp_size is the run's GPU count" in why
    assert "prefill/decode split is not in the row" in why
    # the last day of the old writer (its 2025-12-05 twins still carry prefill_tp = decode_tp = the count)
    assert multinode_total_gpu_run("gb200-nvl72", "inferencex-db", "2025-12-05", None, None)


@pytest.mark.parametrize("system, client, measured, dp, moe_ep", [
    ("gb200-nvl72", "inferencex-db", "2025-12-06", 1, 1),    # after InferenceX 93e1b3ca1 (multinode integration)
    ("gb200-nvl72", "aiconfigurator", "2025-11-17", 1, 1),   # NVIDIA's own gap-analysis run, not InferenceX's writer
    ("b200", "inferencex-db", "2025-11-17", 1, 1),           # single-node runs went through benchmark-tmpl.yml
    ("gb300-nvl72", "inferencex-db", "2025-11-17", 1, 1),    # the workflow's only multi-node runner was gb200
    ("gb200-nvl72", "inferencex-db", "2025-11-17", 8, 1),    # the writer set DP_ATTENTION=false
    ("gb200-nvl72", "inferencex-db", "2025-11-17", 1, 8),    # and EP_SIZE=1
    ("gb200-nvl72", "inferencex-db", "", 1, 1),              # no measured= date: nothing says which writer
])
def test_rows_without_the_writers_evidence_keep_their_fields(system, client, measured, dp, moe_ep):
    assert multinode_total_gpu_run(system, client, measured, dp, moe_ep) == ""


def test_the_loader_skips_the_multinode_rows_and_keeps_a_real_gb200_aggregated_run():
    frame = pd.DataFrame([
        # 8k/1k C = 2150 "TP32": read as attention TP32 it was predicted at TTFT 224 s against 5.8 s measured
        _row("2026_04_06_deepseek_r1_gb200_trtllm_fp4_agg_8192x1024_c2150_tp32_ep1_121", 32, 1,
             IX_NOV.format(c=2150, d="2025-11-17"), 2150),
        # 1k/1k C = 4 "TP36": 36 does not divide 128 heads (it was refused as a layout)
        _row("2026_04_06_deepseek_r1_gb200_trtllm_fp4_agg_1024x1024_c4_tp36_ep1_18", 36, 1,
             IX_NOV.format(c=4, d="2025-11-17"), 4, isl=1024, tpot=6.369108, ttft=232.931803),
        # NVIDIA's gap-analysis run: one TP8 / MoE EP8 aggregated worker of 8 GB200 GPUs
        _row("deepseek_r1_deepseek_r1_gb200_trtllm_agg_4000x1000_c_tp8_epnone_1", 8, 8, GAP, 28, isl=4000,
             tpot=31.491032, ttft=39682.83815, version="1.2.0rc6.post1"),
    ])
    points, skipped = load_aiconfigurator(frame)
    reasons = dict(skipped)
    for rid in ("aic:2026_04_06_deepseek_r1_gb200_trtllm_fp4_agg_8192x1024_c2150_tp32_ep1_121",
                "aic:2026_04_06_deepseek_r1_gb200_trtllm_fp4_agg_1024x1024_c4_tp36_ep1_18"):
        assert "tp_size is the run's GPU count" in reasons[rid]
    (p,) = points
    lay = p.deployment.decode.layout
    assert p.id.endswith("_tp8_epnone_1") and (lay.tp, lay.dp, lay.ep) == (8, 1, 8)
