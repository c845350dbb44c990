"""Bad input that round 42 left (robust43): a chip built through the API with more usable HBM than it has, ``--set
efficiency.*`` keys no op reads on the sweep commands, and round-42 features given bad values on the CLI. Each is
named: one error naming the field and the fix, or a note for a what-if that changes nothing."""

import dataclasses
import tomllib
from importlib.resources import files

import pytest

from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model, load_system

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
    from jalapeno.specs.system_load import system_from_dict

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


# ---- the unread-key note on the sweep commands ----------------------------------------------------------------------

UNREAD = "--set efficiency.moe.bf16.peak_fraction is not read: deepseek-r1 at fp8 on h200"


def _invoke(monkeypatch, args):
    from typer.testing import CliRunner

    from jalapeno.cli import system_notes
    from jalapeno.cli.app import _register, app

    monkeypatch.setattr(system_notes, "_NOTED", set())  # the note is said once per run (cli/system_notes.forget_notes)
    _register()
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["frontier", "-s", "h200", "--json"],
        ["sensitivity", "-s", "h200", "--html=", "--json"],
        ["audit", "-s", "h200", "--claim", "peak_throughput_per_chip=1000", "--json"],
        ["plan", "-s", "h200", "--target", "1e6", "--json"],
    ],
    ids=lambda a: a[0],
)
def test_a_shadowed_efficiency_key_is_named_on_the_sweep_commands(monkeypatch, args):
    # H200's calibrated set has moe[fp8] of its own, so DeepSeek-R1 FP8's experts never fall back to moe[bf16]
    err = _invoke(monkeypatch, [*args, "-m", "deepseek-r1", "--set", "efficiency.moe.bf16.peak_fraction=0.3"])
    assert UNREAD in err and "moe[fp8]" in err
    assert "not read" not in _invoke(
        monkeypatch, [*args, "-m", "deepseek-r1", "--set", "efficiency.moe.fp8.peak_fraction=0.3"]
    )


def test_compare_names_an_unread_key_only_on_the_system_it_was_given_to(monkeypatch):
    base = ["compare", "-m", "deepseek-r1", "--systems", "h200,b200", "--precision", "fp8", "--json"]
    err = _invoke(monkeypatch, [*base, "--set", "h200:efficiency.moe.bf16.peak_fraction=0.3"])
    assert UNREAD in err
    # B200's set has no FP8 MoE peak of its own: moe[bf16] is its fallback, read, so no note there
    assert "not read" not in _invoke(monkeypatch, [*base, "--set", "b200:efficiency.moe.bf16.peak_fraction=0.3"])


def test_a_key_read_at_one_swept_precision_is_not_named():
    from jalapeno.analysis.unread_keys import unread_note
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.formats import get_precision

    pr = load_pricer("b200", "calibrated", (), None)
    m, key = load_model("deepseek-r1"), ["efficiency.moe.fp8.half_rows"]
    # read at fp8 (the experts' own entry), not at fp4 (NVFP4 experts price by another entry)
    fp8, fp4 = get_precision("fp8"), get_precision("fp4")
    alone = unread_note(key, m, fp4, pr.system, pr.efficiency)
    assert alone is not None and "at fp4 on b200" in alone
    assert unread_note(key, m, [fp8, fp4], pr.system, pr.efficiency) is None


# ---- round-42 features given bad values -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mlperf_rows():
    from jalapeno.fit.mlperf import load_mlperf

    return {p.id: p for p in load_mlperf()[0]}


def test_the_scenario_ladder_says_what_mapping_it_got_and_needs(mlperf_rows):
    from jalapeno.fit.mlperf_scenarios import scenario_ladder

    offline = mlperf_rows["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"]
    with pytest.raises(SpecError) as e:
        scenario_ladder(offline)
    assert e.value.field.endswith("_Offline.mapping")
    assert f"is {offline.mapping!r}, not 'matched@limits'" in e.value.problem  # was the bare mapping: "'matched'"


def test_a_counted_ladder_without_a_server_run_is_refused_not_read_as_steady(mlperf_rows):
    from jalapeno.fit.mlperf_scenarios import scenario_ladder

    row = mlperf_rows["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server"]
    assert row.server_run is not None  # every shipped matched@limits row has its run
    with pytest.raises(SpecError) as e:
        scenario_ladder(dataclasses.replace(row, server_run=None), counted=True)
    assert e.value.field == f"{row.id}.server_run" and "counted=False" in e.value.fix


def test_an_engine_recipe_for_another_model_names_the_recipes_model_in_the_fix(capsys):
    from cli_runner import check_error, run

    # -m left at its default (deepseek-r1): the fix says which -m the recipe needs
    check_error(
        *run(capsys, "predict", "--engine", "trtllm-h200-gptoss-fp4", "-s", "h200"),
        "recipe trtllm-h200-gptoss-fp4 is written for gpt-oss-120b, not deepseek-r1",
        "give -m gpt-oss-120b",
    )
