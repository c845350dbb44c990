"""MiniMax-M2.5 aiconfigurator rows: the chips and MoE layout their InferenceX runs used (issue 18).

Expected layouts are read by hand, not from the code:
- the rows' fields and ids are real rows of aiconfigurator-core 0.12.0's ``systems/silicon_sample.csv``;
- the launch scripts are SemiAnalysisAI/InferenceX ``benchmarks/single_node/minimaxm2.5_fp8_h200.sh`` @1d5cae141
  and @0f78cf4eb and ``minimaxm2.5_fp8_b200.sh`` @f342df18e: ``if [ "$EP_SIZE" -ge 1 ]; then
  EP=" --enable-expert-parallel"``, with the sweep matrix's default ep 1 (utils/matrix_logic/
  generate_sweep_configs.py) for the configurations ``{ tp: 8 }`` (H200) and ``{ tp: 2 }``, ``{ tp: 4 }``
  (B200); ``minimaxm2.5_fp8_h200.sh`` @a36346339 (the 2026-03-01 v0.16.0 run) passes no EP flag.
- vLLM's ``--enable-expert-parallel`` puts whole experts on each chip: MoE EP = tp x dp, MoE TP 1.
"""

from __future__ import annotations

import pandas as pd
import pytest

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.aic_layout import aic_agg_layout
from jalapeno.fit.aic_sweep_layouts import with_sweep_expert_parallel
from jalapeno.fit.aic_sweeps import load_sweeps, sweep_of
from jalapeno.fit.validate import load_aiconfigurator
from jalapeno.specs.formats import get_precision


def _row(rid: str, system: str, version: str, stamp: str, tp: int, dp: int, moe_tp: int, moe_ep: int) -> dict:
    return {"id": rid, "silicon_data_source": stamp, "backend": "vllm", "backend_version": version,
            "model_path": "MiniMaxAI/MiniMax-M2.5", "system": system, "precision": "fp8", "mode": "agg",
            "isl": 1024, "osl": 1024, "gemm_quant_mode": "fp8", "moe_quant_mode": "fp8", "batch_size": 4,
            "tp_size": float(tp), "pp_size": 1.0, "attention_dp_size": float(dp), "moe_tp_size": float(moe_tp),
            "moe_ep_size": float(moe_ep), "silicon_ttft_ms": 90.0, "silicon_tpot_ms": 8.0}


# ---- rule 3 of fit/aic_layout: tp == dp == k, moe_tp 1, moe_ep k*k is a k-chip TP k / EP k run ---------------

def test_squared_expert_parallel_fields_are_a_k_chip_run():
    # minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c256_cfg691: tp 4, dp 4, moe_tp 1, moe_ep 16; its named twin
    # 2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c64_tp4_ep4_1392 names TP4 EP4 (4 of 8 B200s)
    tp, dp, ep, note = aic_agg_layout(4, 4, 1, 16, "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c256_cfg691")
    assert (tp, dp, ep) == (4, 1, 4) and "squared form of a 4-chip run" in note
    # minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c512_cfg735: tp 2, dp 2, moe_ep 4 -> the { tp: 2, ep: 2 } run
    assert aic_agg_layout(2, 2, 1, 4, "minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c512_cfg735")[:3] == (2, 1, 2)
    # the named H100 rows keep the run their id names (TP4 EP4), the same answer
    assert aic_agg_layout(4, 4, 1, 16, "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c4_tp4_ep4_1357")[:3] \
        == (4, 1, 4)


def test_ep_over_tp_times_dp_with_unequal_degrees_is_read_as_written():
    # attention TP4 x DP2 with MoE EP8 over the same 8 chips: tp != dp, so not the squared form
    assert aic_agg_layout(4, 2, 1, 8, "x_agg_1024x1024_c8_cfg2") == (4, 2, 8, "")
    # an id naming a run of tp * dp chips keeps the fields (rule 3 needs the id to name k chips or none)
    assert aic_agg_layout(2, 2, 1, 4, "x_agg_1024x1024_c8_tp4_ep4_3")[:3] == (2, 2, 4)


# ---- the launch scripts' --enable-expert-parallel (aic_sweeps expert_parallel) -----------------------------

