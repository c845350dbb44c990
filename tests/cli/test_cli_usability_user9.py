"""Findings of the round-8 new-user and hostile-input sessions, fixed in round 9 (user9): options
that overrode an engine recipe without a word, a trace replay without a request limit, a short
simulation whose throughput read far below predict's, errors naming internal fields, and the
pricer rule validate did not state. Each expected figure is computed by hand in its docstring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runner import check_error, run

TWO = ("--systems", "jalapeno,h200", "--html", "")
B200_FP4 = ("-s", "b200", "-m", "deepseek-r1", "--tp", "8", "--ep", "8", "--engine", "sglang-b200-dsr1-fp4")


# ---- (1) an explicit option beats the recipe, with one note naming the recipe field -------------------------------

def test_predict_names_the_recipe_precision_and_stack_it_overrides(capsys):
    """``predict --engine sglang-b200-dsr1-fp4 -p fp8 --stack kernel`` priced FP8 with zero fixed
    costs and said nothing: the recipe runs fp4 (data/engines.toml) on SGLang's profile."""
    code, out, err = run(capsys, "predict", *B200_FP4, "-c", "64", "-p", "fp8", "--stack", "kernel", "--json")
    assert code == 0, err
    notes = [ln for ln in err.splitlines() if ln.startswith("note: ")]
    assert notes == ["note: -p fp8 overrides recipe sglang-b200-dsr1-fp4's precision fp4",
                     "note: --stack kernel overrides recipe sglang-b200-dsr1-fp4's software stack sglang@0.5.6 "
                     "(the recipe's engine)"]
    d = json.loads(out)
    assert d["deployment"]["precision"].startswith("fp8")
    assert d["recipe_overrides"] == [n.removeprefix("note: ") for n in notes]


def test_the_recipes_own_values_are_no_override(capsys):
    """``-p fp4`` on an fp4 recipe and ``--stack trtllm`` on a TRT-LLM recipe (the same profile,
    pinned at the recipe's release) change nothing: no note."""
    code, out, err = run(capsys, "predict", *B200_FP4, "-c", "64", "-p", "fp4", "--json")
    assert code == 0, err
    assert "note: " not in err and json.loads(out)["recipe_overrides"] == []
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "deepseek-r1", "--tp", "8", "--ep", "8", "-c", "64",
                         "--engine", "trtllm-h200-dsr1-fp8-mtp", "--stack", "trtllm", "--json")
    assert code == 0, err
    assert "overrides recipe" not in err and json.loads(out)["recipe_overrides"] == []


def test_frontier_and_simulate_note_the_override_too(capsys):
    code, out, err = run(capsys, "frontier", "-s", "b200", "-m", "deepseek-r1", "-w", "1k1k", "--engine",
                         "sglang-b200-dsr1-fp4", "--kv-dtype", "bf16", "--json")
    assert code == 0, err
    assert "note: --kv-dtype bf16 overrides recipe sglang-b200-dsr1-fp4's KV-cache dtype fp8" in err
    code, out, err = run(capsys, "simulate", *B200_FP4, "-c", "8", "-n", "16", "-w", "1k1k", "-p", "fp8", "--json")
    assert code == 0, err
    assert "note: -p fp8 overrides recipe sglang-b200-dsr1-fp4's precision fp4" in err


# ---- (2) trace replay has a request limit ----------------------------------------------------------------------

def _trace(tmp_path, rows: int) -> str:
    """``rows`` requests, one every 0.5 s, 512 in / 64 out."""
    p = tmp_path / "t.csv"
    p.write_text("arrival_s,input_tokens,output_tokens\n" + "".join(f"{0.5 * k},512,64\n" for k in range(rows)))
    return str(p)


def test_a_long_trace_replays_its_first_requests_and_says_so(capsys, tmp_path, monkeypatch):
    """A trace of millions of rows ran unbounded. Default limit lowered to 20 here: 50 rows at 0.5 s
    replay rows 1-20, arrivals 0 to 19 x 0.5 = 9.5 s."""
    import jalapeno.serve.sim.run_plan as sim

    monkeypatch.setattr(sim, "TRACE_DEFAULT_REQUESTS", 20)
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w",
                         _trace(tmp_path, 50), "--json")
    assert code == 0, err
    assert ("note: the trace has 50 requests; replaying the first 20 by arrival (to 9.5 s); --requests N replays "
            "another count (at most 2,000,000)") in err
    d = json.loads(out)
    assert d["summary"]["requests"] == 20 and d["config"]["workload"] == {"trace": 20, "trace_rows": 50}


