"""TensorRT-LLM DeepSeek-R1 aggregated rows run with their launch script's ``--max_num_tokens`` sized to the load.

InferenceX's TensorRT-LLM DeepSeek-R1 scripts of 2025-10 to 2026-01 (non-MTP) and every MTP script pass
``--max_num_tokens $(( ((MTP+1)*MAX_BATCH_SIZE + ISL + 64 + 63) / 64 * 64 ))`` (non-MTP: ``$CONC + $ISL + 64``) and
no chunked prefill (benchmarks/dsr1_fp4_b200_trt_slurm.sh @9596d23d7, dsr1_fp8_b200_trt_mtp.sh @5d517074c).
TensorRT-LLM's micro-batch scheduler takes a context request whole or not at all, after the running sequences'
rows (cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp, "skip chunking"), so a step carries one prompt.
Figures by hand: C = 256, ISL 1024, no MTP: 256 + 1024 + 64 = 1344 (a multiple of 64; C = 128: 1216); MTP3 at C = 64:
4·64 + 1024 + 64 = 1344; C = 4, ISL 8192: 4 + 8192 + 64 = 8260 → 8320 (130 × 64).
"""

from __future__ import annotations

import pandas as pd
import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweep_launch import sized_max_num_tokens
from jalapeno.fit.aic_sweeps import load_sweeps, sweep_of
from jalapeno.fit.validate import load_aiconfigurator


def _row(rid: str, date: str, version: str, tp: int, dp: int, conc: int, isl: int = 1024) -> dict:
    return {"id": rid, "silicon_data_source": f"db-dump/2026-04-27; measured={date}T00:00:00.000Z",
            "backend": "trtllm", "backend_version": version, "model_path": "deepseek-ai/DeepSeek-V3",
            "system": "b200_sxm", "precision": "fp4", "mode": "agg", "isl": isl, "osl": 1024,
            "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4", "batch_size": float(conc),
            "tp_size": float(tp), "pp_size": 1.0, "attention_dp_size": float(dp), "moe_tp_size": float(tp),
            "moe_ep_size": 1.0, "silicon_ttft_ms": 500.0, "silicon_tpot_ms": 20.0}


@pytest.mark.parametrize(("conc", "isl", "k", "expected"), [(256, 1024, 0, 1344), (64, 1024, 3, 1344),
                                                             (4, 8192, 0, 8320), (1, 1024, 0, 1152)])
def test_the_scripts_sizing_by_hand(conc, isl, k, expected):
    assert sized_max_num_tokens(conc, isl, k) == expected


def test_a_2025_11_row_gets_one_whole_prompt_a_step():
    # C = 128: attention TP (the script's DP_ATTENTION starts at 1k1k C = 256); 128 + 1024 + 64 = 1216 = 19 x 64
    pts = load_aiconfigurator(pd.DataFrame([_row("dsr1_b200_trtllm_fp4_agg_1024x1024_c128_cfg1", "2025-11-02", "",
                                                 8, 1, 128)]))[0]
    dep = pts[0].deployment
    assert dep.decode.layout.dp == 1
    assert dep.max_tokens_per_step == 1216
    assert dep.token_budget == 1024  # room for one prompt of at most ISL tokens beside 128 decode rows
    assert dep.prefill_budget(dep.decode.layout) == 1024
    assert any("--max_num_tokens 1216" in n for n in pts[0].notes)


def test_rows_of_a_script_floored_at_8192_keep_the_default_and_attention_dp_rows_get_the_limit_a_rank():
    rows = [_row("dsr1_b200_trtllm_fp4_agg_1024x1024_c64_cfg2", "2026-02-03", "1.2.0rc6.post2", 8, 1, 64),
            _row("dsr1_b200_trtllm_fp4_agg_1024x1024_c256_cfg3", "2025-11-02", "", 1, 8, 256)]
    floored, adp = load_aiconfigurator(pd.DataFrame(rows))[0]
    assert (floored.deployment.token_budget, floored.deployment.max_tokens_per_step) == (8192, None)
    # each of the 8 ranks schedules its own --max_num_tokens 1344 (256 + 1024 + 64) with one whole prompt a step
    assert (adp.deployment.token_budget, adp.deployment.max_tokens_per_step) == (8 * 1024, 8 * 1344)
    assert adp.deployment.prompt_budget(adp.deployment.decode.layout) == 1024


def test_every_sized_sweep_is_trtllm_deepseek_and_the_floored_ones_are_not_sized():
    sized = {(s.system, s.precision, s.version, s.measured) for s in load_sweeps() if s.max_num_tokens_sized}
    assert len(sized) == 11
    assert all(s.engine == "trtllm" and s.model == "deepseek-r1" for s in load_sweeps() if s.max_num_tokens_sized)
    for prec, date in (("fp8", "2026-01-29"), ("fp4", "2026-02-03")):  # MAX_NUM_TOKENS floored at 8192
        sweep = sweep_of("b200", "deepseek-r1", "trtllm 1.2.0rc6.post2", prec, f"measured={date}")
        assert sweep is not None and not sweep.max_num_tokens_sized


@pytest.mark.parametrize(("entry", "message"), [("vllm", "TensorRT-LLM"), ("trtllm", "true")])
def test_a_malformed_sized_field_is_named(tmp_path, entry, message):
    value = "true" if entry == "vllm" else '"yes"'
    p = tmp_path / "s.toml"
    p.write_text(f'[[sweep]]\nsystem = "b200"\nmodel = "deepseek-r1"\nengine = "{entry}"\nversion = ""\n'
                 f'precision = "fp4"\nmeasured = "2025-11-02"\nconfig_key = "k"\nspec = "none"\nsource = "s"\n'
                 f"max_num_tokens_sized = {value}\n")
    with pytest.raises(SpecError) as e:
        load_sweeps(p)
    assert "max_num_tokens_sized" in str(e.value) and message in str(e.value)
