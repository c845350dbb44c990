"""Findings of a new-user / hostile-tester pass (round 8, user8): leftovers of round 7 — inputs
that ran with a silent default, runs that went on for minutes without a word, and labels that
said something else than the figure. Each refusal is one line naming the option and the fix."""

from __future__ import annotations

import re

import pytest

from cli_runner import check_error, run

TWO = ("--systems", "jalapeno,h200", "--html", "")
PREDICT = ("predict", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", "1k1k")


def test_version_on_a_profile_without_version_rules_is_refused(capsys):
    """``--stack kernel@1.0`` priced exactly as ``kernel`` (the version was dropped)."""
    check_error(*run(capsys, "step", "-s", "b200", "--stack", "kernel@1.0"), "--stack",
                "'kernel' has no version rules", "drop '@1.0'", "profile that takes versions: sglang, trtllm, dynamo-trtllm")


@pytest.mark.parametrize("args, words", [
    (("--batch", "8", "--context", "0"), ["--context", "is 0 and the step decodes 8 sequences", "--context 1 or more"]),
    (("--batch", "8", "--context", "-3"), ["--context", "is -3"]),
    (("--batch", "-1"), ["--batch", "must be >= 0, got -1", "give --batch 0 or more"]),
    (("--batch", "0", "--prefill-tokens", "-5"), ["--prefill-tokens", "must be >= 0, got -5"]),
    (("--batch", "8", "--prefill-tokens", "100", "--prefix", "-5"), ["--prefix", "must be >= 0"]),
])
def test_step_lengths_are_checked_under_their_option_names(capsys, args, words):
    """``step --context 0`` priced decoding sequences with no KV at all; negative counts were
    refused as ``batch.decode_ctx`` etc., names the command does not have."""
    check_error(*run(capsys, "step", "-s", "b200", *args), *words)


def test_a_prefill_only_step_takes_context_0(capsys):
    code, out, err = run(capsys, "step", "-s", "b200", "--batch", "0", "--prefill-tokens", "1024", "--context", "0",
                         "--json")
    assert code == 0, err


@pytest.mark.parametrize("args", [
    (*PREDICT, "-c", "1.5"),
    ("compare", *TWO, "-c", "1,2.5"),
])
def test_fractional_concurrency_is_refused(capsys, args):
    """``predict -c 1.5`` priced one and a half requests in flight; a closed loop holds whole ones."""
    check_error(*run(capsys, *args), "--concurrency", "is not a whole number of requests in flight", "--rate")


@pytest.mark.parametrize("cmd", [("compare", *TWO), ("report", "-s", "h200", "-o", "x.html")])
def test_empty_tiers_are_refused(capsys, cmd):
    """``--tiers ''`` dropped the tier table without a word."""
    check_error(*run(capsys, *cmd, "--tiers", ""), "--tiers", "names no tier", "fast=100,ultra_fast=300")


def test_a_pool_with_an_empty_item_is_refused(capsys):
    """``--prefill "tp=4,,ep=4"`` was read as tp=4,ep=4: a dropped key passed as a typo."""
    check_error(*run(capsys, "predict", "-s", "gb200-nvl72", "-m", "deepseek-r1", "-c", "64", "--prefill",
                     "tp=4,,ep=4,workers=4", "--decode", "dp=8,ep=8"),
                "--prefill", "'tp=4,,ep=4,workers=4' has an empty item between commas", "one key=value per item")


def test_warmup_counts_toward_the_planned_requests(capsys):
    """``simulate --warmup 100000000`` planned a hundred million warm-up requests unchecked."""
    check_error(*run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-c", "4",
                     "--warmup", "100000000"),
                "--warmup", "100,000,040 requests (40 counted + 100,000,000 warm-up requests)", "limit of 2,000,000")


