"""scripts/mi3xx_step_ledger41.py: the MI325X decode step's terms, the v0.5.19 sweep's implied step and the MI3xx TTFT
pairs (docs/gap_large_batch_decode.md, round 41). Expected values are the published rows
(src/jalapeno/data/validation/inferencex_points.csv) and arithmetic by hand, not the script's output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jalapeno.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import mi3xx_step_ledger41 as s  # noqa: E402


def test_rows_are_the_published_runs():
    r77, r79 = s.points_row(77), s.points_row(79)
    assert (r77["hardware"], r77["conc"], r77["tpot_ms"]) == ("MI325X", "8", "21.56")
    assert (r79["hardware"], r79["conc"], r79["tpot_ms"]) == ("MI325X", "32", "39.45")
    r45, r44 = s.points_row(45), s.points_row(44)
    assert (r45["hardware"], r45["ttft_ms"], r44["hardware"], r44["ttft_ms"]) == ("MI300X", "443.0", "MI325X", "335.7")


def test_implied_step_by_hand():
    # row 79: 39.45 ms less 32 prompts of 267.4 ms spread over 1,024 tokens (8.356 ms) = 31.094 ms
    assert s.implied_step_ms(39.45, 32, 267.4, 1024) == pytest.approx(31.09375)


def test_chip_free_time_of_the_1k_pair_by_hand():
    # rows 35/34: (6.0 / 5.3 x 44.7 - 51.3) / (6.0 / 5.3 - 1) = (50.604 - 51.3) / 0.13208 = -5.27 ms
    assert s.chip_free_allowed_ms(44.7, 51.3) == pytest.approx(-5.27, abs=0.01)


def test_aiter_1930_saving_by_hand():
    before, after = s.AITER_1930_TPOT_MS[8]
    assert before - after == pytest.approx(11.63)


def test_mi325x_per_kernel_fit_names_its_chips():
    systems, k = s.stack_fit_systems("sglang-rocm")
    assert "mi325x" in systems and "mi300x" not in systems
    assert k == pytest.approx(9.5e-6)


def test_ledger_terms_sum_to_the_attribution():
    led = s.ledger("mi325x", 8192, 1024, 8, "sglang-rocm@0.5.19")
    parts = sum(v for k, v in led.items() if k != "step")
    assert parts >= led["step"] * (1 - 1e-9)  # the step is at most the attribution's sum (overlap)
    assert led["per_kernel"] > 0 and led["routed_experts_hbm"] > 0


def test_bad_inputs_name_the_field():
    with pytest.raises(SpecError, match="osl"):
        s.implied_step_ms(20.0, 8, 100.0, 0)
    with pytest.raises(SpecError, match="row_id"):
        s.points_row(1)
    with pytest.raises(SpecError, match="stack"):
        s.stack_fit_systems("no-such-stack")
    with pytest.raises(SpecError, match="ratio"):
        s.chip_free_allowed_ms(1.0, 1.0, ratio=1.0)
