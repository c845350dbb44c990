"""System variants (specs/variants.py): ``base = ...`` files, dotted overrides and ``--set``.

Expected values come from the files written here (the shipped TOMLs' own numbers, the tiny
hand-computable system of tests/tiny_fixtures.py), never from the code's output.
"""

from __future__ import annotations

import json
import textwrap
from importlib import resources

import numpy as np
import pytest
from cli_runner import check_error, run
from tiny_fixtures import HBM_TB_S, model_config, system_toml

from jalapeno.cost.pricer import band_pricers, load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError, UnknownNameError
from jalapeno.specs.catalog import load_efficiency, load_system
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_file import load_model_file
from jalapeno.specs.variants import apply_overrides, parse_sets, resolve_system_data, with_overrides


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


def test_variant_with_no_changes_reproduces_its_base_exactly(tmp_path):
    path = _write(tmp_path, "jal-copy.toml", 'base = "jalapeno"\n')
    base, var = load_pricer("jalapeno"), load_pricer(path)
    assert var.system.name == "jal-copy"  # its own name (the file stem), so tables keep them apart
    assert var.system == base.system or (var.system.chip == base.system.chip and var.system.levels == base.system.levels)
    assert var.efficiency == base.efficiency  # the base's calibrated set, source included
    for w, p in band_pricers(var).items():  # and its band
        assert p.efficiency == band_pricers(base)[w].efficiency
    # a whole step is priced identically
    from jalapeno.specs.catalog import load_model

    model = load_model("deepseek-r1")
    lay = Layout(tp=1, dp=8, ep=8)
    b = Batch.make(decode_seqs=64, decode_ctx=8192)
    t0 = step_cost(model, base, lay, get_precision("fp8"), b).step_time_s
    t1 = step_cost(model, var, lay, get_precision("fp8"), b).step_time_s
    assert np.array_equal(t0, t1)


def test_byte_identical_copy_without_base_is_priced_with_the_spec_set_and_says_so(tmp_path, capsys):
    text = (resources.files("jalapeno") / "data" / "systems" / "jalapeno.toml").read_text()
    path = _write(tmp_path, "mine.toml", text)
    assert load_efficiency(path) == DEFAULT_EFFICIENCY  # no base, no [efficiency]: documented defaults
    code, out, err = run(capsys, "collective", "--system", path, "--group", "8", "--json")
    assert code == 0
    notes = [ln for ln in err.splitlines() if ln.startswith("note:")]
    # the copy keeps name = "jalapeno": a second note says it is not the catalog system (newuser29)
    clash = [ln for ln in notes if "a catalog system's name" in ln]
    notes = [ln for ln in notes if ln not in clash]
    assert len(clash) == 1 and "names itself 'jalapeno'" in clash[0]
    assert len(notes) == 1 and "mine.toml" in notes[0] and "'spec'" in notes[0] and "base =" in notes[0]
    assert json.loads(out)["efficiency_source"] == DEFAULT_EFFICIENCY.source
    # a shipped system says nothing
    code, out, err = run(capsys, "collective", "--system", "jalapeno", "--group", "8", "--json")
    assert code == 0 and "note:" not in err


def test_note_is_said_once_per_process(tmp_path, capsys):
    from jalapeno.cli.system_notes import note_efficiency

    text = (resources.files("jalapeno") / "data" / "systems" / "h100.toml").read_text()
    path = _write(tmp_path, "once.toml", text)
    s = load_system(path)
    note_efficiency(s)
    note_efficiency(s)
    assert capsys.readouterr().err.count("note:") == 1


def test_bare_number_override_keeps_the_source_and_dotted_keys_reach_levels(tmp_path):
    path = _write(tmp_path, "jal8.toml", """\
        base = "jalapeno"
        name = "jalapeno-8stack"
        chip.hbm_stacks = { value = 8, source = "one report says eight HBM sites" }
        chip.hbm_bandwidth_tb_per_s = 20.5
        levels.rack.bandwidth_gb_per_s = 900
        efficiency.kernel_launch_s = 0.25e-6
        """)
    s = load_system(path)
    assert s.name == "jalapeno-8stack"
    assert s.chip.hbm_stacks == 8 and s.sources["chip.hbm_stacks"] == "one report says eight HBM sites"
    assert s.chip.hbm_bandwidth_bytes_per_s == 20.5e12
    assert "was 15.4" in s.sources["chip.hbm_bandwidth_tb_per_s"]
    assert [lv.bandwidth_bytes_per_s for lv in s.levels] == [600e9, 900e9, 200e9]
    assert s.chip.hbm_capacity_bytes == 216 * 2**30  # untouched fields are the base's
    eff, base = load_efficiency(path), load_efficiency("jalapeno")
    assert eff.kernel_launch_s == 0.25e-6
    assert eff.gemm == base.gemm and eff.link_fraction == base.link_fraction  # the rest inherited
    low = load_efficiency(path, "low")
    assert low.kernel_launch_s == 0.25e-6 and low.gemm == load_efficiency("jalapeno", "low").gemm