def test_requests_sets_how_much_of_a_trace_replays(capsys, tmp_path):
    path = _trace(tmp_path, 50)
    base = ("simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", path, "--json")
    code, out, err = run(capsys, *base, "--requests", "60")  # more than the trace holds: all 50, said (newuser37b)
    assert code == 0, err
    assert json.loads(out)["summary"]["requests"] == 50 and "replaying" not in err
    assert ("note: --requests 60 asks for more than the trace holds (50 requests); the run replays the trace once: "
            "50 requests, not 60") in err
    code, out, err = run(capsys, *base, "-n", "10")
    assert code == 0, err
    assert json.loads(out)["summary"]["requests"] == 10 and "replaying the first 10 by arrival (to 4.5 s)" in err
    check_error(*run(capsys, *base, "--requests", "3000000"), "--requests",
                "replays 3,000,000 requests of the trace, outside 1 to 2,000,000")


# ---- (3) a short run's throughput: steady state beside the whole run ---------------------------------------------

DISAGG = ("-s", "gb200-nvl72", "-m", "deepseek-r1", "-w", "1k1k", "-c", "512", "--prefill", "tp=4,ep=4,workers=2",
          "--decode", "dp=16,ep=16,workers=1")


def test_a_short_disaggregated_run_agrees_with_predict_in_steady_state(capsys):
    """``simulate -n 512`` at C = 512 read ~35% below predict: one counted wave, then the drain
    (docs/gap_gb200_fp4_8k1k.md). The steady-state figure (the window while requests still arrive)
    must agree with predict within 15% on this seed deployment; the whole-run one stays lower."""
    code, out, err = run(capsys, "predict", *DISAGG, "--json")
    assert code == 0, err
    analytic = json.loads(out)["throughput_per_chip"]
    code, out, err = run(capsys, "simulate", *DISAGG, "-n", "512", "--json")
    assert code == 0, err
    sm = json.loads(out)["summary"]
    steady = sm["steady_state"]["throughput_per_chip"]
    assert abs(steady / analytic - 1) < 0.15, (steady, analytic)
    assert sm["throughput_per_chip"] < 0.85 * analytic  # the drain: the reason for the second figure
    code, out, err = run(capsys, "simulate", *DISAGG, "-n", "512")
    assert code == 0, err
    assert "throughput per chip, steady state" in out and "include the drain" in out


def test_a_run_with_no_arrival_window_says_so(capsys):
    """``--warmup 0 -n C``: all C requests arrive at t = 0, so there is no window while requests
    still arrive; the table says so instead of a figure."""
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", "1k1k", "-c", "4",
                         "-n", "4", "--warmup", "0")
    assert code == 0, err
    assert "none: every request arrived at once" in out


# ---- (4) --power load is audit's convention ---------------------------------------------------------------------

@pytest.mark.parametrize("cmd", [("compare", *TWO), ("predict", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8",
                                                     "-c", "4")])
def test_power_load_outside_audit_is_refused_naming_where_it_works(capsys, cmd):
    check_error(*run(capsys, *cmd, "--power", "load"), "--power", "'load'", "jalapeno audit and sensitivity only",
                "chip, sustained, all-in")


# ---- (5) errors name the CLI option -----------------------------------------------------------------------------

@pytest.mark.parametrize("tiers, words", [
    ("fast=-5", ["'fast=-5': the floor -5 is not a finite number >= 0"]),  # the check break9 landed alike
    ("fast=inf", ["'fast=inf': the floor inf is not a finite number >= 0"]),
    ("batch=5", ["'batch' is the reserved name"]),
])
def test_tier_floors_are_refused_under_the_option_name(capsys, tiers, words):
    """``--tiers fast=-5`` was refused as ``floors.fast``, a name the command does not have."""
    code, out, err = run(capsys, "compare", *TWO, "--tiers", tiers)
    check_error(code, out, err, "--tiers", *words)
    assert "floors" not in err


@pytest.mark.parametrize("claim, words", [
    ("throughput_per_chip@inf=3", ["@inf is not an interactivity", "--claim throughput_per_chip@100=3"]),
    ("tok_s_per_kw_ratio@0=2", ["@0 is not an interactivity", "--claim tok_s_per_kw_ratio@100=2"]),
    ("throughput_per_chip@100=inf", ["the value inf is not a positive, finite number"]),
])
def test_a_claim_at_a_bad_interactivity_says_which_part_is_wrong(capsys, claim, words):
    """``--claim throughput_per_chip@inf=3`` answered "is not METRIC[@X]=VALUE", which it is."""
    check_error(*run(capsys, "audit", "-s", "jalapeno", "--claim", claim), "--claim", *words)


