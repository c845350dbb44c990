"""Bad input that round 42 left (robust43): a chip built through the API with more usable HBM than it has, ``--set
efficiency.*`` keys no op reads on the sweep commands, and round-42 features given bad values on the CLI. Each is
named: one error naming the field and the fix, or a note for a what-if that changes nothing."""

import dataclasses
import tomllib
from importlib.resources import files

import pytest

from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_system

GB = 1e9

# ---- Chip(hbm_usable > capacity) through the API ------------------------------------------------------------------


def test_a_chip_whose_usable_hbm_exceeds_its_capacity_is_refused_naming_the_field_and_fix():
    chip = load_system("h200").chip  # 141 GB nominal, usable = nominal (no usable figure in the file)
    with pytest.raises(SpecError) as e:
        dataclasses.replace(chip, hbm_capacity_bytes=96 * GB)  # usable stays 141 GB > 96 GB
    assert e.value.field == "Chip.hbm_usable_bytes"
    assert "1.41e+11 B exceeds hbm_capacity_bytes, 9.6e+10 B" in e.value.problem
    assert "hbm_usable_bytes <= hbm_capacity_bytes" in e.value.fix


def test_a_chip_that_lowers_both_or_keeps_usable_below_capacity_is_accepted():
    chip = load_system("b200").chip  # 180 GB usable of 192 GB nominal (MLPerf system names; NVIDIA spec)
    low = dataclasses.replace(chip, hbm_capacity_bytes=96 * GB, hbm_usable_bytes=min(chip.hbm_usable_bytes, 96 * GB))
    assert (low.hbm_capacity_bytes, low.hbm_usable_bytes) == (96 * GB, 96 * GB)
    # usable above capacity by less than the file path's 1e-4 slack (a GB / GiB rounding) is kept, as there
    assert dataclasses.replace(chip, hbm_usable_bytes=chip.hbm_capacity_bytes * 1.00005).hbm_usable_bytes > 0
    with pytest.raises(SpecError, match="Chip.hbm_usable_bytes"):
        dataclasses.replace(chip, hbm_usable_bytes=chip.hbm_capacity_bytes * 1.001)


def test_a_file_with_usable_above_capacity_still_names_the_files_keys():
    from jalapeno.specs.hardware import system_from_dict

    data = tomllib.loads((files("jalapeno") / "data/systems/b200.toml").read_text())
    data["chip"]["hbm_capacity_gb"]["value"] = 150  # below the file's 180 GB usable
    with pytest.raises(SpecError) as e:
        system_from_dict(data, "b200.toml")
    assert e.value.field == "b200.toml: chip.hbm_usable_gb"
    assert "make chip.hbm_usable_gb <= chip.hbm_capacity_gb" in e.value.fix


# ---- the gfx942 sustained clocks: one statement (fit/amd.SUSTAINED_CLOCK_MHZ) --------------------------------------


def test_mi300x_dense_clock_ratio_is_the_ratio_of_the_stated_sustained_clocks():
    from jalapeno.fit.amd import SUSTAINED_CLOCK_MHZ

    # ROCm blog "Measuring Max-Achievable FLOPs - Part 2", Table 1: 1,230 MHz (MI300X) / 1,464 MHz (MI325X) = 0.8402
    assert SUSTAINED_CLOCK_MHZ == {"mi300x": 1230.0, "mi325x": 1464.0}
    ratio = SUSTAINED_CLOCK_MHZ["mi300x"] / SUSTAINED_CLOCK_MHZ["mi325x"]
    assert load_system("mi300x").chip.dense_clock_ratio == round(ratio, 3) == 0.840
    assert load_system("mi325x").chip.dense_clock_ratio == 1.0  # the clock the gfx942 calibration prices


def test_the_scripts_read_the_clocks_from_fit_amd_not_a_copy():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "scripts"
    for name in ("gfx942_table_clock.py", "gfx942_power.py", "gfx942_pair_law40.py", "gfx942_pair.py"):
        text = (root / name).read_text()
        assert "from jalapeno.fit.amd import" in text and "SUSTAINED_CLOCK_MHZ" in text, name
        assert not re.search(r"1230\.0|1464\.0", text), f"{name} states the clocks again"
