"""scripts/sgl_admission_lag38b.py: the what-if switches the lag on for the named profiles only, and its figures and
goal checks on a hand-made pair of validate frames (docs/gap_aic_ttft.md, round 38 sgllag38)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import sgl_admission_lag38b as w  # noqa: E402


def test_with_lag_sets_the_named_profiles_only(monkeypatch):
    import jalapeno.specs.stacks as st

    monkeypatch.setattr(st, "build_stacks", st.build_stacks)  # restored after the test
    st.load_stacks.cache_clear()
    try:
        w.with_lag(("sglang-rocm",), steps=2.0)
        assert st.get_stack("sglang-rocm").admission_lag_steps == 2.0
        assert st.get_stack("sglang").admission_lag_steps == 1.0  # untouched: the shipped value
    finally:
        monkeypatch.undo()
        st.load_stacks.cache_clear()
    # shipped (round 40, frontend40): the CUDA profile carries SGLang's one-step lag, the ROCm one none
    assert st.get_stack("sglang").admission_lag_steps == 1.0
    assert st.get_stack("sglang-rocm").admission_lag_steps is None


def test_stats_and_goal_misses_by_hand():
    # errors +10%, −30%, +5%: median |e| 10%, median e +5%
    n, med, p90, bias = w.stats(pd.Series([0.10, -0.30, 0.05]))
    assert (n, med, bias) == (3, pytest.approx(0.10), pytest.approx(0.05))
    assert w.misses("ttft_s", (3, 0.21, 0.9, -0.3)) == "med"  # TTFT: the median goal only (20%)
    assert w.misses("interactivity", (3, 0.05, 0.30, -0.06)) == "p90,bias"


def test_compare_reports_the_groups_that_move():
    base = pd.DataFrame({"source": ["inferencex"] * 2, "id": ["a", "b"], "metric": ["ttft_s"] * 2,
                         "system": ["h200"] * 2, "split": ["held_out", "fit"], "quality": [None, None],
                         "predicted": [0.8, 1.0], "error": [-0.2, 0.0]})
    after = base.assign(predicted=[0.9, 1.1], error=[-0.1, 0.1])
    text = "\n".join(w.compare(base, after))
    # held out: row a alone, −20% → −10%: the median goal met after, missed before
    held = text.split("## held out")[1]
    assert "20.0 /  20.0 / -20.0 []  ->   10.0 /  10.0 / -10.0 []" in held
