"""scripts/ix_mi300x_ttft_split35.py: the gap line through two ISLs, checked against a hand-built pair of rows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ix_mi300x_ttft_split35.py"


def test_gap_line_intercept_and_slope(tmp_path, capsys):
    # By hand: gaps 0.0255 + 16e-6·ISL → ISL 1024: 0.041884 s, ISL 8192: 0.1565720 s; predicted 0.1 and 0.3 s.
    rows = [
        dict(source="inferencex", system="mi300x", metric="ttft_s", id="a", model="m", framework="vllm",
             deployment="TP1", stack="s", isl=isl, osl=1024, concurrency=64.0, predicted=pr,
             measured=pr + 0.0255 + 16e-6 * isl, error=pr / (pr + 0.0255 + 16e-6 * isl) - 1)
        for isl, pr in ((1024, 0.1), (8192, 0.3))
    ]
    path = tmp_path / "v.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    spec = importlib.util.spec_from_file_location("split35", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(str(path))
    out = capsys.readouterr().out
    assert "gap = +25.5 ms +16.00 µs/token × ISL" in out
