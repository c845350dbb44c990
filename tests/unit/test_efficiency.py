"""Efficiency's per-op-kind, per-format kernel tables: fallbacks, overrides, errors (specs/efficiency.py)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from jalapeno.errors import SpecError
from jalapeno.specs.calibration import base_efficiency, load_calibration
from jalapeno.specs.efficiency import (
    DEFAULT_EFFICIENCY,
    Efficiency,
    flatten_params,
    nest_params,
)
from jalapeno.specs.kernel_efficiency import FormatTable, KernelEfficiency

FMTS = ("bf16", "fp8", "fp4")


def _eff(**over) -> Efficiency:
    return DEFAULT_EFFICIENCY.with_overrides(over)


def test_spec_defaults_serve_every_format():
    e = DEFAULT_EFFICIENCY
    for f in (*FMTS, "int4"):  # a format with no entry anywhere takes the bf16 values
        assert (e.gemm_peak(f), e.gemm_half(f), e.gemm_hbm(f)) == (0.75, 32.0, 0.85)
        assert (e.moe_peak(f), e.moe_half(f), e.moe_hbm(f), e.moe_passes(f)) == (0.75, 32.0, 0.85, 0.0)


def test_moe_fp4_inherits_bf16_moe_then_gemm_fp4_then_gemm_bf16_then_hbm_fraction():
    """Each field walks its own chain, written out by hand:
    moe[fp4] → moe[bf16] → gemm[fp4] → gemm[bf16] → (HBM fraction only) hbm_fraction."""
    e = _eff(hbm_fraction=0.9,
             gemm={"bf16": {"peak_fraction": 0.7, "half_rows": 100},
                   "fp4": {"peak_fraction": 0.3, "hbm_fraction": 0.5}},
             moe={"bf16": {"half_rows": 60, "token_passes": 5},
                  "fp4": {"token_passes": 9}})
    # peak: moe[fp4] unset, moe[bf16] unset → gemm[fp4] = 0.3
    assert e.moe_peak("fp4") == 0.3
    # half rows: moe[fp4] unset → moe[bf16] = 60 (before any GEMM value)
    assert e.moe_half("fp4") == 60.0
    # HBM: moe unset → gemm[fp4] = 0.5
    assert e.moe_hbm("fp4") == 0.5
    # passes: moe[fp4] = 9; fp8 has no entry → moe[bf16] = 5; GEMM never supplies passes
    assert (e.moe_passes("fp4"), e.moe_passes("fp8"), e.moe_passes("bf16")) == (9.0, 5.0, 5.0)
    # fp8: no gemm[fp8] either → gemm[bf16] values, and the HBM fraction down to hbm_fraction
    assert (e.moe_peak("fp8"), e.moe_half("fp8"), e.moe_hbm("fp8")) == (0.7, 60.0, 0.9)
    assert (e.gemm_peak("fp8"), e.gemm_half("fp8"), e.gemm_hbm("fp8")) == (0.7, 100.0, 0.9)
    assert (e.gemm_peak("fp4"), e.gemm_half("fp4"), e.gemm_hbm("fp4")) == (0.3, 100.0, 0.5)
    # a bf16 GEMM HBM fraction serves fp8 GEMMs without their own
    e2 = e.with_overrides({"gemm": {"bf16": {"hbm_fraction": 0.6}}})
    assert (e2.gemm_hbm("bf16"), e2.gemm_hbm("fp8"), e2.gemm_hbm("fp4"), e2.moe_hbm("fp8")) == (0.6, 0.6, 0.5, 0.6)
    # an own moe[fp4] value wins over everything
    e3 = e.with_overrides({"moe": {"fp4": {"peak_fraction": 0.2, "hbm_fraction": 0.8}}})
    assert (e3.moe_peak("fp4"), e3.moe_hbm("fp4"), e3.moe_passes("fp4")) == (0.2, 0.8, 9.0)


def test_nested_override_changes_only_the_fields_given():
    e = _eff(gemm={"fp8": {"peak_fraction": 0.6, "half_rows": 40}})
    e = e.with_overrides({"gemm": {"fp8": {"half_rows": 50}}})
    assert e.gemm["fp8"] == KernelEfficiency(peak_fraction=0.6, half_rows=50.0)
    assert e.gemm["bf16"] == DEFAULT_EFFICIENCY.gemm["bf16"]
    assert isinstance(e.gemm["fp8"].half_rows, float)  # ints from TOML become floats


def test_with_kernel_sets_and_unsets_a_field():
    e = DEFAULT_EFFICIENCY.with_kernel("moe", "fp4", hbm_fraction=0.3)
    assert e.moe_hbm("fp4") == 0.3 and e.moe_hbm("fp8") == 0.85
    back = e.with_kernel("moe", "fp4", hbm_fraction=None)
    assert back == DEFAULT_EFFICIENCY and "fp4" not in back.moe  # an empty entry is dropped


def test_efficiency_is_frozen_hashable_and_picklable():
    e = _eff(gemm={"fp4": {"peak_fraction": 0.3}}, moe={"fp8": {"token_passes": 3}})
    same = _eff(moe={"fp8": {"token_passes": 3}}, gemm={"fp4": {"peak_fraction": 0.3}})
    assert e == same and hash(e) == hash(same) and len({e, same, DEFAULT_EFFICIENCY}) == 2
    assert pickle.loads(pickle.dumps(e)) == e
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.hbm_fraction = 0.5  # type: ignore[misc]
    with pytest.raises(TypeError):
        e.gemm["fp8"] = KernelEfficiency(peak_fraction=0.1)  # type: ignore[index]
    assert list(FormatTable({"fp4": KernelEfficiency(half_rows=1.0), "bf16": KernelEfficiency(half_rows=2.0)})) \
        == ["bf16", "fp4"]  # canonical order


def test_a_gemm_table_without_its_bf16_fallback_is_refused():
    with pytest.raises(ValueError, match="bf16 entry"):
        Efficiency(gemm={"fp8": KernelEfficiency(peak_fraction=0.5, half_rows=10.0)})
    with pytest.raises(ValueError, match="token_passes"):
        DEFAULT_EFFICIENCY.with_kernel("gemm", "fp8", token_passes=2.0)


@pytest.mark.parametrize("old, new", [
    ("gemm_peak_fraction", "gemm.bf16.peak_fraction"),
    ("gemm_hbm_fraction_fp4", "gemm.fp4.hbm_fraction"),
    ("moe_half_rows_fp8", "moe.fp8.half_rows"),
    ("moe_token_passes", "moe.bf16.token_passes"),
])
def test_former_flat_names_are_refused_with_the_new_spelling(old, new):
    with pytest.raises(SpecError) as ei:
        DEFAULT_EFFICIENCY.with_overrides({old: 0.5}, where="calibration x")
    assert ei.value.field == f"calibration x.{old}"
    assert f"{old} is now {new}" in str(ei.value)
    op, fmt, name = new.split(".")
    assert f"[parameters.{op}.{fmt}]" in ei.value.fix and f"{name} = " in ei.value.fix


def test_unknown_format_op_and_field_list_the_valid_ones():
    with pytest.raises(SpecError, match=r"unknown compute format or kernel key 'fp6'.*bf16, fp8, fp4, fp8_block") as ei:
        _eff(moe={"fp6": {"hbm_fraction": 0.5}})
    assert ei.value.field == "efficiency.moe.fp6"
    with pytest.raises(SpecError, match=r"unknown moe parameter.*token_passes") as ei:
        _eff(moe={"fp8": {"passes": 2}})
    assert ei.value.field == "efficiency.moe.fp8.passes"
    with pytest.raises(SpecError, match=r"unknown efficiency parameter.*gemm\.<format>"):
        _eff(softmax={"bf16": {"peak_fraction": 0.5}})
    # attention kernels are keyed by format too, but BF16 is attention_peak_fraction itself
    with pytest.raises(SpecError, match=r"attention_peak_fraction") as ei:
        _eff(attention={"bf16": {"peak_fraction": 0.5}})
    assert ei.value.field == "efficiency.attention.bf16"


@pytest.mark.parametrize("over, field, words", [
    ({"gemm": {"fp8": {"peak_fraction": 0.0}}}, "efficiency.gemm.fp8.peak_fraction", "(0, 1]"),
    ({"moe": {"bf16": {"hbm_fraction": 1.01}}}, "efficiency.moe.bf16.hbm_fraction", "(0, 1]"),
    ({"moe": {"fp4": {"token_passes": 2e3}}}, "efficiency.moe.fp4.token_passes", "beyond"),
    ({"gemm": {"bf16": {"half_rows": -1}}}, "efficiency.gemm.bf16.half_rows", ">= 0"),
    ({"gemm": {"fp8": {"half_rows": float("nan")}}}, "efficiency.gemm.fp8.half_rows", "finite"),
    ({"gemm": {"fp8": {"half_rows": True}}}, "efficiency.gemm.fp8.half_rows", "number"),
])
def test_kernel_fields_keep_the_per_field_checks(over, field, words):
    with pytest.raises(SpecError) as ei:
        DEFAULT_EFFICIENCY.with_overrides(over)
    assert ei.value.field == field and words in str(ei.value)


def test_flatten_and_nest_are_inverse():
    nested = {"hbm_fraction": 0.9, "gemm": {"bf16": {"peak_fraction": 0.7}, "fp8": {"half_rows": 4.0}},
              "moe": {"fp4": {"token_passes": 2.0}}}
    flat = flatten_params(nested)
    assert flat == {"hbm_fraction": 0.9, "gemm.bf16.peak_fraction": 0.7, "gemm.fp8.half_rows": 4.0,
                    "moe.fp4.token_passes": 2.0}
    assert nest_params(flat) == nested
    assert flatten_params(DEFAULT_EFFICIENCY.as_dict())["gemm.bf16.half_rows"] == 32.0
    assert DEFAULT_EFFICIENCY.with_overrides({k: v for k, v in DEFAULT_EFFICIENCY.as_dict().items()
                                              if v is not None}) == DEFAULT_EFFICIENCY


def test_a_band_replaces_single_kernel_fields_of_the_mid_set():
    """low/high merge field by field into [parameters] (a band's gemm.fp8 table does not drop the
    mid set's other gemm.fp8 fields or formats)."""
    c = load_calibration("jalapeno")
    mid, low = base_efficiency("jalapeno", "calibrated"), base_efficiency("jalapeno", "low")
    for f in FMTS:
        for field in ("peak_fraction", "half_rows", "hbm_fraction"):
            band = c["low"].get("gemm", {}).get(f, {}).get(field)
            want = band if band is not None else c["parameters"]["gemm"][f][field]
            assert getattr(low.gemm[f], field) == want, (f, field)
    assert mid.gemm["fp8"].peak_fraction == c["parameters"]["gemm"]["fp8"]["peak_fraction"]
