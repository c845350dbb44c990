"""scripts/gb200_int_sign_split.py: the row description (pools parsed by hand) and the one-split sign score."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

sp = load_script("gb200_int_sign_split")


def _row(dep, conc, notes=""):
    return pd.Series({"deployment": dep, "concurrency": conc, "notes": notes})


def test_describe_attention_dp_pool():
    # DEP32 decode: one worker of attn TP1 DP32, so b = 4096 / 32 = 128 per attention rank
    d = sp.describe(_row("disagg P 2x(attn TP1 DP8 · MoE TP1 EP8) + D 1x(attn TP1 DP32 · MoE TP1 EP32 · DP dispatch "
                         "random) [fp8]", 4096.0))
    assert (d["attn"], d["moe"], d["width"], d["b"]) == ("ADP", "EP", 32, 128.0)


def test_describe_attention_tp_pool_and_cap():
    # 5 TEP4 workers at c105: 21 per worker, capped at the recipe's 16; the prefill pool (DP4) is not the decode pool
    dep = "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 5x(attn TP4 DP1 · MoE TP1 EP4) [fp4]"
    d = sp.describe(_row(dep, 105.0, "decode max_batch_size 16 per attention-DP rank"))
    assert (d["attn"], d["moe"], d["width"], d["b"]) == ("ATP", "EP", 4, 16.0)
    assert sp.describe(_row(dep, 30.0))["b"] == pytest.approx(6.0)
    # MoE TP4 (SGLang's low-latency pools) and an aggregated row
    tp = sp.describe(_row("disagg P 1x(attn TP4 DP1 · MoE TP4 EP1) + D 2x(attn TP4 DP1 · MoE TP4 EP1) [fp4]", 8.0))
    assert (tp["attn"], tp["moe"], tp["b"]) == ("ATP", "TP", 4.0)
    agg = sp.describe(_row("agg attn TP8 DP1 · MoE TP1 EP8 [fp4]", 28.0))
    assert (agg["attn"], agg["moe"], agg["width"], agg["b"]) == ("ATP", "EP", 8, 28.0)


def test_sign_rule_score_by_hand():
    # level a: 2 of 3 too fast (majority +, 2 right); level b: 1 of 1 too slow: 3 of 4 right
    x = pd.DataFrame({"error": [0.1, 0.2, -0.1, -0.3], "v": ["a", "a", "a", "b"]})
    assert sp.sign_rule_score(x, "v") == (0.75, "a +2/3, b -1/1")
    # one level: the majority sign of all rows
    assert sp.sign_rule_score(x.assign(v="z"), "v")[0] == 0.5


def test_balanced_grouped_distinct_by_hand():
    # E 256, k 8, stride 32, T 16 < 32: token t picks 2t + 32j, one per group; the eight groups tie, so groups 0-3
    # (experts 0-127) for every token: own picks 2t + 32j, j < 4 (64 experts), plus fillers, the lowest-index
    # unpicked experts 0-4 of group 0, of which 1 and 3 are nobody's own pick: 66
    assert sp.balanced_grouped_distinct(16) == 66
    # plain top-k (one group): the one-hot picks themselves, 16 x 8 distinct
    assert sp.balanced_grouped_distinct(16, groups=1, top_groups=1) == 128
    # at T >= 32 the four groups' 128 experts are all touched and never more
    assert sp.balanced_grouped_distinct(64) == sp.balanced_grouped_distinct(128) == 128
    # one token: its eight picks, whichever way it is routed
    assert sp.balanced_grouped_distinct(1) == 8
