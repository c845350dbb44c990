"""The 2025-11-02 TensorRT-LLM DeepSeek-R1 rows run with their launch script's DP_ATTENTION switch.

SemiAnalysisAI/InferenceX benchmarks/*_trt_slurm.sh @9596d23d7 (in force 2025-10-29 .. 2025-11-03) set
``DP_ATTENTION=true`` by ISL/OSL and CONC and write it into the extra options (``enable_attention_dp``), passing
``--tp_size=$TP`` either way; aiconfigurator-core 0.12.0's rows of that date write ``attention_dp_size`` 1. The
thresholds, read off the script text (``-ge N``: from N; ``-gt N``: from N + 1):

- dsr1_fp4_b200_trt_slurm.sh, TP4 and TP8 alike: 1k1k ``$CONC -ge 256``, 1k8k ``-ge 256``, 8k1k ``-gt 32``;
- dsr1_fp8_b200_trt_slurm.sh: 1k1k ``-gt 32``, 1k8k ``-gt 64``, 8k1k ``-gt 64``;
- dsr1_fp8_h200_trt_slurm.sh: 1k1k ``-gt 64``, 1k8k ``-gt 64``, 8k1k ``-gt 32``.

Each rank then runs its own scheduler with the script's ``--max_num_tokens=$(( ($CONC+$ISL+64+63)/64*64 ))`` and
no chunked prefill: by hand, H200 8k1k C = 64: 64 + 8192 + 64 = 8320 (130 × 64) a rank, DP8: 66,560 an instance;
B200 1k1k C = 256: 256 + 1024 + 64 = 1344 a rank. The attention_dp_config the script appends under DP_ATTENTION
(enable_balance, timeout_iters 60) comes with it.
"""

from __future__ import annotations

import pandas as pd
import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweeps import load_sweeps, sweep_of
from jalapeno.fit.validate import load_aiconfigurator

_QUANT = {"b200_sxm": ("fp4", "nvfp4"), "h200_sxm": ("fp8", "fp8")}


def _row(system: str, tp: int, conc: int, isl: int, osl: int, date: str = "2025-11-02") -> dict:
    """A row as the sample's 2026-04-06 source file writes a 2025-11-02 run: attention TP, MoE TP = tp, EP 1."""
    prec, quant = _QUANT[system]
    return {"id": f"2026_04_06_deepseek_r1_{system}_trtllm_{prec}_agg_{isl}x{osl}_c{conc}_tp{tp}_ep1_1",
            "silicon_data_source": f"source_file=2026-04-06.csv; model=DeepSeek-R1; silicon_concurrency={conc}; "
                                   f"measured={date}T00:00:00.000Z; wip=False",
            "backend": "trtllm", "backend_version": float("nan"), "model_path": "deepseek-ai/DeepSeek-R1",
            "system": system, "precision": prec, "mode": "agg", "isl": isl, "osl": osl, "gemm_quant_mode": quant,
            "moe_quant_mode": quant, "batch_size": float(conc), "tp_size": float(tp), "pp_size": 1.0,
            "attention_dp_size": 1.0, "moe_tp_size": float(tp), "moe_ep_size": 1.0, "silicon_ttft_ms": 900.0,
            "silicon_tpot_ms": 30.0}


def _layouts(rows: list[dict]) -> list[tuple[int, int, int]]:
    points = load_aiconfigurator(pd.DataFrame(rows))[0]
    return [(p.deployment.decode.layout.tp, p.deployment.decode.layout.dp, p.deployment.decode.layout.ep)
            for p in points]


