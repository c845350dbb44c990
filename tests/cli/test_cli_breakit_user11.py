"""Findings of break-it round 11 (user11): schema errors in pydantic's words, option names
without their dashes, unbounded options, files of the wrong kind. Each refusal is one line
naming the field (as the user typed it) and the fix, in the project's words."""

from __future__ import annotations

from importlib import resources

import pytest

from cli_runner import check_error, error_line, run

PYDANTIC_WORDS = ("input should", "field required", "type=", "valid dictionary", "value error")


def _h200(tmp_path, old: str, new: str):
    text = (resources.files("jalapeno") / "data" / "systems" / "h200.toml").read_text()
    assert old in text
    f = tmp_path / "bad.toml"
    f.write_text(text.replace(old, new, 1))
    return str(f)


@pytest.mark.parametrize(("old", "new", "words"), [
    ("value = 4.8,", 'value = "fast",', ["chip.hbm_bandwidth_tb_per_s.value", "must be a number",
                                         "got 'fast'", "without quotes"]),
    ("value = 4.8,", "value = [1],", ["chip.hbm_bandwidth_tb_per_s.value", "must be a number", "got [1]"]),
    ("value = 4.8,", "value = -4.8,", ["chip.hbm_bandwidth_tb_per_s.value", "must be positive", "got -4.8"]),
    ("value = 4.8,", "value = nan,", ["chip.hbm_bandwidth_tb_per_s.value", "finite number", "not nan or inf"]),
    ("hbm_stacks = {", "hbm_stackz = {", ["chip.hbm_stackz", "not a key this table knows", "write hbm_stacks",
                                         "not hbm_stackz"]),
    ('value = 4.8, source = "NVIDIA H200 datasheet; InferenceX dashboard specs (4.8 TB/s)"', "value = 4.8",
     ["chip.hbm_bandwidth_tb_per_s.source", "is missing", "add chip.hbm_bandwidth_tb_per_s.source"]),
])
def test_schema_errors_are_in_our_words(capsys, tmp_path, old, new, words):
    """They read 'Input should be a valid number' / 'Field required' (pydantic's words)."""
    code, out, err = run(capsys, "hardware", "show", _h200(tmp_path, old, new))
    check_error(code, out, err, *words)
    line = error_line(code, out, err).lower()
    assert not any(w in line for w in PYDANTIC_WORDS), line


def test_missing_key_and_bare_number_for_a_sourced_one(capsys, tmp_path):
    import re

    text = (resources.files("jalapeno") / "data" / "systems" / "h200.toml").read_text()
    f = tmp_path / "bad.toml"
    f.write_text(re.sub(r"(?m)^hbm_stacks = .*$", "hbm_stacks = 6", text))
    check_error(*run(capsys, "hardware", "show", str(f)), "chip.hbm_stacks",
                "must be a number with its source", "got 6", 'value = <number>, source =')
    f.write_text(re.sub(r"(?m)^hbm_stacks = .*$", "", text))
    check_error(*run(capsys, "hardware", "show", str(f)), "chip.hbm_stacks", "is missing",
                "add chip.hbm_stacks to the file")


def test_set_of_a_table_to_a_number_names_a_table(capsys):
    code, out, err = run(capsys, "hardware", "show", "h200", "--set", "chip=5")
    check_error(code, out, err, "chip", "must be a table of its keys", "got 5")
    assert not any(w in error_line(code, out, err).lower() for w in PYDANTIC_WORDS)


def test_design_space_schema_error_in_our_words(capsys, tmp_path):
    f = tmp_path / "space.toml"
    f.write_text('name = "x"\nbase = "jalapeno"\ntrials = "many"\n[objective]\nmetrics = ["tok_s_per_kw"]\n'
                 '[[cases]]\nmodel = "deepseek-r1"\n[params."chip.hbm_stacks"]\nchoices = [4, 8]\n')
    code, out, err = run(capsys, "explore", str(f))
    check_error(code, out, err, "trials", "must be a whole number", "got 'many'")
    assert not any(w in error_line(code, out, err).lower() for w in PYDANTIC_WORDS)


STEP = ("step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8")


