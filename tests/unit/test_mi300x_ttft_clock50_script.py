"""scripts/mi300x_ttft_clock50.py: can MI300X's power-held clock give its slower prompt (docs/gap_large_batch_decode.md,
round 50 mi300xttft50). Expected values are arithmetic by hand and the published rows, not the script's output."""

from __future__ import annotations

import pytest

from jalapeno.cost import roofline
from jalapeno.errors import SpecError
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from script_module import load_script

s = load_script("mi300x_ttft_clock50")


def test_clock_ratio_is_the_maf_clocks():
    # ROCm blog "Measuring Max-Achievable FLOPs - Part 2", Table 1: 1,464 MHz (MI325X) / 1,230 MHz (MI300X) = 1.19024
    assert s.CLOCK_RATIO == pytest.approx(1.19024, abs=1e-5)


def test_prompt_ratio_needed_by_hand():
    # DeepSeek-R1 8k pair: 661.5 / 489.8 ms = 1.35055; less the 216.5 ms front end: 445.0 / 273.3 = 1.62825
    assert s.prefill_ratio_needed(0.6615, 0.4898) == pytest.approx(1.35055, abs=1e-5)
    assert s.prefill_ratio_needed(0.6615, 0.4898, 0.2165) == pytest.approx(1.62825, abs=1e-5)
    # 1k pair: (199.0 - 103.6) / (147.6 - 103.6) = 95.4 / 44.0 = 2.16818
    assert s.prefill_ratio_needed(0.1990, 0.1476, 0.1036) == pytest.approx(2.16818, abs=1e-5)
    with pytest.raises(SpecError, match="fast_s"):
        s.prefill_ratio_needed(0.3, 0.1, 0.1)
    with pytest.raises(SpecError, match="fixed_s"):
        s.prefill_ratio_needed(0.3, 0.2, -0.01)


def test_measured_medians_are_the_shipped_rows():
    points = {p.id.split(":")[-1]: p for p in load_inferencex(DEFAULT_POINTS)[0]}
    for rid, ttft in s.MEASURED.items():
        p = points[str(rid)]
        assert p.system == ("mi300x" if rid in (28, 35, 45) else "mi325x")
        assert p.ttft_median
        assert p.measured["ttft_s"] == pytest.approx(ttft, abs=5e-5)
    for a, b, _ in s.PAIRS:  # a pair is one model, ISL and concurrency on the two chips
        pa, pb = points[str(a)], points[str(b)]
        assert (pa.model, pa.isl, pa.concurrency) == (pb.model, pb.isl, pb.concurrency)
        assert s.FRONT_END[a] == s.FRONT_END[b]


def test_power_clock_context_restores_the_switches():
    before = (roofline.POWER_CLOCK, roofline.DENSE_UTILISATION)
    with s.power_clock(0.1):
        assert roofline.POWER_CLOCK is True and roofline.DENSE_UTILISATION == 0.1
    with pytest.raises(RuntimeError), s.power_clock(0.0):
        raise RuntimeError("boom")
    with s.power_clock(None):
        assert roofline.POWER_CLOCK is False
    assert (roofline.POWER_CLOCK, roofline.DENSE_UTILISATION) == before


def _row(rid, system, split, measured, model, step):
    return {
        "id": str(rid),
        "system": system,
        "split": split,
        "measured": measured,
        "model": model,
        "prefill_step": {"step": step},
    }


def test_summarise_by_hand():
    rows = [
        _row(28, "mi300x", "none", 1.0, 0.9, 0.30),
        _row(26, "mi325x", "none", 1.0, 0.75, 0.25),
        _row(35, "mi300x", "none", 1.0, 1.2, 0.10),
        _row(34, "mi325x", "none", 1.0, 1.0, 0.10),
        _row(45, "mi300x", "none", 1.0, 0.6, 0.12),
        _row(44, "mi325x", "fit", 1.0, 0.5, 0.10),
    ]
    out = s.summarise(rows)
    # TTFT ratios 0.9 / 0.75 = 1.2, 1.2 / 1.0 = 1.2, 0.6 / 0.5 = 1.2; prompts 0.30 / 0.25 = 1.2, 1.0, 1.2
    assert list(out["pairs"].values()) == pytest.approx([1.2, 1.2, 1.2])
    assert list(out["prompts"].values()) == pytest.approx([1.2, 1.0, 1.2])
    # MI300X |errors| 10, 20, 40 % -> median 20; MI325X held out: 25, 0 (row 44 is a fit row) -> 12.5
    assert out["mi300x"] == pytest.approx(20.0)
    assert out["mi325x"] == pytest.approx(12.5)


def test_every_compute_op_at_mi300x_clock_stays_far_below_the_pairs():
    # the upper bound of any clock on the prompt: every compute-bound op of every step at 1,230 / 1,464 of the speed.
    # A lone prompt slows by at most the clock ratio 1.190, and the median TTFT (front end and waits included) by less;
    # the measured pairs are 1.32-1.35
    with s.power_clock(0.0):
        out = s.summarise(s.price_rows())
    for a, b, label in s.PAIRS:
        assert out["prompts"][label] <= s.CLOCK_RATIO + 1e-9
        assert out["pairs"][label] < s.prefill_ratio_needed(s.MEASURED[a], s.MEASURED[b]) - 0.15
