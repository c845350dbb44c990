"""scripts/gb_ttft_median_need.py: the held-out filter, the rows the median needs and TensorRT-LLM's busiest
attention-DP rank, worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

need = load_script("gb_ttft_median_need")

DEP = "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]"


def _row(error, split="held_out", quality=None, system="gb200-nvl72", metric="ttft_s", c=12.0):
    return {"source": "aiconfigurator", "system": system, "framework": "trtllm 0.8.1.post2", "mode": "disagg",
            "isl": 1024, "osl": 1024, "concurrency": c, "deployment": DEP, "metric": metric, "error": error,
            "quality": quality, "split": split, "id": "x", "measured": 1.0, "predicted": 1.0 + error}


def test_held_out_filter_and_load_band(tmp_path):
    rows = [_row(-0.35), _row(0.1, split="fit"), _row(0.5, quality="flagged"), _row(0.2, metric="tpot_s"),
            _row(0.3, system="b200")]
    p = tmp_path / "v.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    d = need.held_out_rows(str(p))
    assert len(d) == 1  # only the held-out, unflagged GB200 TTFT row stays
    # C = 12 over 1 x TP1 x DP4 = 4 prefill GPUs: 3 per GPU, the 2-16 band
    assert d.iloc[0].load == "2-16" and d.iloc[0].isl_osl == "1024/1024"


def test_missing_column_names_the_fix(tmp_path):
    p = tmp_path / "v.csv"
    pd.DataFrame([{"source": "aiconfigurator", "error": 0.1}]).to_csv(p, index=False)
    with pytest.raises(SystemExit, match="missing column.*--held-out"):
        need.held_out_rows(str(p))


def test_rows_needed_for_the_median():
    # 28 rows, 8 within 20%: the median needs 28 // 2 + 1 = 15 within, so 7 more (GB300 at main da63d8f)
    e = pd.Series([0.1] * 8 + [0.5] * 20)
    assert need.needed(e) == 7
    assert need.needed(pd.Series([0.05, 0.3, 0.1])) == 0  # median 0.1 already


def test_busiest_rank_is_the_ceiling():
    # equal prompts to an idle DP4 worker: 1 per rank up to 4, then ceil(S/4)
    assert [need.trt_busiest_rank(s, 4) for s in range(1, 10)] == [1, 1, 1, 1, 2, 2, 2, 2, 3]
    # the model's continuous busiest rank: 5 prompts on 4 ranks = 1.25, the engine 2 (1.6x); equal at S = k·dp
    assert need.model_busiest_rank(5, 4) == 1.25
    assert need.trt_busiest_rank(16, 8) == need.model_busiest_rank(16, 8) == 2
    with pytest.raises(ValueError, match="dp 0"):
        need.trt_busiest_rank(3, 0)


def test_poisson_busiest_rank_by_hand():
    import math
    # dp = 1: ⌈S⌉ = S, so the mean is µ itself
    assert abs(need.poisson_busiest_rank(2.5, 1) - 2.5) < 1e-9
    # µ = 1, dp = 4: P(1..4) + 2·P(5..8) + 3·P(9..12), Poisson(1) terms e^-1/k!
    p = [math.exp(-1) / math.factorial(k) for k in range(13)]
    hand = sum(p[1:5]) + 2 * sum(p[5:9]) + 3 * sum(p[9:13])
    assert abs(need.poisson_busiest_rank(1.0, 4) - hand) < 1e-6
    assert abs(hand - 0.6358) < 1e-4
    # below one prompt a step the engine's mean busiest rank is under the model's linear f(µ) = µ
    assert need.poisson_busiest_rank(0.5, 4) < need.model_busiest_rank(0.5, 4) == 0.5
    with pytest.raises(ValueError, match="mu -1"):
        need.poisson_busiest_rank(-1.0, 2)