def test_an_integer_option_in_e_notation_is_refused_with_its_digits(capsys):
    """typer showed 'Invalid value for '--batch' / '-b': Input should be a valid integer, unable to
    parse string as an integer' (pydantic's words)."""
    code, out, err = run(capsys, *STEP, "--batch", "1e8")
    check_error(code, out, err, "--batch:", "must be a whole number", "got '1e8'",
                "write it in digits: --batch 100000000")
    assert not any(w in error_line(code, out, err).lower() for w in PYDANTIC_WORDS)
    check_error(*run(capsys, *STEP, "--batch", "abc"), "--batch:", "got 'abc'", "jalapeno step --help")
    check_error(*run(capsys, *STEP, "--batch", "8", "--memory-fraction", "most"), "--memory-fraction:",
                "must be a number", "got 'most'")


def test_step_out_of_memory_names_batch_not_concurrency(capsys):
    """step has no --concurrency; its out-of-memory message told the user to lower it."""
    code, out, err = run(capsys, *STEP, "--batch", "100000000")
    check_error(code, out, err, "lower --batch", "change one of the things the reason names")
    assert "concurrency" not in error_line(code, out, err)


def test_step_out_of_memory_under_an_engine_profile_names_its_limits(capsys):
    """Under --engine-memory the activations are the engine's profiled peak, which grows with
    --max-running, not --batch; the message named --batch only (tester, round 14)."""
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "minimax-m2.5", "--tp", "4", "--batch", "32",
                         "--engine-memory", "vllm-0.11", "--max-running", "20000")
    check_error(code, out, err, "the engine's profiled peak", "--max-running / --max-tokens-per-step", "lower --batch")


def test_eplb_is_bounded_by_the_expert_count(capsys):
    """--eplb 100000 was accepted and priced (weights 29,838 GiB a chip); round 13 bounds R by the
    routed-expert count (deploy/layout.check_eplb: deployments run 32 for 256). DeepSeek-R1 has 256."""
    args = ("step", "-s", "gb200-nvl72", "-m", "deepseek-r1", "--dp", "8", "--ep", "8", "--batch", "8")
    check_error(*run(capsys, *args, "--eplb", "100000"), "--eplb:", "more than deepseek-r1's 256 experts",
                "use --eplb 256 or fewer")
    check_error(*run(capsys, *args, "--eplb", "257"), "--eplb:", "more than deepseek-r1's 256 experts")
    code, out, err = run(capsys, *args, "--eplb", "256")  # allowed by the bound, refused by memory at EP8
    check_error(code, out, err, "deployment", "weights need")
    check_error(*run(capsys, "predict", "-s", "gb200-nvl72", "-m", "deepseek-r1", "-c", "8", "--prefill", "tp=8",
                     "--decode", "dp=8,ep=8,eplb=100000"), "--decode eplb", "use eplb=256 or fewer")


def test_sweep_eplb_is_bounded_by_the_expert_count(capsys):
    """A sweep refuses R above the expert count (256 for DeepSeek-R1). Mixtral's 8 experts: the
    sweeps' default 32 (which must still run; no twins are made of its uniform router) is the bound."""
    check_error(*run(capsys, "frontier", "-s", "gb200-nvl72", "-m", "deepseek-r1", "--eplb", "257"),
                "--eplb:", "more than deepseek-r1's 256 experts", "--eplb 256 or fewer")
    check_error(*run(capsys, "frontier", "-s", "h200", "-m", "mixtral-8x7b", "--eplb", "33"),
                "--eplb:", "mixtral-8x7b's 8 experts", "--eplb 32 or fewer")


@pytest.mark.parametrize(("opt", "value", "words"), [
    ("--max-running", "-1", ["--max-running:", "positive integer"]),
    ("--cuda-graph-max-batch", "0", ["--cuda-graph-max-batch:", "positive integer"]),
    ("--memory-fraction", "2", ["--memory-fraction:", "(0, 1]"]),
])
def test_option_errors_name_the_option_with_its_dashes(capsys, opt, value, words):
    """They read 'max_running: ...', 'memory-fraction: ...' where the user typed --max-running."""
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "8", opt, value)
    check_error(code, out, err, *words)
    assert error_line(code, out, err).startswith(f"error: {opt}:")


