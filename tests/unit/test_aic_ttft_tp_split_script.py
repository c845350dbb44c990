"""scripts/aic_ttft_tp_split.py: the two-term least squares and the row selection, by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

tps = load_script("aic_ttft_tp_split")


def test_exact_terms_are_recovered():
    # residual = 36 ms + 146 ms / TP at TP 1, 2, 4, 8: 182, 109, 72.5, 54.25 ms
    assert tps.tp_split([1, 2, 4, 8], [182.0, 109.0, 72.5, 54.25]) == (36.0, 146.0)


def test_least_squares_of_a_noisy_group():
    # TP 2, 4, 8 with residuals 10, 0, 2 ms: x = 1/TP = 0.5, 0.25, 0.125; mean x 0.2917, mean r 4;
    # slope = sum((x - xm)(r - rm)) / sum((x - xm)^2) = (0.2083 x 6 + (-0.0417) x (-4) + (-0.1667) x (-2))
    #       / (0.2083^2 + 0.0417^2 + 0.1667^2) = 1.75 / 0.072917 = 24.0; const = 4 - 24 x 0.2917 = -3.0
    const, per_tp = tps.tp_split([2, 4, 8], [10.0, 0.0, 2.0])
    assert per_tp == pytest.approx(24.0, abs=1e-6) and const == pytest.approx(-3.0, abs=1e-6)


def test_two_tp_sizes_are_refused():
    with pytest.raises(ValueError, match="tp: the split needs 3 or more TP sizes"):
        tps.tp_split([4, 8, 8], [1.0, 2.0, 3.0])


def _csv_rows():
    base = {"source": "aiconfigurator", "metric": "ttft_s", "quality": None, "mode": "agg", "model": "m",
            "framework": "trtllm 1.1.0", "system": "b200", "precision": "fp8", "isl": 1024}
    rows = [dict(base, concurrency=4.0, deployment=f"agg attn TP{t} DP1 · FFN TP{t} [fp8]",
                 measured=0.1, predicted=0.1 + (20 + 80 / t) / 1e3) for t in (1, 2, 4, 8)]
    rows.append(dict(base, concurrency=64.0, deployment="agg attn TP1 DP1 · FFN TP1 [fp8]", measured=1.0,
                     predicted=9.0))  # under load: left out
    rows.append(dict(base, concurrency=4.0, deployment="agg attn TP1 DP8 · MoE TP1 EP8 [fp8]", measured=1.0,
                     predicted=9.0))  # attention DP: left out
    rows.append(dict(base, concurrency=4.0, deployment="agg attn TP2 DP1 · FFN TP2 [fp8]", measured=1.0,
                     predicted=9.0, quality="flagged"))  # flagged: left out
    return pd.DataFrame(rows)


def test_table_keeps_low_load_tp_rows_only():
    t = tps.split_table(tps.low_load_rows(_csv_rows()))
    assert t[["engine", "n", "tp_sizes"]].values.tolist() == [["trtllm", 4, 4]]
    assert t.const_ms.iloc[0] == pytest.approx(20.0, abs=1e-6)
    assert t.per_tp_ms.iloc[0] == pytest.approx(80.0, abs=1e-6)
    assert t.measured_ms.iloc[0] == pytest.approx(100.0)
