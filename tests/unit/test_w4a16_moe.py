"""specs/w4a16_moe.py: W4A16 routed experts on SM100-family chips priced by their measured MoE kernel (shipped on,
derived sets included, round 41).

Expected values come from data/w4a16_moe_forms.toml read here directly (each chip's fit of SGLang's trtllm-gen
MXINT4 MoE on aiconfigurator's int4_wo rows) and from the roofline's memory formula bytes / (W · eta_m) with GB300's
8 TB/s (its system file), not from the module's own output.
"""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

import jalapeno.specs.w4a16_moe as w4
from jalapeno.cli.common import resolve_precision
from jalapeno.cost.batch import Batch
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.errors import SpecError
from jalapeno.specs.calibration import base_efficiency
from jalapeno.specs.catalog import load_model


def _form(system: str, kernel: str = "mxint4") -> dict:
    raw = tomllib.loads((resources.files("jalapeno") / "data" / "w4a16_moe_forms.toml").read_text())
    (f,) = [f for f in raw["form"] if f["system"] == system and f["kernel"] == kernel]
    return f


@pytest.fixture
def switch(monkeypatch):
    """Set the module's switches for one test (both ship on)."""

    def set_(on: bool, derived: bool = False) -> None:
        monkeypatch.setattr(w4, "W4A16_FORM_ON", on)
        monkeypatch.setattr(w4, "W4A16_DERIVED", derived)

    return set_


def _experts(system: str):
    """(op key, memory s, HBM bytes of one rank's op) of Kimi K2.5 INT4's moe.experts, DEP8, 64 sequences, 8K context."""
    model = load_model("kimi-k2.5")
    prec = resolve_precision(model, "int4", None, None, False)
    sc = step_cost(
        model,
        load_pricer(system),
        for_model(Layout(tp=1, dp=8, ep=8), model),
        prec,
        Batch.make(decode_seqs=64, decode_ctx=8192),
    )
    i = list(sc.ops.name).index("moe.experts")
    return sc.ops.keys[i], float(sc.times.memory_s[i, 0]), float(sc.ops.bytes[i, 0])


def test_ships_on_for_the_measured_chips_and_the_sets_derived_from_them():
    assert w4.W4A16_FORM_ON is True and w4.W4A16_DERIVED is True
    f = _form("gb300-nvl72")
    for name in ("gb300-nvl72", "jalapeno", "vera-rubin-nvl72"):  # the last two derived from GB300 (their set files)
        e = base_efficiency(name).moe["w4a16"]
        assert (e.peak_fraction, e.half_rows, e.hbm_fraction, e.floor_s) == (
            f["peak_fraction"],
            f["half_rows"],
            f["hbm_fraction"],
            f["floor_s"],
        ), name
    key, _, _ = _experts("gb300-nvl72")
    assert key == "w4a16"  # Kimi K2.5's INT4 experts priced by the measured MXINT4 form, not the dense BF16 rule


def test_off_changes_nothing_but_the_w4a16_entry(switch):
    """Off, every set is the one the switch found: the W4A16 entry goes, nothing else moves, and a model without
    W4A16 experts (DeepSeek-R1 FP8) prices the same step to the bit."""
    from dataclasses import replace

    model = load_model("deepseek-r1")
    prec = resolve_precision(model, "fp8", None, None, False)
    layout, batch = for_model(Layout(tp=1, dp=8, ep=8), model), Batch.make(decode_seqs=64, decode_ctx=8192)

    def r1_step_s() -> float:
        return float(step_cost(model, load_pricer("gb300-nvl72"), layout, prec, batch).times.time_s.sum())

    on = {n: base_efficiency(n) for n in ("gb300-nvl72", "jalapeno")}
    r1_on = r1_step_s()
    switch(False)
    for name, e_on in on.items():
        off = base_efficiency(name)
        assert "w4a16" not in off.moe and "w4a16" in e_on.moe
        assert replace(e_on, moe={k: v for k, v in e_on.moe.items() if k != "w4a16"}) == off, name
    assert _experts("gb300-nvl72")[0] == "bf16"  # priced by its compute format: the dense BF16 rule
    assert r1_step_s() == r1_on


def test_on_gives_each_sm100_chip_its_own_measured_form(switch):
    switch(True)
    for name in ("b200", "b300", "gb200-nvl72", "gb300-nvl72"):
        e, f = base_efficiency(name).moe["w4a16"], _form(name)
        assert (e.peak_fraction, e.half_rows, e.hbm_fraction, e.floor_s) == (
            f["peak_fraction"],
            f["half_rows"],
            f["hbm_fraction"],
            f["floor_s"],
        )
    for name in ("h200", "jalapeno", "mi355x"):  # no W4A16 table of their own; Jalapeno only with W4A16_DERIVED
        assert "w4a16" not in base_efficiency(name).moe


def test_kernel_choice_and_bad_kernel(switch, monkeypatch):
    switch(True)
    monkeypatch.setattr(w4, "W4A16_KERNEL", "marlin")
    assert base_efficiency("gb300-nvl72").moe["w4a16"].half_rows == _form("gb300-nvl72", "marlin")["half_rows"]
    monkeypatch.setattr(w4, "W4A16_KERNEL", "cutlass")
    with pytest.raises(SpecError, match="W4A16_KERNEL"):
        base_efficiency("gb300-nvl72")


