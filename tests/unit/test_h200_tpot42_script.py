"""scripts/h200_tpot42.py: the implied decode step, the bias's median and the per-release grouping of the InferenceX
H200 rows (docs/gap_aic_itl.md, round 42). Expected values by hand from hand-made rows, not the script's output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jalapeno.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import h200_tpot42 as h  # noqa: E402


def test_implied_step_takes_out_each_users_prompt_once_per_osl():
    # v0.5.12 1k/1k C = 32: 21.80 ms TPOT, a 50 ms prompt per user every 1,024 tokens: 21.80 - 32 x 50 / 1024
    assert h.implied_step_ms(21.80, 32, 50.0, 1024) == pytest.approx(21.80 - 1.5625)
    with pytest.raises(SpecError, match="osl"):
        h.implied_step_ms(21.8, 32, 50.0, 0)


def test_median_signed_is_the_mean_of_the_middle_pair():
    assert h.median_signed([-17.4, -13.8, -9.6, -6.4, -5.8, -2.5, 6.1, 8.6]) == pytest.approx(-6.1)
    with pytest.raises(SpecError):
        h.median_signed([])


def _row(rid, metric, err, split="fit", system="h200", source="inferencex", quality=""):
    return {
        "source": source,
        "system": system,
        "id": f"inferencex_points:{rid}",
        "metric": metric,
        "error": str(err),
        "model": "deepseek-r1",
        "framework": "sglang",
        "split": split,
        "isl": "1024",
        "concurrency": "32.0",
        "quality": quality,
    }


def test_rows_carry_release_and_group_by_split():
    rows = [
        _row(59, "tpot_s", 0.068, "held_out"),
        _row(59, "interactivity", -0.064, "held_out"),
        _row(83, "tpot_s", -0.09),
        _row(57, "tpot_s", 0.064),
        _row(90, "tpot_s", 0.5, system="b200"),
        _row(91, "tpot_s", 0.5, quality="flagged"),
    ]
    table = h.ix_rows(
        rows, {"inferencex_points:59": "0.5.12", "inferencex_points:57": "0.5.12", "inferencex_points:83": "0.5.7"}
    )
    assert sorted((d["row"], d["release"]) for d in table) == [(57, "v0.5.12"), (59, "v0.5.12"), (83, "v0.5.7")]
    g = h.release_groups(table)
    assert g[("v0.5.12", "held out")] == pytest.approx([6.8])
    assert g[("v0.5.12", "fit")] == pytest.approx([6.4])
    assert g[("v0.5.7", "fit")] == pytest.approx([-9.0])