def test_calibration_key_chooses_another_set(tmp_path):
    spec = _write(tmp_path, "a.toml", 'base = "jalapeno"\ncalibration = "spec"\n')
    assert load_efficiency(spec) == DEFAULT_EFFICIENCY
    # no efficiency band: only the base's software-stack band (Jalapeño: GPU-like to compiled, docs/stacks.md)
    from jalapeno.specs.stacks import get_stack

    assert band_pricers(load_pricer(spec))["low"].efficiency == get_stack("jalapeno").apply(DEFAULT_EFFICIENCY, "low")
    borrowed = _write(tmp_path, "b.toml", 'base = "jalapeno"\ncalibration = "b200"\n')
    assert load_efficiency(borrowed).gemm == load_efficiency("b200").gemm
    bad = _write(tmp_path, "c.toml", 'base = "jalapeno"\ncalibration = "b2000"\n')
    with pytest.raises(SpecError, match="calibration"):
        load_system(bad)


def test_variant_of_a_variant_and_a_cycle(tmp_path):
    _write(tmp_path, "v1.toml", 'base = "jalapeno"\nchip.tdp_w = 800\n')
    v2 = _write(tmp_path, "v2.toml", 'base = "v1.toml"\nchip.sustained_w = 600\n')
    s = load_system(v2)
    assert (s.chip.tdp_w, s.chip.sustained_w) == (800, 600)
    assert load_efficiency(v2).gemm == load_efficiency("jalapeno").gemm
    _write(tmp_path, "x.toml", 'base = "y.toml"\n')
    y = _write(tmp_path, "y.toml", 'base = "x.toml"\n')
    with pytest.raises(SpecError, match="loops"):
        load_system(y)
    with pytest.raises(UnknownNameError):
        load_system(_write(tmp_path, "z.toml", 'base = "jalapenno"\n'))


def test_overrides_are_validated_like_a_catalog_file():
    with pytest.raises(SpecError, match="hbm_stacks"):
        load_system("jalapeno", (("chip.hbm_stack", 8),))  # unknown: suggests the right key
    with pytest.raises(SpecError, match="did you mean 'chip.hbm_stacks'"):
        load_system("jalapeno", (("chip.hbm_stack", 8),))
    with pytest.raises(SpecError, match="positive"):
        load_system("jalapeno", (("chip.hbm_bandwidth_tb_per_s", -1),))
    with pytest.raises(SpecError, match="whole number"):
        load_system("jalapeno", (("chip.hbm_stacks", 6.5),))
    with pytest.raises(SpecError, match="no link level named 'rak'"):
        load_system("jalapeno", (("levels.rak.bandwidth_gb_per_s", 900),))
    with pytest.raises(SpecError, match="unknown efficiency parameter"):
        load_system("jalapeno", (("efficiency.kernel_lunch_s", 1e-7),))
    with pytest.raises(SpecError, match=r"\(0, 1\]"):
        load_system("jalapeno", (("efficiency.hbm_fraction", 1.5),))


def test_parse_sets():
    assert parse_sets(["chip.hbm_stacks=8", "levels.rack.latency_us=1.5", "name=x"]) == (
        ("chip.hbm_stacks", 8), ("levels.rack.latency_us", 1.5), ("name", "x"))
    with pytest.raises(SpecError, match="KEY=VALUE"):
        parse_sets(["chip.hbm_stacks"])


def test_a_set_key_given_twice_is_refused(capsys):
    # the last value won silently (b200 at 4 TB/s while the title named 16 and 4)
    check_error(*run(capsys, "predict", "-s", "b200", "-c", "64", "--set", "chip.hbm_bandwidth_tb_per_s=16",
                     "--set", "chip.hbm_bandwidth_tb_per_s=4"),
                "--set chip.hbm_bandwidth_tb_per_s: given twice", "give chip.hbm_bandwidth_tb_per_s once")


def test_apply_overrides_does_not_touch_its_input():
    data, _ = resolve_system_data("jalapeno")
    before = json.dumps(data, sort_keys=True)
    out = apply_overrides(data, [("chip.tdp_w", 900)])
    assert out["chip"]["tdp_w"]["value"] == 900 and json.dumps(data, sort_keys=True) == before