def test_b200_fp4_rows_run_attention_dp_where_the_script_switches_it_on():
    rows = [_row("b200_sxm", 8, 256, 1024, 1024), _row("b200_sxm", 8, 128, 1024, 1024),  # -ge 256
            _row("b200_sxm", 4, 256, 1024, 8192), _row("b200_sxm", 4, 128, 1024, 8192),  # -ge 256
            _row("b200_sxm", 4, 64, 8192, 1024), _row("b200_sxm", 8, 32, 8192, 1024)]  # -gt 32
    assert _layouts(rows) == [(1, 8, 8), (8, 1, 8), (1, 4, 4), (4, 1, 4), (1, 4, 4), (8, 1, 8)]


def test_b200_fp8_rows_switch_at_the_fp8_scripts_own_loads():
    rows = [_row("b200_sxm", 8, 64, 1024, 1024), _row("b200_sxm", 8, 32, 1024, 1024),  # -gt 32
            _row("b200_sxm", 8, 64, 1024, 8192), _row("b200_sxm", 8, 128, 8192, 1024)]  # -gt 64
    for r in rows:
        r.update(precision="fp8", gemm_quant_mode="fp8", moe_quant_mode="fp8", id=r["id"].replace("fp4", "fp8"))
    assert _layouts(rows) == [(1, 8, 8), (8, 1, 8), (8, 1, 8), (1, 8, 8)]


def test_the_h200_8k1k_row_at_64_users_runs_attention_dp_with_the_scripts_per_rank_limits():
    adp, tp = load_aiconfigurator(pd.DataFrame([_row("h200_sxm", 8, 64, 8192, 1024),
                                                _row("h200_sxm", 8, 64, 1024, 1024)]))[0]
    dep = adp.deployment
    assert (dep.decode.layout.tp, dep.decode.layout.dp, dep.decode.layout.ep) == (1, 8, 8)
    assert dep.adp_balance_timeout_iters == 60  # attention_dp_config timeout_iters under DP_ATTENTION
    assert dep.max_tokens_per_step == 8 * 8320  # 64 + 8192 + 64 = 8320 a rank, eight ranks
    assert dep.prompt_budget(dep.decode.layout) == 8192  # one whole 8k prompt a rank a step, not an 8192/8 chunk
    assert tp.deployment.decode.layout.dp == 1  # 1k1k: -gt 64
    assert any("attention DP8 (fields: attention TP8)" in n for n in adp.notes)


def test_rows_of_other_dates_keep_their_fields():  # no sweep of that date: attention TP8, MoE TP8 as written
    assert _layouts([_row("b200_sxm", 8, 256, 1024, 1024, date="2026-02-04")]) == [(8, 1, 1)]


def test_the_three_entries_carry_the_thresholds_of_their_scripts():
    got = {s.system + " " + s.precision: dict(s.dp_attention_from) for s in load_sweeps() if s.dp_attention_from}
    assert got == {"b200 fp4": {"1k1k": 256, "1k8k": 256, "8k1k": 33},
                   "b200 fp8": {"1k1k": 33, "1k8k": 65, "8k1k": 65},
                   "h200 fp8": {"1k1k": 65, "1k8k": 65, "8k1k": 33}}
    assert all(s.measured == "2025-11-02" and s.version == "" for s in load_sweeps() if s.dp_attention_from)
    assert sweep_of("b200", "deepseek-r1", "trtllm", "fp4", "measured=2025-11-02").dp_attention_from


@pytest.mark.parametrize("value", ['{ "1k1k" = 0 }', '{ "long" = 64 }', '{ "1k1k" = true }', "64", "{}"])
def test_a_malformed_switch_is_named(tmp_path, value):
    p = tmp_path / "s.toml"
    p.write_text('[[sweep]]\nsystem = "b200"\nmodel = "deepseek-r1"\nengine = "trtllm"\nversion = ""\n'
                 'precision = "fp4"\nmeasured = "2025-11-02"\nconfig_key = "k"\nspec = "none"\nsource = "s"\n'
                 f"dp_attention_from = {value}\n")
    with pytest.raises(SpecError) as e:
        load_sweeps(p)
    assert "dp_attention_from" in str(e.value) and "DP_ATTENTION" in str(e.value)
