"""Findings of round 47's break-it pass (break47), among them: ``compare``/``frontier``/agentic ``--overlap tbo`` on a dense model
ran every point without overlap and said nothing (the sweep applies TBO only where a MoE all-to-all exists; predict,
simulate and step refused it already); a system file's ``[die] slices = 1.5`` was blamed on a missing on-die
network ("a die of more than one slice needs link_bandwidth_tb_per_s"); ``report --measured shiped`` said only
"file not found"."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import check_error, run

H200 = Path(__file__).parents[2] / "src" / "jalapeno" / "data" / "systems" / "h200.toml"
EXAMPLE = Path(__file__).parents[2] / "examples" / "explore_700w.toml"


@pytest.mark.parametrize(
    "cmd",
    [
        ["compare", "-s", "h200", "--html", ""],
        ["frontier", "-s", "h200"],
        ["compare", "-s", "h200", "--html", "", "-w", "agentic:chat-agent"],
    ],
)
def test_tbo_on_a_dense_model_is_refused_in_a_sweep(capsys, cmd):
    conc = [] if "agentic:chat-agent" in cmd else ["-c", "4", "--serving", "agg"]
    code, out, err = run(capsys, *cmd, "-m", "llama-3.3-70b", *conc, "--overlap", "tbo")
    # was: exit 0, every point "overlap": "none" (llama-3.3-70b has no MoE all-to-all to hide)
    check_error(code, out, err, "--overlap", "llama-3.3-70b is a dense model", "would be ignored", "drop --overlap")


def test_tbo_on_a_moe_model_and_auto_on_a_dense_one_still_run(capsys):
    from jalapeno.cli.serving_opts import refuse_dense_overlap
    from jalapeno.specs.catalog import load_model

    dense, moe = load_model("llama-3.3-70b"), load_model("gpt-oss-120b")
    for ov in (None, "auto", "none"):
        refuse_dense_overlap(ov, dense)  # nothing to refuse: no overlap asked for
    refuse_dense_overlap("tbo", moe)  # EP layouts of a MoE model run it
    refuse_dense_overlap("TBO", dense)  # another spelling is SweepOptions' error ("did you mean 'tbo'?")
    code, out, err = run(
        capsys, "frontier", "-s", "h200", "-m", "llama-3.3-70b", "-c", "4", "--serving", "agg", "--overlap", "TBO"
    )
    check_error(code, out, err, "--overlap", "unknown overlap choice 'TBO'", "did you mean 'tbo'")


def _h200_with(tmp_path: Path, old: str, new: str) -> Path:
    text = H200.read_text()
    assert old in text
    path = tmp_path / "die.toml"
    path.write_text(text.replace('name = "h200"', 'name = "h200-die"', 1).replace(old, new, 1))
    return path


@pytest.mark.parametrize("value", ["1.5", "2.5"])
def test_fractional_die_slices_are_named_as_such(capsys, tmp_path, value):
    path = _h200_with(tmp_path, "slices = { value = 1,", f"slices = {{ value = {value},")
    code, out, err = run(capsys, "hardware", "show", str(path))
    # was: "die: a die of more than one slice needs link_bandwidth_tb_per_s and hop_latency_ns"
    check_error(code, out, err, "die.slices", f"must be a whole number (a count of slices), got {value}")


def test_fractional_compute_dies_are_named_as_such(capsys, tmp_path):
    path = _h200_with(tmp_path, "[die]\n", '[die]\ncompute_dies = { value = 2.5, source = "a test value" }\n')
    code, out, err = run(capsys, "hardware", "show", str(path))
    check_error(code, out, err, "die.compute_dies", "must be a whole number (a count of compute dies), got 2.5")


@pytest.mark.parametrize(("given", "meant"), [("shiped", "shipped"), ("NONE", "none"), ("Shipped", "shipped")])
def test_a_misspelt_measured_keyword_is_named(capsys, tmp_path, given, meant):
    code, out, err = run(
        capsys,
        "report",
        "-s",
        "h200",
        "-m",
        "llama-3.3-70b",
        "--no-bands",
        "--html",
        str(tmp_path / "r.html"),
        "--measured",
        given,
    )
    check_error(code, out, err, "--measured", f"{given!r}: file not found (did you mean {meant!r}?)")


def test_a_missing_measured_path_gets_no_keyword_hint(capsys, tmp_path):
    code, out, err = run(
        capsys,
        "report",
        "-s",
        "h200",
        "-m",
        "llama-3.3-70b",
        "--no-bands",
        "--html",
        str(tmp_path / "r.html"),
        "--measured",
        "none.csv",
    )
    check_error(code, out, err, "--measured", "'none.csv': file not found. fix")


def test_cp_on_the_decode_pool_is_named_as_a_pool_key(capsys):
    code, out, err = run(
        capsys,
        "predict",
        "-s",
        "h200",
        "-m",
        "gpt-oss-120b",
        "-c",
        "4",
        "--prefill",
        "tp=4,cp=2",
        "--decode",
        "dp=4,ep=4,cp=2",
    )
    # was field 'cp', an option predict does not have
    check_error(code, out, err, "--decode cp", "context parallelism (cp2) on the decode pool", "drop cp= from --decode")


def test_no_prefix_cache_on_a_fixed_length_workload_is_refused(capsys):
    code, out, err = run(
        capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "4", "--no-prefix-cache"
    )
    # was: exit 0 with figures identical to the run without it (fixed-length requests share no prefix)
    check_error(
        code, out, err, "--no-prefix-cache", "does not apply to a fixed-length workload", "drop --no-prefix-cache"
    )


@pytest.mark.parametrize(
    ("cmd", "metric"),
    [
        (["audit", "--claim", "max_interactivity=100"], "max_interactivity"),
        (["audit", "--claim", "peak_tokens_per_usd=1e6"], "peak_tokens_per_usd"),
        (["sensitivity", "--html", "", "--metric", "min_e2e_s"], "min_e2e_s"),
    ],
)
def test_power_beside_a_metric_no_convention_enters_is_refused(capsys, cmd, metric):
    code, out, err = run(capsys, *cmd, "-s", "h200", "-m", "llama-3.3-70b", "--power", "chip")
    # was: exit 0, the title saying "power chip", the figures those of any convention
    check_error(code, out, err, "--power", f"{metric} is not one: it would be ignored", "drop --power")


def test_power_checks_keep_their_order():
    from jalapeno.cli.audit_cmds import refuse_unread_power

    refuse_unread_power(None, "max_interactivity", "--claim")  # not given: the default all-in, never read
    refuse_unread_power("chip", "peak_tok_s_per_kw", "--claim")  # per-kW metrics read it
    refuse_unread_power("load", "tok_s_per_kw", "--metric")


def test_kv_tier_sets_on_a_fixed_length_run_are_noted(capsys):
    code, out, err = run(
        capsys,
        "predict",
        "-s",
        "h200",
        "-m",
        "llama-3.3-70b",
        "--tp",
        "8",
        "-c",
        "4",
        "--set",
        "kv_tiers.host.bandwidth_gb_per_s=225",
    )
    # was: exit 0, priced exactly as without it, no word (fixed-length requests share no prefix to park in a tier)
    assert code == 0
    assert "note: --set kv_tiers.host.bandwidth_gb_per_s is not read by a fixed-length workload" in err


def test_kv_tier_sets_on_an_agentic_run_get_no_note(capsys):
    code, out, err = run(
        capsys,
        "simulate",
        "-s",
        "h200",
        "-m",
        "llama-3.3-70b",
        "--tp",
        "8",
        "-c",
        "2",
        "-w",
        "agentic:chat-agent",
        "--sessions",
        "2",
        "--set",
        "kv_tiers.host.bandwidth_gb_per_s=225",
    )
    assert code == 0
    assert "kv_tiers" not in err


def test_calibrate_names_a_near_miss_and_refuses_a_repeat(capsys, tmp_path):
    code, out, err = run(capsys, "calibrate", "-s", "h2000", "--out-dir", str(tmp_path))
    check_error(code, out, err, "--systems", "unknown system 'h2000' (did you mean 'h200'?)")
    code, out, err = run(capsys, "calibrate", "-s", "h200,h200", "--out-dir", str(tmp_path))
    # was: h200 fitted and written twice, exit 0
    check_error(code, out, err, "--systems", "'h200' is given twice", "list each system once")
    assert not list(tmp_path.iterdir())  # refused before any fit


@pytest.mark.parametrize(
    ("old", "new", "table"),
    [
        (
            '[params."chip.hbm_stacks"]',
            '[params."kv_tiers.host.bandwidth_gb_per_s"]\nlow = 10\nhigh = 100\n\n[params."chip.hbm_stacks"]',
            "params",
        ),
        (
            '"chip.hbm_usable_gib" = "36 * {chip.hbm_stacks}"',
            '"chip.hbm_usable_gib" = "36 * {chip.hbm_stacks}"\n"kv_tiers.host.latency_us" = "{chip.hbm_stacks}"',
            "derived",
        ),
    ],
)
def test_a_kv_tier_key_in_a_design_space_is_refused(capsys, tmp_path, old, new, table):
    text = EXAMPLE.read_text()
    assert old in text
    space = tmp_path / "tiers.toml"
    space.write_text(text.replace(old, new, 1))
    code, out, err = run(capsys, "explore", str(space), "--store", str(tmp_path / "st"), "-n", "1")
    # was: exit 0, a searched dimension no case's score read (fixed-length workloads reuse no prefix)
    check_error(code, out, err, f"{table}.kv_tiers.host.", "no case reads the kv tiers below hbm", "drop it")
