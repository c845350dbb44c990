"""Hostile-input findings of tester round 15 (breakit15): each bad input is one error naming the
field and the fix, or the result it means; expected values are the inputs' own numbers."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import check_error, run

from jalapeno.specs.variants import parse_sets

STEP = ("step", "-s", "h200", "-m", "llama-3.3-70b", "-p", "fp8", "--tp", "8", "--batch", "8", "--json")


def _step_time(capsys, *sets: str) -> float:
    args = [a for s in sets for a in ("--set", s)]
    code, out, err = run(capsys, *STEP, *args)
    assert code == 0, err
    return json.loads(out)["step_time_s"]


def test_an_inline_table_in_set_merges_its_keys_as_a_variant_file_does(capsys):
    # was: chip={...} replaced the whole [chip] table (error: chip.name missing), a keyed table
    # landed one level too deep (chip.peak_dense_tflops.peak_dense_tflops.fp8), efficiency={...}
    # was called 'not a table', a GEMM entry printed a Python tuple
    assert parse_sets(["chip={hbm_bandwidth_tb_per_s=9.6, hbm_stacks=8}"]) == (
        ("chip.hbm_bandwidth_tb_per_s", 9.6), ("chip.hbm_stacks", 8))
    assert parse_sets(["efficiency.gemm={fp8={peak_fraction=0.5}}"]) == (("efficiency.gemm.fp8.peak_fraction", 0.5),)
    pairs = [("chip={hbm_bandwidth_tb_per_s=9.6}", "chip.hbm_bandwidth_tb_per_s=9.6"),
             ("chip.peak_dense_tflops={fp8=1000}", "chip.peak_dense_tflops.fp8=1000"),
             ("efficiency={kernel_launch_s=2e-5}", "efficiency.kernel_launch_s=2e-5"),
             ("levels.node={bandwidth_gb_per_s=45}", "levels.node.bandwidth_gb_per_s=45")]
    base = _step_time(capsys)
    for table, dotted in pairs:
        t = _step_time(capsys, table)
        assert t == _step_time(capsys, dotted) and t != base, table  # applied, and the same change
    # a {value, source} table stays one entry
    assert parse_sets(['power.allin_kw_per_chip={value = 2, source = "my rack"}']) == (
        ("power.allin_kw_per_chip", parse_sets(['x={value = 2, source = "my rack"}'])[0][1]),)


def test_an_empty_or_half_sourced_inline_table_in_set_is_named(capsys):
    check_error(*run(capsys, *STEP, "--set", "kv_tiers={}"), "--set: kv_tiers", "empty inline table sets nothing",
                "kv_tiers.<field>=<value>")
    check_error(*run(capsys, *STEP, "--set", "power.allin_kw_per_chip={value=2}"),
                "power.allin_kw_per_chip.source", "is missing", "--set power.allin_kw_per_chip=<number>")
    check_error(*run(capsys, *STEP, "--set", 'chip.peak_dense_tflops.fp8={source="my figure"}'),
                "chip.peak_dense_tflops.fp8.value", "is missing")
    check_error(*run(capsys, *STEP, "--set", "chip.hbm_stacks=1", "--set", "chip={hbm_stacks=2}"),
                "chip.hbm_stacks", "given twice")


def test_an_unknown_compute_format_key_is_named_without_pydantic_markers(tmp_path, capsys):
    # was: 'chip.peak_dense_tflops.fp3.[key]: must be one of ...', the fix repeating '.[key]'
    f = tmp_path / "v.toml"
    f.write_text('base = "h200"\nchip.peak_dense_tflops.fp3 = 5\n')
    for args in ((*STEP[:2], str(f), *STEP[3:]), (*STEP, "--set", "chip.peak_dense_tflops={fp3=5}")):
        code, out, err = run(capsys, *args)
        check_error(code, out, err, "chip.peak_dense_tflops.fp3: 'fp3' is not a key of this table",
                    "rename it to one of 'bf16', 'fp8', 'fp4' or 'int8'")
        assert "[key]" not in err


def test_a_whole_file_levels_check_names_levels_not_the_top_level(tmp_path, capsys):
    # was: '(top level): levels must grow ... Fix: correct (top level)'
    f = tmp_path / "v.toml"
    f.write_text('base = "h200"\nlevels.node.chips = 16384\n')
    code, out, err = run(capsys, *STEP[:2], str(f), *STEP[3:])
    check_error(code, out, err, "v.toml: levels: must grow in chips", "[16384, 8192]", "correct [levels]")
    assert "top level" not in err


def test_a_bad_derived_expression_names_its_key_once(capsys, tmp_path):
    # was: '(top level): derived 'chip.x': ... is not a valid expression. Fix: correct (top level)', and
    # a division by zero 'derived: derived 'chip.x': ...'
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "examples" / "explore_700w.toml").read_text()
    expr = '"36 * {chip.hbm_stacks}"'
    assert expr in text
    f = tmp_path / "space.toml"
    for bad, words in (('"36 * (({chip.hbm_stacks}"', ("is not a valid expression", "correct 'chip.hbm_capacity_gib' in [derived]")),
                       ('"36 * {chip.hbm_stacks} / 0"', ("divides by zero", "fix the expression"))):
        f.write_text(text.replace(expr, bad, 1))
        code, out, err = run(capsys, "explore", str(f))
        check_error(code, out, err, "space.toml: derived.chip.hbm_capacity_gib:", *words)
        assert "(top level)" not in err and "derived: derived" not in err


def _model_file(tmp_path, name: str, **changes) -> str:
    from importlib import resources

    cfg = json.loads(resources.files("jalapeno.data.models").joinpath(f"{name}.json").read_text())
    cfg.update(changes)
    p = tmp_path / f"{name}-changed.json"
    p.write_text(json.dumps(cfg))
    return str(p)


def test_a_mixtral_config_with_a_sliding_window_attends_over_the_window(tmp_path):
    # Hugging Face MixtralAttention passes config.sliding_window to every layer (as Mistral); the
    # window was ignored for model_type mixtral (full attention over the whole context)
    from jalapeno.specs.model_file import load_model_file

    assert load_model_file(_model_file(tmp_path, "mixtral-8x7b")).attention.windows == ()  # null: full
    windowed = load_model_file(_model_file(tmp_path, "mixtral-8x7b", sliding_window=4096))
    assert windowed.attention.windows == (4096,) * 32  # the config's 32 layers
    off = load_model_file(_model_file(tmp_path, "mixtral-8x7b", sliding_window=4096, use_sliding_window=False))
    assert off.attention.windows == ()


def test_a_vision_tower_beside_a_text_decoder_is_refused_not_dropped(tmp_path, capsys):
    f = _model_file(tmp_path, "llama-3.3-70b", vision_config={"depth": 32, "hidden_size": 1280})
    check_error(*run(capsys, "models", "show", f), "vision_config", "vision encoder is not modelled",
                "remove vision_config to price the text decoder alone")


def test_mlp_only_layers_past_the_last_layer_or_leaving_no_moe_layer_is_named(tmp_path, capsys):
    # an index past the last layer was ignored (the layer stayed MoE); all layers dense counted the experts nowhere
    for changes, words in (({"mlp_only_layers": [0, 1, 200]}, ("mlp_only_layers", "200 is not a layer index (0 to 93)")),
                           ({"mlp_only_layers": ["3"]}, ("mlp_only_layers", "'3' is not a layer index")),
                           ({"mlp_only_layers": list(range(94))}, ("mlp_only_layers", "leaves none of the 94 layers moe")),
                           ({"decoder_sparse_step": 95}, ("decoder_sparse_step", "leaves none of the 94 layers moe"))):
        f = _model_file(tmp_path, "qwen3-235b-a22b", **changes)
        check_error(*run(capsys, "models", "show", f), *words)


def test_an_agentic_file_value_of_the_wrong_type_says_what_to_write(tmp_path, capsys):
    # was 'expected int, got 5.5. Fix: write turns as a int'
    f = tmp_path / "agent.toml"
    f.write_text("turns = 5.5\nsystem_prompt_tokens = 1000\ntool_output_tokens = 500\nreply_tokens = 100\nthink_s = 1\n")
    check_error(*run(capsys, "compare", "-m", "llama-3.3-70b", "--systems", "h200", "--workload", f"agentic:{f}"),
                "agent.toml: turns: must be a whole number, got 5.5", "write e.g. turns = 40")


def test_weights_that_do_not_fit_under_a_small_memory_fraction_name_the_option(capsys):
    # the fix named precision and HBM only, not the --memory-fraction that shrank the usable HBM
    check_error(*run(capsys, "predict", "-s", "h200", "-m", "deepseek-r1", "-c", "4", "--tp", "8", "--ep", "8",
                     "--memory-fraction", "0.01"), "the weights do not fit", "raise --memory-fraction (now 0.01")


def test_a_file_past_the_size_limit_is_refused_not_read_without_end(tmp_path, capsys, monkeypatch):
    # --model /dev/zero (and every other user file) was read to the end: it never came, memory filled
    from jalapeno.specs import files

    monkeypatch.setattr(files, "MAX_USER_FILE_BYTES", 64)
    big = tmp_path / "big.json"
    big.write_text(" " * 65)
    check_error(*run(capsys, "models", "show", str(big)), "big.json", "is larger than",
                "a device or a wrong file", "jalapeno models list")
    space = tmp_path / "space.toml"
    space.write_text("#" * 65)
    check_error(*run(capsys, "explore", str(space)), "space.toml", "is larger than", "design-space .toml")
    check_error(*run(capsys, "models", "show", "/dev/zero"), "/dev/zero", "is larger than")  # a device: no end
    check_error(*run(capsys, "explore", "/dev/zero"), "/dev/zero", "is larger than")
    big.write_text("x" * 64)  # at the limit: read, then refused as the JSON it is not
    check_error(*run(capsys, "models", "show", str(big)), "malformed json")
    big.write_text(" " * 64)  # blanks only: read, then named as empty (break48)
    check_error(*run(capsys, "models", "show", str(big)), "is empty")


def test_a_quantization_config_without_its_method_or_with_a_zero_block_is_named(tmp_path, capsys):
    # {"bits": 4, ...} without quant_method was read as BF16 weights (4x the bytes of INT4);
    # weight_block_size [0, 0] was taken as a block-scaled FP8 checkpoint
    f = _model_file(tmp_path, "llama-3.3-70b", quantization_config={"bits": 4, "group_size": 128})
    check_error(*run(capsys, "models", "show", f), "quantization_config.quant_method",
                "is missing (the table gives bits, group_size)", "add the checkpoint's quant_method")
    f = _model_file(tmp_path, "llama-3.3-70b", quantization_config={"quant_method": "fp8", "weight_block_size": [0, 0]})
    check_error(*run(capsys, "models", "show", f), "quantization_config.weight_block_size",
                "must be two positive integers or null, got [0, 0]", "[128, 128]")


def test_a_calibration_file_without_its_parameters_table_is_refused(tmp_path, capsys):
    # a misspelt [parameters] priced every op with the documented defaults, labelled 'calibrated (... this file)'
    head = 'system = "h200"\nkind = "measured"\n'
    f = tmp_path / "cal.toml"
    args = ("step", "-s", "h200", "-m", "llama-3.3-70b", "-p", "fp8", "--tp", "8", "--batch", "8", "--efficiency", str(f))
    for body, words in (("[parameterz]\nhbm_fraction = 0.9\n", ("'parameterz' is not a key of a calibration file",
                                                                  "did you mean 'parameters'")),
                        ("", ("has no [parameters] table",)),
                        ("parameters = 5\n", ("parameters must be a table, got 5",))):
        f.write_text(head + body)
        check_error(*run(capsys, *args), "--efficiency", "cal.toml", *words)
    f.write_text(head + "[parameters]\nhbm_fraction = 0.5\n")  # the good form: read and applied
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    assert json.loads(out)["step_time_s"] > _step_time(capsys)  # half the HBM bandwidth: slower than h200's set


def test_a_range_option_beside_choices_is_refused(capsys, tmp_path):
    # log = true (or step, integer) beside choices was ignored, silently
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "examples" / "explore_700w.toml").read_text()
    head = '[params."chip.hbm_stacks"]'
    assert head in text
    f = tmp_path / "space.toml"
    for extra in ("log = true", "step = 2", "integer = true"):
        f.write_text(text.replace(head, f"{head}\n{extra}"))
        key = extra.split(" ")[0]
        check_error(*run(capsys, "explore", str(f)), "space.toml: params.chip.hbm_stacks",
                    f"{key} applies to a low/high range, not to choices")


def test_a_json_key_given_twice_is_named_not_read_as_the_last(tmp_path, capsys):
    # json.loads keeps the last of two equal keys: a config.json with two hidden_size entries was priced
    # with the second, silently; a JSONL trace row alike
    f = tmp_path / "config.json"
    f.write_text('{"model_type": "llama", "hidden_size": 8192, "num_hidden_layers": 2, "hidden_size": 4096}')
    check_error(*run(capsys, "models", "show", str(f)), "config.json: hidden_size", "is given twice",
                "give each key once")
    t = tmp_path / "t.jsonl"
    t.write_text('{"arrival_s": 0, "input_tokens": 100, "output_tokens": 10, "input_tokens": 5}\n')
    check_error(*run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--workload", str(t)),
                "t.jsonl: line 1: input_tokens", "is given twice")


def test_an_empty_chip_name_or_a_level_name_set_cannot_reach_is_refused(tmp_path, capsys):
    # chip.name = '' was accepted (messages then named no chip); a link level named 'node.a' or ''
    # could not be addressed by --set levels.<name>.*
    check_error(*run(capsys, *STEP, "--set", 'chip.name=""'), "--set: chip.name", "at least 1 character")
    src = (Path(__file__).resolve().parents[2] / "src" / "jalapeno" / "data" / "systems" / "h200.toml").read_text()
    assert 'name = "node"' in src
    f = tmp_path / "s.toml"
    for bad in ("node.a", "", "my node"):
        f.write_text(src.replace('name = "node"', f'name = "{bad}"'))
        check_error(*run(capsys, *STEP[:2], str(f), *STEP[3:]), "s.toml: levels.", ".name: must be one word",
                    f"got {bad!r}")


def test_a_variant_name_shows_an_inline_table_as_written(capsys):
    # the name suffix showed the hashable tuple the value is kept as:
    # "b200+chip.fp4_block_formats=(('formats', ('mxfp4',)), ('source', 'my test'))"
    code, out, err = run(capsys, "hardware", "show", "b200", "--set",
                         'chip.fp4_block_formats={formats=["mxfp4"], source="my test"}', "--json")
    assert code == 0, err
    assert json.loads(out)["name"] == "b200+chip.fp4_block_formats={formats=[mxfp4], source=my test}"
