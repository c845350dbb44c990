"""Round 13's robustness pass: absurd but well-typed input is refused with one line naming the field
(the bounds' sources: specs/model_plausibility.py, deploy/layout.check_eplb), and the agentic labels
show the share that decided them."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from cli_runner import check_error, run


def _config(tmp_path, name: str, drop: tuple[str, ...] = (), **changes) -> str:
    cfg = json.loads((resources.files("jalapeno") / "data" / "models" / "llama-3.3-70b.json").read_text())
    for k in drop:
        del cfg[k]
    cfg.update(changes)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(cfg))
    return str(path)


@pytest.mark.parametrize(("key", "value", "bound"), [
    # bounds ~16x past the largest released decoder: hidden 20,480 (MT-NLG 530B), vocab 262,208 (Gemma 3),
    # heads 128 (DeepSeek-V3), FFN 53,248 (Llama-3.1-405B), context 10,485,760 (Llama 4 Scout)
    ("hidden_size", 10**12, "262,144"),
    ("vocab_size", 10**12, "4,194,304"),
    ("num_attention_heads", 2**20, "4,096"),
    ("intermediate_size", 10**9, "1,048,576"),
    ("max_position_embeddings", 10**12, "134,217,728"),
])
def test_absurd_model_sizes_are_refused_naming_the_key(capsys, tmp_path, key, value, bound):
    """``hidden_size`` 1e12 was listed by ``models show`` as an 8.6e21-parameter model and priced until
    the memory fit said 'shard wider', pointing at the deployment instead of the file."""
    path = _config(tmp_path, key, **{key: value})
    for args in (("models", "show", path), ("predict", "-s", "h200", "-m", path, "--tp", "8", "-c", "4")):
        check_error(*run(capsys, *args), f"{key}: {value:,} is beyond any decoder", f"at most {bound} accepted",
                    "fix: check the value against the model's hugging face config.json")


def test_largest_released_sizes_still_load(capsys, tmp_path):
    """The bounds leave room for real decoders: Qwen3-Next's 512 experts, MT-NLG's 20,480 width, Gemma 3's
    262,208-token vocabulary, Llama 4 Scout's 10,485,760-token context."""
    path = _config(tmp_path, "big", hidden_size=20480, vocab_size=262208, max_position_embeddings=10485760,
                   num_attention_heads=128, num_key_value_heads=8)
    code, out, err = run(capsys, "models", "show", path, "--json")
    assert code == 0, err
    assert json.loads(out)["hidden_size"] == 20480


def test_model_layers_bound_is_kept(capsys, tmp_path):
    check_error(*run(capsys, "models", "show", _config(tmp_path, "deep", num_hidden_layers=10**6)),
                "num_hidden_layers", "beyond any decoder")


def test_isl_beyond_any_context_is_refused_even_without_a_model_context(capsys, tmp_path):
    """A config without max_position_embeddings made no context check: --isl 1e9 reached the memory fit."""
    path = _config(tmp_path, "nomax", drop=("max_position_embeddings",))
    check_error(*run(capsys, "predict", "-s", "h200", "-m", path, "--tp", "8", "-c", "4", "--isl", "1000000000",
                     "--osl", "100"), "--isl/--osl: 1,000,000,000 + 100 tokens is beyond any model's context",
                "134,217,728", "fix: give --isl/--osl of a real request")
    check_error(*run(capsys, "step", "-s", "h200", "-m", path, "--tp", "8", "--batch", "4", "--context",
                     str(10**12)), "--context:", "beyond any model's context", "gives no max_position_embeddings")
    # a model that states its context keeps its own, sharper message
    check_error(*run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "4", "--isl", "200000",
                     "--osl", "100"), "--isl/--osl", "exceed llama-3.3-70b's context of 131072")


def test_eplb_far_above_the_expert_count_is_refused_everywhere(capsys):
    """--eplb 1000 for DeepSeek-R1's 256 experts was accepted by the sweeps (the EP8..EP256 twins were
    priced, or dropped without a word) and by step at wide EP."""
    check_error(*run(capsys, "frontier", "-s", "gb200-nvl72", "-m", "deepseek-r1", "-c", "64", "--eplb", "1000"),
                "--eplb: 1000 redundant experts is more than deepseek-r1's 256 experts", "--eplb 256 or fewer")
    check_error(*run(capsys, "step", "-s", "gb200-nvl72", "-m", "deepseek-r1", "--dp", "64", "--ep", "64",
                     "--batch", "8", "--eplb", "1000"), "--eplb:", "more than deepseek-r1's 256 experts")
    check_error(*run(capsys, "predict", "-s", "gb200-nvl72", "-m", "deepseek-r1", "-c", "64", "--dp", "64", "--ep",
                     "64", "--eplb", "320"), "--eplb:", "320 redundant experts", "--eplb 256 or fewer")


def test_agentic_labels_show_their_share(capsys):
    """kv_tier flipped at 5% of returning sessions with no sign of how close a point was."""
    args = ("frontier", "-s", "h200", "-m", "llama-3.3-70b", "-w", "agentic:coding-agent")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    pts = json.loads(out)
    pts = pts["frontier"]
    assert all(0 <= p["kv_tier_share"] <= 1 for p in pts)
    assert all(p["kv_tier_share"] >= 0.05 for p in pts if p["kv_tier"] != "hbm")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "KV tier (share of" in out
    for p in pts:  # the label with its share, as the JSON gives them: "host 66.7%", "hbm 100.0%"
        assert f"{p['kv_tier']} {p['kv_tier_share']:.1%}" in out


