"""scripts/h200_sglang_release_tables38.py: the table slices it reads and the per-step sums, against hand-made
aiconfigurator-shaped frames and hand arithmetic."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import h200_sglang_release_tables38 as t  # noqa: E402

DSR1 = {"hidden_size": 7168, "inter_size": 2048, "num_experts": 256, "topk": 8, "moe_dtype": "fp8_block"}


def _moe(rows):
    return pd.DataFrame([{**DSR1, "distribution": "power_law_1.01", "moe_tp_size": 8, "moe_ep_size": 1, **r}
                         for r in rows])


def test_moe_curve_reads_the_deepseek_tp8_slice_fastest_row():
    df = _moe([
        {"num_tokens": 16, "latency": 0.20}, {"num_tokens": 16, "latency": 0.18},  # repeats: the fastest, 0.18
        {"num_tokens": 16, "latency": 0.01, "moe_ep_size": 8},  # another layout
        {"num_tokens": 16, "latency": 0.01, "num_experts": 384},  # another model's shape
        {"num_tokens": 16, "latency": 0.01, "distribution": "balanced"},  # another routing
        {"num_tokens": 32, "latency": 0.30},
    ])
    c = t.moe_curve(df)
    assert list(c.index) == [16, 32]
    assert c.loc[16] == pytest.approx(0.18)
    assert t.moe_curve(df, "balanced").loc[16] == pytest.approx(0.01)


def test_mla_curve_sixteen_heads_bf16_largest_context_any_tp():
    df = pd.DataFrame([
        {"num_heads": 16, "tp_size": 8, "kv_cache_dtype": "bfloat16", "isl": 1024, "batch_size": 8, "latency": 0.013},
        {"num_heads": 16, "tp_size": 4, "kv_cache_dtype": "bfloat16", "isl": 1024, "batch_size": 8, "latency": 0.012},
        {"num_heads": 16, "tp_size": 8, "kv_cache_dtype": "bfloat16", "isl": 512, "batch_size": 8, "latency": 0.005},
        {"num_heads": 16, "tp_size": 8, "kv_cache_dtype": "fp8", "isl": 1024, "batch_size": 8, "latency": 0.001},
        {"num_heads": 32, "tp_size": 4, "kv_cache_dtype": "bfloat16", "isl": 1024, "batch_size": 8, "latency": 0.001},
    ])
    c = t.mla_curve(df)
    assert list(c.index) == [8]
    assert c.loc[8] == pytest.approx(0.012)  # the 16-head rows at the largest context (1,024), fastest of tp 4 / 8


def test_ar_curve_graph_rows_on_eight_gpus_and_none_for_a_trtllm_file():
    df = pd.DataFrame([
        {"backend": "sglang_graph", "num_gpus": 8, "message_size": 65536, "latency": 0.010},
        {"backend": "sglang_eager", "num_gpus": 8, "message_size": 65536, "latency": 0.030},
        {"backend": "sglang_graph", "num_gpus": 4, "message_size": 65536, "latency": 0.001},
    ])
    assert t.ar_curve(df).to_dict() == {65536: 0.010}
    trt = pd.DataFrame([{"implementation": "trtllm", "num_gpus": 8, "message_size": 65536, "latency": 0.003}])
    assert t.ar_curve(trt).empty


def test_step_families_hand_sum():
    # B = 16: experts 58 x 0.1 ms = 5.8; MLA 61 x 0.01 = 0.61; all-reduce of 16 x 7168 = 114,688 elements,
    # between 65,536 (0.010 ms) and 131,072 (0.020 ms): 0.010 + 49,152 / 65,536 x 0.010 = 0.0175 ms, x 122 = 2.135
    moe = pd.Series({8: 0.05, 16: 0.10, 32: 0.15})
    mla = pd.Series({16: 0.01})
    ar = pd.Series({65536: 0.010, 131072: 0.020})
    f = t.step_families(moe, mla, ar, 16)
    assert f["experts"] == pytest.approx(5.8)
    assert f["mla"] == pytest.approx(0.61)
    assert f["allreduce"] == pytest.approx(2.135)
    assert f["sum"] == pytest.approx(8.545)
    # outside a curve's range (no SGLang all-reduce table): NaN, and the sum with it
    g = t.step_families(moe, mla, pd.Series(dtype=float), 16)
    assert math.isnan(g["allreduce"]) and math.isnan(g["sum"])


def test_ladder_against_tables_sign_and_sum_of_finite_families():
    fam = pd.DataFrame([
        {"B": 16, "release": "0.5.6.post2", "experts": 10.0, "mla": 0.8, "allreduce": float("nan")},
        {"B": 16, "release": "0.5.9", "experts": 11.0, "mla": 0.8, "allreduce": 1.5},
        {"B": 16, "release": "0.5.14", "experts": 10.0, "mla": 0.7, "allreduce": 1.0},
    ])
    ladder = pd.DataFrame([{"isl": 1024, "osl": 1024, "C": 16, "tpot 0.5.7": 17.2, "tpot 0.5.9": 16.6,
                            "tpot 0.5.12": 15.3}])
    r = t.ladder_against_tables(fam, ladder).iloc[0]
    assert r["meas 0.5.9->0.5.12"] == pytest.approx(1.3)  # 16.6 - 15.3: the later release faster
    assert r["experts 0.5.9->0.5.12"] == pytest.approx(1.0)
    assert r["tables 0.5.9->0.5.12"] == pytest.approx(1.0 + 0.1 + 0.5)
    # v0.5.7 is read on the 0.5.6.post2 table, which is faster than 0.5.9's: a negative (wrong-way) change
    assert r["experts 0.5.7->0.5.9"] == pytest.approx(-1.0)
    assert r["tables 0.5.7->0.5.9"] == pytest.approx(-1.0)  # the all-reduce term is NaN and left out
    assert r["meas 0.5.7->0.5.9"] == pytest.approx(0.6)


def test_mtp_rows_closing_acceptance_and_paired_gain():
    dep = "agg attn TP1 DP8 · MoE TP1 EP8"

    plain_note = "attention-DP context balancing: InferenceX sweep dsr1-fp8-h200-trt's launch script (x.toml)"
    mtp_note = "InferenceX MTP sweep dsr1-fp8-h200-trt-mtp: MTP1 (its launch script), acceptance 0.85 assumed"

    def row(meas_ms, model_ms, mtp, conc=64, framework="trtllm 1.1.0rc2.post2", system="h200", notes=None):
        return {"source": "aiconfigurator", "system": system, "model": "deepseek-r1", "framework": framework,
                "mode": "agg", "isl": 8192, "osl": 1024, "concurrency": conc, "metric": "tpot_s",
                "deployment": dep + (" MTP1@0.675 [fp8]" if mtp else " [fp8]"), "measured": meas_ms / 1e3,
                "predicted": model_ms / 1e3, "error": model_ms / meas_ms - 1, "split": "fit",
                "notes": (mtp_note if mtp else plain_note) if notes is None else notes}

    d = pd.DataFrame([row(48.0, 42.0, False), row(40.0, 31.5, True),
                      row(40.0, 31.5, True, conc=128),  # no plain twin: no pair
                      row(30.0, 40.0, False, conc=256, notes="engine limits of recipe x"),  # no sweep: may be MTP
                      row(30.5, 29.5, True, conc=256),
                      row(40.0, 31.5, True, system="b200")])  # another system: left out
    per_row, pairs = t.mtp_rows(d)
    assert len(per_row) == 5
    assert per_row.sweep.tolist().count("dsr1-fp8-h200-trt-mtp") == 3
    m = per_row[per_row.mtp & (per_row.concurrency == 64)].iloc[0]
    # (1 + 0.675) x 31.5 / 40 - 1 = 0.3190625: the acceptance that closes the TPOT at the model's step
    assert m["a closing TPOT"] == pytest.approx(0.3190625)
    assert len(pairs) == 1
    p = pairs.iloc[0]
    assert p["gain measured"] == pytest.approx(1.2)  # 48 / 40
    assert p["gain model"] == pytest.approx(42 / 31.5)
    assert p["a from gain"] == pytest.approx(1.2 * 1.675 * 31.5 / 42 - 1)  # 0.5075


def test_wrong_data_folder_names_the_argument_and_the_fix(tmp_path):
    # a folder without aiconfigurator's moe/sglang tables (or a stray flag read as the folder) is refused, not printed
    # as all-NaN tables
    with pytest.raises(SystemExit, match="AIC_H200_DATA_DIR: .* has no moe/sglang folder; pass aic-core"):
        t.load_tables(tmp_path)
