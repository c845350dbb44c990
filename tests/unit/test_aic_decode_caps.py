"""A disaggregated aiconfigurator row exported from InferenceX runs its srt-slurm recipe's decode max_batch_size.

The rows state layouts, worker counts and concurrency, not the engine limits; InferenceX launched each (layout,
concurrency) from one recipe (data/validation/inferencex_search.toml, fit/aic_decode_caps.py). GB300 DeepSeek-R1 FP8
1k/1k, 1 prefill worker at DEP4 and 4 decode workers at TEP8: the entry of concurrency 24 is
ctx1_gen4_tep8_batch4_eplb0_mtp0_24.yaml (decode max_batch_size 4), of 84 ctx1_gen4_tep8_batch16_eplb0_mtp0_84.yaml
(16; InferenceX nvidia-master.yaml dsr1-fp8-gb300-dynamo-trt @032f9aab7). Above the pool's cap N = 4 x 4 = 16,
the C − N others wait for a slot: by Little's law (C/N − 1) x one request's decode time, here (24/16 − 1) x
1,023 x 9.3 ms (the row's measured TPOT) = 4.76 s, where the row measures 4.15 s TTFT.
"""

from __future__ import annotations

import pandas as pd
import pytest

from jalapeno.fit.aic_decode_caps import above_decode_cap
from jalapeno.fit.validate import load_aiconfigurator, predict_points


def _row(conc: int, backend: str = "trtllm", source: str = "db-dump/2026-04-27; measured=2026-02-07T00:00:00.000Z",
         d_workers: int = 4, ttft_ms: float = 4145.3, tpot_ms: float = 9.304, cfg: int = 1) -> dict:
    return {"id": f"dsr1_gb300_{backend}_fp8_disagg_1024x1024_c{conc}_cfg{cfg}", "silicon_data_source": source,
            "backend": backend, "backend_version": "0.8.1.post2", "model_path": "deepseek-ai/DeepSeek-V3",
            "system": "gb300", "precision": "fp8", "mode": "disagg", "isl": 1024, "osl": 1024,
            "gemm_quant_mode": "fp8", "moe_quant_mode": "fp8", "prefill_batch_size": 1.0,
            "prefill_num_workers": 1.0, "prefill_tp_size": 1.0, "prefill_pp_size": 1.0,
            "prefill_attention_dp_size": 4.0, "prefill_moe_tp_size": 1.0, "prefill_moe_ep_size": 4.0,
            "decode_batch_size": conc / d_workers, "decode_num_workers": float(d_workers), "decode_tp_size": 8.0,
            "decode_pp_size": 1.0, "decode_attention_dp_size": 1.0, "decode_moe_tp_size": 1.0,
            "decode_moe_ep_size": 8.0, "silicon_ttft_ms": ttft_ms, "silicon_tpot_ms": tpot_ms}


def test_the_recipe_of_the_rows_layout_and_load_sets_the_decode_cap():
    pts = load_aiconfigurator(pd.DataFrame([_row(24), _row(84), _row(4), _row(25)]))[0]
    caps = {p.concurrency: p.deployment.max_running for p in pts}
    assert caps == {24: 4, 84: 16, 4: 1, 25: None}  # no recipe ran 25 users on this layout
    p24 = next(p for p in pts if p.concurrency == 24)
    assert p24.deployment.budget_per == "rank"
    assert any("decode max_batch_size 4" in n and "16 requests" in n for n in p24.notes)
    assert above_decode_cap(p24.deployment, 24) and not above_decode_cap(p24.deployment, 16)


def test_other_rows_take_no_cap():
    rows = [_row(24, backend="sglang"),  # the SGLang spaces state no max_batch
            _row(24, source="source_file=/Users/x/aic-auto-gap-analysis/q.csv", cfg=2),  # not an InferenceX run
            _row(24, d_workers=3, cfg=3, ttft_ms=900.0)]  # no entry of 3 decode workers at 24 users
    assert [p.deployment.max_running for p in load_aiconfigurator(pd.DataFrame(rows))[0]] == [None] * 3


def test_the_waiting_users_are_in_the_predicted_ttft():
    p = next(q for q in load_aiconfigurator(pd.DataFrame([_row(24)]))[0])
    ttft = predict_points([p]).set_index("metric").loc["ttft_s", "predicted"]
    wait = (24 / 16 - 1) * 1023 * p.measured["tpot_s"]  # Little's law with the measured TPOT, by hand: 4.76 s
    assert wait == pytest.approx(4.76, abs=0.01)
    assert ttft == pytest.approx(wait, rel=0.25)  # the model's own TPOT and prefill: within 25% of the wait
    assert ttft > 3.0  # without the cap the model gave 0.22 s


