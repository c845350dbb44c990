"""Round 30 new-user pass and break-it (newuser30): an analyst auditing a vendor claim, then hostile input."""

from __future__ import annotations

import pytest
from cli_runner import error_line, run


# ---- the claim as the analyst words it -------------------------------------------------------------------------------

@pytest.mark.parametrize("name, meant, unit", [
    # the press claim is 'tokens per watt': the metric is tok/s per kW, so the figure is x 1,000 (W -> kW);
    # tokens per joule = tok/s per W; tokens per kWh = tok/s/kW x 3,600 s/h; J per token is the inverse
    ("tokens_per_watt", "peak_tok_s_per_kw", "x 1,000"),
    ("tok_s_per_w", "peak_tok_s_per_kw", "x 1,000"),
    ("tokens_per_joule", "peak_tok_s_per_kw", "x 1,000"),
    ("tokens_per_kwh", "peak_tok_s_per_kw", "/ 3,600"),
    ("joules_per_token", "peak_tok_s_per_kw", "1,000 / the joules per token"),
    ("cost_per_token", "peak_tokens_per_usd", "1e6 / the $ per million tokens"),
    ("per_user_speed", "max_interactivity", None),
    ("tok_s_per_user", "max_interactivity", None),
    ("tok_s_per_gpu", "peak_throughput_per_chip", None),
])
def test_audit_claim_in_the_analysts_words_names_the_metric_and_its_unit(capsys, name, meant, unit):
    """'tokens_per_watt' listed the seven metrics and no hint; 'tok_s_per_w' pointed at tok_s_per_kw (the @X
    metric) without the factor 1,000 between a per-W and a per-kW figure."""
    line = error_line(*run(capsys, "audit", "-s", "jalapeno", "--claim", f"{name}=2"))
    assert f"--claim: unknown metric '{name}' (did you mean {meant}?" in line
    if unit:
        assert unit in line


def test_audit_claim_hint_keeps_the_at_form(capsys):
    line = error_line(*run(capsys, "audit", "-s", "jalapeno", "--claim", "tokens_per_watt@50=2"))
    assert "(did you mean tok_s_per_kw?" in line
    line = error_line(*run(capsys, "sensitivity", "-s", "jalapeno", "--metric", "tok_s_per_gpu@50", "--html", ""))
    assert "(did you mean throughput_per_chip?)" in line


# ---- one-word choices typed another way ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, hint", [
    (("compare", "--power", "Chip"), "'chip'"),
    (("compare", "--power", "all_in"), "'all-in'"),
    (("compare", "--power", "allin"), "'all-in'"),
    (("compare", "--serving", "AGG"), "'agg'"),
    (("compare", "--serving", "disaggregated"), "'disagg'"),
    (("compare", "-p", "FP8"), "'fp8'"),
    (("compare", "--efficiency", "calibrate"), "'calibrated'"),
    (("compare", "--pricer", "tables"), "'table'"),
    (("compare", "--routing", "Measured"), "'measured'"),
    (("compare", "--overlap", "TBO"), "'tbo'"),
    (("compare", "--chip-model", "tile"), "'tiled'"),
    (("plan", "-s", "jalapeno", "--target", "1e6", "--target-kind", "Output"), "'output'"),
    (("audit", "-s", "jalapeno", "--claim", "max_interactivity=100", "--power", "All-In"), "'all-in'"),
    (("audit", "-s", "jalapeno", "--claim", "max_interactivity=100", "--serving", "Agg"), "'agg'"),
])
def test_a_choice_typed_another_way_names_the_one_meant(capsys, args, hint):
    """'-p FP8', '--power all_in', '--serving disaggregated' listed the choices with no word of which was
    meant, where --kv-dtype FP8 ran and a system or model name got '(did you mean ...?)'."""
    line = error_line(*run(capsys, *args, *(("--html", "") if args[0] == "compare" else ())))
    assert f"(did you mean {hint}?)" in line


# ---- hostile system, agentic and design-space files ------------------------------------------------------------------

def _variant(tmp_path, name: str, body: str) -> str:
    p = tmp_path / name
    p.write_text('base = "jalapeno"\n' + body + "\n")
    return str(p)


