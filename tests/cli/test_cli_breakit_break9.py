"""Findings of a hostile-tester pass (round 9, break9): a silent wrong answer at light open-loop
load, design-space errors that named the wrong key or none, and an agentic file that held the
CLI for minutes. Each refusal is one line naming the field and the fix."""

from __future__ import annotations

import json

import pytest

from cli_runner import check_error, run

OPEN = ("predict", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "--isl", "1000", "--osl", "1000", "--json")
SPACE = ('name = "x"\nbase = "jalapeno"\ntrials = 1\n[objective]\nmetrics = ["tok_s_per_kw"]\n'
         '[[cases]]\nmodel = "deepseek-r1"\n')
AGENT = "system_prompt_tokens = 100\ntool_output_tokens = 100\nreply_tokens = 50\nthink_s = 1\n"


@pytest.mark.parametrize("rate", [1e-5, 1e-3])
def test_a_light_open_loop_rate_is_served_at_that_rate(capsys, rate):
    """``predict --rate 1e-3`` reported 0.0062 requests/s and its throughput (any rate below the
    solver's lightest grid point was clamped to it). Conservation: every request's tokens pass
    through the chips, so throughput per chip = λ·(mean ISL + mean OSL)/chips, with the fixed
    lengths' InferenceX spread (uniform in [0.8 L, L], mean 0.9 L) and 8 chips (TP8)."""
    code, out, err = run(capsys, *OPEN, "--rate", str(rate))
    assert code == 0, err
    d = json.loads(out)
    assert d["request_rate_per_s"] == pytest.approx(rate, rel=0.01)
    assert d["throughput_per_chip"] == pytest.approx(rate * 0.9 * 2000 / 8, rel=0.01)


def test_an_open_loop_rate_below_the_lowest_predicted_is_refused(capsys):
    check_error(*run(capsys, *OPEN, "--rate", "1e-9"), "--rate", "one request every 1.16e+04 days",
                "below the lowest rate predicted (1e-06 requests/s)", "give --rate 1e-06 or more")


@pytest.mark.parametrize("extra, where, words", [
    # a key the system lacks: it was blamed on a derived key that failed alone ('usable exceeds nominal')
    ('[params."chip.nope"]\nlow = 1\nhigh = 2\n[params."chip.hbm_stacks"]\nchoices = [4, 8]\n[derived]\n'
     '"chip.hbm_capacity_gib" = "36 * {chip.hbm_stacks}"\n"chip.hbm_usable_gib" = "36 * {chip.hbm_stacks}"\n',
     "space.toml: params.chip.nope", ["unknown system field"]),
    # a name choice in a derived expression: 'is not a valid expression (ValueError)'
    ('[params."chip.hbm_stacks"]\nchoices = ["a", "b"]\n[derived]\n'
     '"chip.hbm_bandwidth_tb_per_s" = "2.5 * {chip.hbm_stacks}"\n',
     "derived", ["{chip.hbm_stacks} is the name 'a'", "not a number"]),
])
def test_design_space_errors_name_the_key_at_fault(capsys, tmp_path, extra, where, words):
    f = tmp_path / "space.toml"
    f.write_text(SPACE + extra)
    check_error(*run(capsys, "explore", str(f)), where, *words)


@pytest.mark.parametrize("old, new, where, words", [
    ('base = "jalapeno"', 'base = "nope"', "space.toml: base", ["unknown system 'nope'"]),
    ('model = "deepseek-r1"', 'model = "nope"', "space.toml: cases.0.model", ["unknown model 'nope'"]),
    ('model = "deepseek-r1"', 'model = "deepseek-r1"\nprecision = "fp3"', "space.toml: cases.0.precision",
     ["unknown precision preset 'fp3'"]),
])
def test_design_space_names_are_named_with_the_file_and_key(capsys, tmp_path, old, new, where, words):
    """An unknown base, case model or precision said 'system:' / 'model:', not where it was written."""
    f = tmp_path / "space.toml"
    f.write_text(SPACE.replace(old, new) + '[params."chip.hbm_stacks"]\nchoices = [4, 8]\n')
    check_error(*run(capsys, "explore", str(f)), where, *words)


@pytest.mark.parametrize("head, words", [
    ("turns = 100000000\n", ["agent.toml: turns", "100,000,000 turns per session is over 10,000"]),
    # 100 + 5,000 x (2,000 + 30) = 10,150,100 tokens
    ("turns = 5000\n", ["agent.toml: turns", "= 10,150,100 tokens, is over 10,000,000"]),
])
def test_an_agentic_session_beyond_any_context_is_refused(capsys, tmp_path, head, words):
    """``turns = 1e8`` on a model without ``max_position_embeddings`` ran for minutes."""
    f = tmp_path / "agent.toml"
    f.write_text(head + AGENT.replace("tool_output_tokens = 100", "tool_output_tokens = 2000")
                 .replace("reply_tokens = 50", "reply_tokens = 30"))
    check_error(*run(capsys, "compare", "--systems", "h200", "-m", "gpt-oss-120b", "-w", f"agentic:{f}",
                     "--html", ""), *words)


