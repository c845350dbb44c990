"""scripts/aic_prefill_capacity.py: the closed loop's measured rate and the plateau table, by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

from jalapeno.deploy.layout import Layout

cap = load_script("aic_prefill_capacity")


def test_measured_rate_is_littles_law_over_one_cycle():
    # docs/gap_aic_ttft.md, H200 TP8 8k/1k at C = 128, one worker: TTFT 7.69 s, TPOT 36.3 ms, OSL 1024:
    # 128 / (7.69 + 1023 x 0.0363) = 128 / 44.8249 = 2.8556 requests/s (x 8192 = 23.4k tokens/s)
    assert cap.measured_rate(128, 7.69, 0.0363, 1024) == pytest.approx(2.8556, abs=1e-4)


def test_attention_kind():
    assert cap.attention_kind(Layout(dp=8, ep=8)) == "DEP"
    assert cap.attention_kind(Layout(tp=8, ep=8)) == "TEP"


def _frame(measured, queued, model=200.0):
    n = len(measured)
    return pd.DataFrame({"system": ["s"] * n, "engine": "e", "model": "m", "precision": "fp8", "attn": "DEP",
                         "layout": "L", "isl": 8192, "queued": queued, "measured_tok_s": measured,
                         "model_tok_s": model})


def test_plateau_needs_two_queued_rows_within_ten_percent_of_the_top():
    # 100 and 91 are within 10% of the top (>= 90); 80 is not: plateau 2, model / top = 200 / 100
    t = cap.plateau_table(_frame([100.0, 91.0, 80.0], [True, True, True]))
    assert t[["rows", "plateau"]].values.tolist() == [[3, 2]]
    assert t.model_over_measured.iloc[0] == pytest.approx(2.0)
    # 89 is outside the 10% band: a single top row is no plateau, the group is dropped
    assert cap.plateau_table(_frame([100.0, 89.0], [True, True])).empty
    # rows near the top that did not queue do not count either (their load may sit below the capacity)
    assert cap.plateau_table(_frame([100.0, 99.0], [True, False])).empty