@pytest.mark.parametrize("body, key", [
    ("chip.peak_dense_tflops = {}", "chip.peak_dense_tflops"),
    ("[power]", "power"),
])
def test_variant_empty_table_is_refused_as_set_refuses_it(capsys, tmp_path, body, key):
    """chip.peak_dense_tflops = {} (or a bare [power]) in a variant set nothing, silently; --set KEY={} is refused."""
    line = error_line(*run(capsys, "hardware", "show", _variant(tmp_path, "v.toml", body)))
    assert f"error: v.toml: {key}: an empty table sets nothing." in line


def test_variant_table_header_still_merges(capsys, tmp_path):
    code, out, _ = run(capsys, "hardware", "show", _variant(tmp_path, "v.toml", "[chip]\ntdp_w = 800"), "--json")
    assert code == 0 and '"tdp_w": 800' in out.replace(".0", "")


@pytest.mark.parametrize("value, shown", [
    ("1979-05-27", "got the date/time 1979-05-27"),
    ("07:32:00", "got the date/time 07:32:00"),
])
def test_a_toml_date_is_shown_as_written_not_as_python(capsys, tmp_path, value, shown):
    """chip.tdp_w = 1979-05-27 said 'got datetime.date(1979, 5, 27)'; the fix's example was 'chip.tdp_w = 4.8'
    (4.8 W)."""
    line = error_line(*run(capsys, "hardware", "show", _variant(tmp_path, "v.toml", f"chip.tdp_w = {value}")))
    assert f"chip.tdp_w: must be a number, {shown}. Fix: write a number without quotes, e.g. chip.tdp_w = <number>" in line
    line = error_line(*run(capsys, "hardware", "show",
                           _variant(tmp_path, "e.toml", f"efficiency.hbm_fraction = {value}")))
    assert shown in line and "datetime" not in line
    agent = tmp_path / "a.toml"
    agent.write_text(f"turns = {value}\nsystem_prompt_tokens = 2000\ntool_output_tokens = 1000\nreply_tokens = 200\n"
                     "think_s = 2\n")
    line = error_line(*run(capsys, "compare", "-w", f"agentic:{agent}", "--html", ""))
    assert f"turns: must be a whole number, {shown}" in line


@pytest.mark.parametrize("name", ["   ", "x\\ny", "a\\tb"])
def test_a_system_name_that_cannot_title_a_table_is_refused(capsys, tmp_path, name):
    """name = "   " titled every table with blanks; "x\\ny" split each title over two lines."""
    line = error_line(*run(capsys, "hardware", "show", _variant(tmp_path, "v.toml", f'name = "{name}"')))
    assert "v.toml: name: must be printable text on one line, not blanks only" in line


def test_unicode_and_long_names_and_many_sets_still_run(capsys, tmp_path):
    assert run(capsys, "hardware", "show", _variant(tmp_path, "v.toml", 'name = "日本語チップ"'))[0] == 0
    assert run(capsys, "hardware", "show", _variant(tmp_path, "w.toml", f'name = "{"a" * 300}"'))[0] == 0
    # five --set make a label of 150 characters: it is the variant's name, and must still run
    code, _, err = run(capsys, "hardware", "show", "jalapeno", "--set", "chip.hbm_stacks=8", "--set",
                       "chip.hbm_bandwidth_tb_per_s=20.5", "--set", "efficiency.kernel_launch_s=2.5e-7", "--set",
                       "power.allin_kw_per_chip=1.3", "--set", "levels.rack.bandwidth_gb_per_s=900")
    assert code == 0, err


def test_design_space_derived_reference_to_a_misspelt_parameter_names_both(capsys, tmp_path):
    """[params."chip.hbm_stack"] was reported only as '[derived] refers to {chip.hbm_stacks}, which is not a
    parameter', the misspelt key unnamed."""
    from pathlib import Path

    src = (Path(__file__).parents[2] / "examples" / "explore_700w.toml").read_text()
    p = tmp_path / "d.toml"
    p.write_text(src.replace('[params."chip.hbm_stacks"]', '[params."chip.hbm_stack"]'))
    line = error_line(*run(capsys, "explore", str(p), "--html", ""))
    assert ("refers to {chip.hbm_stacks}, which is not a parameter (the parameters have 'chip.hbm_stack': one of "
            "the two is misspelt)") in line


