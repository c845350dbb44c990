"""fit/amd's per-family table clock (round 42, amdpair42): each gfx942 table family priced at the clock of the chip
being priced over the clock of the board that timed it. Expected values by hand from AMD's MAF clocks (1,230 MHz
MI300X, 1,464 MHz MI325X: 1464 / 1230 = 1.19024, 1230 / 1464 = 0.84016)."""

from __future__ import annotations

import pytest

from jalapeno.fit import amd


@pytest.mark.parametrize(
    ("family", "chip", "want"),
    [
        ("gemm.fp8_block", "mi325x", 1464 / 1230),  # MI300X-timed rows on the faster-clocked MI325X
        ("gemm.fp8_block", "mi300x", 1.0),  # priced on the board that timed them
        ("mla_decode.bf16", "mi325x", 1464 / 1230),
        ("moe.fp8_block", "mi300x", 1230 / 1464),  # MI325X-timed fused-MoE rows on MI300X
        ("moe.fp8_block", "mi325x", 1.0),
        ("moe.fp8", "mi325x", 1.0),  # the MI355X lend: no sourced lender clock
        ("gemm.fp8_block", "mi355x", 1.0),  # a chip without a sourced sustained clock
    ],
)
def test_table_clock_ratio(family, chip, want):
    assert amd.table_clock_ratio(family, chip) == pytest.approx(want, rel=1e-9)


def test_apply_table_clock_scales_compute_only_and_caps():
    params = {
        "gemm.fp8_block.peak_fraction": 0.25,
        "gemm.fp8_block.hbm_fraction": 0.37,
        "gemm.fp8.peak_fraction": 0.9,
        "kernel_launch_s": 3.7e-6,
        "moe.fp8_block.hbm_fraction": 0.735,
        "attention_peak_fraction": 0.47,
    }
    report = {}
    amd.apply_table_clock(params, report, "mi325x")
    assert params["gemm.fp8_block.peak_fraction"] == pytest.approx(0.25 * 1.190244, rel=1e-6)
    assert params["gemm.fp8.peak_fraction"] == 1.0  # 0.9 x 1.19 = 1.07, capped at the peak
    # HBM fractions, the kernel floor and the H200-derived families carry no clock
    assert (params["gemm.fp8_block.hbm_fraction"], params["kernel_launch_s"]) == (0.37, 3.7e-6)
    assert (params["moe.fp8_block.hbm_fraction"], params["attention_peak_fraction"]) == (0.735, 0.47)
    assert set(report["table_clock"]["families"]) == {"gemm.fp8_block", "gemm.fp8"}
    p300 = {"moe.fp8_block.peak_fraction": 0.381, "gemm.fp8_block.peak_fraction": 0.25}
    amd.apply_table_clock(p300, {}, "mi300x")
    assert p300 == pytest.approx(
        {"moe.fp8_block.peak_fraction": 0.381 * 0.840164, "gemm.fp8_block.peak_fraction": 0.25}, rel=1e-6
    )


def test_gfx942_expert_hbm_is_the_mi325x_rows_fraction():
    pytest.importorskip("scipy")
    got = amd.gfx942_expert_hbm()["moe.fp8_block.hbm_fraction"]
    # aiter PR #3951's rows run 4.00-4.09 TB/s on MI325X's 6.0 TB/s (0.67-0.68); the fit's fraction is above that
    # (it carries a fixed floor): between the rows' rate and the HBM
    assert 0.66 < got < 0.80


def test_clocked_sets_carry_the_padded_decode_with_the_experts():
    pytest.importorskip("scipy")
    got = amd.gfx942_clock_params()
    # the rows' kernel, mla_a16w8_qh16_m16x4_n16x1_coex0_mask1_ps: 16 heads x 4 query rows per sequence
    assert got["mla_decode_tile_rows"] == 16 * 4
    assert set(got) == {"moe.fp8_block.hbm_fraction", "mla_decode_tile_rows"}
    assert got["moe.fp8_block.hbm_fraction"] == amd.gfx942_expert_hbm()["moe.fp8_block.hbm_fraction"]
