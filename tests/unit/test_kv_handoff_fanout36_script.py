"""scripts/kv_handoff_fanout36.py: the hand-off table and the group figures, worked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

kv = load_script("kv_handoff_fanout36")


def test_dep4_to_tep8_on_b200_by_hand():
    t = kv.handoff_table(systems=("b200",), isls=(8192.0,)).set_index("layout")
    # 8 copies of 8,192 x 35,136 B (DeepSeek-R1 FP8 KV) through one 50 GB/s NIC at the 0.80 scale-out fraction
    assert t.loc["DEP4 -> TEP8", "copies"] == 8.0
    assert t.loc["DEP4 -> TEP8", "fanout_ms"] == pytest.approx(1e3 * 8 * 8192 * 35_136 / 40e9, rel=0.03)
    # the spread it replaces: one copy over min(4, 8) lanes
    assert t.loc["DEP4 -> TEP8", "spread_ms"] == pytest.approx(1e3 * 8192 * 35_136 / 4 / 40e9, rel=0.10)
    # TP8 prefill -> attention-DP decode: one of the eight duplicates sends, one copy
    assert t.loc["TP8 -> DEP8", "copies"] == 1.0


def test_group_errors_on_a_toy_frame():
    base = dict(metric="ttft_s", mode="disagg", framework="trtllm 0.8.1.post2", source="aiconfigurator",
                system="b200", quality=np.nan)
    before = pd.DataFrame([dict(base, id="a", split="fit", error=-0.2), dict(base, id="b", split="held_out", error=-0.1),
                           dict(base, id="c", split="held_out", error=0.3, framework="sglang 0.5.9")])
    after = before.assign(error=[-0.1, -0.05, 0.3])
    g = kv.group_errors(before, after, held_out=False).set_index("group").loc["aiconfigurator B200"]
    # rows a and b (c is SGLang): |error| medians 15% -> 7.5%, biases -15% -> -7.5%
    assert (g.n, g.moved) == (2, 2)
    assert (g.med_before, g.bias_before, g.med_after, g.bias_after) == pytest.approx((15.0, -15.0, 7.5, -7.5))
    h = kv.group_errors(before, after, held_out=True).set_index("group").loc["aiconfigurator B200"]
    assert h.n == 1 and h.med_after == pytest.approx(5.0)