def test_kimi_rows_take_their_recipe_cap():
    # InferenceX nvidia-master.yaml kimik2.5-fp4-gb200-dynamo-trt (@e8924a6a4, 2026-04-18): 1k/1k, P 1x DEP4 + D 5x
    # TEP4 ran ctx1dep4_gen5tep4_batch8_allconc_eplb0_mtp0.yaml at 5, 15, 30, 55 users (NVIDIA/srt-slurm @0858f390:
    # decode max_batch_size 8): N = 5 x 8 = 40, so 55 users run above it and 30 below
    row = dict(_row(55), id="kimik2_5_gb200_trtllm_fp4_disagg_1024x1024_c55_cfg9", model_path="moonshotai/Kimi-K2.5",
               system="gb200", precision="fp4", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4",
               silicon_data_source="db-dump/2026-04-27; measured=2026-04-18T00:00:00.000Z", decode_num_workers=5.0,
               decode_tp_size=4.0, decode_moe_ep_size=4.0, decode_batch_size=11.0)
    p = load_aiconfigurator(pd.DataFrame([row]))[0][0]
    assert p.deployment.max_running == 8 and above_decode_cap(p.deployment, 55)
    assert not above_decode_cap(p.deployment, 30)


def test_the_2025_sweeps_inline_cap_counts_per_decode_worker():
    # InferenceX dsr1-fp4-gb200-dynamo-trt @c040b5cf2 (the 2025-12-19 sweep; space of 2025-12-15, same entries):
    # 1 x TEP4 prefill + 4 x TEP8 decode, DECODE_MAX_BATCH_SIZE=128, conc-list value 141 run x 4 workers = 564
    # users: N = 4 x 128 = 512 < 564, so 52 wait; 256 users (conc-list 64) run below the cap
    def row(conc):
        return dict(_row(conc), id=f"dsr1_gb200_trtllm_fp4_disagg_1024x1024_c{conc}_cfg237", system="gb200",
                    precision="fp4", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4", backend_version="0.5.1-rc0.pre3",
                    silicon_data_source="db-dump/2026-04-27; config_id=237; measured=2025-12-19T00:00:00.000Z",
                    prefill_tp_size=4.0, prefill_attention_dp_size=1.0, prefill_moe_ep_size=4.0,
                    decode_batch_size=conc / 4)
    pts = {p.concurrency: p for p in load_aiconfigurator(pd.DataFrame([row(564), row(256)]))[0]}
    assert pts[564].deployment.max_running == 128 and above_decode_cap(pts[564].deployment, 564)
    assert pts[256].deployment.max_running == 128 and not above_decode_cap(pts[256].deployment, 256)


def _kimi_vllm(conc: int, isl: int, d_workers: int, d_tp: int, cfg: int) -> dict:
    return dict(_row(conc, backend="vllm"), id=f"kimik2_5_gb200_vllm_fp4_disagg_{isl}x1024_c{conc}_cfg{cfg}",
                model_path="moonshotai/Kimi-K2.5", system="gb200", precision="fp4", gemm_quant_mode="nvfp4",
                moe_quant_mode="nvfp4", backend_version="0.18.0", isl=isl,
                silicon_data_source=f"db-dump/2026-04-27; config_id={cfg}; measured=2026-04-07T00:00:00.000Z",
                prefill_tp_size=4.0, prefill_attention_dp_size=1.0, prefill_moe_ep_size=4.0,
                decode_num_workers=float(d_workers), decode_tp_size=float(d_tp), decode_moe_ep_size=float(d_tp),
                decode_batch_size=conc / d_workers)


def test_kimi_vllm_rows_run_their_recipes_pools_and_max_num_seqs():
    # InferenceX kimik2.5-fp4-gb200-dynamo-vllm @235b232d2 marks every prefill pool (tp 4) and the 16-chip decode
    # pool dp-attn; NVIDIA/srt-slurm @8294e64e recipes/vllm/kimi-k2.5/ run them data-parallel-size 4 / 16,
    # tensor-parallel-size 1; the 8k/1k 4 x TEP4 recipe sets decode max-num-seqs 16: N = 4 x 16 = 64 < 128 users
    pts = load_aiconfigurator(pd.DataFrame([_kimi_vllm(128, 8192, 4, 4, 698), _kimi_vllm(32, 8192, 4, 4, 698),
                                            _kimi_vllm(512, 1024, 1, 16, 697)]))[0]
    tep, low, dep = (p.deployment for p in pts)
    assert (tep.prefill.layout.tp, tep.prefill.layout.dp, tep.prefill.layout.ep) == (1, 4, 4)
    assert (tep.decode.layout.tp, tep.decode.layout.dp, tep.decode.workers) == (4, 1, 4)  # TEP4 as the fields say
    assert tep.max_running == 16 and above_decode_cap(tep, 128) and not above_decode_cap(low, 32)
    assert (dep.decode.layout.tp, dep.decode.layout.dp, dep.decode.layout.ep) == (1, 16, 16)  # the fields' "TP16"
    assert dep.max_running == 4096 and dep.budget_per == "rank" and not above_decode_cap(dep, 512)
    assert any("data-parallel attention" in n for n in pts[2].notes)
