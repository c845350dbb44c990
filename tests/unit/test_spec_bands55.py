"""compare / report ``--bands`` hold the estimated specs too (ux55, analysis/spec_bands.py): a derived system's band
was its efficiency sets' alone, leaving out Jalapeño's estimated BF16 peak (1,700 TFLOP/s, "FP8 / 2", ±20%), its
usable HBM, tray bandwidth and link latencies, which sensitivity and audit move. Each now sits at its slower end in
the band's low end and its faster end in the high one, and a line names them."""

import json
import math

from cli_runner import run

from jalapeno.analysis import spec_bands
from jalapeno.analysis.spec_bands import banded_specs, spec_band_line, with_estimated_specs
from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.pricer import band_pricers


def test_jalapenos_band_ends_take_its_estimated_specs_slower_and_faster_ends(monkeypatch):
    """By hand from jalapeno.toml (estimate = true): BF16 1,700 x 0.8 = 1,360 and x 1.2 = 2,040 TFLOP/s; tray 600 x
    0.8 = 480 and x 1.2 = 720 GB/s; rack latency 2 us x 2 = 4 (slower) and x 0.5 = 1 (faster); usable 216 GiB x 0.8 =
    172.8 GiB, its high end capped at the nominal 216 GiB. Power and $/chip-hour (estimated too) are not band ends."""
    monkeypatch.setattr(spec_bands, "ESTIMATED_SPEC_BANDS_ON", True)  # on since bands55 (the module's switch)
    pr = system_pricer("jalapeno", "calibrated", [])
    band = with_estimated_specs(pr, band_pricers(pr))
    lo, hi = band["low"].system, band["high"].system
    assert math.isclose(lo.chip.peak_flop_per_s["bf16"], 1360e12) and math.isclose(
        hi.chip.peak_flop_per_s["bf16"], 2040e12
    )
    assert lo.chip.peak_flop_per_s["fp8"] == pr.system.chip.peak_flop_per_s["fp8"]  # stated: not in the band
    tray = {lv.name: lv for lv in lo.levels}["tray"], {lv.name: lv for lv in hi.levels}["tray"]
    assert math.isclose(tray[0].bandwidth_bytes_per_s, 480e9) and math.isclose(tray[1].bandwidth_bytes_per_s, 720e9)
    rack = {lv.name: lv for lv in lo.levels}["rack"], {lv.name: lv for lv in hi.levels}["rack"]
    assert math.isclose(rack[0].latency_s, 4e-6) and math.isclose(rack[1].latency_s, 1e-6)
    assert math.isclose(lo.chip.hbm_usable_bytes, 172.8 * 2**30) and math.isclose(hi.chip.hbm_usable_bytes, 216 * 2**30)
    # the $/chip-hour and watt estimates are not band ends: each end keeps the stated 700 W TDP, 550 W sustained,
    # 1,150 W all-in and $1.43/chip-hour (jalapeno.toml; bands55: under --set the tray's ports would cost
    # 2 x 120 GB/s x 8 bit x 5 pJ/bit = 9.6 W per chip, x PUE 1.25 = 12 W less at the slow end, specs/power.py)
    for s in (lo, hi):
        watts = (s.chip.tdp_w, s.chip.sustained_w, s.allin_power_w_per_chip)
        assert watts == (700, 550, 1150) and s.usd_per_chip_hour == 1.43
    assert band["low"].efficiency == band_pricers(pr)["low"].efficiency  # the efficiency band as it was
    keys = {p.key for p in banded_specs(pr, band_pricers(pr))}
    assert not any(k.startswith(("power.", "cost.", "kv_tiers.", "die.")) for k in keys)


def test_a_measured_system_keeps_its_measured_band_and_the_switch_turns_it_off(monkeypatch):
    """GB300 is fitted on its own kernels: its band is validate's error (no efficiency width), whose points were
    priced with its estimated specs already, so none is added. Off, Jalapeño's band is the efficiency
    band as before."""
    monkeypatch.setattr(spec_bands, "ESTIMATED_SPEC_BANDS_ON", True)
    g = system_pricer("gb300-nvl72", "calibrated", [])
    band = band_pricers(g)
    assert with_estimated_specs(g, band) is band and banded_specs(g, band) == []
    j = system_pricer("jalapeno", "calibrated", [])
    assert spec_band_line([g]) is None and "jalapeno: chip.peak_dense_tflops.bf16 1,360 to 2,040 TFLOP/s" in (
        spec_band_line([j, g]) or ""
    )
    monkeypatch.setattr(spec_bands, "ESTIMATED_SPEC_BANDS_ON", False)
    jb = band_pricers(j)
    assert with_estimated_specs(j, jb) is jb and spec_band_line([j]) is None


def test_compare_bands_widen_with_the_estimated_specs(capsys, monkeypatch):
    """With every other input equal, moving the estimated specs with the efficiency sets can only widen Jalapeño's
    band (slower specs at the slow end, faster at the fast end), the prediction itself unmoved; the line under the
    tables names them."""
    args = ("compare", "-s", "jalapeno,gb300-nvl72", "-m", "gpt-oss-120b", "-w", "1k1k", "--serving", "agg", "--bands")
    seen = {}
    for on in (False, True):
        monkeypatch.setattr(spec_bands, "ESTIMATED_SPEC_BANDS_ON", on)
        code, out, err = run(capsys, *args, "--json")
        assert code == 0, err
        seen[on] = json.loads(out)["systems"]["jalapeno"]["headline"]["bands"]
    b, off = seen[True], seen[False]
    for k in ("peak_throughput_per_chip", "max_interactivity"):
        assert b[k]["mid"] == off[k]["mid"], k
        assert b[k]["low"] <= off[k]["low"] * (1 + 1e-9) and b[k]["high"] >= off[k]["high"] * (1 - 1e-9), k
    assert (b["max_interactivity"]["low"], b["max_interactivity"]["high"]) != (
        off["max_interactivity"]["low"],
        off["max_interactivity"]["high"],
    )
    code, out, err = run(capsys, *args, "--html", "")
    assert code == 0, err
    assert "estimated specs in the band" in out and "chip.peak_dense_tflops.bf16 1,360 to 2,040" in " ".join(
        out.split()
    )