@pytest.mark.parametrize("cmd, layout, words", [
    ("predict", ("--ep", "8"), ["ep", "EP8 does not divide tp*dp = 1"]),
    ("predict", ("--tp", "2", "--ep", "4"), ["ep", "EP4 does not divide tp*dp = 2"]),
    ("simulate", ("--ep", "8"), ["ep", "EP8 does not divide tp*dp = 1"]),
    # an invalid layout is named as such, not as a weight misfit
    ("predict", ("--tp", "3"), ["tp", "TP3 does not divide deepseek-r1's 128 attention heads"]),
])
def test_an_invalid_layout_is_named_before_the_memory_fit(capsys, cmd, layout, words):
    """``predict --ep 8`` (EP wider than TP x DP) ended in a ZeroDivisionError traceback: the
    memory fit divided by MoE TP = 1 // 8 = 0 before the layout was checked."""
    check_error(*run(capsys, cmd, "-s", "b200", "-m", "deepseek-r1", "-c", "4", "-w", "1k1k", *layout), *words)


@pytest.mark.parametrize("kv, words", [
    ("kv_tiers.host.bandwidth_gb_per_s=1e9", ["kv_tiers.host.bandwidth_gb_per_s", "1e+09 GB/s", "plausible range"]),
    ("kv_tiers.ssd.latency_us=1e9", ["kv_tiers.ssd.latency_us", "1e+09 µs"]),
    # 1e12 GB x the host tier's usable fraction 0.75
    ("kv_tiers.host.capacity_gb_per_chip=1e12", ["kv_tiers.host.capacity_gb_per_chip", "7.5e+11 GB"]),
    ("die.hop_latency_ns=1e9", ["die.hop_latency_ns", "1e+09 ns"]),
    ("die.link_bandwidth_tb_per_s=5000", ["die.link_bandwidth_tb_per_s", "5000 TB/s", "0.0001-500 TB/s"]),
])
def test_kv_tier_and_die_values_have_plausible_ranges(capsys, kv, words):
    """A one-second on-die hop (step time 1,280 s) or an exabyte/s host link ran unremarked."""
    check_error(*run(capsys, "hardware", "show", "b200", "--set", kv), "--set", *words, "check the unit")


def test_two_link_levels_of_one_name_are_refused(capsys, tmp_path):
    """``--set levels.cluster.*`` reached only the first of two levels named 'cluster'."""
    from importlib import resources

    text = (resources.files("jalapeno") / "data" / "systems" / "h200.toml").read_text()
    f = tmp_path / "two.toml"
    f.write_text(text.replace('[[levels]]\nname = "node"', '[[levels]]\nname = "cluster"', 1))
    check_error(*run(capsys, "hardware", "show", str(f)), "two.toml", "two link levels are named 'cluster'")


@pytest.mark.parametrize("tiers", ["fast=-1", "fast=nan", "fast=inf"])
def test_a_tier_floor_is_named_as_the_option(capsys, tiers):
    """It was named 'floors.fast', a field the user never typed."""
    check_error(*run(capsys, "compare", "--systems", "h200", "-m", "gpt-oss-120b", "--html", "", "--tiers", tiers),
                "--tiers", f"'{tiers}'", "not a finite number >= 0")


@pytest.mark.parametrize("name, changes, words", [
    ("deepseek-r1", {"q_lora_rank": 0}, ["q_lora_rank", "got 0", "or null for no query compression"]),
    ("gpt-oss-120b", {"num_experts_per_tok": 4, "experts_per_token": 8},
     ["num_experts_per_tok", "different values", "num_experts_per_tok = 4, experts_per_token = 8"]),
    ("mixtral-8x7b", {"num_experts": 16}, ["num_local_experts = 8, num_experts = 16"]),
])
def test_config_fields_read_silently_are_refused(capsys, tmp_path, name, changes, words):
    """``q_lora_rank: 0`` was read as no query compression (null's meaning); of two keys giving the
    expert count or top-k, the first was used and the other ignored."""
    from importlib import resources

    cfg = json.loads((resources.files("jalapeno") / "data" / "models" / f"{name}.json").read_text())
    f = tmp_path / "config.json"
    f.write_text(json.dumps({**cfg, **changes}))
    check_error(*run(capsys, "models", "show", str(f)), *words)


@pytest.mark.parametrize("opts, words", [
    # the option given wrong is named alone (user24: '--batch/--workers ... got --batch 8 --workers 0'
    # blamed a --batch the user never typed)
    (("--workers", "0"), ["error: --workers: must be at least 1, got 0", "give --workers 2"]),
    (("--batch", "-2"), ["error: --batch: must be at least 1, got -2", "give --batch 8"]),
    (("--study", " "), ["--study", "is empty", "leave --study out for the space's ('x')"]),
])
def test_a_refused_exploration_leaves_no_study_behind(capsys, tmp_path, opts, words):
    """``explore --workers 0`` was refused after its Optuna study had been created, so the corrected
    rerun was refused too ('a study named ... is already in ...; add --resume'); ``--study ''``
    ran under the space's name."""
    f = tmp_path / "space.toml"
    f.write_text(SPACE + '[params."chip.hbm_stacks"]\nchoices = [4, 8]\n')
    store = tmp_path / "store"
    check_error(*run(capsys, "explore", str(f), "--store", str(store), *opts), *words)
    assert not store.exists()
