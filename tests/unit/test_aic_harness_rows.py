"""fit/aic_layout.harness_agg_instances: an aggregated row of NVIDIA's gap-analysis harness served
``silicon_concurrency / batch_size`` instances of its layout.

The rows are built by hand in aiconfigurator-core 0.12.0's ``silicon_sample.csv`` format after its real ones
(``nvidia_deepseek_v3_1_nvfp4_..._b200_sxm_trtllm_agg_4000x1000_c448_tp8_epnone_1``: batch_size 56, tp 8,
moe_ep 8, TTFT 428.38 ms, TPOT 21.21 ms; the same file's disaggregated Qwen3-32B row states 40 prefill TP1 +
6 decode TP4 workers = 64 GPUs, and 448 / 56 = 8 instances x 8 chips = 64).
"""

import pandas as pd
import pytest

from jalapeno.fit.aic_layout import harness_agg_instances
from jalapeno.fit.validate import load_aiconfigurator

GTL = ("source_file=/Users/harrli/projects/aic-auto-gap-analysis/data/b200_sxm/trtllm/1.3.0rc5/"
       "nvidia_DeepSeek-V3.1-NVFP4.csv; gtl_job_id=23803065; gtl_task_id=103629526; silicon_concurrency={c}; "
       "measured=2026-03-07; image=nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1; dynamo_version=0.8.1")
IX = "source_file=2026-03-25.csv; model=DeepSeek-R1; silicon_concurrency={c}; measured=2026-03-10T00:00:00.000Z"


def _row(rid, source, batch, tpot=21.209442):
    return {"id": rid, "silicon_data_source": source, "backend": "trtllm", "backend_version": "1.3.0rc5",
            "model_path": "nvidia/DeepSeek-V3.1-NVFP4", "system": "b200_sxm", "precision": "fp4", "mode": "agg",
            "isl": 4000, "osl": 1000, "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4", "batch_size": batch,
            "tp_size": 8.0, "pp_size": 1.0, "attention_dp_size": None, "moe_tp_size": 1.0, "moe_ep_size": 8.0,
            "silicon_ttft_ms": 428.382795, "silicon_tpot_ms": tpot}


@pytest.mark.parametrize("c, batch, want", [
    (448, 56, 8),     # B200 DeepSeek-V3.1 TP8: 8 x 8 = 64 GPUs
    (416, 13, 32),    # B200 Qwen3-32B TP2: 32 x 2 = 64 GPUs
    (2, 1, 2),        # GB200 Qwen3-32B 1.3.0rc1 C2: one request on each of 2 instances
])
def test_the_harness_concurrency_is_the_clusters(c, batch, want):
    n, why = harness_agg_instances(GTL.format(c=c), float(c), float(batch))
    assert n == want
    assert f"concurrency {c} is its cluster's" in why and f"{want} instances" in why


@pytest.mark.parametrize("source, c, batch", [
    (IX.format(c=256), 256, 32),            # an InferenceX export: batch_size is the attention-DP rank's
    (GTL.replace("silicon_concurrency={c}; ", ""), 28, 28),  # no stated concurrency: batch_size is the only count
    (GTL.format(c=1), 1, 1),                # one instance
    (GTL.format(c=12), 12, 5),              # not a whole number of instances
    (GTL.format(c=8), 8, float("nan")),     # no batch size
])
def test_other_rows_keep_one_instance(source, c, batch):
    assert harness_agg_instances(source, float(c), batch) == (1, "")


def test_the_loader_splits_the_harness_rows_concurrency_over_its_instances():
    frame = pd.DataFrame([
        _row("nvidia_deepseek_v3_1_nvfp4_nvidia_deepseek_v3_1_nvfp4_b200_sxm_trtllm_agg_4000x1000_c448_tp8_epnone_1",
             GTL.format(c=448), 56.0),
        _row("2026_03_25_deepseek_r1_b200_sxm_trtllm_fp4_agg_4000x1000_c448_tp8_ep8_1", IX.format(c=448), 56.0, 30.0),
    ])  # (another TPOT: fit/aic_duplicates.py merges rows that repeat one measurement)
    points, _ = load_aiconfigurator(frame)
    harness = next(p for p in points if "epnone" in p.id)
    export = next(p for p in points if "epnone" not in p.id)
    # 448 requests over 8 TP8 instances: 56 per instance, 64 chips
    assert harness.concurrency == 448 and harness.deployment.decode.workers == 8
    assert harness.deployment.decode.chips == 64
    assert any("8 instances" in n for n in harness.notes)
    assert export.deployment.decode.workers == 1


def test_a_harness_row_whose_concurrency_is_batch_times_tp_keeps_its_layout_on_each_instance():
    # ..._b200_sxm_trtllm_agg_4000x1000_c96_tp8_epnone_4 (1.3.0rc1): tp 8, no attention_dp_size, MoE TP2 x EP4,
    # batch_size 12, C 96: 96 / 12 = 8 instances of attention TP8 (not one attention-DP8 instance: the same
    # harness's Qwen3-32B TP2 rows state DP 1 at C / batch = 32)
    row = _row("nvidia_deepseek_r1_nvfp4_nvidia_deepseek_r1_nvfp4_b200_sxm_trtllm_agg_4000x1000_c96_tp8_epnone_4",
               GTL.format(c=96).replace("1.3.0rc5", "1.3.0rc1"), 12.0, tpot=89.304836)
    row.update(model_path="nvidia/DeepSeek-R1-NVFP4", backend_version="1.3.0rc1", moe_tp_size=2.0, moe_ep_size=4.0,
               silicon_ttft_ms=531.505127)
    (p,), _ = load_aiconfigurator(pd.DataFrame([row]))
    lay = p.deployment.decode.layout
    assert (lay.tp, lay.dp, lay.ep, lay.moe_tp) == (8, 1, 4, 2)
    assert p.deployment.decode.workers == 8 and p.concurrency == 96