def test_a_long_simulation_says_so_before_it_runs(capsys, monkeypatch):
    """``simulate -c 100000`` ran 1.2 million requests for minutes behind a bar with no estimate:
    above a documented size it says so on stderr first (the limit lowered here to keep it quick)."""
    import jalapeno.cli.simulate_cmd as sim_cmd

    monkeypatch.setattr(sim_cmd, "LONG_RUN_REQUESTS", 30)
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-c", "4", "-w",
                         "1k1k")
    assert code == 0, err
    # 10 x 4 counted + 2 x 4 warm-up requests (run_sim's documented defaults)
    assert "note: simulating 48 requests takes minutes" in err and "--requests N" in err


def test_a_long_exploration_announces_its_estimate(capsys):
    """``explore --trials 100000`` ran for hours with no estimate. 100,000 trials x 0.2 s (the base's
    2 cases priced in 0.2 s) = 20,000 s = 5.6 h on one worker; 10 trials (2 s) say nothing."""
    from jalapeno.cli.explore_cmd import _announce_long_run

    _announce_long_run(100_000, 2, 1, 0.2)
    err = capsys.readouterr().err
    assert "100,000 trials x 2 case(s)" in err and "~5.6 hours on 1 worker(s)" in err and "--resume" in err
    _announce_long_run(100_000, 2, 4, 0.2)
    assert "~1.4 hours on 4 worker(s)" in capsys.readouterr().err
    _announce_long_run(10, 2, 1, 0.2)
    assert capsys.readouterr().err == ""


def test_explore_scores_are_labelled_relative_to_the_base(capsys, monkeypatch):
    """explore's table headed a score ``tok_s_per_kw`` (reads as tok/s/kW) while it is a ratio to the base."""
    from jalapeno.cli.explore_cmd import _print_summary

    monkeypatch.setenv("COLUMNS", "300")
    _print_summary({"name": "n", "trials": 1, "feasible": 1, "base": "jalapeno", "pruned_by": {}, "importance": {},
                    "designs": [{"trial": 0, "param:chip.hbm_stacks": 6, "score:tok_s_per_kw": 1.25,
                                 "chip_power_w": 700.0, "usd_per_chip_hour": 1.4}]})
    out = capsys.readouterr().out
    assert "tok_s_per_kw (x base)" in out and "1.25" in out


def test_predict_and_simulate_name_their_waits_distinctly(capsys, monkeypatch):
    """Both printed 'queueing delay': predict's is the admission queue beyond the capacity knee
    (0 below it, the wait for a prefill step being inside TTFT), simulate's every wait from
    arrival to the first step."""
    monkeypatch.setenv("COLUMNS", "300")
    code, out, err = run(capsys, *PREDICT, "-c", "4")
    assert code == 0, err
    assert "admission queue (beyond capacity)" in out and "queueing delay" not in out
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-c", "2", "-w", "1k1k",
                         "--requests", "4")
    assert code == 0, err
    assert "wait to first step (arrival → scheduled, front end included)" in out and "queueing delay" not in out


@pytest.mark.parametrize("cmd, engine", [("collective", False), ("step", False), ("predict", True)])
def test_stack_help_names_engine_only_where_there_is_one(capsys, monkeypatch, cmd, engine):
    """``collective --help`` said '--stack ... default with --engine the recipe engine's', an option
    collective does not have."""
    monkeypatch.setenv("COLUMNS", "300")
    code, out, _ = run(capsys, cmd, "--help")
    assert code == 0
    text = " ".join(out.split())
    assert ("with --engine the recipe engine's" in text) == engine
    assert bool(re.search(r"--engine(?![-\w])", text)) == engine  # --engine, not --engine-memory


