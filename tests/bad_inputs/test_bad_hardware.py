"""Bad hardware input: each case raises a JalapenoError whose message names the field and the fix."""

from __future__ import annotations

import pytest

from jalapeno.errors import JalapenoError, SpecError, UnknownNameError
from jalapeno.specs.catalog import load_efficiency, load_system

GOOD = '''
schema_version = 1
name = "test-box"
description = "a minimal valid system for bad-input tests"

[chip]
name = "T1"
peak_dense_tflops.bf16 = { value = 1000, source = "test" }
hbm_capacity_gb = { value = 100, source = "test" }
hbm_bandwidth_tb_per_s = { value = 4.0, source = "test" }
hbm_stacks = { value = 4, source = "test" }
tdp_w = { value = 700, source = "test" }

[[levels]]
name = "node"
chips = 8
scope = "scale_up"
topology = "switched"
bandwidth_gb_per_s = { value = 450, source = "test" }
latency_us = { value = 1.0, source = "test" }

[[levels]]
name = "torus"
chips = 64
scope = "scale_up"
topology = "torus3d"
torus_dims = [4, 4, 4]
bandwidth_gb_per_s = { value = 100, source = "test" }
latency_us = { value = 2.0, source = "test" }

[power]
allin_kw_per_chip = { value = 1.5, source = "test" }

[cost]
usd_per_chip_hour = { value = 1.0, source = "test" }
'''


def _write(tmp_path, text: str, name: str = "box.toml") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _replace(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


def _expect(path: str, field: str, exc=SpecError) -> JalapenoError:
    with pytest.raises(exc) as ei:
        load_system(path)
    msg = str(ei.value)
    assert isinstance(ei.value, JalapenoError)
    assert field in msg, msg
    assert "Fix:" in msg, msg
    return ei.value


def test_good_template_loads(tmp_path):
    s = load_system(_write(tmp_path, GOOD))
    assert [lv.chips for lv in s.levels] == [8, 64]


def test_negative_bandwidth(tmp_path):
    p = _write(tmp_path, _replace("bandwidth_gb_per_s = { value = 450", "bandwidth_gb_per_s = { value = -450"))
    err = _expect(p, "bandwidth_gb_per_s")
    assert "levels.0" in err.field and "positive" in err.fix


def test_zero_value(tmp_path):
    p = _write(tmp_path, _replace("tdp_w = { value = 700", "tdp_w = { value = 0"))
    _expect(p, "tdp_w")


def test_missing_source(tmp_path):
    p = _write(tmp_path, _replace('hbm_bandwidth_tb_per_s = { value = 4.0, source = "test" }',
                                  "hbm_bandwidth_tb_per_s = { value = 4.0 }"))
    err = _expect(p, "source")
    assert "hbm_bandwidth_tb_per_s" in str(err)


def test_bare_number_without_source(tmp_path):
    p = _write(tmp_path, _replace('tdp_w = { value = 700, source = "test" }', "tdp_w = 700"))
    _expect(p, "tdp_w")


def test_unknown_key(tmp_path):
    p = _write(tmp_path, _replace('tdp_w = { value = 700, source = "test" }',
                                  'tdp_w = { value = 700, source = "test" }\nhbm_speed = 3'))
    err = _expect(p, "hbm_speed")
    assert "spelling" in err.fix


def test_unknown_key_inside_sourced_number(tmp_path):
    p = _write(tmp_path, _replace('tdp_w = { value = 700, source = "test" }',
                                  'tdp_w = { value = 700, source = "test", sorce = "typo" }'))
    _expect(p, "sorce")


def test_malformed_toml(tmp_path):
    p = _write(tmp_path, _replace('name = "T1"', 'name = "T1'), name="broken.toml")
    err = _expect(p, "broken.toml")
    assert "malformed TOML" in str(err)


def test_torus_dims_do_not_multiply_to_chips(tmp_path):
    p = _write(tmp_path, _replace("torus_dims = [4, 4, 4]", "torus_dims = [4, 4, 2]"))
    err = _expect(p, "torus_dims")
    assert "32" in str(err) and "64" in str(err)


def test_torus_without_dims(tmp_path):
    p = _write(tmp_path, _replace("torus_dims = [4, 4, 4]\n", ""))
    _expect(p, "torus_dims")


def test_usable_above_nominal(tmp_path):
    p = _write(tmp_path, _replace('hbm_capacity_gb = { value = 100, source = "test" }',
                                  'hbm_capacity_gb = { value = 100, source = "test" }\n'
                                  'hbm_usable_gb = { value = 120, source = "test" }'))
    _expect(p, "hbm_usable")


def test_levels_must_grow(tmp_path):
    p = _write(tmp_path, _replace("chips = 64", "chips = 8"))
    _expect(p, "levels")


def test_missing_file(tmp_path):
    _expect(str(tmp_path / "nope.toml"), "nope.toml")


def test_unknown_system_name_suggests_closest():
    with pytest.raises(UnknownNameError) as ei:
        load_system("gb201-nvl72")
    msg = str(ei.value)
    assert "gb201-nvl72" in msg and "gb200-nvl72" in msg
    assert "system" in ei.value.field
    assert "Fix:" in msg


@pytest.mark.parametrize("line, field", [
    ("moe_peak_fraction_fp4 = true", "efficiency.moe_peak_fraction_fp4"),  # a boolean is not a number
    ("moe_token_passes = false", "efficiency.moe_token_passes"),
    ("moe_hbm_fraction_fp8 = 1.5", "efficiency.moe_hbm_fraction_fp8"),     # a fraction above 1
    ("moe_floor_s = -1e-6", "efficiency.moe_floor_s"),                     # a negative time
    ('moe_half_rows = "many"', "efficiency.moe_half_rows"),
    ("source = 5", "efficiency.source"),                                   # not a string
])
def test_bad_efficiency_override(tmp_path, line, field):
    err = _expect(_write(tmp_path, GOOD + f"\n[efficiency]\n{line}\n"), field)
    assert "got" in str(err)


def test_good_efficiency_override_applies(tmp_path):
    e = load_efficiency(_write(tmp_path, GOOD + "\n[efficiency]\nmoe_token_passes_fp8 = 3.5\nmoe_floor_s = 2e-5\n"))
    assert e.moe_passes("fp8") == 3.5 and e.moe_floor_s == 2e-5
    assert e.moe_passes("bf16") == 0.0  # unset: no passes


def test_unit_slip_in_a_time_is_refused(tmp_path):
    err = _expect(_write(tmp_path, GOOD + "\n[efficiency]\nkernel_launch_s = 10\n"), "efficiency.kernel_launch_s")
    assert "beyond" in str(err) and "µs" in str(err)


def test_unsuffixed_moe_parameter_covers_formats_without_their_own(tmp_path):
    e = load_efficiency(_write(tmp_path, GOOD + "\n[efficiency]\nmoe_token_passes = 5\nmoe_token_passes_fp4 = 9\n"))
    assert (e.moe_passes("bf16"), e.moe_passes("fp8"), e.moe_passes("fp4")) == (5.0, 5.0, 9.0)
