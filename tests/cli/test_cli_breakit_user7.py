"""Findings of a new-user / hostile-tester pass (round 7, user7): inputs that ran with a silent
default or a silent truncation, and help text that disagreed with the behaviour. Each is now one
line naming the option and the fix."""

from __future__ import annotations

import pytest

from cli_runner import check_error, run

TWO = ("--systems", "jalapeno,h200", "--html", "")


def test_compare_precision_help_says_each_system_sweeps_its_own(capsys, monkeypatch):
    """compare's --help said 'default: the model's release' while compare sweeps fp8 and fp4 on
    Blackwell (its own description and title say so)."""
    monkeypatch.setenv("COLUMNS", "300")
    code, out, err = run(capsys, "compare", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "each system sweeps what it runs natively" in text
    assert "(default: the model's release)" not in text


@pytest.mark.parametrize("tiers, words", [
    ("fast=100,fast=200", ["tier 'fast'", "given twice", "name each tier once"]),
    ("=100", ["'=100'", "names no tier"]),
])
def test_tiers_named_twice_or_unnamed_are_refused(capsys, tiers, words):
    """``--tiers fast=100,fast=200`` kept the last floor silently; ``--tiers =100`` made a tier
    with an empty name."""
    check_error(*run(capsys, "compare", *TWO, "--tiers", tiers), "--tiers", *words)


def test_agentic_tiers_named_twice_are_refused(capsys):
    check_error(*run(capsys, "compare", *TWO, "-w", "agentic:chat-agent", "--tiers", "fast=10,fast=5"),
                "--tiers", "given twice")


@pytest.mark.parametrize("args", [
    ("compare", *TWO, "-w", "agentic:"),
    ("simulate", "-s", "jalapeno", "--dp", "8", "--ep", "8", "-c", "4", "-w", "agentic:"),
])
def test_agentic_prefix_with_nothing_after_it_is_refused(capsys, args):
    """``-w agentic:`` ran the coding-agent preset without saying so."""
    check_error(*run(capsys, *args), "--workload", "'agentic:' names no agentic preset",
                "agentic:coding-agent")


@pytest.mark.parametrize("args", [
    ("simulate", "-s", "jalapeno", "--dp", "8", "--ep", "8", "-c", "4", "--html", "{d}/sim.txt"),
    ("validate", "--no-aiconfigurator", "--html", "{d}/parity.csv"),
])
def test_html_output_needs_an_html_path(capsys, monkeypatch, tmp_path, args):
    """simulate and validate wrote their HTML page to x.txt / x.csv (compare, report, sensitivity
    and explore refuse it); refused before the run."""
    import jalapeno.fit.validation_run as validation_run
    import jalapeno.serve.sim.run as sim_run

    def boom(*a, **k):
        raise AssertionError("the run started before the output path was checked")

    monkeypatch.setattr(validation_run, "run_validation", boom)
    monkeypatch.setattr(sim_run, "simulate", boom)
    argv = [a.format(d=tmp_path) for a in args]
    check_error(*run(capsys, *argv), "--html", "is not an .html file", "ending in .html")
    assert not any(tmp_path.iterdir())


def test_sensitivity_metric_error_shows_what_was_typed(capsys):
    """The error quoted 'throughput_per_chip@abc=1' and asked for METRIC[@X]=VALUE: the '=1' is
    internal (a metric is parsed as a claim of value 1) and --metric takes no value."""
    code, out, err = run(capsys, "sensitivity", "-s", "jalapeno", "--metric", "throughput_per_chip@abc")
    check_error(code, out, err, "--metric", "'throughput_per_chip@abc': @abc is not an interactivity",
                "--metric throughput_per_chip@100")
    assert "=1" not in err and "=VALUE" not in err


SIM = ("simulate", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8")
HEADER = "arrival_s,input_tokens,output_tokens,session_id,prefix_group\n"


@pytest.mark.parametrize("rows, words", [
    ("0,100.5,10,,\n", ["row 1", "input_tokens", "100.5 is not a whole number of tokens", "integers"]),
    ("0,100,10,,\n1,100,2.5,,\n", ["row 2", "output_tokens", "2.5 is not a whole number"]),
    ("0,100,10,-5,\n", ["row 1", "session_id", "-5 is not an id", "leave the cell blank for none"]),
    ("0,100,10,1.5,\n", ["row 1", "session_id", "1.5 is not an id"]),
    ("0,100,10,,-2\n", ["row 1", "prefix_group", "-2 is not an id"]),
    ("0,100,10,5e18,\n", ["row 1", "session_id", "5e+18 is not an id"]),
])
def test_trace_token_counts_and_ids_are_whole_numbers(capsys, tmp_path, rows, words):
    """A fractional token count was truncated (100.5 -> 100); session -5 was read as 'no session'
    and session 1.5 as session 1 (merging it with session 1), all silently."""
    p = tmp_path / "t.csv"
    p.write_text(HEADER + rows)
    check_error(*run(capsys, *SIM, "-w", str(p)), "t.csv", *words)


def _config(tmp_path, name, **changes):
    """A shipped config.json with ``changes`` (the package's own copy: tests do not read ../shared)."""
    import json
    from importlib import resources

    cfg = json.loads((resources.files("jalapeno") / "data" / "models" / f"{name}.json").read_text())
    f = tmp_path / f"{name}-changed.json"
    f.write_text(json.dumps({**cfg, **changes}))
    return str(f)


@pytest.mark.parametrize("name, changes, words", [
    # n_routed_experts 0 priced DeepSeek-R1 as a 37B dense model, with top-8 routing ignored
    ("deepseek-r1", {"n_routed_experts": 0}, ["n_routed_experts", "0 experts with num_experts_per_tok = 8",
                                              "null for a dense model"]),
    # first_k_dense_replace past the last layer: every layer dense, the experts in none
    ("deepseek-r1", {"first_k_dense_replace": 1000}, ["first_k_dense_replace", "none of the 61 layers moe",
                                                      "fewer than num_hidden_layers = 61"]),
    # 0 was read as 1 (Hugging Face's modelling code divides by it)
    ("deepseek-r1", {"moe_layer_freq": 0}, ["moe_layer_freq", "positive integer, got 0"]),
    ("qwen3-235b-a22b", {"decoder_sparse_step": 0}, ["decoder_sparse_step", "positive integer, got 0"]),
])
def test_moe_layout_fields_that_made_no_moe_layers_are_refused(capsys, tmp_path, name, changes, words):
    check_error(*run(capsys, "models", "show", _config(tmp_path, name, **changes)), *words)


def test_a_dense_config_with_a_null_expert_count_stays_dense(capsys, tmp_path):
    """null (Hugging Face: no routed experts) is still a dense model: only a contradiction is refused."""
    code, out, err = run(capsys, "models", "show", "--json",
                         _config(tmp_path, "llama-3.3-70b", num_local_experts=None, num_experts_per_tok=None))
    assert code == 0, err


def test_open_loop_rate_spanning_years_is_refused(capsys):
    """--rate 1e-9 simulated 1e12 s (31,000 years) of an idle server for 14 s of wall time:
    1,000 requests at 1e-9 requests/s span 1e12 s, over the 1e8 s a trace may span."""
    check_error(*run(capsys, *SIM, "-r", "1e-9"), "--rate", "1,000 requests at 1e-09 requests/s span 1e+12 s",
                "requests per second")


def test_points_folder_is_named_a_folder(capsys, tmp_path):
    """``validate --points DIR`` said 'DIR not found'."""
    check_error(*run(capsys, "validate", "--no-aiconfigurator", "--points", str(tmp_path)), "--points",
                "is a folder, not a csv file")


def test_stack_version_with_spaces_is_named_without_them(capsys):
    """``--stack 'trtllm@ 1.1.0'`` was titled and recorded as 'trtllm@ 1.1.0'."""
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "4",
                         "--stack", "trtllm @ 1.1.0", "--json")
    assert code == 0, err
    import json

    assert json.loads(out)["efficiency_source"].endswith("+ stack trtllm@1.1.0")


def test_report_measured_file_is_checked_before_the_sweep(capsys, monkeypatch, tmp_path):
    """``report --measured banana`` swept every system (14 s) before 'file not found'."""
    import jalapeno.analysis.comparison as comparison

    def boom(*a, **k):
        raise AssertionError("the sweep started before --measured was checked")

    monkeypatch.setattr(comparison, "compare_systems", boom)
    monkeypatch.setattr(comparison, "system_frontier", boom)
    check_error(*run(capsys, "report", "--systems", "h200", "--measured", str(tmp_path / "banana.csv"),
                     "-o", str(tmp_path / "r.html")), "--measured", "file not found", "'shipped', 'none' or a csv")
