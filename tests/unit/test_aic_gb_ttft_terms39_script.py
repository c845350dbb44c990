"""scripts/aic_gb_ttft_terms39.py: the band, κ, ρ, the line fit, the decaying share and its grid fit, worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

tt = load_script("aic_gb_ttft_terms39")


def test_band_edges():
    assert [tt.band(c) for c in (1, 8, 9, 64, 65, 8192)] == ["lo", "lo", "mid", "mid", "hi", "hi"]


def test_kappa_by_hand():
    # TTFT 0.5 s, 1,024 tokens out at 10 ms: the decode half is 1,023 x 0.01 = 10.23 s, kappa = 1 + 10.23 / 0.5
    assert tt.kappa(0.5, 0.01, 1024) == pytest.approx(21.46)


def test_rho_by_hand():
    # 64 users, cycle 1 + 999 x 0.01 = 10.99 s: 5.8235 req/s x 900 tokens = 5,241 tokens/s over a 10,000 tokens/s pool
    assert tt.rho(64, 1.0, 0.01, 1000, 900, 10_000.0) == pytest.approx(64 / 10.99 * 900 / 10_000)
    assert tt.rho(64, 1.0, 0.01, 1000, 900, 10_000.0) == pytest.approx(0.5241, abs=1e-4)


def test_fit_line_by_hand_and_degenerate():
    a, s = tt.fit_line([4, 8, 16], [0.3, 0.5, 0.9])  # exactly 0.1 + 0.05 c
    assert (a, s) == (pytest.approx(0.1), pytest.approx(0.05))
    a, s = tt.fit_line([8, 8], [0.2, 0.4])  # one distinct load: no slope
    assert math.isnan(s)


def test_decay_share_halves_at_x0():
    assert float(tt.decay_share(0.0, 0.8, 0.05)) == pytest.approx(0.8)
    assert float(tt.decay_share(0.05, 0.8, 0.05)) == pytest.approx(0.4)
    assert float(tt.decay_share(0.15, 0.8, 0.05)) == pytest.approx(0.2)


def test_fit_decay_recovers_a_share_on_its_grid():
    # measured = steady + w(x) late with w0 = 0.5 (on the grid 0.05 + k * 0.05) and x0 = 0.1 (10^(-1), on the
    # geometric grid 1e-3 .. 10, 41 points: 10 per decade); the fit must return them
    x = np.array([0.01, 0.05, 0.1, 0.3, 1.0, 3.0])
    steady, late = np.full(6, 0.2), np.array([0.05, 0.2, 0.5, 2.0, 5.0, 20.0])
    w = 0.5 / (1 + x / 0.1)
    w0, x0 = tt.fit_decay(x, steady, late, steady + w * late)
    assert (w0, x0) == (pytest.approx(0.5), pytest.approx(0.1))


def test_table_refuses_a_table_without_split(tmp_path):
    p = tmp_path / "v.csv"
    pd.DataFrame({"source": ["aiconfigurator"], "id": ["x"]}).to_csv(p, index=False)
    with pytest.raises(SystemExit, match="missing column.*jalapeno validate --json"):
        tt.table(str(p))
