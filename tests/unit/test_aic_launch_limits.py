"""MiniMax-M2.5 aiconfigurator rows: the KV-cache dtype and vLLM limits their InferenceX launch scripts set.

Read by hand from SemiAnalysisAI/InferenceX (benchmarks/single_node/):
- minimaxm2.5_fp8_h200.sh @a36346339 (v0.16.0), @1d5cae141 and @0f78cf4eb (v0.18.0), minimaxm2.5_fp8_h100.sh
  @1d5cae141, @0f78cf4eb and minimaxm2.5_fp8_b200.sh @f342df18e, @0f78cf4eb (v0.17.0) pass no --kv-cache-dtype:
  vLLM's "auto", the model's BF16 (the checkpoint has no KV scales);
- minimaxm2.5_fp8_b200.sh @bddbf4031, @41ed82dc1, minimaxm2.5_fp4_b200.sh @79bd988e9, @13962fcfa,
  minimaxm2.5_fp8_b300.sh @340d7854c, @0c2467c15, minimaxm2.5_fp4_b300.sh @22d0f12f7, @633fd2377 (v0.19.0) pass
  --kv-cache-dtype fp8, --gpu-memory-utilization 0.90 and --max-num-batched-tokens "$((ISL * 2 ))".
KV bytes per token from the config by hand: 62 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 253,952 in BF16,
126,976 in FP8 (e4m3, one per-tensor scale).
"""

from __future__ import annotations

import pandas as pd
import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweeps import load_sweeps
from jalapeno.fit.validate import load_aiconfigurator
from jalapeno.specs.catalog import load_model


def _row(rid: str, system: str, version: str, precision: str, measured: str, tp: int, isl: int = 1024) -> dict:
    return {"id": rid, "silicon_data_source": f"db-dump/2026-04-27; measured={measured}T00:00:00.000Z",
            "backend": "vllm", "backend_version": version, "model_path": "MiniMaxAI/MiniMax-M2.5", "system": system,
            "precision": precision, "mode": "agg", "isl": isl, "osl": 1024, "gemm_quant_mode": precision,
            "moe_quant_mode": precision, "batch_size": 8, "tp_size": float(tp), "pp_size": 1.0,
            "attention_dp_size": 1.0, "moe_tp_size": float(tp), "moe_ep_size": 1.0, "silicon_ttft_ms": 90.0,
            "silicon_tpot_ms": 10.0}


def test_scripts_without_a_kv_flag_store_bf16_kv():
    rows = [_row("a_agg_1024x1024_c8_cfg1", "h200_sxm", "0.16.0", "fp8", "2026-03-01", 4),
            _row("b_agg_1024x1024_c8_cfg2", "h200_sxm", "0.18.0", "fp8", "2026-03-28", 8),
            _row("c_agg_1024x1024_c8_cfg3", "h100_sxm", "0.18.0", "fp8", "2026-03-28", 4),
            _row("d_agg_1024x1024_c8_cfg4", "b200_sxm", "0.17.0", "fp8", "2026-03-28", 2)]
    model = load_model("minimax-m2.5")
    for p in load_aiconfigurator(pd.DataFrame(rows))[0]:
        kv = p.deployment.precision.kv_cache
        assert kv.name == "bf16" and model.kv_bytes_per_token(kv) == 62 * 2 * 8 * 128 * 2
        assert "KV cache bf16" in "; ".join(p.notes)


def test_v019_scripts_cap_tokens_per_step_at_twice_the_input():
    rows = [_row("e_agg_1024x1024_c8_cfg5", "b200_sxm", "0.19.0", "fp8", "2026-04-22", 4),
            _row("f_agg_8192x1024_c8_cfg6", "b300_sxm", "0.19.0", "fp4", "2026-04-21", 2, isl=8192)]
    short, long_ = load_aiconfigurator(pd.DataFrame(rows))[0]
    model = load_model("minimax-m2.5")
    for p, n in ((short, 2048), (long_, 16384)):
        d = p.deployment
        # --gpu-memory-utilization 0.90 is a share of the driver's memory: as a share of the usable HBM it is the
        # default 1 - 0.04 = 0.96 (0.9 x 192.27 GB driver-reported on a B200 = 173.0 GB = 0.961 x its 180 GB)
        assert (d.token_budget, d.max_tokens_per_step) == (n, n) and d.memory_fraction == pytest.approx(0.96)
        assert "--gpu-memory-utilization 0.9 (0.96 of usable HBM)" in "; ".join(p.notes)
        assert model.kv_bytes_per_token(d.precision.kv_cache) == 62 * 2 * 8 * 128 * 1
        assert f"--max-num-batched-tokens {n} (2*isl)" in "; ".join(p.notes)


def test_a_day_without_a_sweep_keeps_the_defaults():
    (p,), _ = load_aiconfigurator(pd.DataFrame([_row("g_agg_1024x1024_c8_cfg7", "b200_sxm", "0.19.0", "fp8",
                                                     "2026-04-09", 4)]))
    assert p.deployment.max_tokens_per_step is None and p.deployment.memory_fraction is None


def test_shipped_minimax_sweeps():
    mm = [s for s in load_sweeps() if s.model == "minimax-m2.5"]
    assert {(s.system, s.version, s.measured) for s in mm if s.kv_dtype == "bf16"} == {
        ("h200", "0.16.0", "2026-03-01"), ("h200", "0.18.0", "2026-03-27"), ("h200", "0.18.0", "2026-03-28"),
        ("h100", "0.18.0", "2026-03-27"), ("h100", "0.18.0", "2026-03-28"),
        ("b200", "0.17.0", "2026-03-11"), ("b200", "0.17.0", "2026-03-28")}
    limited = [s for s in mm if s.max_num_batched_tokens]
    assert len(limited) == 9 and all(s.version == "0.19.0" and s.kv_dtype == "fp8" and s.memory_fraction == 0.9
                                     and s.batched_tokens(1024) == 2048 for s in limited)


@pytest.mark.parametrize("entry, field, fix", [
    ('max_num_batched_tokens = "ISL*2"', "max_num_batched_tokens", '"K*isl"'),
    ("max_num_batched_tokens = 2048", "max_num_batched_tokens", '"N"'),
    ("memory_fraction = 90", "memory_fraction", "a fraction in (0, 1]"),
])
def test_malformed_limits_are_named(tmp_path, entry, field, fix):
    f = tmp_path / "sweeps.toml"
    f.write_text('[[sweep]]\nsystem = "b200"\nmodel = "minimax-m2.5"\nengine = "vllm"\nversion = "0.19.0"\n'
                 'precision = "fp8"\nmeasured = "2026-04-22"\nconfig_key = "k"\nsource = "s"\nspec = "none"\n'
                 + entry + "\n")
    with pytest.raises(SpecError, match=rf"sweep\[0\]\.{field}") as e:
        load_sweeps(f)
    assert fix in e.value.fix