def _llama(tmp_path, **changes):
    import json

    cfg = json.loads((resources.files("jalapeno") / "data" / "models" / "llama-3.3-70b.json").read_text())
    cfg.pop("quantization_config", None)
    for k, v in changes.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    return str(f)


@pytest.mark.parametrize(("dtype", "words"), [
    ("bfloat16", ["torch_dtype bfloat16 (no quantization_config)"]),
    ("float16", ["torch_dtype float16", "priced as bf16"]),
    ("float32", ["torch_dtype float32", "served in 16 bits"]),
    (None, ["assumed bf16", "no torch_dtype"]),
])
def test_models_show_says_where_the_released_precision_comes_from(capsys, tmp_path, dtype, words):
    """torch_dtype was never read and models show did not say so."""
    import json

    code, out, err = run(capsys, "models", "show", _llama(tmp_path, torch_dtype=dtype), "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["default_precision"] == "bf16"
    for w in words:
        assert w in r["default_precision_from"]


def test_quantised_release_names_its_quantization_config(capsys):
    import json

    code, out, err = run(capsys, "models", "show", "deepseek-r1", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert (r["default_precision"], r["default_precision_from"]) == ("fp8", "config.json quantization_config "
                                                                             "(quant_method fp8)")


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "int8", 16])
def test_a_low_bit_torch_dtype_without_quantization_config_is_refused(capsys, tmp_path, dtype):
    """An FP8 torch_dtype with no quantization_config was priced as BF16 weights (2x the bytes)."""
    check_error(*run(capsys, "models", "show", _llama(tmp_path, torch_dtype=dtype)), "torch_dtype",
                "without a quantization_config", "bfloat16, float16, float32", "add the checkpoint's quantization_config")


def test_transformers_dtype_key_is_read_as_torch_dtype(capsys, tmp_path):
    """transformers >= 4.56 writes ``dtype`` where older releases wrote ``torch_dtype``."""
    check_error(*run(capsys, "models", "show", _llama(tmp_path, torch_dtype=None, dtype="float8_e5m2")),
                "dtype", "'float8_e5m2' without a quantization_config")


COLUMNS = "hardware, model, precision, isl, osl, conc, topology, tput_per_gpu, tok_s_user"


@pytest.mark.parametrize(("name", "text", "words"), [
    ("x.json", '{"a": 1}', ["--points x.json", "is json, not csv", COLUMNS]),
    ("pts.csv", '[{"conc": 4}]', ["--points pts.csv", "is json, not csv", COLUMNS]),
    ("pts.toml", "a = 1\n", ["--points pts.toml", "is toml, not csv"]),
    ("cols.csv", "a,b\n1,2\n", ["--points cols.csv: columns", "missing hardware, model", COLUMNS]),
])
def test_points_file_of_the_wrong_kind_names_csv_and_its_columns(capsys, tmp_path, name, text, words):
    """A JSON points file was refused as 'no data rows' with no word of CSV or its columns."""
    f = tmp_path / name
    f.write_text(text)
    check_error(*run(capsys, "validate", "--points", str(f), "--no-aiconfigurator"), *words)


def test_report_measured_file_is_named_as_measured(capsys, tmp_path):
    f = tmp_path / "m.json"
    f.write_text("{}")
    check_error(*run(capsys, "report", "--systems", "h200", "-m", "llama-3.3-70b", "--measured", str(f),
                     "-o", str(tmp_path / "r.html")), "--measured m.json", "not csv")


def test_hbm_is_shown_in_gib_everywhere(capsys):
    """hardware list/show printed HBM in GB (141 for H200) while every memory message (step,
    predict, engine memory) prints GiB: the same chip read 141 and 131.3. H200: 141e9 B / 2^30 =
    131.3 GiB; GB200 usable 186e9 B (MLPerf 'GB200-186GB') = 173.2 GiB."""
    code, out, err = run(capsys, "hardware", "show", "h200")
    assert code == 0, err
    assert "131.3 GiB" in out and "141.0 GB" not in out
    code, out, err = run(capsys, "hardware", "list")
    assert code == 0, err
    assert "HBM GiB" in out and "HBM GB " not in out and "131.3" in out
    code, out, err = run(capsys, "step", "-s", "gb200-nvl72", "-m", "deepseek-r1", "--dp", "8", "--ep", "8",
                         "--batch", "8", "--eplb", "256")
    assert "173.2 GiB usable" in err


