"""scripts/gb_ttft_twins38.py: the pool parse, the twin key, the log-log interpolation, the ISL split and the twin
ratios, worked by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from script_module import load_script

tw = load_script("gb_ttft_twins38")

DEP4_TEP8 = "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]"


def test_pools_read_workers_and_layouts():
    got = tw.pools("disagg P 2x(attn TP1 DP8 · MoE TP1 EP8) + D 1x(attn TP1 DP32 · MoE TP1 EP32 · DP dispatch random) [fp8]")
    assert got == {"P": (2, "attn TP1 DP8 · MoE TP1 EP8"), "D": (1, "attn TP1 DP32 · MoE TP1 EP32")}


def test_pools_refuse_an_aggregated_label():
    with pytest.raises(ValueError, match="no 'P Nx.*disaggregated rows only"):
        tw.pools("agg attn TP8 DP1 · MoE TP1 EP8 [fp4]")


def test_loglog_at_by_hand():
    # y = x^2 through (1, 1) and (10, 100): log-log linear, so at x = 3, y = 9
    assert tw.loglog_at(3.0, [1.0, 10.0], [1.0, 100.0]) == pytest.approx(9.0)
    # flat past the end, within reach (x <= 10 * 1.3): y(12) = 100
    assert tw.loglog_at(12.0, [1.0, 10.0], [1.0, 100.0]) == pytest.approx(100.0)
    assert math.isnan(tw.loglog_at(14.0, [1.0, 10.0], [1.0, 100.0]))  # beyond 13
    assert math.isnan(tw.loglog_at(1.0, [], []))


def test_isl_split_by_hand():
    # a + 1000 b = 0.05 and a + 9000 b = -0.35: b = -0.4 / 8000 = -50 us a token, a = 0.05 + 0.05 = 0.10 s
    a, b = tw.isl_split(1000, 0.05, 9000, -0.35)
    assert b == pytest.approx(-50e-6)
    assert a == pytest.approx(0.10)


def _row(system, conc, measured, predicted, dep=DEP4_TEP8, isl=1024, split="held_out", quality=None, rid=None):
    return {"source": "aiconfigurator", "id": rid or f"aic:{system}_c{conc}_cfg1", "system": system,
            "metric": "ttft_s", "mode": "disagg", "model": "deepseek-r1", "framework": "trtllm 0.8.1.post2",
            "precision": "fp4", "isl": isl, "osl": 1024, "concurrency": conc, "deployment": dep, "measured": measured,
            "predicted": predicted, "error": predicted / measured - 1, "split": split, "quality": quality}


def test_twin_ratios_by_hand(tmp_path):
    # B200 twin at loads 10 and 40 (one prefill worker): measured 0.2 and 0.8 (slope 1 in log-log), predicted 0.2 and 0.8
    # too; the GB200 row at load 20 measures 0.5 and is predicted 0.36. The twin at load 20: 0.2 * 2 = 0.4 measured and
    # predicted, so m = 0.5 / 0.4 = 1.25, p = 0.36 / 0.4 = 0.9, the twin's own error 0.
    rows = [_row("b200", 10, 0.2, 0.2, split="fit"), _row("b200", 40, 0.8, 0.8),
            _row("gb200-nvl72", 20, 0.5, 0.36),
            _row("gb200-nvl72", 20, 0.5, 0.36, isl=8192, rid="aic:other_isl"),  # no twin at ISL 8192
            _row("b200", 20, 9.0, 1.0, quality="flagged", rid="aic:flagged"),  # flagged: not a twin point
            _row("gb200-nvl72", 20, 0.5, 0.36, dep=DEP4_TEP8.replace("D 4x(attn TP8 DP1", "D 4x(attn TP4 DP1"),
                 rid="aic:other_decode")]
    p = tmp_path / "v.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    d = tw.ttft_table(str(p))
    t = tw.twins(d)
    assert list(t.id) == ["aic:gb200-nvl72_c20_cfg1"]
    r = t.iloc[0]
    assert r.twin_meas == pytest.approx(0.4)
    assert r.m == pytest.approx(1.25)
    assert r.p == pytest.approx(0.9)
    assert r.twin_err == pytest.approx(0.0)
    # prefill-only twins also match the row whose decode workers run attention TP4
    assert set(tw.twins(d, prefill_only=True).id) == {"aic:gb200-nvl72_c20_cfg1", "aic:other_decode"}


def test_missing_column_names_the_fix(tmp_path):
    p = tmp_path / "v.csv"
    pd.DataFrame([{"source": "aiconfigurator", "error": 0.1}]).to_csv(p, index=False)
    with pytest.raises(SystemExit, match="missing column.*jalapeno validate --json"):
        tw.ttft_table(str(p))
