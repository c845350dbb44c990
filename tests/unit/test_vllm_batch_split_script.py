"""scripts/vllm_batch_split.py: the concurrency-band table, the per-user slopes and the GEMM interpolation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

split = load_script("vllm_batch_split")

COLS = ["source", "id", "system", "model", "precision", "framework", "mapping", "deployment", "isl", "osl",
        "concurrency", "metric", "measured", "predicted"]
LAY = "agg attn TP2 DP1 · MoE TP2 EP1 [fp4]"


def _csv(tmp_path, rows) -> str:
    p = tmp_path / "v.csv"
    pd.DataFrame(rows, columns=COLS).to_csv(p, index=False)
    return str(p)


def test_bands_average_error_and_deficit_by_hand(tmp_path):
    def row(rid, metric="tpot_s", measured=0.020, predicted=0.001, conc=256, source="aiconfigurator", model="minimax-m2.5",
            framework="vllm 0.19.0", mapping="matched"):
        return (source, rid, "b200", model, "fp4", framework, mapping, LAY, 1024, 1024, conc, metric, measured, predicted)

    rows = [  # two vLLM rows in C 129-256: errors 0.015/0.020 - 1 = -0.25 and 0.018/0.020 - 1 = -0.10
        row("a", predicted=0.015), row("b", conc=200, predicted=0.018),
        # left out: another metric, an unmatched row, InferenceX, SGLang, another model
        row("c", metric="ttft_s", measured=0.5, predicted=0.1), row("d", mapping="searched"),
        row("e", source="inferencex"), row("f", framework="sglang 0.5"), row("g", model="qwen3"),
    ]
    t = split.band_table(_csv(tmp_path, rows), ["minimax-m2.5"])
    assert list(t.columns) == ["C129-256"]
    # mean error (-0.25 - 0.10) / 2 = -17.5% (printed to a whole percent, -17 or -18 by float rounding),
    # mean deficit (5 + 2) / 2 = 3.5 ms
    cell = t.loc[("minimax-m2.5", "vllm", "b200", "1024/1024"), "C129-256"]
    assert cell in ("-18% (+3.5)", "-17% (+3.5)")


def test_slopes_per_added_user_by_hand(tmp_path):
    rows = [(("aiconfigurator", str(c), "b200", "minimax-m2.5", "fp4", "vllm 0.19.0", "matched", LAY, 1024, 1024, c,
              "tpot_s", m, p)) for c, m, p in ((32, 0.010, 0.010), (64, 0.012, 0.011), (128, 0.016, 0.013),
                                               (128, 0.018, 0.013), (256, 0.025, 0.016))]
    s = split.slope_table(_csv(tmp_path, rows))
    # C 32 is below the first band; the two C 128 rows average to 17 ms measured
    assert list(s.C) == ["64-128", "128-256"]
    # 64 -> 128: (17 - 12) ms / 64 users = 78.1 µs measured, (13 - 11) / 64 = 31.2 µs predicted; deficit 4 ms
    # 128 -> 256: (25 - 17) / 128 = 62.5 µs (to_string rounding aside), (16 - 13) / 128 = 23.4 µs; deficit 9 ms
    assert s.meas_us_per_user.tolist() == pytest.approx([78.1, 62.5], abs=0.051)
    assert s.pred_us_per_user.tolist() == pytest.approx([31.2, 23.4], abs=0.051)
    assert s.deficit_ms.tolist() == pytest.approx([4.0, 9.0])


def test_lookup_interpolates_in_logs_and_falls_back_to_nearest():
    # latency = 1e-6 * n * k on a 2 x 2 grid is linear in (log n, log k) once logged: exact inside the hull
    g = pd.DataFrame([(n, k, 1e-6 * n * k) for n in (1024, 4096) for k in (1024, 4096)], columns=["n", "k", "latency"])
    at = split._lookup(g)
    assert at(2048, 2048) == pytest.approx(1e-6 * 2048 * 2048, rel=1e-9)
    # outside the hull: the nearest measured row (4096, 4096)
    assert at(65536, 65536) == pytest.approx(1e-6 * 4096 * 4096)
    assert np.isfinite(at(1024, 4096))
