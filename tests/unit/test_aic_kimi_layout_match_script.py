"""scripts/aic_kimi_layout_match.py: the batch bands, engine names, layout labels and the same-layout table
(values by hand)."""

from __future__ import annotations

from types import SimpleNamespace as N

import pandas as pd
import pytest
from script_module import load_script

km = load_script("aic_kimi_layout_match")


@pytest.mark.parametrize(("batch", "band"), [(0.9, "<=2"), (2.0, "<=2"), (2.01, "2-6"), (6.0, "2-6"),
                                             (47.5, "24-48"), (100.0, "48-100"), (165.5, ">100")])
def test_batch_band_edges(batch, band):
    # upper edges inclusive, lower exclusive: 2 is the first band's, 2.01 the second's
    assert km.batch_band(batch) == band


def test_engine_family_drops_the_release():
    assert km.engine_family("vllm 0.17.0") == "vllm"
    assert km.engine_family("trtllm 1.1.0-dev.2") == "trtllm"
    assert km.engine_family("") == ""


def test_layout_label():
    assert km.layout_label(N(tp=8, ep=8, moe_tp=1), 4) == "TP8 EP8 x4"
    assert km.layout_label(N(tp=4, ep=1, moe_tp=4), 1) == "TP4 MoE-TP4"


def test_same_layout_table_keeps_kimi_cells_only():
    # two DeepSeek rows share Kimi's cell (errors +0.10 and +0.30: median +0.20); one DeepSeek row is alone in
    # another layout and is dropped
    df = pd.DataFrame({
        "system": ["b200"] * 4, "layout": ["TP8 MoE-TP8"] * 3 + ["TP4 EP4"], "band": ["2-6"] * 4,
        "model": ["kimi-k2.5", "deepseek-r1", "deepseek-r1", "deepseek-r1"],
        "engine": ["vllm", "sglang", "sglang", "sglang"],
        "error": [0.08, 0.10, 0.30, -0.5], "excess_ms": [0.8, 1.0, 3.0, -5.0]})
    t = km.same_layout_table(df).set_index("model")
    assert set(t.layout) == {"TP8 MoE-TP8"}
    assert t.loc["deepseek-r1", "n"] == 2
    assert t.loc["deepseek-r1", "error"] == pytest.approx(0.20)
    assert t.loc["deepseek-r1", "excess_ms"] == pytest.approx(2.0)
    assert t.loc["kimi-k2.5", "error"] == pytest.approx(0.08)
