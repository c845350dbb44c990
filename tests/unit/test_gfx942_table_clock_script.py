"""scripts/gfx942_table_clock.py: the gfx942 table families' provenance, the per-CU speed of two aiter parts' rows,
the per-family clock overrides and the readings' switch handling (issue 18, round 42)."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

import jalapeno.cost.roofline as roofline
import jalapeno.fit.table_lookup as table_lookup

tc = load_script("gfx942_table_clock")

#: 1,464 / 1,230 MHz (ROCm blog "Measuring Max-Achievable FLOPs - Part 2", Table 1: MI325X / MI300X FP8 MAF clocks)
CLOCK = 1464.0 / 1230.0


def test_families_cite_the_commits_that_timed_them():
    by = {f.source.split()[1]: f.timed_on for f in tc.FAMILIES if f.source.startswith("ROCm/aiter ")}
    # PR #365 "add config for 300", PR #3188 "Tested on MI300X", PR #3951 "gfx942 MI325X"
    assert by == {"1e8ac92007": "mi300x", "04427a5d8f": "mi300x", "84493f0e5b": "mi325x"}
    assert {f.timed_on for f in tc.FAMILIES} == {"mi300x", "mi325x", "mi355x", "h200"}


def test_per_cu_speed_by_hand():
    rows = pd.DataFrame(
        {
            "cu_num": [304, 80, 304, 80, 304, 80],
            "M": [8192, 8192, 16384, 16384, 16, 16],
            "N": [7168] * 6,
            "K": [2048] * 6,
            # 3x and 3.2x apart at M >= 8192; the M = 16 pair (10x) is not compute-bound and is left out
            "us": [100.0, 300.0, 200.0, 640.0, 1.0, 10.0],
        }
    )
    speed, n = tc.per_cu_speed(rows)
    # median(3.0, 3.2) = 3.1 times faster with 304 / 80 = 3.8x the CUs: 3.1 / 3.8 per CU
    assert n == 2
    assert speed == pytest.approx(3.1 / 3.8, rel=1e-12)
    with pytest.raises(ValueError, match="M >= 8192"):
        tc.per_cu_speed(rows[rows.M < 8192])


def test_provenance_scales_mi325x_mi300x_timed_families_by_the_clock_ratio():
    assert tc.provenance_overrides("mi300x") == ()  # the chip that timed them
    got = dict(tc.provenance_overrides("mi325x"))
    # data/calibration/mi325x.toml: fp8_block 0.24328483, fp8 0.44350143; MLA decode 367 / 2,614.9 (PR #3188)
    assert got["efficiency.gemm.fp8_block.peak_fraction"] == pytest.approx(0.24328483 * CLOCK, rel=1e-6)
    assert got["efficiency.gemm.fp8.peak_fraction"] == pytest.approx(0.44350143 * CLOCK, rel=1e-6)
    for f in ("fp8", "bf16"):
        assert got[f"efficiency.mla_decode.{f}.peak_fraction"] == pytest.approx(367.0 / 2614.9 * CLOCK, rel=1e-6)
    # dense_only: 0.2433 and 0.1403 are below DENSE_UTILISATION 0.25, 0.4435 above it
    assert dict(tc.provenance_overrides("mi325x", dense_only=True)) == {
        "efficiency.gemm.fp8.peak_fraction": pytest.approx(0.44350143 * CLOCK, rel=1e-6)
    }


def test_reading_switches_and_restores():
    before = (table_lookup.load_any_pricer, roofline.POWER_CLOCK)
    with tc.reading("burst"):
        assert roofline.POWER_CLOCK is True
    with tc.reading("provenance"):
        assert table_lookup.load_any_pricer is not before[0]
        assert roofline.POWER_CLOCK is False
    assert (table_lookup.load_any_pricer, roofline.POWER_CLOCK) == before
    with pytest.raises(ValueError, match="reading 'sustained'"), tc.reading("sustained"):
        pass
