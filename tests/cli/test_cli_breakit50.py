"""Findings of round 50's break-it pass (break50): a whole number past Python's digit limit in any user input
raised a traceback; ``validate -o`` over the shipped points file overwrote it; a compressed-tensors checkpoint's
``compression_config`` was ignored (16-bit weights priced); a ``text_config`` disagreeing with the top level was
read at the top level, silently; yarn/linear/dynamic rope scaling without its factor read as factor 1; a precision
override given twice kept the last; the name-clash note of a renamed variant named the wrong kernel tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import check_error, run

DATA = Path(__file__).parents[2] / "src" / "jalapeno" / "data"
#: 5,000 digits: past CPython's default int_max_str_digits (4,300), where tomllib, json and int() raise ValueError
HUGE = "9" * 5000


def _llama(tmp_path: Path, name: str = "config.json", **change) -> str:
    cfg = json.loads((DATA / "models" / "llama-3.3-70b.json").read_text())
    cfg.update(change)
    path = tmp_path / name
    path.write_text(json.dumps(cfg))
    return str(path)


def test_a_number_past_pythons_digit_limit_is_named_in_every_file_kind(capsys, tmp_path):
    text = (
        (DATA / "systems" / "h200.toml")
        .read_text()
        .replace("hbm_stacks = { value = 6,", f"hbm_stacks = {{ value = {HUGE},")
    )
    (tmp_path / "s.toml").write_text(text)
    code, out, err = run(capsys, "hardware", "show", str(tmp_path / "s.toml"))  # was ValueError from tomllib
    check_error(code, out, err, "s.toml", "more than 4,300 digits", "scientific notation")
    code, out, err = run(capsys, "collective", "-s", "h200", "--set", f"chip.hbm_stacks={HUGE}")
    check_error(code, out, err, "--set", "chip.hbm_stacks", "whole number")
    cfg = _llama(tmp_path)
    Path(cfg).write_text(Path(cfg).read_text()[:-1] + f', "pad_token_id": {HUGE}}}')  # was ValueError from json
    code, out, err = run(capsys, "models", "show", cfg)
    check_error(code, out, err, "config.json", "more than 4,300 digits")
    sim = ["simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w"]
    (tmp_path / "t.jsonl").write_text(f'{{"arrival_s": 0, "input_tokens": {HUGE}, "output_tokens": 10}}\n')
    code, out, err = run(capsys, *sim, str(tmp_path / "t.jsonl"))
    check_error(code, out, err, "t.jsonl: line 1", "more than 4,300 digits")
    # 1 and 400 zeros: an int json reads, past a float's range (pandas' to_numeric raised OverflowError)
    (tmp_path / "f.jsonl").write_text(f'{{"arrival_s": 0, "input_tokens": 1{"0" * 400}, "output_tokens": 10}}\n')
    code, out, err = run(capsys, *sim, str(tmp_path / "f.jsonl"))
    check_error(code, out, err, "f.jsonl: row 1", "input_tokens", "not a finite number")
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-w", f"{HUGE}k1k", "-c", "4")
    check_error(code, out, err, "workload", "unknown workload")  # was ValueError from int()
    code, out, err = run(
        capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-w", "1k1k", "-c", "4", "--stack", f"sglang@{HUGE}"
    )
    check_error(code, out, err, "is not a release number")  # was ValueError from int()


def test_an_output_over_a_shipped_data_file_is_refused():
    # validate's default --points is the shipped file: `validate -o <it>` overwrote the measured points (exit 0)
    from jalapeno.cli.out_paths import check_writable
    from jalapeno.errors import SpecError

    shipped = DATA / "validation" / "inferencex_points.csv"
    before = shipped.read_bytes()
    with pytest.raises(SpecError) as e:
        check_writable(str(shipped), "--out")
    assert e.value.field == "--out" and "data/validation/inferencex_points.csv" in str(e.value)
    assert "give the output another file name" in str(e.value)
    assert shipped.read_bytes() == before


def test_compression_config_is_read_as_vllm_reads_it(capsys, tmp_path):
    # llm-compressor FP8 W8A8 (float 8-bit per-channel weights, dynamic per-token activations) is the fp8-tensor
    # preset; under the 2024 key compression_config it was priced as the 16-bit release (bf16)
    ct = {
        "quant_method": "compressed-tensors",
        "format": "float-quantized",
        "ignore": ["lm_head"],
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": {"num_bits": 8, "type": "float", "strategy": "channel"},
                "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True},
            }
        },
    }
    code, out, err = run(capsys, "models", "show", _llama(tmp_path, compression_config=ct))
    assert code == 0, err
    assert "fp8-tensor" in out and "compression_config (quant_method compressed-tensors)" in out
    # beside a quantization_config, that one is read (vLLM's order)
    code, out, err = run(
        capsys,
        "models",
        "show",
        _llama(tmp_path, "b.json", compression_config=ct, quantization_config={"quant_method": "mxfp4"}),
    )
    assert code == 0, err
    assert "quantization_config (quant_method mxfp4)" in out
    # a bad table is named under the key the file gives
    code, out, err = run(capsys, "models", "show", _llama(tmp_path, "c.json", compression_config={"bits": 4}))
    check_error(code, out, err, "compression_config.quant_method", "is missing")


def test_a_text_config_that_disagrees_with_the_top_level_is_refused(capsys, tmp_path):
    cfg = json.loads((DATA / "models" / "llama-3.3-70b.json").read_text())
    code, out, err = run(capsys, "models", "show", _llama(tmp_path, text_config={**cfg, "hidden_size": 4096}))
    check_error(code, out, err, "text_config.hidden_size", "4096", "8192", "vllm")
    code, out, err = run(capsys, "models", "show", _llama(tmp_path, "same.json", text_config=dict(cfg)))
    assert code == 0, err


@pytest.mark.parametrize("kind", ["yarn", "linear", "dynamic"])
def test_rope_scaling_without_its_factor_is_refused(capsys, tmp_path, kind):
    rs = {"rope_type": kind, "original_max_position_embeddings": 8192}
    # was: yarn read as factor 1 (8,192 x 1 = 8,192 tokens of a 131,072-token model), silently
    code, out, err = run(capsys, "models", "show", _llama(tmp_path, rope_scaling=rs))
    check_error(code, out, err, "rope_scaling.factor", "is missing", "factor")
    code, out, err = run(capsys, "models", "show", _llama(tmp_path, "ok.json", rope_scaling={**rs, "factor": 16.0}))
    assert code == 0, err


@pytest.mark.parametrize("precision", ["fp8,kv=bf16,kv=fp8", "fp8,attn=bf16,attn=fp8"])
def test_a_precision_override_given_twice_is_refused(capsys, precision):
    # was: the last kept, silently ('fp8,kv=bf16,kv=fp8' ran as fp8 with its FP8 KV)
    code, out, err = run(
        capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-w", "1k1k", "-c", "4", "-p", precision
    )
    check_error(code, out, err, "--precision", "given twice", "once")


def test_a_variant_renamed_as_another_catalog_system_names_its_own_tables(capsys):
    code, out, err = run(
        capsys,
        "predict",
        "-s",
        "h200",
        "-m",
        "llama-3.3-70b",
        "-w",
        "1k1k",
        "-c",
        "4",
        "--tp",
        "8",
        "--set",
        "name=gb200-nvl72",
    )
    assert code == 0, err
    note = next(ln for ln in err.splitlines() if "a catalog system's name" in ln)
    # was: 'it changes nothing physical, so --pricer table reads gb200-nvl72's kernel tables' (it is an H200)
    assert "changes nothing physical" not in note
    assert "variant of h200" in note and "reads h200's kernel tables" in note and "--set name=" in note


def test_calibrate_out_dir_in_the_shipped_data_is_refused(capsys, monkeypatch):
    # `calibrate -s h200 --out-dir src/jalapeno/data/systems` wrote its fitted h200.toml over the H200 system file
    import jalapeno.fit.calibrate as cal

    def must_not_run(*a, **k):  # a regression must not write into the package
        raise AssertionError("calibrate_catalog ran")

    monkeypatch.setattr(cal, "calibrate_catalog", must_not_run)
    for folder in (DATA / "systems", DATA, DATA / "models" / "mine"):
        code, out, err = run(capsys, "calibrate", "-s", "h200", "--out-dir", str(folder))
        check_error(code, out, err, "--out-dir", "jalapeno's own data", "give a folder of your own")
    # the calibration folder itself is the command's default and stays allowed (calibrate_catalog is called)
    with pytest.raises(AssertionError, match="calibrate_catalog ran"):
        run(capsys, "calibrate", "-s", "h200", "--out-dir", str(DATA / "calibration"))


def test_the_shipped_system_file_by_its_path_is_the_catalog_system(capsys):
    # `-s .../data/systems/h200.toml` was priced with the default efficiencies (198.7 tok/s/chip, llama-3.3-70b TP8
    # c8 1k1k, note 'has no base and no [efficiency]') while `-s h200` reads H200's calibration (204.4)
    args = ["-m", "llama-3.3-70b", "-w", "1k1k", "-c", "8", "--tp", "8", "--json"]
    code, out, err = run(capsys, "predict", "-s", "h200", *args)
    assert code == 0, err
    by_name = json.loads(out)
    code, out, err = run(capsys, "predict", "-s", str(DATA / "systems" / "h200.toml"), *args)
    assert code == 0, err
    assert "no base and no [efficiency]" not in err
    by_path = json.loads(out)
    for key in ("throughput_per_chip", "interactivity", "ttft_s", "tpot_s"):
        assert by_path[key] == by_name[key], key


def test_a_quantization_config_inside_text_config_is_read(capsys, tmp_path):
    # vLLM's get_quant_config reads text_config.quantization_config where the top level has none ("some vision
    # model may keep quantization_config in their text_config"); here it was ignored: bf16 priced
    cfg = json.loads((DATA / "models" / "llama-3.3-70b.json").read_text())
    fp8 = {"quant_method": "fp8", "activation_scheme": "dynamic"}  # per-tensor FP8 (no weight_block_size): fp8-tensor
    code, out, err = run(capsys, "models", "show", _llama(tmp_path, text_config={**cfg, "quantization_config": fp8}))
    assert code == 0, err
    assert "fp8-tensor" in out and "text_config.quantization_config (quant_method fp8)" in out
    # a top-level table that differs from the nested one is refused (two tables, one checkpoint)
    code, out, err = run(
        capsys,
        "models",
        "show",
        _llama(
            tmp_path,
            "two.json",
            quantization_config={"quant_method": "mxfp4"},
            text_config={**cfg, "quantization_config": fp8},
        ),
    )
    check_error(code, out, err, "text_config.quantization_config")


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        # were priced: a TPOT of ~1e31 s (the sibling step_overhead_s / prompt_overhead_s_per_token have ceilings)
        ("tp_rank_step_s=1e30", ("beyond 1 (seconds)",)),
        ("prompt_step_s_per_token=1e30", ("beyond 0.001 (seconds per token)",)),
        # a kernel tile has whole rows: 1.5 was priced
        ("mla_decode_tile_rows=1.5", ("whole number", "rows")),
    ],
)
def test_efficiency_settings_without_a_ceiling_or_whole_check_are_refused(capsys, setting, words):
    code, out, err = run(
        capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-w", "1k1k", "-c", "8", "--tp", "8",
        "--set", f"efficiency.{setting}",
    )  # fmt: skip
    check_error(code, out, err, f"efficiency.{setting.split('=')[0]}", *words)


def test_agentic_near_misses_name_the_one_meant(capsys, tmp_path):
    # were 'unknown agentic preset 'coding-agnet'' and 'turn: unknown key' with the lists only
    sim = ["simulate", "-s", "h200", "-m", "llama-3.3-70b", "-c", "2", "-w"]
    code, out, err = run(capsys, *sim, "agentic:coding-agnet")
    check_error(code, out, err, "unknown agentic preset 'coding-agnet'", "did you mean 'coding-agent'?")
    path = tmp_path / "agent.toml"
    path.write_text(
        "turn = 40\nsystem_prompt_tokens = 6000\ntool_output_tokens = 2500\nreply_tokens = 350\nthink_s = 2.0\n"
    )
    code, out, err = run(capsys, *sim, f"agentic:{path}")
    check_error(code, out, err, "agent.toml: turn", "unknown key", "did you mean 'turns'?")


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("seed = 2026", "sed = 2026", ("sed: is not a key this table knows", "did you mean 'seed'?")),
        ("weight = 1.0", "wieght = 1.0", ("cases.0.wieght", "did you mean 'weight'?")),
        ("step = 100", "stp = 100", ("params.chip.peak_dense_tflops.fp8.stp", "did you mean 'step'?")),
    ],
)
def test_a_design_space_key_spelt_near_a_real_one_names_it(capsys, tmp_path, old, new, words):
    # was '... is not a key this table knows. Fix: remove sed or correct its spelling' (which spelling?)
    text = (Path(__file__).parents[2] / "examples" / "explore_700w.toml").read_text()
    assert old in text
    (tmp_path / "space.toml").write_text(text.replace(old, new, 1))
    code, out, err = run(capsys, "explore", str(tmp_path / "space.toml"), "-n", "1", "--store", str(tmp_path / "st"))
    check_error(code, out, err, *words)


def test_a_system_given_as_the_model_or_a_model_as_the_system_is_named_so(capsys):
    # was "unknown model 'h200'" / "unknown system 'llama-3.3-70b'" with the other kind's list only
    code, out, err = run(capsys, "predict", "-s", "llama-3.3-70b", "-m", "h200", "-w", "1k1k", "-c", "4")
    check_error(code, out, err, "--model", "'h200' is a catalog system, not a model", "jalapeno hardware show h200")
    code, out, err = run(capsys, "compare", "-s", "h200,llama-3.3-70b", "-w", "1k1k")
    check_error(
        code, out, err, "'llama-3.3-70b' is a catalog model, not a system", "jalapeno models show llama-3.3-70b"
    )


def test_models_show_says_a_config_without_a_context_length_is_not_checked(capsys, tmp_path):
    # was 'max_context 0' alone: read as a zero-token context, though no prompt length is checked against it
    cfg = json.loads((DATA / "models" / "llama-3.3-70b.json").read_text())
    cfg.pop("max_position_embeddings")
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    code, out, err = run(capsys, "models", "show", str(tmp_path / "config.json"), "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["max_context"] == 0 and "no context check" in shown["max_context_from"]
    code, out, err = run(capsys, "models", "show", "llama-3.3-70b", "--json")
    assert "max_context_from" not in json.loads(out)  # a stated length needs no word


def test_a_baseline_or_set_target_spelt_near_a_compared_system_names_it(capsys):
    # were "'b20' is not among --systems (h200, b200)" / "'h20' is not among --systems", with no system meant
    args = ["compare", "-s", "h200,b200", "-m", "llama-3.3-70b", "-w", "1k1k"]
    code, out, err = run(capsys, *args, "-b", "b20")
    check_error(code, out, err, "--baseline", "'b20' is not among --systems", "did you mean 'b200'?")
    code, out, err = run(capsys, *args, "--set", "h20:chip.tdp_w=800")
    check_error(code, out, err, "--set", "'h20' is not among --systems", "did you mean 'h200'?")