def test_derived_set_only_with_its_own_switch(switch):
    switch(True, derived=True)
    assert base_efficiency("jalapeno").moe["w4a16"].half_rows == _form("gb300-nvl72")["half_rows"]
    assert "w4a16" not in base_efficiency("mi300x").moe  # partial set derived from h200: no W4A16 table


def test_on_prices_gb300_int4_experts_by_the_marlin_stream(switch):
    switch(True)
    key, mem_s, nbytes = _experts("gb300-nvl72")
    assert key == "w4a16"
    # memory time = bytes / (W · eta_m), W = 8.0 TB/s (gb300-nvl72.toml), eta_m = GB300's measured MXINT4 fraction
    assert mem_s == pytest.approx(nbytes / (8.0e12 * _form("gb300-nvl72")["hbm_fraction"]), rel=1e-9)


def test_vllm_marlin_pool_keeps_its_backend_form(switch):
    """B200's vLLM pools name ``marlin``: KernelMoePricer's form, not the set's MXINT4 entry, prices them."""
    from jalapeno.cost.pool_backends import with_moe_backend

    model = load_model("kimi-k2.5")
    prec = resolve_precision(model, "int4", None, None, False)
    layout = for_model(Layout(tp=8), model)
    batch = Batch.make(decode_seqs=64, decode_ctx=8192)

    def experts_s() -> float:
        p = with_moe_backend(load_pricer("b200"), "marlin", model, layout)
        sc = step_cost(model, p, layout, prec, batch)
        return float(sc.times.time_s[list(sc.ops.name).index("moe.experts"), 0])

    off = experts_s()
    switch(True)
    assert experts_s() == pytest.approx(off, rel=1e-12)


def test_fp4_experts_untouched(switch):
    switch(True)
    model = load_model("kimi-k2.5")
    prec = resolve_precision(model, "fp4", None, None, False)
    sc = step_cost(
        model,
        load_pricer("gb300-nvl72"),
        for_model(Layout(tp=1, dp=8, ep=8), model),
        prec,
        Batch.make(decode_seqs=64, decode_ctx=8192),
    )
    assert sc.ops.keys[list(sc.ops.name).index("moe.experts")] != "w4a16"


def test_derived_sets_band_is_the_forms_held_out_error():
    """Round 42: Jalapeño's low / high sets take GB300's MXINT4 form at the ends of that form's own held-out error
    (data/w4a16_moe_forms.toml ``held_out_median_ape``, 0.0888: odd powers of two of tokens held out), as
    fit/calibrate.band_values moves a derived set; the measured chip's own sets carry no band."""
    f = _form("gb300-nvl72")
    k = 1.0 + f["held_out_median_ape"]
    assert 0.08 < f["held_out_median_ape"] < 0.10  # the figure docs/model.md §11.3 quotes (8.9%)
    lo, hi = (base_efficiency("jalapeno", w).moe["w4a16"] for w in ("low", "high"))
    assert lo.peak_fraction == pytest.approx(f["peak_fraction"] / k, rel=1e-12)
    assert hi.peak_fraction == pytest.approx(f["peak_fraction"] * k, rel=1e-12)
    assert lo.hbm_fraction == pytest.approx(f["hbm_fraction"] / k, rel=1e-12)
    assert lo.half_rows == pytest.approx(f["half_rows"] * k, rel=1e-12)
    assert hi.half_rows == pytest.approx(f["half_rows"] / k, rel=1e-12)
    assert hi.floor_s == pytest.approx(f["floor_s"] / k, rel=1e-12)
    for w in ("low", "high"):  # a measured chip: no band (specs/calibration: measured sets have none)
        assert base_efficiency("gb300-nvl72", w).moe["w4a16"] == base_efficiency("gb300-nvl72").moe["w4a16"]
    # a fraction's fast end is capped at 1 (hand-made form: 0.95 x 1.1 would be 1.045)
    fast = w4.band_form({"peak_fraction": 0.5, "half_rows": 50.0, "hbm_fraction": 0.95, "floor_s": 2e-5}, "high", 0.1)
    assert fast["hbm_fraction"] == 1.0 and fast["half_rows"] == pytest.approx(50.0 / 1.1)


def test_audit_band_of_the_w4a16_entry_is_the_held_out_error_and_says_so():
    """The audit / sensitivity list the W4A16 entry with the form's held-out band (not an assumed ±10% / ±50%) and
    name it as the band's source, on the derived set (from its low/high sets) and on the measured chip alike."""
    from jalapeno.analysis.uncertain import uncertain_parameters

    model = load_model("kimi-k2.5")
    prec = resolve_precision(model, "int4", None, None, False)
    f = _form("gb300-nvl72")
    k = 1.0 + f["held_out_median_ape"]
    for name in ("jalapeno", "gb300-nvl72"):
        params = {p.key: p for p in uncertain_parameters(load_pricer(name), model, prec)}
        pf, half = params["efficiency.moe.w4a16.peak_fraction"], params["efficiency.moe.w4a16.half_rows"]
        assert (pf.low, pf.high) == pytest.approx((f["peak_fraction"] / k, f["peak_fraction"] * k), rel=1e-9), name
        assert (half.low, half.high) == pytest.approx((f["half_rows"] / k, f["half_rows"] * k), rel=1e-9), name
        assert "efficiency.moe.w4a16.floor_s" in params, name
        for p in (pf, half):
            assert "held-out error ±8.9%" in p.band_source and "gb300-nvl72 mxint4" in p.band_source, name
