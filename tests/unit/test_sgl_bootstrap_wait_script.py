"""scripts/sgl_bootstrap_wait.py: the handshake's decode steps, pool sizes and the what-if, by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

sb = load_script("sgl_bootstrap_wait")

DEP = "disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]"


def test_loop_steps_from_the_source():
    # ½ step at the pre-allocation poll + ½ at the transfer poll + 1 prebuilt iteration = 2; the model holds ½
    assert sb.LOOP_STEPS_SOURCE == 2.0 and sb.LOOP_STEPS_MODEL == 0.5
    assert sb.EXTRA_STEPS_HIGH == 1.5 and sb.EXTRA_STEPS_LOW == 0.5
    # a 12 ms decode step: 18 ms (upper), 6 ms (lower)
    assert sb.extra_s(0.012) == pytest.approx(0.018)
    assert sb.extra_s(0.012, sb.EXTRA_STEPS_LOW) == pytest.approx(0.006)
    assert sb.extra_s([0.01, 0.02]).tolist() == pytest.approx([0.015, 0.03])
    with pytest.raises(ValueError, match="steps: -1"):
        sb.extra_s(0.01, -1)


def test_pool_gpus_by_hand():
    assert sb.pool_gpus(DEP) == 16  # 4 workers x TP1 x DP4
    assert sb.pool_gpus(DEP, "D") == 32
    assert sb.pool_gpus("disagg P 1x(attn TP4 DP1 · MoE TP4 EP1) + D 4x(attn TP4 DP1 · MoE TP4 EP1) [fp4]") == 4
    with pytest.raises(ValueError, match="no P pool"):
        sb.pool_gpus("agg 1x(attn TP8 DP1)")


def _csv(tmp_path, rows):
    recs = []
    for i, (c, meas, pred, tau) in enumerate(rows):
        base = dict(source="aiconfigurator", id=f"r{i}", system="gb200-nvl72", framework="sglang 0.5.8",
                    precision="fp4", stack="sglang", mode="disagg", concurrency=c, deployment=DEP, quality=None)
        recs.append({**base, "metric": "ttft_s", "measured": meas, "predicted": pred, "error": pred / meas - 1})
        recs.append({**base, "metric": "tpot_s", "measured": tau, "predicted": tau, "error": 0.0})
    p = tmp_path / "v.csv"
    pd.DataFrame(recs).to_csv(p, index=False)
    return str(p)


def test_whatif_adds_the_steps_to_each_row(tmp_path):
    # two rows: C = 8 (0.5 users a prefill GPU) measured 0.30 s, predicted 0.20, τ = 10 ms; C = 4,096 (256 a GPU)
    # measured 2.0, predicted 2.5, τ = 20 ms. +1.5 steps: 0.215 / 0.30 − 1 = −28.3%, 2.53 / 2.0 − 1 = +26.5%
    t = sb.sglang_rows(_csv(tmp_path, [(8, 0.30, 0.20, 0.010), (4096, 2.0, 2.5, 0.020)]))
    assert t["load"].tolist() == [0.5, 256.0]
    s = sb.summarise(t, sb.EXTRA_STEPS_HIGH).iloc[0]
    assert s["n"] == 2
    assert s["med"] == pytest.approx(100 * (1 / 3 + 0.25) / 2, abs=0.05)  # |−33.3| and |+25.0|
    assert s["med_after"] == pytest.approx(100 * (0.28333 + 0.265) / 2, abs=0.05)  # |−28.3| and |+26.5|
    assert s["bias_after"] == pytest.approx(100 * (-0.28333 + 0.265) / 2, abs=0.05)
    # the low-load share: only the under-predicted C = 8 row, gap 100 ms, extra 15 ms -> 15%
    g = sb.gap_share(t).iloc[0]
    assert (g["n"], g["gap_ms"], g["extra_ms"], g["share_pct"]) == (1, 100.0, 15.0, 15.0)