def test_a_claim_at_an_unreachable_speed_is_audited_without_searching_nan(capsys):
    """A claim at a per-user speed the frontier never reaches (its metric NaN on every valid
    system) halved each parameter's end 8 times per side looking for a 'valid' one: 18
    evaluations per parameter, 17.5 s for an IMPOSSIBLE. A NaN metric on a valid system is now
    told apart from a system the schema refuses: two evaluations per parameter (its two ends)."""
    import json

    code, out, err = run(capsys, "audit", "--system", "jalapeno", "--model", "gpt-oss-120b", "--workload", "8k1k",
                         "--serving", "agg", "--claim", "throughput_per_chip@100000=1000", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["verdict"] == "impossible" and all(c["required"] is None for c in d["changes"])
    # two ends per parameter, plus a few ends the schema refuses (usable HBM above nominal) halved;
    # it was 18 per parameter
    assert d["context"]["fast_evaluations"] <= 3 * len(d["changes"]), d["context"]["fast_evaluations"]


def test_a_variant_with_an_unknown_base_names_its_file_and_key(capsys, tmp_path):
    """``base = "nope"`` was refused as 'system: unknown system', naming neither the file nor ``base``."""
    f = tmp_path / "mine.toml"
    f.write_text('base = "nope"\nname = "mine"\n')
    check_error(*run(capsys, "step", "-s", str(f)), "mine.toml: base", "unknown system 'nope'", "jalapeno hardware list")


def test_an_agentic_think_time_beyond_a_day_is_refused(capsys, tmp_path):
    """``think_s = 1e12`` ran, reporting tasks of 3e12 s."""
    f = tmp_path / "slow.toml"
    f.write_text("turns = 4\nsystem_prompt_tokens = 100\ntool_output_tokens = 100\nreply_tokens = 50\nthink_s = 1e12\n")
    check_error(*run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-c", "2",
                     "-w", f"agentic:{f}"),
                "slow.toml: think_s", "1e+12 s between turns is over 86,400 s (one day)", "seconds between turns")


@pytest.mark.parametrize("args, words", [
    (("validate", "--no-aiconfigurator", "-o", "{d}/val.json"), ["'", "val.json' is not a .csv file", "--json prints"]),
    (("simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-c", "2", "--out", "{d}/req.txt"),
     ["req.txt' is not a .csv or .parquet file", "ending in .csv or .parquet"]),
])
def test_table_outputs_check_their_suffix_before_the_run(capsys, monkeypatch, tmp_path, args, words):
    """``validate -o val.json`` wrote CSV into a .json file; ``simulate --out req.txt`` ran the whole
    simulation, then refused the suffix."""
    import jalapeno.fit.validation_run as validation_run
    import jalapeno.serve.sim.run as sim_run

    def boom(*a, **k):
        raise AssertionError("the run started before the output path was checked")

    monkeypatch.setattr(validation_run, "run_validation", boom)
    monkeypatch.setattr(sim_run, "simulate", boom)
    check_error(*run(capsys, *[a.format(d=tmp_path) for a in args]), "--out", *words)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("kv, key", [("efficiency.hbm_fraction=1.5", "efficiency.hbm_fraction"),
                                     ("efficiency.gemm.fp8.peak_fraction=2", "efficiency.gemm.fp8.peak_fraction")])
def test_a_bad_efficiency_set_is_named_as_typed(capsys, kv, key):
    """``--set efficiency.hbm_fraction=1.5`` was refused as 'jalapeno.toml: efficiency.hbm_fraction',
    a file the user never edited."""
    code, out, err = run(capsys, "step", "-s", "jalapeno", "--set", kv)
    check_error(code, out, err, f"--set: {key}", "must be in (0, 1]")
    assert "jalapeno.toml" not in err


def test_a_calibration_file_without_a_system_says_so(capsys, tmp_path):
    """It said 'was fitted for system None'."""
    f = tmp_path / "cal.toml"
    f.write_text('kind = "measured"\n[efficiency]\nhbm_fraction = 0.9\n')
    code, out, err = run(capsys, "step", "-s", "h200", "--efficiency", str(f))
    check_error(code, out, err, "efficiency", "cal.toml names no system", 'add system = "h200"')
    assert "None" not in err
