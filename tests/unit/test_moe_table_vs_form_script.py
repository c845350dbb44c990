"""scripts/moe_table_vs_form.py: the rows of one MoE shape and layout, their experts read, the implied HBM fraction."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

script = load_script("moe_table_vs_form")


def _table() -> pd.DataFrame:
    """DeepSeek-R1's routed-expert shape, moe_tp 8, EP1, two kernel paths at T = 4 and one at T = 32."""
    base = {"moe_dtype": "fp8_block", "hidden_size": 7168, "inter_size": 2048, "topk": 8, "num_experts": 256,
            "moe_tp_size": 8, "moe_ep_size": 1, "distribution": "balanced"}
    rows = [(4, "cutlass", 0.150), (4, "deepgemm", 0.1384), (32, "cutlass", 0.4213),
            (32, "cutlass", 0.5), (8, "cutlass", 0.2)]
    out = [{**base, "num_tokens": t, "kernel_source": k, "latency": ms} for t, k, ms in rows]
    out[-1]["moe_tp_size"] = 4  # another layout: not selected
    return pd.DataFrame(out)


def test_rows_keep_the_fastest_kernel_and_count_experts_both_ways():
    bal, uni = script.shape_rows(_table(), "fp8", 8, 1, 7168, 2048, 256, 8, 512)
    assert list(bal.num_tokens) == [4, 32] and list(uni.num_tokens) == [4, 32]
    assert list(bal.t) == pytest.approx([0.1384e-3, 0.4213e-3])  # the faster path at T = 4
    # balanced_logits: min(E, T·k) = 32 and 256; uniform: 256·(1 − (31/32)^T): (31/32)^4 = 0.880737 -> 30.531,
    # (31/32)^32 = exp(32·ln 0.96875) = exp(−1.015958) = 0.362055 -> 163.314
    assert list(bal.touched) == pytest.approx([32.0, 256.0])
    assert list(uni.touched) == pytest.approx([30.531, 163.314], rel=1e-4)


def test_implied_hbm_fraction_by_hand():
    bal, _ = script.shape_rows(_table(), "fp8", 8, 1, 7168, 2048, 256, 8, 512)
    # T = 32 reads all 256 experts' per-rank slices: 256 · 3 · 7168 · (2048 / 8) · 1 B = 1,409,286,144 B in
    # 0.4213 ms = 3.3451 TB/s, 0.41814 of 8 TB/s (B200)
    assert script.implied_hbm_fraction(bal, 8e12)[1] == pytest.approx(0.41814, rel=1e-4)


def test_missing_layout_is_named():
    with pytest.raises(ValueError, match="moe_tp 3, moe_ep 1: check the format, shape and layout"):
        script.shape_rows(_table(), "fp8", 3, 1, 7168, 2048, 256, 8, 512)
