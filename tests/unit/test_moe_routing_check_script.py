"""scripts/moe_routing_check.py: the form's error per collector routing and token band."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

script = load_script("moe_routing_check")


def test_band_summary_gives_median_abs_and_signed_error_per_routing_and_band():
    d = pd.DataFrame({"num_tokens": [1, 2, 2, 8, 8, 4096],
                      "distribution": ["balanced", "balanced", "power_law_1.01", "balanced", "balanced", "balanced"],
                      "err": [0.1, -0.3, 0.5, 0.2, 0.4, -0.25]})
    got = script.band_summary(d).set_index(["distribution", "tokens"])
    # 1-2 tokens, balanced: errors 0.1, -0.3 -> |e| median 0.2, signed median -0.1
    assert got.loc[("balanced", "1-2"), "median_ape"] == pytest.approx(0.2)
    assert got.loc[("balanced", "1-2"), "bias"] == pytest.approx(-0.1)
    assert got.loc[("power_law_1.01", "1-2"), "n"] == 1
    # 4-32: 0.2, 0.4 -> 0.3 both ways; >= 3072: the one row
    assert got.loc[("balanced", "4-32"), "median_ape"] == pytest.approx(0.3)
    assert got.loc[("balanced", ">=3072"), "bias"] == pytest.approx(-0.25)
    assert ("balanced", "48-256") not in got.index  # no row in that band


def test_routed_rows_price_each_row_read_with_its_routing():
    base = {"moe_dtype": "fp8_block", "hidden_size": 7168, "inter_size": 2048, "topk": 8, "num_experts": 256,
            "moe_tp_size": 1, "moe_ep_size": 8, "num_tokens": 1, "latency": 0.05}
    df = pd.DataFrame([{**base, "distribution": "balanced"}, {**base, "distribution": "power_law_1.01"}])
    d = script.routed_rows(df, "h200", "fp8").set_index("distribution")
    # 1 token: the balanced row reads one expert on the rank, the power-law row all eight (the collector's
    # residual on experts 0-7): eight experts' weights cost more than one
    assert d.loc["power_law_1.01", "touched"] == 8.0 and d.loc["balanced", "touched"] == 1.0
    assert d.loc["power_law_1.01", "pred"] > d.loc["balanced", "pred"]
    assert d.loc["balanced", "err"] == pytest.approx(d.loc["balanced", "pred"] / 0.05e-3 - 1)
