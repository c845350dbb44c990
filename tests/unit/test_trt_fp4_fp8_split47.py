"""scripts/trt_fp4_fp8_split47.py: the decode-pool layout parse and the per-group medians against values worked by hand
(a six-row frame; no validate run)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import trt_fp4_fp8_split47 as f  # noqa: E402

DIS = "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 4x(attn TP{tp} DP{dp} · MoE TP1 EP8) [fp4]"


def test_decode_attention_reads_the_decode_pool_not_the_prefill_pool():
    # the prefill pool is attention DP4: a parse of the first match would say DP4 for every row
    assert f.decode_attention(DIS.format(tp=8, dp=1)) == "TP8"
    assert f.decode_attention(DIS.format(tp=1, dp=32)) == "DP32"
    assert f.decode_attention("agg 1x(attn TP4 DP1 · MoE TP1 EP4)") == "TP4"
    assert f.decode_attention("agg TP8") == ""


def _row(prec, stack, tp, measured, predicted, split):
    return {
        "source": "aiconfigurator",
        "metric": "tpot_s",
        "stack": stack,
        "model": "deepseek-r1",
        "system": "gb300-nvl72",
        "precision": prec,
        "mode": "disagg",
        "deployment": DIS.format(tp=tp, dp=1),
        "measured": measured,
        "predicted": predicted,
        "split": split,
    }


def test_split_table_medians_and_format_pair():
    rows = pd.DataFrame(
        [
            # fp4 TP8 1.2.0rc6 (post suffixes dropped): errors +10% and +4% -> median +7%; residuals 1 and 0.4 ms
            _row("fp4", "trtllm@1.2.0rc6.post2", 8, 0.010, 0.011, "held_out"),
            _row("fp4", "trtllm@1.2.0rc6.post1", 8, 0.010, 0.0104, "fit"),
            # fp8 TP8 1.2.0rc6: -2% alone, in the fit half (held-out n 0)
            _row("fp8", "trtllm@1.2.0rc6.post2", 8, 0.010, 0.0098, "fit"),
            # other rows the table must leave out: another metric, a source, a stack without a release
            {**_row("fp4", "trtllm@1.2.0rc6.post2", 8, 0.01, 0.02, "fit"), "metric": "ttft_s"},
            {**_row("fp4", "trtllm@1.2.0rc6.post2", 8, 0.01, 0.02, "fit"), "source": "inferencex"},
            _row("fp4", "sglang", 8, 0.01, 0.02, "fit"),
        ]
    )
    t = f.split_table(rows).set_index("precision")
    assert t.loc["fp4", "release"] == "1.2.0rc6" and t.loc["fp4", "decode"] == "TP8"
    assert t.loc["fp4", "n"] == 2 and t.loc["fp8", "n"] == 1
    assert t.loc["fp4", "err_pct"] == pytest.approx(7.0)
    assert t.loc["fp4", "resid_ms"] == pytest.approx(0.7)
    assert t.loc["fp4", "ho_err_pct"] == pytest.approx(10.0) and t.loc["fp4", "ho_n"] == 1
    assert t.loc["fp8", "ho_n"] == 0
    pair = f.format_pairs(f.split_table(rows))
    assert len(pair) == 1
    assert pair.fp4_minus_fp8.iloc[0] == pytest.approx(9.0)  # +7 - (-2)


def test_split_table_names_a_missing_column():
    with pytest.raises(KeyError):
        f.split_table(pd.DataFrame({"source": ["aiconfigurator"]}))
