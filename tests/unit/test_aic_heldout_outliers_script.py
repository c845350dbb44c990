"""scripts/aic_heldout_outliers.py: the held-out outlier test, the TPOT excess and its line, by hand."""

from __future__ import annotations

import pytest
from csv_rows import write_rows
from script_module import load_script

outl = load_script("aic_heldout_outliers")

COLS = ("source", "id", "system", "model", "precision", "framework", "mode", "isl", "osl", "concurrency",
        "deployment", "metric", "measured", "predicted", "error", "quality", "split")


def _row(i, c, metric, measured, predicted, split="held_out", quality="", source="aiconfigurator"):
    vals = (source, i, "h200", "minimax-m2.5", "fp8", "vllm 0.16.0", "agg", "1024", "1024", str(c), "TP4",
            metric, str(measured), str(predicted), str(predicted / measured - 1), quality, split)
    return dict(zip(COLS, vals))


def test_outlier_threshold_and_held_out_judgement():
    # H200 MiniMax-M2.5 vLLM 0.16.0 TP4 1k/1k C = 4 (aiconfigurator-core 0.12.0): 80.76 tok/s measured, the
    # model 136.2: +68.6% > 40%
    assert outl.is_outlier(_row("a", 4, "interactivity", 80.76, 136.2))
    # +40% exactly is not beyond the threshold (the error written "0.4": 140 / 100 - 1 is 0.39999999999999991 in
    # floating point, which no threshold test could tell from 0.4), just above it is; a fit-split or a flagged row is
    # not judged held out
    at, above = _row("b", 4, "interactivity", 100.0, 140.0), _row("b", 4, "interactivity", 100.0, 140.0)
    at["error"], above["error"] = "0.4", "0.40001"
    assert not outl.is_outlier(at) and outl.is_outlier(above)
    assert not outl.is_outlier(_row("c", 4, "interactivity", 80.76, 136.2, split="fit"))
    assert not outl.is_outlier(_row("d", 4, "interactivity", 80.76, 136.2, quality="rule G"))


def test_tpot_excess_and_its_line(tmp_path):
    # measured - modelled TPOT: 12.4 - 7.3 = 5.1 ms at C 4, 25.7 - 22.7 = 3.0 ms at C 64; the flagged C 16 row is
    # left out
    rows = [_row("a", 4, "tpot_s", 0.0124, 0.0073), _row("b", 64, "tpot_s", 0.0257, 0.0227),
            _row("c", 16, "tpot_s", 0.0200, 0.0100, quality="rule H"), _row("x", 4, "tpot_s", 1.0, 2.0, source="ix")]
    loaded = outl.load(str(write_rows(tmp_path / "v.csv", rows)))
    assert sorted(loaded) == ["a", "b", "c"]
    xs, ys = outl.tpot_excess(loaded, ["a", "b", "c"])
    assert xs == [4.0, 64.0] and ys == pytest.approx([5.1, 3.0])
    # the line through (4, 5.1) and (64, 3.0): slope -2.1 / 60 = -0.035 ms per sequence, intercept 5.1 + 0.14 = 5.24
    a, b = outl.line_fit(xs, ys)
    assert b == pytest.approx(-0.035) and a == pytest.approx(5.24)
    # one load: no slope, the mean as the intercept
    assert outl.line_fit([8.0, 8.0], [1.0, 3.0]) == (2.0, 0.0)
