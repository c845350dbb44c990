"""Findings of round 20's break-it pass (hostile but realistic input). Expected figures by hand."""

from __future__ import annotations

import json
import math
from importlib import resources

from cli_runner import check_error, run


def test_baseline_names_a_systems_entry_as_typed_under_set(capsys, tmp_path):
    # was: "--baseline: 'h200' is not among --systems" although --systems lists h200: the --set
    # override renames the compared system h200+chip.hbm_stacks=6, and the baseline was looked up by that name
    code, out, err = run(capsys, "compare", "-m", "llama-3.3-70b", "--systems", "h100,h200", "--set",
                         "h200:chip.hbm_stacks=6", "--baseline", "h200", "-w", "1k1k", "--html", "", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["baseline"] == "h200+chip.hbm_stacks=6"
    assert d["comparisons"]["h100"]["vs"] == "h200+chip.hbm_stacks=6"
    # the agentic comparison resolved its --baseline the same way
    code, out, err = run(capsys, "compare", "-m", "llama-3.3-70b", "--systems", "h100,h200", "--set",
                         "h200:chip.hbm_stacks=6", "--baseline", "h200", "-w", "agentic:chat-agent", "--html", "",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["baseline"] == "h200+chip.hbm_stacks=6"
    # and so did the report
    code, out, err = run(capsys, "report", "-m", "llama-3.3-70b", "--systems", "h100,h200", "--set",
                         "h200:chip.hbm_stacks=6", "--baseline", "h200", "-w", "1k1k", "--measured", "none",
                         "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert (tmp_path / "r.html").stat().st_size > 0


def test_baseline_names_a_user_file_by_its_name(capsys, tmp_path):
    # was: "--baseline: unknown system 'h100x'" for the name the compared file gives itself
    f = tmp_path / "mine.toml"
    f.write_text('base = "h100"\nname = "h100x"\n"chip.hbm_stacks" = 6\n')
    code, out, err = run(capsys, "compare", "-m", "llama-3.3-70b", "--systems", f"h100,{f}", "--baseline", "h100x",
                         "-w", "1k1k", "--html", "", "--json")
    assert code == 0, err
    assert json.loads(out)["baseline"] == "h100x"


def test_baseline_not_compared_lists_the_compared_systems(capsys):
    # was: an unknown name listed the whole catalog, a catalog name only 'is not among --systems'
    for name in ("nope", "b200"):
        code, out, err = run(capsys, "compare", "-m", "llama-3.3-70b", "--systems", "h100,h200", "--baseline", name,
                             "-w", "1k1k", "--html", "")
        check_error(code, out, err, "--baseline", f"'{name}' is not among --systems (h100, h200)", "as typed")


def test_one_token_step_budget_gives_a_finite_ttft(capsys):
    # was: --max-tokens-per-step 1 made the idle-start wave's prefill slope 0/0 (the step priced twice
    # at one token): mean TTFT and E2E NaN ('-' in the table, null in --json)
    ttft = {}
    for t in (1, 2):
        code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-w", "1k1k",
                             "-c", "4", "--max-tokens-per-step", str(t), "--json")
        assert code == 0, err
        d = json.loads(out)
        assert d["ttft_s"] is not None and math.isfinite(d["ttft_s"]) and math.isfinite(d["e2e_s"]), d["ttft_s"]
        # one prompt token per step: a prompt of at least 0.8 x 1024 = 819 tokens (InferenceX lengths)
        # takes 819 steps, none shorter than the decode step (TPOT)
        assert d["ttft_s"] > 819 * d["tpot_s"]
        ttft[t] = d["ttft_s"]
    assert ttft[1] > ttft[2]  # half the tokens per step cannot prefill faster


def test_empty_quantization_config_is_refused(capsys, tmp_path):
    # was: "quantization_config": {} read as no quantization_config, the weights priced in BF16
    # (transformers refuses it: a quantization_config without quant_method)
    cfg = json.loads((resources.files("jalapeno") / "data" / "models" / "deepseek-r1.json").read_text())
    cfg["quantization_config"] = {}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    code, out, err = run(capsys, "models", "show", str(f))
    check_error(code, out, err, "quantization_config", "is empty", "quant_method", "or write null")
    cfg["quantization_config"] = None  # null: no quantization_config, 16-bit weights
    f.write_text(json.dumps(cfg))
    code, out, err = run(capsys, "models", "show", str(f), "--json")
    assert code == 0, err


def test_a_comma_list_where_one_system_or_model_is_taken(capsys):
    # was: "unknown system 'h200,h100' (did you mean 'h200'?)"
    code, out, err = run(capsys, "frontier", "-s", "h200,h100", "-m", "llama-3.3-70b")
    check_error(code, out, err, "--system", "comma-separated list where one system is taken", "compare --systems")
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b,qwq-32b", "-c", "4")
    check_error(code, out, err, "--model", "comma-separated list where one model is taken", "e.g. llama-3.3-70b")


def test_trace_folder_and_calibration_file_of_another_kind(capsys, tmp_path):
    # was: "unknown trace format ''" for a folder, and "x.csv/h200.toml not found" for a CSV as --efficiency
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-w", str(tmp_path))
    check_error(code, out, err, "--workload", "is a folder, not a trace file", ".csv or .jsonl")
    f = tmp_path / "points.csv"
    f.write_text("arrival_s,input_tokens,output_tokens\n0,100,10\n")
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--efficiency", str(f))
    check_error(code, out, err, "--efficiency", "is a file but not a calibration .toml", "calibrate --out-dir")


def test_ttft_parts_hold_no_negative_wait(capsys):
    # was: "queue, batch and wave waits -4.7 ms" with recurring waves at C = 1 (each user starts on an
    # idle engine: no step in flight to wait for, the prompt prefilled alone) and -3e-17 s rounding
    # residues elsewhere (DEP8 DeepSeek-R1 at C = 1)
    for args in (["-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "1", "--fixed-lengths",
                  "--recurring-waves"],
                 ["-s", "h200", "-m", "deepseek-r1", "--dp", "8", "--ep", "8", "-c", "1"]):
        code, out, err = run(capsys, "predict", *args, "--json")
        assert code == 0, err
        d = json.loads(out)
        parts = d["ttft_parts"]
        assert all(v >= 0 for v in parts.values()), parts
        assert math.isclose(sum(parts.values()), d["ttft_s"], rel_tol=1e-9)
        assert parts["first_step_s"] <= d["tpot_s"] / 2 * (1 + 1e-9)  # at most half a decode step


def test_set_capacity_in_the_other_unit_replaces_the_base_one(capsys):
    # was: --set chip.hbm_capacity_gib=100 on h200 (whose file gives hbm_capacity_gb = 141) refused:
    # "chip: give exactly one of hbm_capacity_gb or hbm_capacity_gib. Fix: correct chip"
    code, out, err = run(capsys, "hardware", "show", "h200", "--set", "chip.hbm_capacity_gib=100", "--json")
    assert code == 0, err
    assert json.loads(out)["chip"]["hbm_capacity_bytes"] == 100 * 2**30  # 100 GiB = 107,374,182,400 B
    code, out, err = run(capsys, "hardware", "show", "h200", "--set", "chip.hbm_capacity_gib=100",
                         "--set", "chip.hbm_capacity_gb=100")
    check_error(code, out, err, "--set", "chip.hbm_capacity_gib", "give one capacity twice")


def test_tile_message_shows_a_fractional_kib_as_given(capsys):
    # was: "H200 SXM's 0 KiB per unit holds no tile" for --set chip.sram_per_unit_kib=0.5 (since round 24,
    # user24, 0.5 KiB is below the plausible range, 1-1e5 KiB: a value inside it that holds no tile is used here)
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--set",
                         "chip.sram_per_unit_kib=1.5", "--tiles")
    check_error(code, out, err, "chip.sram_per_unit_kib", "1.5 KiB per unit holds no tile")
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--set",
                         "chip.sram_per_unit_kib=0.5", "--tiles")
    check_error(code, out, err, "chip.sram_per_unit_kib", "0.5 kib is outside the plausible range 1-100000 kib")


