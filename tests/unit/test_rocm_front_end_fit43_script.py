"""scripts/rocm_front_end_fit43.py: the gfx942 SGLang-ROCm TTFT filter, the excess readings and the fit rule, by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

rf = load_script("rocm_front_end_fit43")


def _row(i, system, stack, isl, c, split, measured, predicted, metric="ttft_s", source="inferencex"):
    return {
        "source": source,
        "id": f"inferencex_points:{i}",
        "system": system,
        "stack": stack,
        "metric": metric,
        "isl": isl,
        "concurrency": c,
        "measured": measured,
        "predicted": predicted,
        "split": split,
    }


def _table():
    return pd.DataFrame(
        [
            _row(1, "mi325x", "sglang-rocm@0.5.19", 8192, 4.0, "fit", 1.0, 0.8),
            _row(2, "mi325x", "sglang-rocm@0.5.19", 8192, 8.0, "held_out", 1.0, 0.9),
            _row(3, "mi355x", "sglang-rocm@0.5.19", 8192, 4.0, "fit", 1.0, 0.8),  # gfx950: out
            _row(4, "mi325x", "vllm-rocm@0.9", 8192, 4.0, "fit", 1.0, 0.8),  # other stack: out
            _row(5, "mi325x", "sglang-rocm@0.5.19", 8192, 4.0, "fit", 0.02, 0.02, metric="tpot_s"),  # not TTFT: out
        ]
    )


def test_excess_and_its_two_one_off_readings():
    rows = rf.ttft_rows(_table())
    assert list(rows.id) == ["inferencex_points:1", "inferencex_points:2"]
    first = rows.iloc[0]
    assert first.release == "0.5.19"
    assert first.excess_s == pytest.approx(0.2)  # 1.0 − 0.8 s
    assert first.per_run_s == pytest.approx(0.2 * 4 * 10)  # one request of C × 10 carries it all: 8 s
    assert first.stall_s == pytest.approx(2.0)  # C of C × 10 requests wait it: 0.2 × 10


def test_one_low_load_row_allows_no_fit_and_four_over_two_isls_do():
    verdict = rf.fit_verdict(rf.ttft_rows(_table()))
    assert verdict.low_fit.tolist() == [1]  # row 2 is held out, C 8 > 4
    assert not verdict.fit_allowed.iloc[0]
    four = pd.DataFrame(
        [
            _row(i, "mi300x", "sglang-rocm@0.5.9", isl, c, "fit", 0.3, 0.2)
            for i, (isl, c) in enumerate([(1024, 1.0), (1024, 4.0), (8192, 1.0), (8192, 4.0)])
        ]
    )
    assert bool(rf.fit_verdict(rf.ttft_rows(four)).fit_allowed.iloc[0])
    one_isl = four.assign(isl=1024)
    assert not bool(rf.fit_verdict(rf.ttft_rows(one_isl)).fit_allowed.iloc[0])


def test_missing_column_names_it():
    with pytest.raises(KeyError, match="split"):
        rf.ttft_rows(_table().drop(columns="split"))
