"""scripts/gfx942_pair.py: the MI300X -> MI325X GEMM transfer, the MAF cap and the MLPerf pairing key."""

from __future__ import annotations

import pytest
from script_module import load_script

pair = load_script("gfx942_pair")


def test_maf_table_is_amds():
    # ROCm blog "Measuring Max-Achievable FLOPs - Part 2", Table 1 (MI300X, MI325X)
    assert pair.MAF_TFLOPS["fp8"] == (1273.0, 1519.0)
    assert pair.MAF_TFLOPS["bf16"] == (708.0, 843.0)
    assert pair.MAF_CLOCK_MHZ["fp8"] == (1230.0, 1464.0)


def test_transfer_scales_mi300x_peak_by_the_maf_ratio_and_keeps_its_hbm_fraction():
    got = dict(pair.transfer_overrides())
    # data/calibration/mi300x.toml: fp8_block peak 0.24328482, fp8 0.44350142, HBM 0.41638124;
    # x 1519 / 1273 = 1.19324431 by hand
    assert got["efficiency.gemm.fp8_block.peak_fraction"] == pytest.approx(0.24328482 * 1.19324431, rel=1e-6)
    assert got["efficiency.gemm.fp8.peak_fraction"] == pytest.approx(0.44350142 * 1.19324431, rel=1e-6)
    assert got["efficiency.gemm.fp8_block.hbm_fraction"] == pytest.approx(0.41638124, rel=1e-6)


def test_cap_binds_only_above_maf_over_peak():
    # MI300X: BF16 MAF / peak = 708 / 1307 = 0.54169; its BF16 GEMM (0.780) and BF16 MLA prefill (0.551)
    # are above it, attention (0.471) and every FP8 fraction (cap 1273 / 2615 = 0.48681) below
    got = dict(pair.cap_overrides("mi300x"))
    assert set(got) == {"efficiency.gemm.bf16.peak_fraction", "efficiency.mla_prefill.bf16.peak_fraction"}
    assert got["efficiency.gemm.bf16.peak_fraction"] == pytest.approx(708 / 1307, rel=1e-9)
    # MI325X: 843 / 1307 = 0.64498 caps the BF16 GEMM only
    assert dict(pair.cap_overrides("mi325x")) == {"efficiency.gemm.bf16.peak_fraction": pytest.approx(843 / 1307)}


def test_mlperf_key_drops_the_system_token_only():
    a = pair._ml_key("mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline")
    b = pair._ml_key("mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Offline")
    assert a == b == "mlperf51_AMD_llama2-70b-99_Offline"
    assert pair._ml_key("mlperf51_AMD_8xMI325X_2xEPYC_9575F_2_llama2-70b-99_Server") != a


def test_cap_mode_prices_both_chips_at_the_calibration_clock():
    # MAF / peak is the power-held clock's throughput already: MI300X's dense clock ratio (0.840, POWER_CLOCK on since
    # round 41) must not slow the capped ops a second time; the transfer mode touches MI325X (ratio 1) only
    cap = pair.mode_overrides("cap")
    assert set(cap) == {"mi300x", "mi325x"}
    assert all(dict(v)["chip.dense_clock_ratio"] == 1.0 for v in cap.values())
    assert dict(cap["mi300x"])["efficiency.gemm.bf16.peak_fraction"] == pytest.approx(708 / 1307, rel=1e-9)
    assert set(pair.mode_overrides("transfer")) == {"mi325x"}