def test_explore_estimate_uses_the_measured_base_pricing_time(capsys):
    """examples/explore_700w.toml (200 trials, 2 cases) ran ~167 s with no word: the fixed 0.1 s per
    case estimated 40 s, under the 60 s threshold. 200 trials x 0.84 s = 168 s = 2.8 minutes."""
    from jalapeno.cli.explore_cmd import _announce_long_run

    _announce_long_run(200, 2, 1, 0.84)
    err = capsys.readouterr().err
    assert "200 trials x 2 case(s)" in err and "took 0.84 s" in err and "~2.8 minutes on 1 worker(s)" in err
    _announce_long_run(200, 2, 1, 0.1)  # 20 s: below the 30 s threshold
    assert capsys.readouterr().err == ""


def test_the_evaluator_measures_the_base_pricing_time():
    pytest.importorskip("optuna")
    from jalapeno.analysis.explore import make_evaluator
    from jalapeno.specs.design_space import load_design_space

    from pathlib import Path

    ev = make_evaluator(load_design_space(Path(__file__).parents[2] / "examples" / "explore_700w.toml"))
    assert 0 < ev.base_eval_s < 600


def test_frontier_run_stored_with_the_old_column_names_still_shows(capsys, tmp_path):
    """frontier --out / --store columns now carry their unit (throughput_per_chip_tok_per_s,
    interactivity_tok_per_s_per_user); a run stored before reads under the new names."""
    import json

    pd = pytest.importorskip("pandas")
    pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    store = tmp_path / "st"
    code, out, err = run(capsys, "frontier", "-s", "h200", "-m", "llama-3.3-70b", "-w", "1k1k", "--store", str(store))
    assert code == 0, err
    (d,) = [f.parent for f in store.rglob("points.parquet")]
    new = pd.read_parquet(d / "points.parquet")
    assert {"throughput_per_chip_tok_per_s", "interactivity_tok_per_s_per_user"} <= set(new.columns)
    new.rename(columns={"throughput_per_chip_tok_per_s": "throughput_per_chip",
                        "interactivity_tok_per_s_per_user": "interactivity"}).to_parquet(d / "points.parquet")
    code, out, err = run(capsys, "results", "show", d.name, "--store", str(store), "--json")
    assert code == 0, err
    pts = json.loads(out)["points"]
    assert pts[0]["throughput_per_chip_tok_per_s"] == pytest.approx(float(new.throughput_per_chip_tok_per_s[0]))


def test_a_config_without_model_type_is_named_missing(capsys, tmp_path):
    """It read 'model_type: must be a string, got None' for a JSON file that is not a config.json."""
    f = tmp_path / "x.json"
    f.write_text('{"a": 1}')
    check_error(*run(capsys, "models", "show", str(f)), "model_type", "is missing",
                "names its architecture", "pass the model's config.json")


def test_set_bound_names_the_key_as_typed(capsys):
    """--set chip.hbm_stacks=0 told the user to 'give chip.hbm_stacks.value a positive value'."""
    code, out, err = run(capsys, "hardware", "show", "h200", "--set", "chip.hbm_stacks=0")
    check_error(code, out, err, "must be positive", "got 0", "give chip.hbm_stacks a positive value")


def test_eplb_help_states_its_bound(capsys):
    for cmd in ("step", "predict", "simulate", "frontier"):
        code, out, err = run(capsys, cmd, "--help")
        assert code == 0, err
        assert "at most the model's expert count" in " ".join(out.replace("│", " ").split()), cmd


@pytest.mark.parametrize(("op", "near"), [("alltoall", "all_to_all"), ("AllReduce", "all_reduce"),
                                          ("all-gather", "all_gather"), ("all_reduc", "all_reduce")])
def test_a_misspelt_collective_names_the_one_meant(capsys, op, near):
    """--op alltoall listed the five names without saying which was meant."""
    check_error(*run(capsys, "collective", "-s", "h200", "--op", op, "-g", "8", "--bytes", "1e6"),
                "--op", f"unknown collective '{op}'", f"did you mean {near}?")
