"""Issue 17 kind 8: hardware values off by a unit slip (10^3-10^12) are refused, naming the key,
the range and the likely slip; relations every real chip obeys are checked. The slipped values
below are the H200 datasheet's (141 GB, 4.8 TB/s, 989 dense BF16 TFLOPS, 700 W; NVLink 4
450 GB/s per direction; InferenceX all-in 1.73 kW) written in the neighbouring unit by hand."""

from __future__ import annotations

from importlib import resources

import pytest
from cli_runner import check_error, run

from jalapeno.errors import SpecError
from jalapeno.specs.catalog import list_systems, load_system
from jalapeno.specs.plausibility import RANGES

H200 = (resources.files("jalapeno") / "data" / "systems" / "h200.toml").read_text()


def _slip(tmp_path, old: str, new: str) -> str:
    assert old in H200, old
    p = tmp_path / "slip.toml"
    p.write_text(H200.replace(old, new, 1))
    return str(p)


@pytest.mark.parametrize("old, new, words", [
    # HBM bandwidth 4800 TB/s (GB/s typed into a TB/s key)
    ("hbm_bandwidth_tb_per_s = { value = 4.8,", "hbm_bandwidth_tb_per_s = { value = 4800,",
     ["chip.hbm_bandwidth_tb_per_s", "4800 TB/s", "plausible range"]),
    # capacity in bytes where GB is asked: 141e9
    ("hbm_capacity_gb = { value = 141,", "hbm_capacity_gb = { value = 141000000000,",
     ["chip.hbm_capacity_gb", "1.41e+11 GB", "bytes"]),
    # latency in seconds where µs is asked: 1e-6
    ("latency_us = { value = 1.0,", "latency_us = { value = 0.000001,", ["levels[node].latency_us", "seconds"]),
    # all-in power in W where kW is asked: 1730
    ("allin_kw_per_chip = { value = 1.73,", "allin_kw_per_chip = { value = 1730,",
     ["power.allin_kw_per_chip", "1730 kW"]),
    # TFLOPS given as FLOP/s: 989e12
    ("peak_dense_tflops.bf16 = { value = 989,", "peak_dense_tflops.bf16 = { value = 989000000000000,",
     ["chip.peak_dense_tflops.bf16", "9.89e+14 TFLOPS"]),
    # TDP in kW: 0.7
    ("tdp_w = { value = 700,", "tdp_w = { value = 0.7,", ["chip.tdp_w", "0.7 W", "kW"]),
    # link bandwidth 450,000 GB/s
    ("bandwidth_gb_per_s = { value = 450,", "bandwidth_gb_per_s = { value = 450000,",
     ["levels[node].bandwidth_gb_per_s", "4.5e+05 GB/s"]),
    # an FP8 peak below the BF16 peak (989): the sparse/dense or the format mixed up
    ("peak_dense_tflops.fp8 = { value = 1979,", "peak_dense_tflops.fp8 = { value = 900,",
     ["chip.peak_dense_tflops.fp8", "below the bf16 peak"]),
    # sustained above TDP
    ("tdp_w = { value = 700,", "sustained_w = { value = 900, source = \"test\" }\ntdp_w = { value = 700,",
     ["chip.sustained_w", "exceeds the tdp"]),
])
def test_unit_slips_are_refused(capsys, tmp_path, old, new, words):
    check_error(*run(capsys, "hardware", "show", _slip(tmp_path, old, new)), "slip.toml", *words, "fix: check")


def test_all_in_power_below_the_chip_is_refused(tmp_path):
    """1.73 kW typed as 0.5 (a chip of 700 W cannot be provisioned at 500 W all-in)."""
    with pytest.raises(SpecError, match="all-in 0.5 kW per chip is below the chip's own 700 W"):
        load_system(_slip(tmp_path, "allin_kw_per_chip = { value = 1.73,", "allin_kw_per_chip = { value = 0.5,"))


def test_every_catalog_system_is_inside_the_ranges():
    for name in list_systems():
        load_system(name)  # raises on any value outside RANGES


def test_ranges_hold_the_catalog_span_with_room():
    """Each range is at least 10x wider than the catalog's values on both sides, where it has them."""
    systems = [load_system(n) for n in list_systems()]
    peaks = [v / 1e12 for s in systems for v in s.chip.peak_flop_per_s.values()]
    bw = [s.chip.hbm_bandwidth_bytes_per_s / 1e12 for s in systems]
    links = [lv.bandwidth_bytes_per_s / 1e9 for s in systems for lv in s.levels]
    for key, vals in (("chip.peak_dense_tflops", peaks), ("chip.hbm_bandwidth_tb_per_s", bw),
                      ("levels.bandwidth_gb_per_s", links)):
        r = RANGES[key]
        assert r.lo * 10 <= min(vals) and max(vals) * 5 <= r.hi, key


def test_set_override_is_checked_too(capsys):
    """The --set path builds its system through the same check (specs/variants.py → system_from_dict)."""
    check_error(*run(capsys, "hardware", "show", "h200", "--set", "chip.hbm_bandwidth_tb_per_s=4800"),
                "chip.hbm_bandwidth_tb_per_s", "plausible range")
