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
    assert "levels.node" in err.field and "positive" in err.fix  # the level by its name, as the file names it


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
    ("moe.fp4.peak_fraction = true", "efficiency.moe.fp4.peak_fraction"),  # a boolean is not a number
    ("moe.bf16.token_passes = false", "efficiency.moe.bf16.token_passes"),
    ("moe.fp8.hbm_fraction = 1.5", "efficiency.moe.fp8.hbm_fraction"),     # a fraction above 1
    ("gemm.fp8.half_rows = -3", "efficiency.gemm.fp8.half_rows"),          # negative rows
    ("gemm.fp4.half_rows = 1e7", "efficiency.gemm.fp4.half_rows"),         # beyond the sanity ceiling
    ("moe_floor_s = -1e-6", "efficiency.moe_floor_s"),                     # a negative time
    ('moe.bf16.half_rows = "many"', "efficiency.moe.bf16.half_rows"),
    ("source = 5", "efficiency.source"),                                   # not a string
])
def test_bad_efficiency_override(tmp_path, line, field):
    err = _expect(_write(tmp_path, GOOD + f"\n[efficiency]\n{line}\n"), field)
    assert "got" in str(err) or "beyond" in str(err)


def test_good_efficiency_override_applies(tmp_path):
    e = load_efficiency(_write(tmp_path, GOOD + "\n[efficiency]\nmoe_floor_s = 2e-5\n[efficiency.moe.fp8]\n"
                                            "token_passes = 3.5\n"))
    assert e.moe_passes("fp8") == 3.5 and e.moe_floor_s == 2e-5
    assert e.moe_passes("bf16") == 0.0  # unset: no passes


def test_nested_gemm_override_keeps_the_other_fields_and_formats(tmp_path):
    e = load_efficiency(_write(tmp_path, GOOD + "\n[efficiency]\nhbm_fraction = 0.9\n[efficiency.gemm.fp8]\n"
                                            "peak_fraction = 0.6\nhalf_rows = 40\n[efficiency.gemm.bf16]\n"
                                            "hbm_fraction = 0.7\n"))
    assert (e.gemm_peak("fp8"), e.gemm_half("fp8"), e.gemm_hbm("fp8")) == (0.6, 40.0, 0.7)
    assert (e.gemm_peak("bf16"), e.gemm_half("bf16"), e.gemm_hbm("bf16")) == (0.75, 32.0, 0.7)  # defaults kept
    assert e.gemm_peak("fp4") == 0.75 and e.hbm_fraction == 0.9


@pytest.mark.parametrize("line, old, new", [
    ("gemm_peak_fraction_fp8 = 0.6", "gemm_peak_fraction_fp8", "gemm.fp8.peak_fraction"),
    ("gemm_half_rows = 40", "gemm_half_rows", "gemm.bf16.half_rows"),
    ("moe_token_passes_fp4 = 9", "moe_token_passes_fp4", "moe.fp4.token_passes"),
    ("moe_hbm_fraction = 0.7", "moe_hbm_fraction", "moe.bf16.hbm_fraction"),
])
def test_former_flat_name_names_its_new_spelling(tmp_path, line, old, new):
    err = _expect(_write(tmp_path, GOOD + f"\n[efficiency]\n{line}\n"), f"efficiency.{old}")
    assert f"{old} is now {new}" in str(err)
    assert f"[efficiency.{new.rsplit('.', 1)[0]}]" in err.fix


@pytest.mark.parametrize("table, field, words", [
    ("[efficiency.gemm.fp6]\npeak_fraction = 0.5", "efficiency.gemm.fp6", ["unknown compute format", "bf16, fp8, fp4"]),
    ("[efficiency.gemm.fp8]\ntoken_passes = 2", "efficiency.gemm.fp8.token_passes",
     ["unknown gemm parameter", "peak_fraction, half_rows, hbm_fraction"]),
    ("[efficiency.moe.fp8]\npeak = 0.5", "efficiency.moe.fp8.peak",
     ["unknown moe parameter", "peak_fraction, half_rows, hbm_fraction, token_passes"]),
    ("[efficiency]\nsoftmax = { bf16 = { peak_fraction = 0.5 } }", "efficiency.softmax",
     ["unknown efficiency parameter", "gemm.<format>", "hbm_fraction"]),
    ("[efficiency.attention.bf16]\npeak_fraction = 0.5", "efficiency.attention.bf16", ["attention_peak_fraction"]),
    ("[efficiency.attention.fp8]\nhalf_rows = 5", "efficiency.attention.fp8.half_rows",
     ["unknown attention parameter", "peak_fraction"]),
    ("[efficiency]\ngemm = 0.5", "efficiency.gemm", ["must be a table of compute formats"]),
    ("[efficiency]\ngemm.fp8 = 0.5", "efficiency.gemm.fp8", ["must be a table of gemm parameters"]),
])
def test_unknown_kernel_table_key_lists_the_valid_ones(tmp_path, table, field, words):
    err = _expect(_write(tmp_path, GOOD + f"\n{table}\n"), field)
    for w in words:
        assert w in str(err)


def test_unit_slip_in_a_time_is_refused(tmp_path):
    err = _expect(_write(tmp_path, GOOD + "\n[efficiency]\nkernel_launch_s = 10\n"), "efficiency.kernel_launch_s")
    assert "beyond" in str(err) and "µs" in str(err)


def test_bf16_moe_parameter_covers_formats_without_their_own(tmp_path):
    e = load_efficiency(_write(tmp_path, GOOD + "\n[efficiency.moe.bf16]\ntoken_passes = 5\n[efficiency.moe.fp4]\n"
                                            "token_passes = 9\n"))
    assert (e.moe_passes("bf16"), e.moe_passes("fp8"), e.moe_passes("fp4")) == (5.0, 5.0, 9.0)


def test_fp4_block_formats_need_an_fp4_peak(tmp_path):
    p = _write(tmp_path, _replace('tdp_w = { value = 700, source = "test" }',
                                  'fp4_block_formats = { formats = ["mxfp4"], source = "test" }\n'
                                  'tdp_w = { value = 700, source = "test" }'))
    err = _expect(p, "chip")
    assert "fp4_block_formats needs an FP4 peak" in str(err)


def test_unknown_fp4_block_format(tmp_path):
    p = _write(tmp_path, _replace('tdp_w = { value = 700, source = "test" }',
                                  'fp4_block_formats = { formats = ["fp4e2"], source = "test" }\n'
                                  'tdp_w = { value = 700, source = "test" }'))
    _expect(p, "fp4_block_formats")
