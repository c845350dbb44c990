"""scripts/gb_ttft_mix35.py: the held-out filter and the like-for-like medians, worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

mix = load_script("gb_ttft_mix35")


def _row(system, model, mode, error, split="held_out", quality=None, metric="ttft_s"):
    return {"source": "aiconfigurator", "system": system, "model": model, "mode": mode, "metric": metric,
            "error": error, "split": split, "quality": quality}


def test_mix_not_system_sets_the_median(tmp_path):
    # b200: three easy agg rows (|e| 0.05) and two DeepSeek-R1 rows (|e| 0.30, 0.40): all-rows median 0.05,
    # DeepSeek-R1 median (0.30 + 0.40) / 2 = 0.35; gb200: DeepSeek-R1 rows 0.20, 0.30: median 0.25
    rows = [_row("b200", "llama-3.3-70b", "agg", 0.05)] * 3 + [
        _row("b200", "deepseek-r1", "agg", -0.30), _row("b200", "deepseek-r1", "disagg", 0.40),
        _row("gb200-nvl72", "deepseek-r1", "disagg", 0.20), _row("gb200-nvl72", "deepseek-r1", "disagg", -0.30),
        _row("gb200-nvl72", "deepseek-r1", "disagg", 0.9, split="fit"),
        _row("gb200-nvl72", "deepseek-r1", "disagg", 0.9, quality="flagged"),
        _row("gb200-nvl72", "deepseek-r1", "disagg", 0.9, metric="tpot_s")]
    p = tmp_path / "v.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    s = mix.summary(mix.held_out(str(p)))
    assert s.loc[("b200", "all"), "median"] == pytest.approx(0.05)
    assert s.loc[("b200", "deepseek-r1"), "median"] == pytest.approx(0.35)
    assert s.loc[("gb200-nvl72", "deepseek-r1"), "n"] == 2  # fit, flagged and TPOT rows dropped
    assert s.loc[("gb200-nvl72", "deepseek-r1"), "median"] == pytest.approx(0.25)


def test_missing_column_names_the_fix(tmp_path):
    p = tmp_path / "v.csv"
    pd.DataFrame([{"source": "aiconfigurator", "error": 0.1}]).to_csv(p, index=False)
    with pytest.raises(SystemExit, match="missing column.*--held-out"):
        mix.held_out(str(p))
