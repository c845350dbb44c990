"""Measured data follows a system file's provenance, not its name (specs/catalog.measured_system; break49).

A new chip's file named "h200" with twice H200's HBM bandwidth was priced by ``--pricer table`` with H200's
measured kernel tables, silently. Expected outcomes are written from the rule in docs/catalog.md ("Whose
measured data a file gets"), the differing key by hand from the edit each test makes.
"""

from __future__ import annotations

from importlib import resources

import pytest
from cli_runner import check_error, run

from jalapeno.specs.catalog import hardware_changes, load_system, measured_system

H200 = (resources.files("jalapeno") / "data" / "systems" / "h200.toml").read_text()
BW = "hbm_bandwidth_tb_per_s = { value = 4.8,"
B300_BW = "8.0"
ARGS = ("-m", "llama-3.3-70b", "-p", "fp8-tensor", "--tp", "8", "-c", "16")


def _file(tmp_path, text: str, name: str = "h200.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_the_catalog_file_and_its_set_variants_read_their_own_measurements():
    assert measured_system(load_system("h200")) == "h200"
    assert measured_system(load_system("h200", (("chip.hbm_bandwidth_tb_per_s", 9.6),))) == "h200"


def test_a_file_named_h200_with_other_specs_gets_no_catalog_measurements(tmp_path):
    assert BW in H200
    p = _file(tmp_path, H200.replace(BW, "hbm_bandwidth_tb_per_s = { value = 9.6,", 1))
    s = load_system(str(p))
    assert s.name == "h200"  # the name clashes ...
    assert hardware_changes(s, "h200") == ["chip.hbm_bandwidth_tb_per_s"]  # ... the one edit is found ...
    assert measured_system(s) is None  # ... and no catalog system's measurements price it


def test_an_unedited_copy_keeps_them_a_changed_link_does_not(tmp_path):
    # a new source text and description change nothing physical
    copy = H200.replace('source = "NVIDIA H200 datasheet;', 'source = "my notes; NVIDIA H200 datasheet;', 1)
    assert copy != H200
    assert measured_system(load_system(str(_file(tmp_path, copy)))) == "h200"
    chips = "chips = 8," if "chips = 8," in H200 else "chips = 8\n"
    linked = H200.replace(chips, chips.replace("8", "16"), 1)
    assert linked != H200
    (tmp_path / "b").mkdir()
    s = load_system(str(_file(tmp_path / "b", linked)))
    assert hardware_changes(s, "h200") == ["levels.0.chips"] and measured_system(s) is None


def test_a_variant_of_another_name_reads_its_base_s_measurements(tmp_path):
    p = _file(
        tmp_path,
        'base = "h200"\nname = "h200-2x"\nchip.hbm_bandwidth_tb_per_s = { value = 9.6, source = "what-if" }\n',
        "v.toml",
    )
    assert measured_system(load_system(str(p))) == "h200"


def test_table_pricer_refuses_a_new_chip_named_h200(capsys, tmp_path):
    p = _file(tmp_path, H200.replace(BW, "hbm_bandwidth_tb_per_s = { value = 9.6,", 1))
    check_error(
        *run(capsys, "predict", "-s", str(p), *ARGS, "--pricer", "table"),
        "--pricer",
        "names itself 'h200'",
        "chip.hbm_bandwidth_tb_per_s differs",
        "--pricer roofline",
        'base = "h200"',
    )


def test_auto_prices_a_new_chip_named_b300_with_the_roofline(capsys, tmp_path):
    """B300's LOSO choice is the table pricer (data/validation loso); a file named "b300" with other specs is not
    B300, so ``--pricer auto`` gives exactly the roofline's figures."""
    b300 = (resources.files("jalapeno") / "data" / "systems" / "b300.toml").read_text()
    bw = f"hbm_bandwidth_tb_per_s = {{ value = {B300_BW},"
    assert bw in b300
    p = _file(tmp_path, b300.replace(bw, "hbm_bandwidth_tb_per_s = { value = 16.0,", 1), "b300.toml")
    code, auto, err = run(capsys, "predict", "-s", str(p), *ARGS, "--pricer", "auto")
    assert code == 0, err
    assert "kernel tables (its chip.hbm_bandwidth_tb_per_s differs" in err
    code, roof, _ = run(capsys, "predict", "-s", str(p), *ARGS, "--pricer", "roofline")
    assert code == 0 and auto == roof


def test_a_variant_under_the_table_pricer_says_whose_kernels_price_it(capsys, tmp_path):
    pytest.importorskip("aiconfigurator_core")
    pytest.importorskip("pyarrow")
    p = _file(
        tmp_path,
        'base = "h200"\nname = "h200-2x"\nchip.hbm_bandwidth_tb_per_s = { value = 9.6, source = "what-if" }\n',
        "v.toml",
    )
    code, out, err = run(capsys, "predict", "-s", str(p), *ARGS, "--pricer", "table")
    assert code == 0, err
    assert "note: --pricer table: h200-2x changes h200's chip.hbm_bandwidth_tb_per_s" in err
    assert "measured on h200" in err
