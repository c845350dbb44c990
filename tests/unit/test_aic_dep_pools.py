"""SGLang 0.5.5.post2 GB200 disaggregated aiconfigurator rows: attention-DP pools run DeepEP (InferenceX "DEP N").

Expected layouts read by hand, not from the code:
- the rows are real rows of aiconfigurator-core 0.12.0's ``systems/silicon_sample.csv`` (config_id 259:
  prefill 4 workers, ``prefill_attention_dp_size`` 4, ``prefill_moe_tp_size`` 4, ``prefill_moe_ep_size`` 1; decode 1
  worker, attention DP 32, MoE TP 32, EP 1; config_id 255: prefill TP 4 without attention DP);
- SemiAnalysisAI/InferenceX be3394ea5 ``.github/configs/nvidia-master.yaml`` ``dsr1-fp4-gb200-dynamo-sglang``
  (image lmsysorg/sglang:v0.5.5.post2): "Top of curve (1 prefill worker at DEP4 and 1 decode worker at DEP32)";
- the Dynamo SGLang GB200 slurm script the configuration defers to runs each pool with ``--tp-size $TOTAL_GPUS
  --dp-size $TOTAL_GPUS --enable-dp-attention --enable-deepep-moe``: attention DP N, MoE EP N (whole experts);
- except the low-latency entries, the only ones with one-node (4-GPU) decode workers ("1 prefill worker at DEP4 and
  2 decode workers at DEP4", DECODE_NODES=2; 8k1k: 4 decode workers, DECODE_NODES=4; config_id 252 and 255): their
  scripts gb200-fp4/disagg/1k1k-low-latency.sh and 8k1k-low-latency.sh (ai-dynamo/dynamo @75b4a35fca94, wxsms/dynamo
  @cf433e6825d8) pass ``--tensor-parallel-size $TOTAL_GPUS --data-parallel-size 1 --expert-parallel-size 1`` and no
  ``--enable-dp-attention`` to both pools: attention TP 4, MoE TP 4.
"""

from __future__ import annotations

import pandas as pd

from jalapeno.fit.aic_sweeps import load_sweeps, sweep_of
from jalapeno.fit.validate import load_aiconfigurator


def _row(cfg: int, version: str, measured: str, p_tp: int, p_dp: int, d_dp: int, d_workers: int) -> dict:
    return {"id": f"dsr1_gb200_sglang_fp4_disagg_1024x1024_c64_cfg{cfg}", "backend": "sglang",
            "silicon_data_source": f"db-dump/2026-04-27; config_id={cfg}; measured={measured}T00:00:00.000Z",
            "backend_version": version, "model_path": "deepseek-ai/DeepSeek-R1", "system": "gb200", "precision": "fp4",
            "mode": "disagg", "isl": 1024, "osl": 1024, "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4",
            "prefill_batch_size": 1.0, "prefill_num_workers": 1.0, "prefill_tp_size": float(p_tp),
            "prefill_pp_size": 1.0, "prefill_attention_dp_size": float(p_dp), "prefill_moe_tp_size": float(p_tp * p_dp),
            "prefill_moe_ep_size": 1.0, "decode_batch_size": 16.0, "decode_num_workers": float(d_workers),
            "decode_tp_size": 1.0, "decode_pp_size": 1.0, "decode_attention_dp_size": float(d_dp),
            "decode_moe_tp_size": float(d_dp), "decode_moe_ep_size": 1.0, "silicon_ttft_ms": 300.0,
            "silicon_tpot_ms": 10.0 + cfg / 10}  # distinct runs (the loader drops repeats of one run)


def test_dep_pools_of_the_v055_rows_are_expert_parallel():
    rows = [_row(259, "0.5.5.post2", "2025-12-21", 1, 4, 32, 1), _row(255, "0.5.5.post2", "2025-12-21", 4, 1, 4, 4)]
    dep32, tp4 = load_aiconfigurator(pd.DataFrame(rows))[0]
    assert dep32.deployment.decode.layout.label == "attn TP1 DP32 · MoE TP1 EP32 · DP dispatch random"  # test_dp_dispatch
    assert dep32.deployment.prefill.layout.label == "attn TP1 DP4 · MoE TP1 EP4"
    assert "decode DEP32 (fields: MoE TP32 EP1)" in "; ".join(dep32.notes)
    # config_id 255 (8k1k low latency): the prefill pool is TP4 in the fields already; its 4-chip decode pool,
    # written attention DP 4, runs TP4 too (8k1k-low-latency.sh)
    assert tp4.deployment.prefill.layout.label == "attn TP4 DP1 · MoE TP4 EP1"
    assert tp4.deployment.decode.layout.label == "attn TP4 DP1 · MoE TP4 EP1"
    assert tp4.deployment.decode.workers == 4
    assert "decode TP4 (fields: attn TP1 DP4 · MoE TP4 EP1)" in "; ".join(tp4.notes)
    assert "prefill TP4" not in "; ".join(tp4.notes)


def test_low_latency_pools_run_tensor_parallel():
    # config_id 252 (1k1k low latency): 1 prefill worker and 2 decode workers, each written attention DP 4
    (p,), _ = load_aiconfigurator(pd.DataFrame([_row(252, "0.5.5.post2", "2025-12-21", 1, 4, 4, 2)]))
    assert p.deployment.prefill.layout.label == "attn TP4 DP1 · MoE TP4 EP1"
    assert p.deployment.decode.layout.label == "attn TP4 DP1 · MoE TP4 EP1"
    assert (p.deployment.prefill.workers, p.deployment.decode.workers) == (1, 2)
    assert "DEP" not in "; ".join(p.notes)
    assert load_sweeps()[0].low_latency_tp_chips == 0  # the field's default: no low-latency rule
    got = {(s.system, s.version, s.precision, s.low_latency_tp_chips) for s in load_sweeps() if s.low_latency_tp_chips}
    # the FP8 sweep's 1k1k low-latency script is not stored (its 8k1k one is TP4; it has no rows): left as DEP
    assert got == {("gb200-nvl72", "0.5.5.post2", "fp4", 4)}


def test_other_releases_keep_their_fields():
    # a row of another measurement (no sweep entry): the fields as written, MoE TP over the DP ranks
    (p,), _ = load_aiconfigurator(pd.DataFrame([_row(259, "0.5.5.post2", "2025-12-19", 1, 4, 32, 1)]))
    assert p.deployment.decode.layout.label == "attn TP1 DP32 · MoE TP32 EP1"
    assert sweep_of("gb200-nvl72", "deepseek-r1", "sglang 0.5.8", "fp4", "measured=2025-12-21") is None


def test_shipped_dep_sweeps_are_the_v055_gb200_ones():
    got = {(s.system, s.engine, s.version, s.precision, s.measured) for s in load_sweeps() if s.dp_attention_ep}
    assert got == {("gb200-nvl72", "sglang", "0.5.5.post2", "fp4", "2025-12-21"),
                   ("gb200-nvl72", "sglang", "0.5.5.post2", "fp8", "2025-12-21")}