def test_top_level_help_reflows_each_command_summary(capsys, monkeypatch):
    """``jalapeno --help`` kept the docstrings' line breaks: report's line broke after "frontiers with
    metric," and plan's after "serve a token", each leaving the rest of the line blank."""
    import typer

    from jalapeno.cli.app import app

    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys, "--help")
    assert code == 0, err
    lines = [" ".join(ln.replace("│", " ").split()) for ln in out.splitlines()]
    assert any("frontiers with metric, power-convention" in ln for ln in lines), out
    assert any("deployment that serve a token rate" in ln for ln in lines), out
    # the commands are registered by the run above
    for name, cmd in typer.main.get_command(app).commands.items():
        if cmd.short_help is not None:
            assert "\n" not in cmd.short_help, name


def test_simulate_rate_beyond_any_deployment_is_refused(capsys):
    """``simulate --rate 1e12`` sent every request at t = 0 and reported the queue, without a word."""
    check_error(*run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--rate", "1e12"),
                "--rate: 1e+12 requests/s is beyond any deployment", "limit 1,000,000",
                "fix: give the rate in requests per second")


@pytest.mark.parametrize(("extra", "named"), [(("--tp", "8"), "--tp"), (("--replicas", "3"), "--replicas"),
                                              (("--tp", "8", "--eplb", "0"), "--tp/--eplb")])
def test_simulate_refuses_aggregated_options_beside_pools(capsys, extra, named):
    """simulate --tp 8 (or --replicas 3) with --prefill/--decode ran the pools and dropped the option
    without a word; predict refused the same with all five options named, whichever was given."""
    args = ("-s", "h200", "-m", "llama-3.3-70b", "--prefill", "tp=8", "--decode", "tp=8")
    check_error(*run(capsys, "simulate", *args, "-c", "4", "--requests", "20", *extra),
                f"error: {named}: aggregated layout option given with --prefill/--decode", "in the pools")
    if "--replicas" not in extra:
        check_error(*run(capsys, "predict", *args, "-c", "4", *extra), f"error: {named}: aggregated layout option")


@pytest.mark.parametrize(("args", "words"), [
    (("step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--json", "nope"),
     ["error: --json: is an on/off flag and takes no value, got 'nope'", "write --json alone"]),
    (("predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "4", "--fixed-lengths", "yes"),
     ["error: --fixed-lengths: is an on/off flag", "got 'yes'", "jalapeno predict --help"]),
    (("hardware", "show", "h200", "extra"), ["error: 'extra': an argument this command does not take",
                                             "jalapeno hardware show --help"]),
])
def test_a_word_after_a_flag_names_the_flag(capsys, args, words):
    """'Got unexpected extra argument(s) (nope)' named the word, not the flag it was typed after."""
    check_error(*run(capsys, *args), *words)


def test_a_huge_context_prints_as_a_number_not_float_digits(capsys):
    """--context 1e23 typed in digits printed as 99999999999999991611392 tokens."""
    check_error(*run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--batch", "4", "--context",
                     "99999999999999999999999"), "--context: 1e+23 tokens exceed llama-3.3-70b's context of 131072")


def test_agentic_sweeps_bound_eplb_too(capsys):
    """The agentic sweep (compare/frontier -w agentic:...) took --eplb 100000 without a word: the
    bound lived in the fixed-length sweep only."""
    check_error(*run(capsys, "frontier", "-s", "gb200-nvl72", "-m", "deepseek-r1", "-w", "agentic:coding-agent",
                     "--eplb", "1000", "--routing", "measured"),
                "--eplb: 1000 redundant experts is more than deepseek-r1's 256 experts", "--eplb 256 or fewer")
    check_error(*run(capsys, "compare", "-m", "deepseek-r1", "-w", "agentic:coding-agent", "--systems", "gb200-nvl72",
                     "--eplb", "100000", "--html", ""), "--eplb: 100000 redundant experts")


def test_explore_names_the_key_out_of_range_not_a_derived_partner(capsys, tmp_path):
    """A rack bandwidth range of 300,000-400,000 GB/s (MB/s typed as GB/s) was reported as
    'derived.chip.hbm_capacity_gib: usable 216.0 GiB exceeds nominal 144.0 GiB': trying each key
    alone blamed the first derived key that fails without its partner (hbm_usable_gib)."""
    text = (resources.files("jalapeno").parent.parent / "examples" / "explore_700w.toml").read_text()
    assert "low = 300\nhigh = 1200" in text
    space = tmp_path / "space.toml"
    space.write_text(text.replace("low = 300\nhigh = 1200", "low = 300000\nhigh = 400000", 1))
    check_error(*run(capsys, "explore", str(space), "--trials", "2"), "levels.tray.bandwidth_gb_per_s",
                "outside the plausible range 0.1-50000 gb/s")


def test_sensitivity_at_a_speed_the_frontier_never_reaches_is_refused(capsys):
    """``sensitivity --metric throughput_per_chip@1e9`` printed a table of '-' (the metric undefined at
    every band end) and exited 0."""
    check_error(*run(capsys, "sensitivity", "-s", "h200", "-m", "llama-3.3-70b", "--metric", "throughput_per_chip@1e9",
                     "--html", ""), "--metric: throughput_per_chip@1e+09 is undefined on h200",
                "its frontier reaches at most", "fix: give @x of at most")
