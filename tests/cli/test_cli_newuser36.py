"""Round 36 new-user pass and break-it (newuser36): hostile input files and flags, one error line each."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from cli_runner import error_line, run
from jalapeno.errors import SpecError
from jalapeno.specs.design_space import design_space_from_dict
from jalapeno.specs.model_config import model_from_config

CATALOG = Path(__file__).resolve().parents[2] / "src" / "jalapeno" / "data" / "systems"


def _space(**over) -> dict:
    d = {"name": "small", "base": "jalapeno", "seed": 5, "trials": 20,
         "objective": {"metrics": ["tok_s_per_kw"], "min_interactivity": 20, "power": "chip"},
         "cases": [{"model": "gpt-oss-120b", "workload": "1k1k"}],
         "params": {"chip.peak_dense_tflops.fp8": {"low": 2000, "high": 3000, "step": 100}},
         "constraints": {"chip_power_w": 700}, "sweep": {"batches": [1, 16]}}
    d.update(over)
    return d


@pytest.mark.parametrize("over, where, kind", [
    ({"trials": True}, "trials", "a whole number"),
    ({"seed": True}, "seed", "a whole number"),
    ({"objective": {"metrics": ["tok_s_per_kw"], "min_interactivity": True}}, "objective.min_interactivity", "a number"),
    ({"cases": [{"model": "gpt-oss-120b", "weight": True}]}, "cases.0.weight", "a number"),
    ({"params": {"chip.peak_dense_tflops.fp8": {"low": True, "high": 3000}}}, "params.chip.peak_dense_tflops.fp8.low",
     "a number"),
    ({"params": {"chip.peak_dense_tflops.fp8": {"low": 0, "high": 3000, "step": True}}},
     "params.chip.peak_dense_tflops.fp8.step", "a number"),
    ({"constraints": {"hbm_stacks": True}}, "constraints.hbm_stacks", "a number"),
    ({"sweep": {"batches": [1, True]}}, "sweep.batches.1", "a whole number"),
])
def test_a_design_space_refuses_true_where_a_number_goes(over, where, kind):
    """TOML's true was read as the number 1: trials = true ran one trial, constraints.hbm_stacks = true
    bounded designs at one stack, step = true stepped by 1, each without a word (pydantic's lax mode)."""
    with pytest.raises(SpecError) as e:
        design_space_from_dict(_space(**over), "space.toml")
    assert str(e.value).startswith(f"space.toml: {where}: must be {kind}, got true. Fix: write {kind} without quotes")


def test_a_system_file_refuses_schema_version_true(capsys, tmp_path):
    """schema_version = true loaded as version 1 (Literal[1] took True, equal to 1 in Python); 2 was refused."""
    text = (CATALOG / "h100.toml").read_text().replace('name = "h100"', 'name = "my-h100"', 1)
    assert text.count("schema_version = 1\n") == 1
    for typed in ("true", "false", "2"):
        p = tmp_path / f"v{typed}.toml"
        p.write_text(text.replace("schema_version = 1\n", f"schema_version = {typed}\n"))
        line = error_line(*run(capsys, "hardware", "show", str(p)))
        assert line == (f"error: v{typed}.toml: schema_version: must be one of 1, got {typed}. "
                        "Fix: write one of 1 for schema_version"), line
    p.write_text(text)  # the number 1 loads
    code, out, err = run(capsys, "hardware", "show", str(p))
    assert code == 0, err


@pytest.mark.parametrize("typed, shown", [("2", "2"), ("true", "true"), ("1.5", "1.5")])
def test_a_calibration_file_whose_package_is_not_text_gives_one_line(capsys, tmp_path, typed, shown):
    """--efficiency FILE with [provenance] package = 2 raised TypeError (a traceback) where the set's source
    label joins it with the other words."""
    cal = (CATALOG.parent / "calibration" / "h100.toml").read_text()
    assert cal.count('\npackage = "') == 1
    lines = [f"package = {typed}" if ln.startswith("package = ") else ln for ln in cal.splitlines()]
    p = tmp_path / "h100.toml"
    p.write_text("\n".join(lines) + "\n")
    line = error_line(*run(capsys, "step", "-s", "h100", "-m", "llama-3.3-70b", "--tp", "8", "--efficiency", str(p)))
    assert line == (f"error: --efficiency: {p}: provenance.package must be text, got {shown}. Fix: write package = "
                    '"<text>" in [provenance] (as `jalapeno calibrate --out-dir DIR` writes it)'), line


@pytest.mark.parametrize("drop", [("layer_types",), ("sliding_window",), ("attention_bias",),
                                  ("layer_types", "sliding_window", "attention_bias")])
def test_a_gpt_oss_config_without_its_attention_keys_takes_hugging_faces_defaults(drop):
    """A gpt-oss config.json without layer_types was priced with every layer in full attention (18 of 36 layers
    read their whole context instead of a 128-token window), and without attention_bias with no q/k/v/o bias;
    Hugging Face's GptOssConfig (configuration_gpt_oss.py @02b8f42b) slides layers 0, 2, ... with window 128
    and has bias on. The shipped config states the same values, so leaving them out changes nothing."""
    cfg = json.loads((CATALOG.parent / "models" / "gpt-oss-120b.json").read_text())
    assert cfg["layer_types"][:2] == ["sliding_attention", "full_attention"] and cfg["sliding_window"] == 128
    shipped = model_from_config(cfg, "gpt-oss-120b")
    bare = model_from_config({k: v for k, v in cfg.items() if k not in drop}, "gpt-oss-120b")
    assert bare == shipped
    assert bare.attention.windows == (128, 0) * 18 and bare.attention.bias
    # an explicit null window: no layer slides (Hugging Face passes sliding_window=None to every layer)
    nulled = model_from_config({**{k: v for k, v in cfg.items() if k != "layer_types"}, "sliding_window": None}, "x")
    assert nulled.attention.windows == ()


@pytest.mark.parametrize("name", ["deepseek-r1", "kimi-k2.5", "deepseek-v3.2"])
@pytest.mark.parametrize("key, v3", [("first_k_dense_replace", 3), ("n_shared_experts", 1)])
def test_a_deepseek_v3_config_without_its_dense_or_shared_count_is_refused(capsys, tmp_path, name, key, v3):
    """Without first_k_dense_replace every layer was priced MoE (DeepSeek-R1's 3 dense layers as 3 more MoE layers),
    without n_shared_experts no shared expert: 0 silently, where Hugging Face's DeepseekV3Config fills in 3 and 1
    (configuration_deepseek_v3.py @001f85b3). A null n_shared_experts still means none."""
    cfg = json.loads((CATALOG.parent / "models" / f"{name}.json").read_text())
    assert key in cfg
    p = tmp_path / "cfg.json"
    p.write_text(json.dumps({k: v for k, v in cfg.items() if k != key}))
    line = error_line(*run(capsys, "models", "show", str(p)))
    assert line == (f"error: {p}: {key}: is missing (Hugging Face's DeepseekV3Config would fill in DeepSeek-V3's {v3}; "
                    f"it is not guessed here). Fix: add \"{key}\" from the model's config.json (DeepSeek-V3: {v3})"), line
    assert model_from_config({**cfg, "n_shared_experts": None}, name).moe.num_shared == 0


def test_a_misspelt_engine_recipe_gets_the_near_name(capsys):
    """--engine sglng-b200-dsr1-fp4 listed the 20-odd recipes without the 'did you mean' every other name gets."""
    line = error_line(*run(capsys, "predict", "-s", "b200", "--engine", "sglng-b200-dsr1-fp4", "-c", "4"))
    assert line.startswith("error: --engine: unknown engine recipe 'sglng-b200-dsr1-fp4' (did you mean "
                           "'sglang-b200-dsr1-fp4'?). Fix: use one of sglang-b200-dsr1-fp4, "), line


@pytest.mark.parametrize("args, start", [
    (("simulate", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "-r", "1", "--arrival", "poison"),
     "error: --arrival: unknown arrival process 'poison' (did you mean 'poisson'?). Fix: use poisson, gamma or burst"),
    (("plan", "-s", "gb200-nvl72", "--target", "1e6", "--serving", "disag"),
     "error: --serving: unknown mode 'disag' (did you mean 'disagg'?). Fix: use agg, disagg or both"),
    (("collective", "-s", "h100", "--placement", "spred"),
     "error: --placement: unknown placement 'spred' (did you mean 'spread'?). Fix: use one of packed, spread"),
    (("step", "--chip-model", "sliced", "--placement", "local-first"),
     "error: --placement: unknown placement 'local-first' (did you mean 'local_first'?). Fix: use one of local_first, "),
    (("step", "--dp-dispatch", "rand"),
     "error: --dp-dispatch: 'rand' is not one of balanced, random, refill (did you mean 'random'?). Fix: "),
    (("step", "--attention-dtype", "bf-16"),
     "error: --attention-dtype: unknown attention math format 'bf-16' (did you mean 'bf16'?). Fix: use one of bf16, fp8"),
    (("step", "--engine-memory", "vllm-0.1"),
     "error: --engine-memory: unknown engine memory profile 'vllm-0.1' (did you mean 'vllm-0.11'?). Fix: "),
    (("step", "--kv-dtype", "fp8-e5m2"),
     "error: --kv-dtype: unknown KV-cache dtype 'fp8-e5m2' (did you mean 'fp8_e5m2'?). Fix: use one of bf16, fp8, "),
    (("step", "--overlap", "TBO_"), "error: --overlap: unknown overlap mode 'TBO_' (did you mean 'tbo'?). Fix: "),
    # cut short: the choice it begins (fp8_e5m2), not the one that begins it (fp8), which the hint named first
    (("step", "--kv-dtype", "fp8_e5"),
     "error: --kv-dtype: unknown KV-cache dtype 'fp8_e5' (did you mean 'fp8_e5m2'?). Fix: use one of bf16, fp8, "),
])
def test_a_near_miss_of_a_named_choice_gets_did_you_mean(capsys, args, start):
    """--arrival poison, --serving disag, --placement spred, --dp-dispatch rand, ... listed the choices without the
    'did you mean' that --system, --model, --precision, --pricer and --routing give for a near miss."""
    line = error_line(*run(capsys, *args))
    assert line.startswith(start), line


def test_collective_refuses_a_fraction_of_a_byte(capsys):
    """--bytes 0.5 priced a half-byte message (and printed 'bytes 0.5'); sizes in nccl-tests are whole bytes."""
    line = error_line(*run(capsys, "collective", "-s", "h100", "--bytes", "1e6,0.5"))
    assert line == "error: --bytes: 0.5 is not a whole number of bytes. Fix: write whole bytes, e.g. --bytes 1e6"
    code, out, err = run(capsys, "collective", "-s", "h100", "--bytes", "0,1e6", "--json")
    assert code == 0, err


def test_a_points_row_with_a_misspelt_point_type_is_skipped_with_the_reason(capsys, tmp_path):
    """validate --points read point_type 'max_throughput_per_gpus' (or ' max_throughput_per_gpu') as a frontier point,
    silently: only the exact max_throughput_per_gpu makes a row a best-configuration row (fit/validate.py)."""
    rows = list(csv.reader((CATALOG.parent / "validation" / "inferencex_points.csv").open()))
    head, row = rows[0], list(rows[1])
    assert row[head.index("point_type")] == "frontier"
    row[head.index("point_type")] = "max_throughput_per_gpus"
    p = tmp_path / "pt.csv"
    with p.open("w", newline="") as f:
        csv.writer(f).writerows([head, row])
    line = error_line(*run(capsys, "validate", "--points", str(p), "--no-aiconfigurator"))
    assert ("1 row(s) skipped (first: pt:2: point_type 'max_throughput_per_gpus' is not one of frontier, "
            "max_throughput_per_gpu, sweep_point, throughput_only, experimental_sweep or blank (did you mean "
            "'max_throughput_per_gpu'?))") in line, line


def test_an_output_path_that_is_an_input_file_is_refused_before_it_is_overwritten(capsys, tmp_path, monkeypatch):
    """validate --points p.csv -o p.csv replaced the measured points with the per-point results; frontier -m my.json
    -o my.json the model's config.json with the frontier; simulate --workload tr.csv -o tr.csv the trace."""
    monkeypatch.chdir(tmp_path)
    points = (CATALOG.parent / "validation" / "inferencex_points.csv").read_text()
    config = (CATALOG.parent / "models" / "llama-3.3-70b.json").read_text()
    trace = "arrival_s,input_tokens,output_tokens\n0,100,10\n1,200,20\n"
    for name, text in (("p.csv", points), ("my.json", config), ("tr.csv", trace)):
        (tmp_path / name).write_text(text)
    for args, shown, reads in (
            (("validate", "--points", "p.csv", "--no-aiconfigurator", "-o", "p.csv"), "p.csv", "--points"),
            (("validate", "--points=p.csv", "--no-aiconfigurator", f"--out={tmp_path / 'p.csv'}"), str(tmp_path / "p.csv"),
             "--points"),
            (("frontier", "-s", "h100", "-m", "my.json", "-o", "my.json"), "my.json", "-m"),
            (("simulate", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "--workload", "tr.csv", "-o", "./tr.csv"),
             "./tr.csv", "--workload")):
        line = error_line(*run(capsys, *args))
        assert line == (f"error: --out: {shown!r} is also the file {reads} reads: writing the output there would "
                        "overwrite it. Fix: give the output another file name"), line
    assert (tmp_path / "p.csv").read_text() == points and (tmp_path / "my.json").read_text() == config
    assert (tmp_path / "tr.csv").read_text() == trace
    # an existing output file that no option reads is still overwritten, as before
    (tmp_path / "fr.csv").write_text("old\n")
    code, out, err = run(capsys, "frontier", "-s", "h100", "-m", "my.json", "-o", "fr.csv")
    assert code == 0, err
    assert "old" not in (tmp_path / "fr.csv").read_text()


def test_predict_concurrency_help_shows_a_whole_number(capsys, monkeypatch):
    """predict --help typed -c as <float> (it is read as one, so that 4.5 and inf get their own line), while only
    whole requests are accepted: simulate's -c shows <int>."""
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run(capsys, "predict", "--help")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if "--concurrency" in ln)
    assert "<int>" in line and "whole requests in flight" in line, line
    assert "4.5 is not a whole number of requests in flight" in error_line(*run(capsys, "predict", "-s", "h100", "-c",
                                                                               "4.5"))
