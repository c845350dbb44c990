"""break54: bad input found by probing, each one clear error (the commands' other refusals: the break5x files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import check_error, run

DATA = Path(__file__).parents[2] / "src" / "jalapeno" / "data"


def test_an_unknown_key_of_a_table_names_the_table_s_keys_not_another_table_s(capsys):
    """--set cost.nosuch=1 was asked "did you mean 'host.note'?" (difflib's nearest over every key): a key of [cost]
    is not one of [host]. b200.toml's [cost] states one key, usd_per_chip_hour."""
    code, out, err = run(capsys, "step", "-s", "b200", "--set", "cost.nosuch=1")
    check_error(code, out, err, "--set: cost.nosuch", "unknown system field ([cost] has usd_per_chip_hour)")
    assert "did you mean" not in err
    # a near key of the same table is still offered as before
    code, out, err = run(capsys, "step", "-s", "b200", "--set", "cost.usd_per_hour=1")
    check_error(code, out, err, "did you mean 'cost.usd_per_chip_hour'?")


def _llama(tmp_path, **over) -> str:
    cfg = json.loads((DATA / "models" / "llama-3.3-70b.json").read_text())
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**cfg, **over}))
    return str(p)


@pytest.mark.parametrize("value, shown", [("x", '"x"'), ([1], "[1]")])
def test_a_text_config_that_is_not_an_object_is_refused(capsys, tmp_path, value, shown):
    """A text_config of "x" (or [1]) was passed over, silently: it is the text model's fields or nothing; null is
    no text_config, as before."""
    code, out, err = run(capsys, "models", "show", _llama(tmp_path, text_config=value))
    check_error(code, out, err, "text_config", f"must be an object of the text model's fields, got {shown}")
    code, out, err = run(capsys, "models", "show", _llama(tmp_path, text_config=None))
    assert code == 0, err


@pytest.mark.parametrize(
    "given, plain",
    [
        ("64KB", "64000"),  # 64 x 1,000
        ("1MiB", "1048576"),  # 2^20
        ("1.5GB,2 MB", "1.5e9,2e6"),  # each item of a list, a space before the unit too
    ],
)
def test_collective_bytes_with_a_unit_say_the_plain_bytes(capsys, given, plain):
    """'64KB' was told only "is not a number or list of numbers"; the fix now writes the bytes it means."""
    code, out, err = run(capsys, "collective", "-s", "b200", "--bytes", given)
    check_error(code, out, err, "--bytes", "carries a unit: --bytes takes plain bytes", f"write --bytes {plain} (")
    code, out, err = run(capsys, "collective", "-s", "b200", "--bytes", plain)
    assert code == 0, err


@pytest.mark.parametrize(
    "key, fix",
    [
        ("engine.max_running=64", "give --max-running VALUE"),
        ("engine.gpu_memory_utilization=0.9", "give --memory-fraction VALUE"),  # vLLM's name for it
        ("engine.max_num_tokens=8192", "give --max-tokens-per-step VALUE"),  # TRT-LLM's
        ("engine.nosuch=1", "give --engine RECIPE"),
    ],
)
def test_an_engine_setting_given_to_set_names_its_option(capsys, key, fix):
    """--set engine.max_running=64 was told only "unknown system field": an engine limit is an option."""
    code, out, err = run(capsys, "step", "-s", "b200", "--set", key)
    check_error(code, out, err, f"--set: {key.split('=')[0]}", "is not a system field", fix)


def test_a_toml_points_file_is_named_toml_not_json(capsys, tmp_path):
    """A .toml whose text opens with a '[table]' was called JSON (its first character decided before its name)."""
    f = tmp_path / "points.toml"
    f.write_text('[[claim]]\nclaim = "max_interactivity=1"\n')
    code, out, err = run(capsys, "validate", "--points", str(f), "--no-aiconfigurator")
    check_error(code, out, err, "--points points.toml", "is TOML, not CSV")
    f = tmp_path / "points.txt"  # no telling name: the text decides
    f.write_text("[1, 2]\n")
    check_error(*run(capsys, "validate", "--points", str(f), "--no-aiconfigurator"), "is JSON, not CSV")


def test_report_measured_given_a_directory_names_it_as_one(capsys, tmp_path):
    """--measured DIR was told "file not found" (it exists); refused before the sweep as a directory."""
    code, out, err = run(capsys, "report", "-s", "h200", "-m", "llama-3.3-70b", "--measured", str(tmp_path), "--json")
    check_error(code, out, err, "--measured", "is a directory, not an InferenceX points CSV")