@pytest.mark.parametrize("key, value, shown", [
    ("hidden_size", True, "hidden_size: must be a positive integer, got true."),
    ("intermediate_size", "25600", 'intermediate_size: must be a non-negative integer, got "25600".'),
    ("tie_word_embeddings", "false", 'tie_word_embeddings: must be true or false, got "false".'),
])
def test_config_json_values_are_shown_as_json_writes_them(capsys, tmp_path, key, value, shown):
    """"hidden_size": true said 'got True', "tie_word_embeddings": "false" said "got 'false'" (Python's spelling)."""
    import json
    from pathlib import Path

    cfg = json.loads((Path(__file__).parents[2] / "src/jalapeno/data/models/qwen3-32b.json").read_text())
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**cfg, key: value}))
    assert shown in error_line(*run(capsys, "models", "show", str(p)))


def test_a_plain_set_name_on_several_systems_says_how_to_name_one(capsys):
    """--set name=foo on compare said '--systems: two systems are named 'foo'. Fix: ... give a user file its own
    name' (the user gave no file)."""
    line = error_line(*run(capsys, "compare", "--set", "name=foo", "--html", ""))
    assert ("--set: 'name=foo' names all 4 systems alike (a plain KEY=VALUE sets every one, and compared systems "
            "cannot share a name). Fix: name one of them: --set jalapeno:name=foo") in line
    code, out, _ = run(capsys, "compare", "-s", "jalapeno,gb200-nvl72", "-w", "1k1k", "--serving", "agg",
                       "--set", "jalapeno:name=foo", "--html", "")
    assert code == 0 and "│ foo " in out


@pytest.mark.parametrize("key, meant", [("kernel_launch", "kernel_launch_s"), ("hbm_frac", "hbm_fraction"),
                                        ("step_overhead", "step_overhead_s")])
def test_set_efficiency_near_miss_is_named(capsys, key, meant):
    line = error_line(*run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "8",
                           "--set", f"efficiency.{key}=1e-6"))
    assert f"efficiency.{key}: unknown efficiency parameter (did you mean '{meant}'?)" in line


# ---- validate: the baselines' own error --------------------------------------------------------------------------------

def test_validate_systems_judges_a_claims_baselines_alone(capsys):
    """An analyst checking how far to trust the GB200 baseline had to read every system's rows: validate took no
    system filter (run_validation had one, for LOSO)."""
    import json

    code, out, _ = run(capsys, "validate", "--systems", "gb200-nvl72", "--no-aiconfigurator", "--json")
    assert code == 0
    d = json.loads(out)
    assert {r["system"] for r in d["summary"]} == {"gb200-nvl72"}
    code, out, _ = run(capsys, "validate", "-s", "gb200-nvl72", "--no-aiconfigurator")
    assert code == 0 and "systems gb200-nvl72" in out


@pytest.mark.parametrize("value, words", [
    ("gb300", "--systems: unknown system 'gb300' (did you mean 'gb300-nvl72'?)"),
    ("", "--systems: no system given"),
    ("jalapeno", "--systems: no measured point on jalapeno"),
])
def test_validate_systems_bad_names(capsys, value, words):
    assert words in error_line(*run(capsys, "validate", "--systems", value, "--no-aiconfigurator"))


# ---- names the operating system refuses, labels -----------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("compare", "-m", "x" * 5000, "--html", ""),          # not a path: an unknown model, with the list
    ("compare", "-m", "/" + "x" * 5000 + ".json", "--html", ""),
    ("compare", "-s", "/" + "x" * 5000 + ".toml", "--html", ""),
    ("simulate", "-s", "h200", "--tp", "8", "-w", "/" + "x" * 5000 + ".csv"),
    ("validate", "--points", "/" + "x" * 5000 + ".csv"),
])
def test_a_name_too_long_for_the_os_is_not_called_an_output_failure(capsys, args):
    """-m with a 5,000-character name said 'xxx...: cannot write the output (File name too long)': an input."""
    line = error_line(*run(capsys, *args))
    assert "cannot write the output" not in line
    assert ("unknown model" in line) or ("the name is longer than the operating system allows" in line and
                                         "Fix: give a shorter name or path" in line and len(line) < 400)


def test_a_boolean_set_is_labelled_as_typed(capsys):
    code, out, _ = run(capsys, "compare", "-s", "jalapeno,gb200-nvl72", "-w", "1k1k", "--serving", "agg",
                       "--set", "jalapeno:vendor_verified=false", "--html", "")
    assert code == 0 and "jalapeno+vendor_verified=false" in out and "=False" not in out
