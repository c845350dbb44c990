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
  ``--enable-dp-attention`` to both pools: attention TP 4, MoE TP 4; likewise the FP8 sweep's 1k1k low-latency
  entry (config_id 227: 1 prefill worker, 4 decode workers, one node each), whose gb200-fp8/disagg/1k1k-low-latency.sh
  (wxsms/dynamo @cf433e6825d8) passes the same flags.
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
    # the FP8 sweep's too (round 38): its 1k1k low-latency script, gb200-fp8/disagg/1k1k-low-latency.sh (wxsms/dynamo
    # @cf433e6825d8), passes --tensor-parallel-size $TOTAL_GPUS --data-parallel-size 1 --expert-parallel-size 1
    assert got == {("gb200-nvl72", "0.5.5.post2", "fp4", 4), ("gb200-nvl72", "0.5.5.post2", "fp8", 4)}


def test_fp8_low_latency_rows_run_tensor_parallel_and_fit():
    # config_id 227 (1k1k "Bottom of curve": 1 prefill worker, 4 decode workers, one node each), written attention
    # DP 4 with MoE TP 4 in both pools; the run loaded DeepSeek-R1's FP8 checkpoint (MTP off)
    row = dict(_row(227, "0.5.5.post2", "2025-12-21", 1, 4, 4, 4), precision="fp8", gemm_quant_mode="fp8",
               moe_quant_mode="fp8_block", id="dsr1_gb200_sglang_fp8_disagg_1024x1024_c64_cfg227")
    (p,), _ = load_aiconfigurator(pd.DataFrame([row]))
    assert p.deployment.prefill.layout.label == "attn TP4 DP1 · MoE TP4 EP1"
    assert p.deployment.decode.layout.label == "attn TP4 DP1 · MoE TP4 EP1"
    assert p.deployment.decode.workers == 4
    # Weights a chip by hand from DeepSeek-V3's config.json (hidden 7168, 61 layers: 3 dense + 58 MoE, 256 experts of
    # intermediate 2048, 1 shared, dense intermediate 18432, vocab 129280, MLA q_lora 1536, kv_lora 512, rope 64,
    # 128 heads of nope 128 / v 128): FP8 linears with one fp32 scale per 128x128 block (1 + 4/16384 bytes an
    # element), BF16 router, embedding and head. MLA per layer 187,107,328 of which q_a, kv_a and their norms
    # (15,140,864) replicate; experts 3 x 7168 x 2048 = 44,040,192 each.
    fp8 = 1 + 4 / 16384
    mla, repl = 187_107_328, 15_140_864
    experts = 256 * 44_040_192 * 58 / 4  # MoE TP 4 either way
    dense, shared, vocab = 3 * 3 * 7168 * 18432, 58 * 44_040_192, 129_280 * 7168
    router = 58 * 256 * (7168 + 1)  # gate and its e_score_correction_bias, counted at 2 bytes (the bias is fp32: 15 kB)
    dep4 = (61 * mla + dense + experts + shared) * fp8 + (router + 2 * vocab) * 2
    tp4 = (61 * (repl + (mla - repl) / 4) + dense / 4 + experts + shared / 4) * fp8 + (router + 2 * vocab / 4) * 2
    assert round(dep4 / 2**30, 1) == 170.1 and round(tp4 / 2**30, 1) == 157.5
    from jalapeno.deploy.layout import Layout
    from jalapeno.deploy.memory_fit import weight_bytes_per_chip
    from jalapeno.specs.catalog import load_model, load_system
    from jalapeno.specs.formats import get_precision

    model, fp8p, gb200 = load_model("deepseek-r1"), get_precision("fp8"), load_system("gb200-nvl72")
    assert abs(weight_bytes_per_chip(model, Layout(dp=4), fp8p, 0, gb200) / dep4 - 1) < 1e-9
    assert abs(weight_bytes_per_chip(model, Layout(tp=4), fp8p, 0, gb200) / tp4 - 1) < 1e-9
    # against 0.96 x 186e9 bytes (the default reserve on GB200's catalog usable HBM): DEP4 does not fit, TP4 does
    budget = 0.96 * 186e9
    assert dep4 > budget > tp4


def test_other_releases_keep_their_fields():
    # a row of another measurement (no sweep entry): the fields as written, MoE TP over the DP ranks
    (p,), _ = load_aiconfigurator(pd.DataFrame([_row(259, "0.5.5.post2", "2025-12-19", 1, 4, 32, 1)]))
    assert p.deployment.decode.layout.label == "attn TP1 DP32 · MoE TP32 EP1"
    assert sweep_of("gb200-nvl72", "deepseek-r1", "sglang 0.5.8", "fp4", "measured=2025-12-21") is None


def test_shipped_dep_sweeps_are_the_v055_gb200_ones():
    got = {(s.system, s.engine, s.version, s.precision, s.measured) for s in load_sweeps() if s.dp_attention_ep}
    assert got == {("gb200-nvl72", "sglang", "0.5.5.post2", "fp4", "2025-12-21"),
                   ("gb200-nvl72", "sglang", "0.5.5.post2", "fp8", "2025-12-21")}

