"""MLA attention-kernel efficiency: pricing by hand, fallback, fit recovery, held-out report."""

import math

import numpy as np
import pandas as pd
import pytest

from jalapeno.cost.attention import RankBatch, add_mla_decode_kernel
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import RooflinePricer
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency

GB200 = load_system("gb200-nvl72")
R1 = load_model("deepseek-r1").attention


def _decode_table(b, ctx, n, fmt="fp8", kv_bytes=576.0):
    b = np.atleast_1d(np.asarray(b, float))
    ctx = np.broadcast_to(np.asarray(ctx, float), b.shape)
    ob = OpBuilder(len(b))
    add_mla_decode_kernel(ob, R1, RankBatch(b, b, ctx, 0 * b, 0 * b, 0 * b), n, fmt, kv_bytes, 1.0)
    return ob.build()[0]


def test_mla_decode_time_by_hand():
    # docs/model.md §3 (MLA decode, weight-absorbed): FLOPs 2·Td·n·(2r + d_rope)·L, KV b·L·(r + d_rope)
    # bytes (FP8: 576 B), activations Td·n·(2r + d_rope)·2 B; two kernels.
    b, L, n = 256, 8192, 128
    flop = 2 * b * n * (2 * 512 + 64) * L
    byt = b * L * 576 + b * n * (2 * 512 + 64) * 2
    eff = Efficiency().with_overrides({"mla_decode": {"fp8": {"peak_fraction": 0.5, "hbm_fraction": 0.7}},
                                       "kernel_launch_s": 4e-6})
    chip = GB200.chip
    expected = max(flop / (chip.peak("fp8") * 0.5), byt / (chip.hbm_bandwidth_bytes_per_s * 0.7)) + 2 * 4e-6
    got = RooflinePricer(GB200, eff).op_times(_decode_table(b, L, n)).time_s[0, 0]
    assert got == pytest.approx(expected, rel=1e-12)
    # and it is compute-bound here: 2.92 TFLOP at 2.5 PFLOP/s = 1.17 ms
    assert expected == pytest.approx(flop / 2.5e15 + 8e-6, rel=1e-9)


def test_unset_mla_entries_fall_back_exactly_to_attention():
    eff = Efficiency().with_overrides({"attention_peak_fraction": 0.34, "hbm_fraction": 0.9})
    for fmt in ("bf16", "fp8"):
        assert eff.kernel_peak("mla_decode", fmt) == eff.attention_peak(fmt)
        assert eff.kernel_hbm("mla_prefill", fmt) == 0.9
    tab = _decode_table([1.0, 64.0, 512.0], [100.0, 8192.0, 65536.0], 16.0)
    generic = tab.__class__(**{**{f: getattr(tab, f) for f in tab.__dataclass_fields__}, "kernel": ()})
    p = RooflinePricer(GB200, eff)
    assert np.array_equal(p.op_times(tab).time_s, p.op_times(generic).time_s)
    # one format's MLA entry does not leak into another format
    e2 = eff.with_overrides({"mla_decode": {"bf16": {"peak_fraction": 0.6}}})
    assert e2.kernel_peak("mla_decode", "fp8") == eff.attention_peak("fp8")
    assert e2.kernel_peak("mla_decode", "bf16") == 0.6


def test_bad_mla_field_is_one_clear_error():
    with pytest.raises(SpecError, match=r"efficiency\.mla_decode\.fp8\.half_rows.*unknown mla_decode parameter"):
        Efficiency().with_overrides({"mla_decode": {"fp8": {"half_rows": 32}}})
    with pytest.raises(SpecError, match=r"must be in \(0, 1\]"):
        Efficiency().with_overrides({"mla_prefill": {"fp8": {"peak_fraction": 1.5}}})


def _synthetic_decode_rows(eta, eta_m, t0):
    """generation_mla_perf-shaped rows timed by the roofline written out by hand (FP8 KV)."""
    chip = GB200.chip
    rows = []
    for n in (1, 8, 32, 128):
        for b in (1, 16, 128, 512):
            for step in (63, 1023, 8191, 65535):  # 63: below the fit threshold, dropped
                L = step + 1
                flop = 2 * b * n * 1088 * L
                byt = b * L * 576 + b * n * 1088 * 2
                t = max(flop / (chip.peak("fp8") * eta), byt / (chip.hbm_bandwidth_bytes_per_s * eta_m)) + 2 * t0
                rows.append({"kv_cache_dtype": "fp8", "num_heads": n, "batch_size": b, "isl": 1, "step": step,
                             "latency": t * 1e3})
    return pd.DataFrame(rows)


def test_fit_recovers_known_parameters_and_reports_held_out():
    pytest.importorskip("scipy")
    from jalapeno.fit.mla_kernels import fit_mla_phase

    params, report = fit_mla_phase(_synthetic_decode_rows(0.43, 0.62, 7e-6), GB200, "decode", R1)
    assert params["mla_decode.fp8.peak_fraction"] == pytest.approx(0.43, rel=1e-3)
    assert params["mla_decode.fp8.hbm_fraction"] == pytest.approx(0.62, rel=1e-3)
    assert report["fp8"]["kernel_floor_s"] == pytest.approx(7e-6, rel=1e-2)
    ho = report["fp8"]["held_out_largest_context"]
    assert ho["step"] == 65535 and ho["n"] == 16 and ho["median_ape"] < 1e-3
    assert report["fp8"]["fit"]["n"] == 32  # steps 1023 and 8191; 63 is below MLA_DECODE_MIN_STEP


@pytest.mark.parametrize("system", ["gb200-nvl72", "h200"])
def test_shipped_sets_carry_mla_fits_with_held_out_errors(system):
    from jalapeno.specs.catalog import load_efficiency
    from jalapeno.specs.calibration import load_calibration

    eff = load_efficiency(system, "calibrated")
    assert 0.3 < eff.kernel_peak("mla_decode", "fp8") < 0.7
    assert eff.kernel_peak("mla_decode", "fp8") != eff.attention_peak("fp8")
    rep = load_calibration(system)["report"]["mla"]
    for phase in ("decode", "prefill"):
        for fmt in ("bf16", "fp8"):
            r = rep[phase][fmt]
            assert r["held_out_largest_context"]["n"] > 0 and math.isfinite(r["held_out_largest_context"]["median_ape"])
