"""Findings of round 49's break-it pass (break49): a DeepSeek-family config.json whose ``topk_method`` was misspelt,
not a name or missing was priced as an auxiliary-loss router, silently (then ``--routing measured`` was refused as
if the model had one); ``--engine RECIPE`` refused the recipe's own model when its config.json was read from a
folder of another name (``DeepSeek-R1-0528/config.json``, as a checkpoint is downloaded)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import check_error, run

DATA = Path(__file__).parents[2] / "src" / "jalapeno" / "data"


def _dsr1(tmp_path: Path, folder: str = "cfg", **change) -> str:
    cfg = json.loads((DATA / "models" / "deepseek-r1.json").read_text())
    for k, v in change.items():
        if v is None:
            cfg.pop(k)
        else:
            cfg[k] = v
    path = tmp_path / folder / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cfg))
    return str(path)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        # was: exit 0, priced without the router's correction bias (an auxiliary-loss router)
        ({"topk_method": "noaux-tc"}, ('unknown top-k method "noaux-tc"', "did you mean 'noaux_tc'?")),
        ({"topk_method": 5}, ("unknown top-k method 5",)),
        ({"topk_method": None}, ("topk_method: is missing", "not guessed")),
        ({"model_type": "kimi_k2", "topk_method": None}, ("topk_method: is missing",)),
    ],
)
def test_a_deepseek_topk_method_that_is_not_one_is_refused(capsys, tmp_path, change, words):
    code, out, err = run(capsys, "models", "show", _dsr1(tmp_path, **change))
    check_error(code, out, err, *words, "topk_method")
    code, out, err = run(
        capsys,
        "predict",
        "-s",
        "h200",
        "-m",
        _dsr1(tmp_path, **change),
        "-w",
        "1k1k",
        "-c",
        "8",
        "--routing",
        "measured",
    )
    # was: '--routing: measured routing applies to auxiliary-loss-free MoE routers ...': the model blamed the option
    check_error(code, out, err, "topk_method", *words)


def test_each_deepseek_gate_method_loads(capsys, tmp_path):
    # DeepSeek-V2's gate methods on a V3 config, and a V2 config without the key (its gate defaults to greedy)
    for change in (
        {"topk_method": "greedy"},
        {"topk_method": "group_limited_greedy"},
        {"model_type": "deepseek_v2", "topk_method": None},
    ):
        code, out, err = run(capsys, "models", "show", _dsr1(tmp_path, **change))
        assert code == 0, (change, err)
    # only noaux_tc is the auxiliary-loss-free router: measured routing skew is refused for the others
    code, out, err = run(
        capsys,
        "predict",
        "-s",
        "h200",
        "-m",
        _dsr1(tmp_path, topk_method="greedy"),
        "-w",
        "1k1k",
        "-c",
        "8",
        "--routing",
        "measured",
    )
    check_error(code, out, err, "--routing", "auxiliary-loss router")


def _predict(capsys, model: str) -> tuple[int, str, str]:
    return run(
        capsys,
        "predict",
        "-s",
        "h200",
        "-m",
        model,
        "-w",
        "1k1k",
        "-c",
        "16",
        "--engine",
        "sglang-h200-dsr1-fp8",
        "--json",
    )


def test_a_recipe_runs_its_model_read_from_a_folder_of_another_name(capsys, tmp_path):
    code, out, err = _predict(capsys, "deepseek-r1")
    assert code == 0, err
    catalog = json.loads(out)
    code, out, err = _predict(capsys, _dsr1(tmp_path, folder="DeepSeek-R1-0528"))
    # was: '--engine: recipe sglang-h200-dsr1-fp8 is written for deepseek-r1, not DeepSeek-R1-0528'
    assert code == 0, err
    mine = json.loads(out)
    # the same config.json bytes are the same model: every figure equal to the catalog name's
    for key in ("throughput_per_chip", "interactivity", "ttft_s", "tpot_s"):
        assert mine[key] == catalog[key], key


def test_a_recipe_refuses_a_config_json_whose_shapes_differ(capsys, tmp_path):
    code, out, err = _predict(capsys, _dsr1(tmp_path, folder="DeepSeek-R1-0528", num_hidden_layers=60))
    check_error(
        code,
        out,
        err,
        "--engine: recipe sglang-h200-dsr1-fp8 is written for deepseek-r1, not DeepSeek-R1-0528",
        "shapes differ from deepseek-r1's",
    )
    code, out, err = _predict(capsys, "llama-3.3-70b")  # a catalog name: no word about a config.json
    check_error(code, out, err, "is written for deepseek-r1, not llama-3.3-70b. fix:")


@pytest.mark.parametrize(
    ("metric", "fix"),
    [
        ("throughput_per_chip", "fix: write e.g. --metric throughput_per_chip@100 (@x in tok/s/user)"),
        ("max_interactivity@5", "fix: write e.g. --metric max_interactivity"),
    ],
)
def test_a_sensitivity_metric_fix_names_a_metric_without_a_value(capsys, metric, fix):
    code, out, err = run(capsys, "sensitivity", "-s", "b200", "-m", "llama-3.3-70b", "--metric", metric, "--html", "")
    # was: 'Fix: write throughput_per_chip@100=VALUE (tok/s/user)', a claim's spelling, which --metric refuses
    check_error(code, out, err, "--metric:", fix)
    assert "=value" not in err.lower()
    code, out, err = run(capsys, "audit", "-s", "b200", "-m", "llama-3.3-70b", "--claim", f"{metric}=5")
    check_error(code, out, err, "--claim:", "=value")  # a claim's fix keeps its value


def _tiny_hbm(tmp_path: Path) -> str:
    """H200 with 0.2 GB of HBM (inside the plausible 0.1-10,000 GB): no layout of a 70B model fits."""
    path = tmp_path / "tiny.toml"
    path.write_text('base = "h200"\nname = "tiny-hbm"\nchip.hbm_capacity_gb = 0.2\n')
    return str(path)


def test_no_fitting_layout_names_fixes_the_command_takes(capsys, tmp_path):
    code, out, err = run(capsys, "frontier", "-s", _tiny_hbm(tmp_path), "-m", "llama-3.3-70b", "-w", "1k1k")
    # was: 'Fix: use a smaller precision, allow wider stages (max_stage_factor) or a bigger system': frontier,
    # compare, plan, audit and sensitivity have no such option (only a design space's [sweep] table)
    check_error(
        code, out, err, "no layout of llama-3.3-70b", "fix: use a smaller precision (-p)", "[sweep] max_stage_factor"
    )


def test_a_fleet_too_small_at_no_speed_floor_is_not_told_to_lower_it(capsys):
    # llama-3.1-405b BF16 (810 GB of weights) needs a whole 8-GPU H200 node (141 GB each): one chip holds none
    code, out, err = run(capsys, "plan", "-s", "h200", "-m", "llama-3.1-405b", "-w", "1k1k", "--chips", "1")
    # was: '... at >= 0 tok/s/user: the smallest needs 8 chips. Fix: give --chips 8 or more, or lower
    # --min-interactivity', at the default floor of 0
    check_error(
        code,
        out,
        err,
        "--chips: 1 chip holds no instance of h200: the smallest needs 8 chips",
        "fix: give --chips 8 or more",
    )
    assert "min-interactivity" not in err and ">= 0 tok/s/user" not in err
    code, out, err = run(
        capsys, "plan", "-s", "h200", "-m", "llama-3.1-405b", "-w", "1k1k", "--chips", "1", "--min-interactivity", "10"
    )
    check_error(code, out, err, "at >= 10 tok/s/user", "or lower --min-interactivity")  # a floor given: kept


def test_a_flagged_row_far_off_the_identity_prints_its_ratio_short(capsys, tmp_path):
    from jalapeno.fit.data_quality import flagged_points

    lines = (DATA / "validation" / "inferencex_points.csv").read_text().splitlines()
    row = next(ln for ln in lines if ln.startswith("H200,DeepSeek-R1-0528,FP8,sglang,none,0,1024,1024,4,TP8 EP1,8,"))
    cells = row.split(",")
    cells[11] = "1e300"  # tput_per_gpu: 98.83 measured
    path = tmp_path / "points.csv"
    path.write_text(lines[0] + "\n" + ",".join(cells) + "\n")
    (why,) = flagged_points(path).values()
    # residual = 1e300 / 98.83 x (the row's own residual, 0.98) ~ 9.9e297: was printed as a 298-digit number
    assert why.startswith("closed-loop identity: throughput is 9.8") and "e+297x what its concurrency" in why, why
    code, out, err = run(capsys, "validate", "--points", str(path), "--no-aiconfigurator")
    assert code == 0 and "0" * 30 not in out, err


def test_moe_layer_freq_places_the_moe_layers_as_deepseek_s_code_does(capsys, tmp_path):
    cfg = _dsr1(tmp_path, num_hidden_layers=28, first_k_dense_replace=1, moe_layer_freq=2)
    code, out, err = run(capsys, "models", "show", cfg, "--json")
    assert code == 0, err
    shown = json.loads(out)
    # DeepSeek's DecoderLayer: MoE where i >= 1 and i % 2 == 0, i.e. 2, 4, ..., 26: 13 MoE layers, 15 dense
    # (was 14 and 14: i = 1, 3, ..., 27, counted from first_k_dense_replace)
    assert (shown["num_moe_layers"], shown["num_dense_layers"]) == (13, 15)
    code, out, err = run(capsys, "models", "show", _dsr1(tmp_path, moe_layer_freq=10**15))
    # was: exit 0 with one MoE layer (layer 3) of 61
    check_error(code, out, err, "moe_layer_freq: 1000000000000000 leaves none of the 61 layers moe")


def _qwen3_groups(tmp_path: Path, mlp_weights: dict) -> str:
    cfg = json.loads((DATA / "models" / "qwen3-32b.json").read_text())
    attn = {"type": "float", "num_bits": 8, "strategy": "channel"}
    cfg["quantization_config"] = {
        "quant_method": "compressed-tensors",
        "config_groups": {
            "group_0": {"targets": ["re:.*self_attn.*"], "weights": attn},
            "group_1": {"targets": ["re:.*mlp.*"], "weights": mlp_weights},
        },
    }
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def test_compressed_tensors_groups_of_different_schemes_are_refused(capsys, tmp_path):
    int4 = {"type": "int", "num_bits": 4, "group_size": 128, "strategy": "group"}
    code, out, err = run(capsys, "models", "show", _qwen3_groups(tmp_path, int4))
    # was: exit 0, default precision fp8-tensor: the INT4 MLP weights (half a byte each) priced as FP8 (one byte)
    check_error(
        code,
        out,
        err,
        "quantization_config.config_groups: the groups store their weights in different",
        "group_0: float 8-bit channel; group_1: int 4-bit group",
        "remove quantization_config and pass -p",
    )
    code, out, err = run(
        capsys,
        "models",
        "show",
        _qwen3_groups(tmp_path, {"type": "float", "num_bits": 8, "strategy": "channel"}),
        "--json",
    )
    assert code == 0 and json.loads(out)["default_precision"] == "fp8-tensor,kv=bf16", err  # one scheme: read as before