# ---- (6) the pricer rule is stated where validate's user looks ---------------------------------------------------

def test_validate_help_states_the_pricer_rule_and_autos_choices(capsys):
    """``auto`` took the table pricer for H200 (data/validation/loso_error.toml) while validate's
    figures were the roofline's, unexplained. The help names every system auto prices by table."""
    import tomllib
    from importlib import resources

    loso = tomllib.loads(resources.files("jalapeno.data.validation").joinpath("loso_error.toml").read_text())
    by_table = sorted(n for n, v in loso["systems"].items() if v["preferred_pricer"] == "table")
    code, out, err = run(capsys, "validate", "--help")
    assert code == 0, err
    text = " ".join(out.replace("│", " ").split())
    assert "roofline (default, as on every command" in text and "preferred_pricer" in text
    assert f"table on {', '.join(by_table)}, roofline elsewhere" in text
    # README says the same (it still named H200 after round 35's LOSO rerun had moved H200 to the roofline)
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    assert f"loso_error.toml`: table on {', '.join(by_table)}, roofline elsewhere" in readme


# ---- new-user pass (round 9): compare on each seed model ---------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    # default workload 8k1k: 8,192 + 1,024 > Llama 2's 4,096; of the presets only 1k1k (2,048) fits
    (("-m", "llama-2-70b"), ["--workload", "8k1k (8192 + 1024 tokens) exceed llama-2-70b's context of 4096",
                             "use a preset that fits (-w 1k1k)", "at most 4,096 tokens"]),
    (("-m", "llama-2-70b", "--isl", "4000", "--osl", "200"), ["--isl/--osl", "4000 + 200 tokens exceed",
                                                               "at most 4,096 tokens"]),
    # coding-agent's last turns reach 120,000 tokens; of the agentic presets long-memory-chat (26,800)
    # and chat-agent (8,700) fit QwQ-32B's 40,960, research-agent (93,000) does not
    (("-m", "qwq-32b", "-w", "agentic:coding-agent"),
     ["--workload", "coding-agent's last turns (120,000 tokens) exceed qwq-32b's context of 40960",
      "-w agentic:long-memory-chat, agentic:chat-agent"]),
])
def test_a_workload_longer_than_the_model_names_the_presets_that_fit(capsys, args, words):
    """``compare -m llama-2-70b`` ran the default 8k1k past Llama 2's context and was refused under
    ``--isl/--osl`` (not given) with "use shorter requests"."""
    check_error(*run(capsys, "compare", "--html", "", *args), *words)


def test_as_deployed_says_which_recipe_runs_which_system(capsys):
    code, out, err = run(capsys, "compare", "--systems", "jalapeno,gb200-nvl72", "--as-deployed", "--html", "")
    assert code == 0, err
    text = " ".join(out.split())
    assert "as deployed (engine recipes, data/engines.toml): gb200-nvl72 " in text and "; as stated: jalapeno" in text


def test_as_deployed_without_any_recipe_says_so(capsys):
    """``compare -m gpt-oss-120b --as-deployed`` ran every system as stated without a word."""
    code, out, err = run(capsys, "compare", "-m", "gpt-oss-120b", "--systems", "jalapeno", "--as-deployed",
                         "--html", "", "--json")
    assert code == 0, err
    assert ("note: --as-deployed: no engine recipe deploys gpt-oss-120b on jalapeno (data/engines.toml "
            "default_for); every system runs as stated") in err


def test_compare_help_keeps_its_sentence_whole(capsys):
    """The help read "...its chip computes / natively, e.g. ..." across a hard line break of the docstring."""
    code, out, err = run(capsys, "compare", "--help")
    assert code == 0, err
    text = " ".join(out.split())  # the terminal wraps at its width; the docstring no longer breaks the sentence
    assert "Each system sweeps every released precision its chip computes natively unless -p pins one." in text


def test_an_aggregated_point_shows_no_kv_transfer(capsys):
    """``predict`` on an aggregated deployment printed "KV transfer 0.00 ms", a disaggregated figure."""
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-c", "4")
    assert code == 0, err
    assert "KV transfer" not in out
    code, out, err = run(capsys, "predict", "-s", "gb200-nvl72", "-m", "deepseek-r1", "-w", "1k1k", "-c", "64",
                         "--prefill", "tp=4,ep=4,workers=1", "--decode", "dp=8,ep=8,workers=1")
    assert code == 0, err
    assert "KV transfer (prefill to decode)" in out
