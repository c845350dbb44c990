"""scripts/h200_aic_int_tail.py: the per-layout line fit, the prompt-stall bound and the kernel-table read."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

tail = load_script("h200_aic_int_tail")


def test_intercept_slope_by_hand():
    # gap = 4 ms + 10 us per sequence at B = 4, 8, 16 -> a = 4 ms, b = 10 us; a flat gap of 1 ms -> a = 1, b = 0
    df = pd.DataFrame({"release": ["x"] * 3 + ["y"] * 2, "layout": ["L"] * 5, "C": [4.0, 8.0, 16.0, 4.0, 64.0],
                       "gap_ms": [4.04, 4.08, 4.16, 1.0, 1.0]})
    got = tail.intercept_slope(df).set_index("release")
    assert got.loc["x", "a_ms"] == pytest.approx(4.0)
    assert got.loc["x", "b_us_per_seq"] == pytest.approx(10.0)
    assert got.loc["x", "gap_C4_ms"] == pytest.approx(4.04) and got.loc["x", "gap_Cmax_ms"] == pytest.approx(4.16)
    assert got.loc["y", "a_ms"] == pytest.approx(1.0) and got.loc["y", "b_us_per_seq"] == pytest.approx(0.0, abs=1e-9)


def test_stall_bound_by_hand():
    # TPOT 20 ms, TTFT 2 s, OSL 1001: E2E = 2 + 1000 x 0.020 = 22 s; prompts hold at most 2/22 of the time:
    # 20 x 2 / 22 = 1.818 ms of the TPOT
    assert tail.stall_bound_ms(20.0, 2.0, 1001) == pytest.approx(20.0 * 2.0 / 22.0)
    # the Qwen3 TP4 4000/2000 row of the note: 21.35 ms, 2.004 s -> E2E 2.004 + 1999 x 0.02135 = 44.68 s, 0.958 ms
    assert tail.stall_bound_ms(21.35, 2.004, 2000) == pytest.approx(21.35 * 2.004 / (2.004 + 1999 * 0.02135))
    # no prompt time, no stall
    assert tail.stall_bound_ms(15.0, 0.0, 100) == 0.0


def test_shapes_are_the_configs():
    # MiniMax-M2.5: hidden 3072, 1536 per expert, 256 experts top-8, 62 layers; Qwen3-235B-A22B: 4096, 1536, 128,
    # top-8, 94 layers (their config.json files)
    assert tail.SHAPES["minimax-m2.5"] == ({"hidden_size": 3072, "inter_size": 1536, "num_experts": 256, "topk": 8}, 62)
    assert tail.SHAPES["qwen3-235b-a22b"] == ({"hidden_size": 4096, "inter_size": 1536, "num_experts": 128, "topk": 8},
                                              94)


def test_table_read_at_grid_points():
    pytest.importorskip("aiconfigurator_core")
    # aiconfigurator-core 0.12.0 h200_sxm moe vllm 0.19.0 moe_perf, fp8_block, 3072 x 1536, 256 experts top-8,
    # MoE TP4 EP1, balanced: 4 tokens 0.058432 ms, 8 tokens 0.084507 ms (vllm_fused_moe); x 62 layers
    assert tail.table_moe_ms("minimax-m2.5", 4, 1, 4) == pytest.approx(0.058432 * 62, rel=1e-4)
    # 6 tokens: halfway between the two measured counts
    assert tail.table_moe_ms("minimax-m2.5", 4, 1, 6) == pytest.approx((0.058432 + 0.084507) / 2 * 62, rel=1e-4)
    # sglang 0.5.10 moe_perf, fp8_block, 4096 x 1536, 128 experts top-8, MoE TP2 EP1, 4 tokens: 0.109691 ms; x 94
    assert tail.table_moe_ms("qwen3-235b-a22b", 2, 1, 4) == pytest.approx(0.109691 * 94, rel=1e-4)
    # TensorRT-LLM 1.3.0rc20 h200_sxm moe_perf, moe_torch_flow_cutlass, same shape, MoE TP4 EP1, 4 tokens: 0.1174 ms
    assert tail.table_moe_ms("minimax-m2.5", 4, 1, 4, tail.CUTLASS_TABLE) == pytest.approx(0.1174 * 62, rel=2e-3)
