"""scripts/aic_batch_split.py: sequences per decode attention rank from a validation label, and the cells."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

split = load_script("aic_batch_split")


def test_sequences_per_attention_rank_by_hand():
    # 512 users over 6 TEP8 decode workers: 512 / 6 = 85.33 per worker, attention TP (DP1)
    s, kind = split.seqs_per_attention_rank(
        "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 6x(attn TP8 DP1 · MoE TP1 EP8) MTP2@0.75 [fp4]", 512)
    assert s == pytest.approx(85.333, rel=1e-4) and kind == "TP"
    # 1214 users over 2 DEP8 workers: 1214 / 2 / 8 = 75.875 per attention rank (InferenceX row 19)
    s, kind = split.seqs_per_attention_rank(
        "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 2x(attn TP1 DP8 · MoE TP1 EP8) MTP3@0.825 [fp4]", 1214)
    assert s == pytest.approx(75.875) and kind == "DP"
    # aggregated: one instance, the prefill pool is not read
    assert split.seqs_per_attention_rank("agg attn TP1 DP8 · MoE TP1 EP8 [fp8]", 64) == (8.0, "DP")


def test_label_without_attention_field_is_named():
    with pytest.raises(ValueError, match="no 'attn TPn DPm' field"):
        split.seqs_per_attention_rank("agg something [fp8]", 4)


def test_cells_take_the_median_of_their_rows():
    rows = [  # two TP agg rows at 1K ISL in the 64-128 band (errors -0.1, -0.3 -> median -0.2), one DP row
        ("aiconfigurator", "deepseek-r1", "trtllm 1.2", "agg", 1024, 100, "agg attn TP8 DP1 · MoE TP1 EP8 [fp4]", -0.1),
        ("aiconfigurator", "deepseek-r1", "sglang 0.5", "agg", 1024, 80, "agg attn TP8 DP1 · MoE TP1 EP8 [fp4]", -0.3),
        ("aiconfigurator", "deepseek-r1", "trtllm 1.2", "agg", 1024, 800, "agg attn TP1 DP8 · MoE TP1 EP8 [fp4]", 0.05),
        ("aiconfigurator", "deepseek-r1", "vllm 0.1", "agg", 1024, 100, "agg attn TP8 DP1 · MoE TP1 EP8 [fp4]", 0.9),
        ("inferencex", "deepseek-r1", "sglang", "agg", 1024, 100, "agg attn TP8 DP1 · MoE TP1 EP8 [fp4]", 0.9),
    ]
    f = pd.DataFrame(rows, columns=["source", "model", "framework", "mode", "isl", "concurrency", "deployment", "error"])
    f["metric"] = "tpot_s"
    t = split.table(f, "deepseek-r1", "aiconfigurator", ("sglang", "trtllm"))
    assert len(t) == 2
    tp = t.xs(("agg", "TP"), level=("mode", "attention")).iloc[0]
    assert tp["n"] == 2 and tp["median_error"] == pytest.approx(-0.2)
    dp = t.xs(("agg", "DP"), level=("mode", "attention")).iloc[0]
    assert dp["n"] == 1 and dp["median_error"] == pytest.approx(0.05)
