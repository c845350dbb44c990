"""Round 51 follow-ups (followup51) to newuser51 and break51: step and predict refuse what the options and the model
decide before ``--pricer table`` loads the system's kernel tables (tens of seconds)."""

from __future__ import annotations

import pytest
from cli_runner import check_error, run


def _unreachable(*a, **k):
    raise AssertionError("system_pricer reached before the input checks")


@pytest.mark.parametrize(
    "module, argv",
    [
        # DeepSeek-R1 has 61 layers (config.json num_hidden_layers): 62 pipeline stages leave one with none
        ("step_cmd", ["step", "-s", "b300", "--pp", "62", "--pricer", "table"]),
        ("predict_cmd", ["predict", "-s", "b300", "--pp", "62", "--pricer", "table", "-c", "8"]),
    ],
)
def test_a_layout_the_model_refuses_is_refused_before_the_pricer_loads(capsys, monkeypatch, module, argv):
    # 'step -s b300 --pp 62 --pricer table' took ~48 s to refuse on a loaded machine: the pricer (the measured
    # kernel tables) loaded first. A pricer that fails when called shows the refusal now comes before it.
    import importlib

    monkeypatch.setattr(importlib.import_module(f"jalapeno.cli.{module}"), "system_pricer", _unreachable)
    code, out, err = run(capsys, *argv)
    check_error(code, out, err, "--pp", "PP62 exceeds 61 layers", "pp <= 61")


@pytest.mark.parametrize(
    "argv, words",
    [
        (["step", "-s", "b300", "--pricer", "table", "--batch", "0"], ("--batch/--prefill-tokens", "no tokens")),
        (
            ["predict", "-s", "b300", "--pricer", "table", "-c", "8", "--rate", "2"],
            ("--concurrency/--rate", "exactly one"),
        ),
        (
            ["predict", "-s", "b300", "--pricer", "table", "-c", "8", "--prefill", "tp=8,workers=1"],
            ("--prefill/--decode", "both pools"),
        ),
    ],
)
def test_option_checks_come_before_the_pricer(capsys, monkeypatch, argv, words):
    import importlib

    monkeypatch.setattr(importlib.import_module(f"jalapeno.cli.{argv[0]}_cmd"), "system_pricer", _unreachable)
    code, out, err = run(capsys, *argv)
    check_error(code, out, err, *words)


def test_the_model_only_layout_check_leaves_the_chip_count_to_the_system():
    # system None checks what the model decides; the chip count is the system's, checked once it is loaded
    from types import SimpleNamespace as N

    from jalapeno.deploy.layout import Layout, for_model, validate_layout
    from jalapeno.errors import InfeasibleDeployment
    from jalapeno.specs.catalog import load_model

    m = load_model("llama-3.3-70b")  # dense, 64 heads, 8 KV heads, 80 layers
    lay = for_model(Layout(tp=8, dp=4), m)  # 32 chips
    validate_layout(lay, m, None)
    with pytest.raises(InfeasibleDeployment, match="needs 32 chips"):
        validate_layout(lay, m, N(name="toy", max_chips=16))
    with pytest.raises(InfeasibleDeployment, match="PP81 exceeds 80 layers"):
        validate_layout(for_model(Layout(tp=1, pp=81), m), m, None)


@pytest.mark.parametrize(
    "key, words",
    [
        # the capacity and the usable part are both GiB fields: the name says neither, so both are named
        ("chip.hbm_gib", ("did you mean 'chip.hbm_usable_gib' or 'chip.hbm_capacity_gib'?",)),
        # a format's TFLOPS is a row of the peak table, not the FP32 vector figure difflib finds closest
        ("chip.fp8_tflops", ("did you mean 'chip.peak_dense_tflops.fp8'?",)),
        ("chip.peak_bf16_tflops", ("did you mean 'chip.peak_dense_tflops.bf16'?",)),
        # one plain slip keeps one suggestion (hbm_usable_gb is far behind hbm_stacks)
        ("chip.hbm_stack", ("did you mean 'chip.hbm_stacks'?",)),
    ],
)
def test_an_unknown_system_field_names_the_keys_it_may_mean(capsys, key, words):
    code, out, err = run(capsys, "step", "-s", "b200", "--set", f"{key}=100")
    check_error(code, out, err, f"--set: {key}", "unknown system field", *words)


def test_a_stack_version_note_waits_for_the_command_line_to_parse(capsys):
    # 'predict --stack sglang@0.5.9' without --system printed the release's version note, then the usage error:
    # the note came from --stack's callback while click was still parsing. Now the error comes alone ...
    code, out, err = run(capsys, "predict", "--stack", "sglang@0.5.9", "-c", "8")
    assert code == 2 and "Missing option '--system'" in err, err
    assert "note: --stack" not in err, err
    # ... and a command line that parses still gets it, once (0.5.9 < 0.5.10rc0: the disagg_prebuilt rule)
    code, out, err = run(capsys, "predict", "-s", "h200", "--stack", "sglang@0.5.9", "-c", "8")
    assert code == 0, err
    assert err.count("note: --stack sglang@0.5.9 takes the version rule") == 1, err


def test_at_zero_is_named_as_the_peak_that_a_zero_tier_floor_reads(capsys):
    # '--tiers fast=0' runs (a floor of 0 tok/s/user: every frontier point qualifies, so the tier reads the peak,
    # docs/metrics.md) while '--at 0' was refused as 'needs positive values': now the refusal says what 0 would be
    # and where the peak is printed, and both helps say so
    code, out, err = run(capsys, "compare", "-m", "gpt-oss-120b", "-s", "b200,h200", "--at", "0")
    check_error(code, out, err, "--at", "0 tok/s/user is the peak", "--tiers NAME=0", "give speeds above 0")
    code, out, err = run(capsys, "compare", "--help")
    text = " ".join(out.split())
    assert "0 is the peak" in text and "0: the peak" in text, text


def test_step_slices_on_a_one_slice_chip_says_it_has_one_slice(capsys, monkeypatch):
    # H200's [die] slices = 1 (data/systems, the GH100 whitepaper: one die): its one row was captioned 'Every
    # placement is balanced, so the rows are equal', a claim about rows it does not have
    from jalapeno.cli import common

    monkeypatch.setattr(common.console, "width", 400)
    code, out, err = run(capsys, "step", "-s", "h200", "--slices")
    assert code == 0, err
    text = " ".join(out.split())
    assert "The chip has one slice, so there is one row" in text and "rows are equal" not in text, text
    # a many-slice chip keeps its words (Jalapeño: several slices on one die)
    code, out, err = run(capsys, "step", "-s", "jalapeno", "--slices")
    assert code == 0, err
    assert "so the rows are equal" in " ".join(out.split())