def test_sensitivity_bands_stay_within_what_the_schema_takes(capsys):
    # was: an estimated fraction's ±20% band ran past 1 (h200 kv_tiers.ssd.usable_fraction 0.9 -> 0.72-1.08)
    # and Jalapeño's estimated 216 GiB usable HBM to 259.2 GiB, above its 216 GiB nominal capacity: both
    # high ends were refused, the row showed '-' (null) at its high end and no swing
    for system, key, top in (("h200", "kv_tiers.ssd.usable_fraction", 1.0),
                             ("jalapeno", "chip.hbm_usable_gib", 216.0)):
        code, out, err = run(capsys, "sensitivity", "-s", system, "-m", "deepseek-r1", "-w", "1k1k", "--metric",
                             "max_interactivity", "--html", "", "--json")
        assert code == 0, err
        row = next(r for r in json.loads(out)["rows"] if r["parameter"] == key)
        assert row["high"] == top  # 1.2 x the value, capped at what the schema takes
        assert row["metric_at_high"] is not None and row["swing"] is not None, row


def test_models_show_prints_the_moe_row_as_fields(capsys):
    # was: "moe | {'num_experts': 256, 'top_k': 8, ...}" (a Python dict) and "kv_bytes_per_token | 35136.0"
    code, out, err = run(capsys, "models", "show", "deepseek-r1")
    assert code == 0, err
    text = " ".join(out.split())
    assert "{'" not in text
    assert "num_experts 256, top_k 8, num_shared 1" in text  # DeepSeek-V3 config: 256 routed, top-8, 1 shared
    # MLA KV per token, FP8 latents: 61 layers x (512 + 64) = 35,136 bytes
    assert "kv_bytes_per_token │ 35,136" in text