def test_with_overrides_on_a_loaded_system():
    s = load_system("gb300-nvl72")
    v, eff = with_overrides(s, [("chip.hbm_bandwidth_tb_per_s", 10.0), ("efficiency.step_overhead_s", 1e-4)])
    assert v.chip.hbm_bandwidth_bytes_per_s == 10e12 and s.chip.hbm_bandwidth_bytes_per_s == 8e12
    assert eff.step_overhead_s == 1e-4 and eff.gemm == load_efficiency("gb300-nvl72").gemm
    _, low = with_overrides(s, [("efficiency.step_overhead_s", 1e-4)], which="low")
    assert low.gemm == load_efficiency("gb300-nvl72", "low").gemm


def test_memory_bound_step_halves_with_twice_the_bandwidth(tmp_path):
    """Tiny hand system (every efficiency 1, no fixed costs): a decode step of 2 sequences is
    bytes / bandwidth, so a variant with twice the HBM bandwidth takes half the time."""
    _write(tmp_path, "tiny.toml", system_toml(40.0))
    fast = _write(tmp_path, "fast.toml", f'base = "tiny.toml"\nchip.hbm_bandwidth_tb_per_s = {2 * HBM_TB_S}\n')
    (tmp_path / "config.json").write_text(json.dumps(model_config()))
    model = load_model_file(tmp_path / "config.json", name="tiny-llama")
    slow_p, fast_p = load_pricer(str(tmp_path / "tiny.toml")), load_pricer(fast)
    assert fast_p.efficiency == slow_p.efficiency  # the base file's own [efficiency] is inherited
    b = Batch.make(decode_seqs=2, decode_ctx=512)
    t_slow = step_cost(model, slow_p, Layout(tp=1), get_precision("bf16"), b).step_time_s[0]
    t_fast = step_cost(model, fast_p, Layout(tp=1), get_precision("bf16"), b).step_time_s[0]
    assert t_fast == pytest.approx(t_slow / 2, rel=0.01)  # FLOPs at 1 PFLOP/s are < 1% of it


def test_cli_set_on_predict_and_compare(capsys):
    code, out, _ = run(capsys, "hardware", "show", "jalapeno", "--set", "chip.hbm_stacks=8", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["chip"]["hbm_stacks"] == 8 and d["name"] == "jalapeno+chip.hbm_stacks=8"
    code, out, _ = run(capsys, "step", "--system", "jalapeno", "--set", "efficiency.kernel_launch_s=1e-7",
                         "--json")
    assert code == 0 and "kernel_launch_s=1e-07" in json.loads(out)["efficiency_source"]
    check_error(*run(capsys, "step", "--system", "jalapeno", "--set", "chip.hbm_stak=8"), "chip.hbm_stak",
                "did you mean")
    check_error(*run(capsys, "step", "--system", "jalapeno", "--set", "chip.hbm_stacks"), "--set", "KEY=VALUE")
    check_error(*run(capsys, "compare", "--systems", "jalapeno,gb300-nvl72", "--set", "b200:chip.tdp_w=1",
                     "--json"), "--set", "not among --systems")


def test_compare_names_each_systems_efficiency_set(tmp_path, capsys):
    text = (resources.files("jalapeno") / "data" / "systems" / "h100.toml").read_text().replace(
        'name = "h100"', 'name = "my-h100"', 1)
    path = _write(tmp_path, "myh100.toml", text)
    code, out, err = run(capsys, "compare", "--systems", f"h100,{path}", "--model", "llama-3.3-70b",
                         "--serving", "agg", "--concurrency", "1,16", "--precision", "fp8", "--html", "")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "efficiency sets: h100: calibrated: measured kernels; my-h100: spec (documented defaults)" in flat


def test_a_quoted_efficiency_key_in_a_variant_file_is_the_table_entry(tmp_path, capsys):
    quoted, table = tmp_path / "q.toml", tmp_path / "t.toml"
    quoted.write_text('base = "h200"\n"efficiency.gemm.fp8_block.k_block_s" = 5e-6\n')
    table.write_text('base = "h200"\n[efficiency.gemm.fp8_block]\nk_block_s = 5e-6\n')
    args = ("-m", "deepseek-r1", "--tp", "8", "--batch", "8", "--json")
    times = [json.loads(run(capsys, "step", "-s", str(p), *args)[1])["step_time_s"] for p in (quoted, table)]
    base = json.loads(run(capsys, "step", "-s", "h200", *args)[1])["step_time_s"]
    assert times[0] == times[1] and times[0] > base  # applied, not dropped with the hardware keys
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "h200"\n"efficiency.gemm.fp8_block.k_block_s" = -5\n')
    check_error(*run(capsys, "step", "-s", str(bad), *args), "bad.toml", "k_block_s", "non-negative")


def test_a_set_error_inside_an_efficiency_key_is_blamed_on_set(capsys):
    check_error(*run(capsys, "step", "-s", "h200", "-m", "deepseek-r1", "--tp", "8", "--batch", "8",
                     "--set", "efficiency.gemm.nvfp4.k_block_s=1e-7"), "--set: efficiency.gemm.nvfp4", "fp8_block")