def test_h200_tp8_rows_of_march_27_and_28_ran_moe_ep8():
    rows = [_row("minimaxm2_5_h200_vllm_fp8_agg_1024x1024_c4_cfgA", "h200_sxm", "0.18.0",
                 "source_file=2026-03-25.csv; measured=2026-03-27T07:59:49Z", 8, 1, 8, 1),
            _row("minimaxm2_5_h200_vllm_fp8_agg_1024x1024_c8_cfg615", "h200_sxm", "0.18.0",
                 "db-dump/2026-04-27; config_id=615; measured=2026-03-28T00:00:00.000Z", 8, 1, 8, 1),
            _row("minimaxm2_5_h200_vllm_fp8_agg_1024x1024_c16_cfg606", "h200_sxm", "0.16.0",
                 "db-dump/2026-04-27; config_id=606; measured=2026-03-01T00:00:00.000Z", 4, 1, 4, 1)]
    a, b, v016 = load_aiconfigurator(pd.DataFrame(rows))[0]
    for p in (a, b):
        assert p.deployment.decode.layout.label == "attn TP8 DP1 · MoE TP1 EP8"
        assert "always passes --enable-expert-parallel" in "; ".join(p.notes)
    # v0.16.0, 2026-03-01: the script's first version, no EP flag: MoE TP4 as the fields say
    assert v016.deployment.decode.layout.label == "attn TP4 DP1 · MoE TP4 EP1"


def test_b200_v017_rows_ran_moe_ep_over_their_chips_and_v019_rows_do_not():
    stamp = "source_file=2026-03-25.csv; measured=2026-03-11T18:39:31Z"
    rows = [_row("minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c4_tp2_1", "b200_sxm", "0.17.0", stamp, 2, 1, 2, 1),
            _row("minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c8_tp4_2", "b200_sxm", "0.17.0", stamp, 4, 1, 4, 1),
            # PR #947 (v0.19.0, 2026-04-03): the script tests -gt 1, so { tp: 2 } is MoE TP2
            _row("minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c16_tp2_3", "b200_sxm", "0.19.0",
                 "measured=2026-04-03T02:34:55Z", 2, 1, 2, 1)]
    tp2, tp4, v019 = load_aiconfigurator(pd.DataFrame(rows))[0]
    assert (tp2.deployment.decode.layout.moe_tp, tp2.deployment.decode.layout.ep) == (1, 2)
    assert (tp4.deployment.decode.layout.moe_tp, tp4.deployment.decode.layout.ep) == (1, 4)
    assert (v019.deployment.decode.layout.moe_tp, v019.deployment.decode.layout.ep) == (2, 1)


def test_expert_parallel_leaves_single_chip_and_ep_rows_alone():
    s = sweep_of("h200", "minimax-m2.5", "vllm 0.18.0", "fp8", "measured=2026-03-27")
    assert s is not None and s.expert_parallel
    one = Deployment(get_precision("fp8"), Pool(Layout(tp=1)))
    assert with_sweep_expert_parallel(one, s) == (one, "")
    ep = Deployment(get_precision("fp8"), Pool(Layout(tp=4, ep=4)))
    assert with_sweep_expert_parallel(ep, s) == (ep, "")
    assert with_sweep_expert_parallel(one, None) == (one, "")


def test_shipped_expert_parallel_sweeps_are_the_ge_1_scripts():
    got = {(s.system, s.version, s.measured) for s in load_sweeps() if s.expert_parallel and s.engine == "vllm"}
    assert got == {("h200", "0.18.0", "2026-03-27"), ("h200", "0.18.0", "2026-03-28"),
                   ("b200", "0.17.0", "2026-03-11"), ("b200", "0.17.0", "2026-03-28")}


# ---- scripts that never pass --enable-expert-parallel (aic_sweeps no_expert_parallel) -------------------------
# Kimi K2.5 NVFP4 on B200: benchmarks/single_node/kimik2.5_fp4_b200.sh @a58dedd5a (PR #862) and @79a42e20a (PR #926)
# pass no EP flag while nvidia-master.yaml's kimik2.5-fp4-b200-vllm says { tp: 4, ep: 4 }, which PR #1019
# (2cbaec340) set to ep: 1: "script has no EP support". vLLM without the flag shards every expert over the TP ranks.

def _kimi(rid: str, stamp: str, tp: int, dp: int, moe_tp: int, moe_ep: int, tpot_ms: float) -> dict:
    return {**_row(rid, "b200_sxm", "0.17.0", stamp, tp, dp, moe_tp, moe_ep), "model_path": "moonshotai/Kimi-K2.5",
            "precision": "fp4", "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4", "silicon_tpot_ms": tpot_ms}


