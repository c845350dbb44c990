"""scripts/h200_adp_prompt_cost40.py (docs/gap_aic_itl.md, "round 40, h200int40"): Little's law, the
acceptance-free decode share, the per-rank prompt cost and the slots-full release size, each against a hand figure."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import h200_adp_prompt_cost40 as s  # noqa: E402


def test_littles_law_by_hand():
    # D = 1023 x 0.1 = 102.3 s; N = 100 x 102.3 / 104.3; λ = 100 / 104.3
    n, lam = s.residents_rate(100, 2.0, 0.1)
    assert n == pytest.approx(100 * 102.3 / 104.3)
    assert lam == pytest.approx(100 / 104.3)


def test_decode_share_cancels_the_acceptance():
    # the twin's decode step is TPOT_twin·(1 + a), the row decodes (1/TPOT_row)/(1 + a) steps a second: a drops out
    for a in (0.0, 0.5, 0.9):
        d_twin = 0.03 * (1 + a)
        share_by_steps = (1 / 0.1) / (1 + a) * d_twin * 1.1
        assert s.decode_share(0.03, 0.1, 1.1, 0.0) == pytest.approx(share_by_steps)
    assert s.decode_share(0.03, 0.1, 1.0, 0.5) == pytest.approx(0.15)  # half the twin's time was prompts


def test_per_rank_prompt_by_hand():
    # 60% of the time in prompts, 0.8 requests/s over 8 ranks = 0.1 a rank: 6 s a prompt
    assert s.per_rank_prompt_s(0.4, 0.8) == pytest.approx(6.0)


def test_release_prompts_full_limits_and_a_value():
    assert s.release_prompts_full(0.0) == 1.0
    assert s.release_prompts_full(100.0) == pytest.approx(8.0)
    # dp = 2, aT = 2: 2·(1 − e^−1)/(1 − e^−2)
    assert s.release_prompts_full(2.0 / 60, dp=2) == pytest.approx(2 * (1 - math.exp(-1)) / (1 - math.exp(-2)))
    # fewer than least-loaded dispatch would carry (min(N, dp) given N ≥ 1) at aT ≈ dp
    assert s.release_prompts_full(8.0 / 60) < 6.9


def test_missing_rows_is_one_clear_error(tmp_path, capsys):
    p = tmp_path / "v.csv"
    p.write_text("source,id,metric,measured,predicted\n")
    assert s.main([str(p)]) == 2
    err = capsys.readouterr().err
    assert "inferencex_points:25" in err and "fix:" in err
