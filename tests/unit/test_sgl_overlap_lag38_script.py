"""scripts/sgl_overlap_lag38.py: SGLang's overlap loop admits a prompt one step late (1.5 steps mean wait against the
normal loop's 0.5), the what-if adds that step to SGLang aggregated TTFT only, and the conservation check, against
hand-made frames and hand-computed waits (docs/gap_aic_ttft.md, round 38 sglttft38)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import sgl_overlap_lag38 as g  # noqa: E402


def test_loop_waits_by_hand():
    # steps of 10 ms from t = 0; an arrival at 3 ms is read at the 10 ms boundary: the normal loop runs it in the
    # step starting there (wait 7 ms), the overlap loop in the next one, already behind the queued step (17 ms)
    assert g.loop_waits([0.003], 0.010, overlap=False)[0] == pytest.approx(0.007)
    assert g.loop_waits([0.003], 0.010)[0] == pytest.approx(0.017)
    # an arrival on a boundary is read there at once
    assert g.loop_waits([0.020], 0.010, overlap=False)[0] == pytest.approx(0.0, abs=1e-12)


def test_mean_waits_are_half_and_one_and_a_half_steps():
    a = (np.arange(100_000) + 0.5) / 100_000 * 7.0  # uniform over 7 steps of τ = 1
    assert g.loop_waits(a, 1.0, overlap=False).mean() == pytest.approx(0.5, abs=1e-3)
    assert g.loop_waits(a, 1.0).mean() == pytest.approx(1.5, abs=1e-3)


def _frame(rows):
    cols = ["source", "id", "system", "stack", "mode", "concurrency", "deployment", "metric", "measured", "predicted",
            "error", "split", "quality", "isl", "osl"]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows])


ROWS = [
    # SGLang aggregated at C = 8: lag = τ = 20 ms
    ("inferencex", "a", "h200", "sglang", "agg", 8, "agg TP8", "ttft_s", 0.30, 0.25, 0.25 / 0.30 - 1, "held_out", None, 1024, 1024),
    ("inferencex", "a", "h200", "sglang", "agg", 8, "agg TP8", "tpot_s", 0.018, 0.020, 0.020 / 0.018 - 1, "held_out", None, 1024, 1024),
    # a lone user: no lag
    ("inferencex", "b", "b200", "sglang", "agg", 1, "agg TP8", "ttft_s", 0.16, 0.15, 0.15 / 0.16 - 1, "fit", None, 1024, 1024),
    ("inferencex", "b", "b200", "sglang", "agg", 1, "agg TP8", "tpot_s", 0.007, 0.007, 0.0, "fit", None, 1024, 1024),
    # a ROCm SGLang stack counts too; C = 1.5 takes half the step
    ("inferencex", "c", "mi325x", "sglang-rocm@0.5.9", "agg", 1.5, "agg TP8", "ttft_s", 1.0, 0.8, -0.2, "none", None, 8192, 1024),
    ("inferencex", "c", "mi325x", "sglang-rocm@0.5.9", "agg", 1.5, "agg TP8", "tpot_s", 0.05, 0.04, -0.2, "none", None, 8192, 1024),
    # not SGLang aggregated: untouched
    ("inferencex", "d", "h200", "trtllm", "agg", 64, "agg TP8", "ttft_s", 0.5, 0.4, -0.2, "none", None, 1024, 1024),
    ("inferencex", "d", "h200", "trtllm", "agg", 64, "agg TP8", "tpot_s", 0.03, 0.03, 0.0, "none", None, 1024, 1024),
    ("aiconfigurator", "e", "b200", "sglang", "disagg", 64, "disagg P", "ttft_s", 0.5, 0.4, -0.2, "fit", None, 1024, 1024),
    ("aiconfigurator", "e", "b200", "sglang", "disagg", 64, "disagg P", "tpot_s", 0.03, 0.03, 0.0, "fit", None, 1024, 1024),
]


def test_lag_whatif_adds_one_step_to_sglang_aggregated_rows_only():
    t = g.lag_whatif(_frame(ROWS)).set_index("id")
    assert t.loc["a", "lag_s"] == pytest.approx(0.020)
    assert t.loc["a", "after_error"] == pytest.approx(0.27 / 0.30 - 1)
    assert t.loc["b", "lag_s"] == 0.0
    assert t.loc["c", "lag_s"] == pytest.approx(0.5 * 0.04)
    assert t.loc["d", "lag_s"] == 0.0 and t.loc["e", "lag_s"] == 0.0
    assert t.loc["d", "after_error"] == pytest.approx(-0.2)


def test_lag_whatif_refuses_mtp_rows():
    rows = [r[:6] + ("agg TP8 MTP3@0.8",) + r[7:] if r[1] == "a" else r for r in ROWS]
    with pytest.raises(SystemExit, match="MTP"):
        g.lag_whatif(_frame(rows))


def test_judged_drops_fit_rows_and_flagged_rows():
    df = pd.DataFrame({"split": ["fit", "held_out", "none", "held_out"], "quality": [None, None, "", "rule A"]})
    assert g.judged(df).index.tolist() == [1, 2]


def test_split_check_by_hand():
    out = g.split_check(_frame(ROWS)).set_index("id")
    # row a: 2 ms too long a step over (0.9·1024 − 1) = 920.6 steps, against 50 ms of TTFT shortfall
    assert out.loc["a", "tpot_surplus_s"] == pytest.approx(0.002 * 920.6)
    assert out.loc["a", "ttft_short_s"] == pytest.approx(0.05)
    assert "d" not in out.index  # TensorRT-LLM: not checked