def test_kimi_b200_rows_whose_fields_say_ep4_ran_moe_tp4():
    rows = [_kimi("2026_03_25_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x1024_c8_tp4_0_ep4_0_567",
                  "source_file=2026-03-25.csv; measured=2026-03-11T16:59:40Z", 4, 1, 1, 4, 10.6),
            # the squared form of the 2026-03-27 run's fields (fit/aic_layout rule 3: TP4 EP4 on 4 chips)
            _kimi("kimik2_5_b200_vllm_fp4_agg_1024x1024_c8_cfg635",
                  "db-dump/2026-04-27; config_id=635; measured=2026-03-27T00:00:00.000Z", 4, 4, 1, 16, 11.2),
            # PR #1047's run (2026-04-20): the fields already say MoE TP4
            _kimi("kimik2_5_b200_vllm_fp4_agg_1024x1024_c8_cfg811",
                  "db-dump/2026-04-27; config_id=811; measured=2026-04-20T00:00:00.000Z", 4, 1, 4, 1, 9.9)]
    pr862, pr926, pr1047 = load_aiconfigurator(pd.DataFrame(rows))[0]
    for p in (pr862, pr926):
        assert p.deployment.decode.layout.label == "attn TP4 DP1 · MoE TP4 EP1"
        assert "passes no --enable-expert-parallel" in "; ".join(p.notes)
    assert pr1047.deployment.decode.layout.label == "attn TP4 DP1 · MoE TP4 EP1"
    assert "--enable-expert-parallel" not in "; ".join(pr1047.notes)


def test_shipped_no_expert_parallel_sweeps_are_the_kimi_scripts():
    got = {(s.model, s.system, s.version, s.measured) for s in load_sweeps() if s.no_expert_parallel}
    assert got == {("kimi-k2.5", "b200", "0.17.0", "2026-03-11"), ("kimi-k2.5", "b200", "0.17.0", "2026-03-27"),
                   ("kimi-k2.5", "b200", "0.17.0", "2026-04-20"), ("kimi-k2.5", "b300", "0.19.0", "2026-04-20")}


@pytest.mark.parametrize("line, field, fix", [
    ('expert_parallel = "yes"', "expert_parallel", "--enable-expert-parallel"),
    ("dp_attention_ep = 1", "dp_attention_ep", "DeepEP"),
    ("low_latency_tp_chips = 1", "low_latency_tp_chips", "tensor parallelism"),
    ("low_latency_tp_chips = true", "low_latency_tp_chips", ">= 2"),
    ('no_expert_parallel = "yes"', "no_expert_parallel", "never passes --enable-expert-parallel"),
    ("no_expert_parallel = true\nexpert_parallel = true", "no_expert_parallel", "leave expert_parallel out")])
def test_a_malformed_expert_parallel_flag_is_named(tmp_path, line, field, fix):
    f = tmp_path / "sweeps.toml"
    f.write_text('[[sweep]]\nsystem = "h200"\nmodel = "minimax-m2.5"\nengine = "vllm"\nversion = "0.18.0"\n'
                 'precision = "fp8"\nmeasured = "2026-03-27"\nconfig_key = "k"\nsource = "s"\nspec = "none"\n'
                 f'{line}\n')
    with pytest.raises(SpecError, match=rf"sweep\[0\]\.{field}") as e:
        load_sweeps(f)
    assert fix in e.value.fix


@pytest.mark.parametrize("line, field", [("max_num_batched_tokens = 0", "max_num_batched_tokens"),
                                         ("max_num_batched_tokens = false", "max_num_batched_tokens"),
                                         ("max_batch_dp_attention = 0", "max_batch_dp_attention"),
                                         ("memory_fraction = 0", "memory_fraction"),
                                         ("memory_fraction = 0.0", "memory_fraction")])
def test_a_falsy_launch_limit_is_refused_at_load_not_at_use(tmp_path, line, field):
    f = tmp_path / "sweeps.toml"
    f.write_text('[[sweep]]\nsystem = "h200"\nmodel = "minimax-m2.5"\nengine = "vllm"\nversion = "0.18.0"\n'
                 'precision = "fp8"\nmeasured = "2026-03-27"\nconfig_key = "k"\nsource = "s"\nspec = "none"\n'
                 f'{line}\n')
    with pytest.raises(SpecError, match=rf"sweep\[0\]\.{field}"):
        load_sweeps(f)
