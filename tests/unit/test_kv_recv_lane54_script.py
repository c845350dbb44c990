"""scripts/kv_recv_lane54.py: the receiving-rank parse, the per-rank KV demand, the lane bounds of the pair and the
least lane use of another row, against a hand-made CSV (expected values worked by hand in the comments)."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

s = load_script("kv_recv_lane54")

GPTOSS_DEP2 = "disagg P 2x(attn TP1 DP1 · MoE TP1 EP1) + D 1x(attn TP1 DP2 · MoE TP1 EP2) [mxfp4]"
DSR1_DEP8 = "disagg P 2x(attn TP1 DP2 · MoE TP1 EP2) + D 1x(attn TP1 DP8 · MoE TP1 EP8) [fp4]"
DSR1_TEP8 = "disagg P 1x(attn TP1 DP2 · MoE TP1 EP2) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]"

# KV bytes of a prompt at one byte an element (by hand, from the models' configs):
#   gpt-oss-120b: 8 KV heads x 64 x 2 = 1,024 B a layer-token; 18 full layers at the prompt, 18 at their 128 window
#     8k: 18 x 8,192 x 1,024 + 18 x 128 x 1,024 = 150,994,944 + 2,359,296 = 153,354,240 B
#     1k: 18 x 1,024 x 1,024 + 2,359,296 = 21,233,664 B
#   deepseek-r1: 61 x (512 + 64) = 35,136 B a token; 8k: 35,136 x 8,192 = 287,834,112 B
B_H, B_F, B_D = 153.35424, 21.233664, 287.834112  # MB


def _rows(rid, model, stack, mode, isl, osl, conc, dep, ttft, tpot, quality=None, split="none"):
    base = {
        "source": "inferencex",
        "id": rid,
        "system": "gb200-nvl72",
        "model": model,
        "precision": "fp4",
        "stack": stack,
        "mode": mode,
        "isl": isl,
        "osl": osl,
        "concurrency": conc,
        "deployment": dep,
        "quality": quality,
        "split": split,
    }
    return [
        {**base, "metric": "ttft_s", "measured": ttft, "predicted": ttft * 0.5, "error": -0.5},
        {**base, "metric": "tpot_s", "measured": tpot, "predicted": tpot, "error": 0.0},
    ]


@pytest.fixture()
def csv(tmp_path):
    trt = "dynamo-trtllm"
    rows = (
        # held: 512 / (0.48 + 1,000 x 0.02) = 512 / 20.48 = 25 req/s, 2 ranks: 12.5 a rank, service 80 ms
        _rows("held", "gpt-oss-120b", trt, "disagg", 8192, 1001, 512, GPTOSS_DEP2, 0.48, 0.02)
        # free: 2,000 / (0.2 + 1,000 x 0.0248) = 2,000 / 25 = 80 req/s, 40 a rank, service 25 ms
        + _rows("free", "gpt-oss-120b", trt, "disagg", 1024, 1001, 2000, GPTOSS_DEP2, 0.2, 0.0248)
        # other: 1,000 / (1 + 1,000 x 0.039) = 25 req/s over 8 ranks = 3.125 a rank
        + _rows("other", "deepseek-r1", "trtllm@1.2.0rc6.post2", "disagg", 8192, 1001, 1000, DSR1_DEP8, 1.0, 0.039)
        # left out: SGLang, aggregated, flagged
        + _rows("sgl", "deepseek-r1", "sglang@0.5.9", "disagg", 8192, 1001, 1000, DSR1_DEP8, 1.0, 0.039)
        + _rows("agg", "deepseek-r1", trt, "agg", 8192, 1001, 1000, "agg attn TP8 DP1", 1.0, 0.039)
        + _rows("flag", "deepseek-r1", trt, "disagg", 8192, 1001, 1000, DSR1_DEP8, 1.0, 0.039, quality="rule C")
    )
    path = tmp_path / "v.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def test_receiving_ranks():
    assert s.receiving_ranks(GPTOSS_DEP2) == 2  # 1 worker x DP2
    assert s.receiving_ranks(DSR1_TEP8) == 4  # 4 workers x DP1 (the TP ranks share one request's KV)
    assert s.receiving_ranks("agg attn TP8 DP1") is None


def test_prompt_kv_bytes():
    assert s.prompt_kv_bytes("gpt-oss-120b", 8192) == pytest.approx(B_H * 1e6)
    assert s.prompt_kv_bytes("gpt-oss-120b", 1024) == pytest.approx(B_F * 1e6)
    assert s.prompt_kv_bytes("deepseek-r1", 8192) == pytest.approx(B_D * 1e6)


def test_table(csv):
    t = s.table(csv).set_index("id")
    assert sorted(t.index) == ["free", "held", "other"]
    assert t.loc["held", "req_s_rank"] == pytest.approx(12.5)
    assert t.loc["free", "req_s_rank"] == pytest.approx(40.0)
    assert t.loc["other", "req_s_rank"] == pytest.approx(3.125)
    # held 12.5 x 153.354 MB = 1.9169 GB/s; free 40 x 21.234 = 0.8493; other 3.125 x 287.834 = 0.8995
    assert t.loc["held", "gb_s_rank"] == pytest.approx(1.916928)
    assert t.loc["free", "gb_s_rank"] == pytest.approx(0.84934656)
    assert t.loc["other", "gb_s_rank"] == pytest.approx(0.8994816)
    assert list(s.table(csv)["id"]) == ["held", "other", "free"]  # highest demand first


def test_lane_bounds_and_least_use(csv):
    t = s.table(csv)
    b = s.lane_bounds(t, "held", "free")
    # B max = (153.354 - 21.234) MB / (80 - 25) ms = 132.1206 / 55 = 2.40219 GB/s; B min = 21.234 / 25 = 0.84935
    assert b["b_max"] == pytest.approx(132.120576 / 55)
    assert b["b_min"] == pytest.approx(B_F / 25)
    assert b["l_max_ms"] == pytest.approx(25.0)
    # the held row's lane is exactly full at the two vertices on its own line: 12.5 x 80 ms = 1.0
    assert s.least_use(12.5, B_H, b) == pytest.approx(1.0)
    # other (b 287.834 > b_h): least at the pair's crossing, S_h + (b - b_h) / B max = 80 + 134.4799 / 2.40219
    # = 80 + 55.982 = 135.982 ms; x 3.125 / s = 0.42494
    assert s.least_use(3.125, B_D, b) == pytest.approx(3.125 * (80 + (B_D - B_H) / (132.120576 / 55)) / 1000)
    assert s.least_use(3.125, B_D, b) == pytest.approx(0.42494, abs=1e-5)


def test_main(csv, capsys, tmp_path):
    assert s.main([csv, "--held", "held", "--free", "free"]) == 0
    out = capsys.readouterr().out
    assert "3 TensorRT-LLM disaggregated rows" in out
    assert "B 0.85-2.40 GB/s, L < 25.0 ms (service 80.0 / 25.0 ms a request)" in out
    empty = tmp_path / "e.csv"
    pd.DataFrame(_rows("sgl", "deepseek-r1", "sglang", "disagg", 8192, 1001, 10, DSR1_DEP8, 1.0, 0.04)).to_csv(
        empty, index=False
    )
    assert s.main([str(empty)]) == 1
