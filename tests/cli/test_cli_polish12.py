"""Findings of round 12's usability pass: a value an option took by mistake is refused before it
is used, and a positional argument at fault is named as the help names it."""

from __future__ import annotations

from cli_runner import check_error, run

SMALL = ("-m", "llama-3.3-70b", "-s", "h200", "-c", "4", "--serving", "agg", "--html", "")


def test_store_refuses_a_value_that_looks_like_an_option(capsys, tmp_path, monkeypatch):
    """``compare --store -1`` made a folder named "-1", ``--store --json`` one named "--json"."""
    monkeypatch.chdir(tmp_path)
    for bad in ("-1", "--json"):
        check_error(*run(capsys, "compare", *SMALL, "--store", bad), f"--store: '{bad}' looks like an option",
                    "give a folder path", f"./{bad}")
        check_error(*run(capsys, "frontier", "-s", "h200", "-m", "llama-3.3-70b", "-c", "4", "--store", bad),
                    f"--store: '{bad}'", "looks like an option")
    assert list(tmp_path.iterdir()) == []  # nothing created, no sweep run first


def test_store_refuses_empty_and_a_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check_error(*run(capsys, "compare", *SMALL, "--store="), "--store: is empty", "leave --store out")
    f = tmp_path / "f.txt"
    f.write_text("x")
    check_error(*run(capsys, "compare", *SMALL, "--store", str(f)), "--store:", "is a file, not a folder")


def test_agentic_compare_refuses_store(capsys, tmp_path, monkeypatch):
    """The agentic comparison stored nothing and said nothing when given --store."""
    monkeypatch.chdir(tmp_path)
    check_error(*run(capsys, "compare", "-w", "agentic:coding-agent", "--store", "st"),
                "--store: does not apply to --workload agentic")
    check_error(*run(capsys, "frontier", "-s", "h200", "-w", "agentic:coding-agent", "--store", "st"),
                "--store: does not apply to --workload agentic")
    assert not (tmp_path / "st").exists()


def test_show_names_its_argument(capsys, tmp_path):
    """``hardware show nope.toml`` said 'error: nope.toml: file not found' without the argument."""
    nope = str(tmp_path / "nope.toml")
    check_error(*run(capsys, "hardware", "show", nope), f"error: {nope} (the NAME argument): file not found")
    # a flag before the argument takes no value: the path is still the argument
    check_error(*run(capsys, "hardware", "show", "--json", nope), f"error: {nope} (the NAME argument): file not found")
    check_error(*run(capsys, "hardware", "show", "--efficiency", "low", nope), f"error: {nope} (the NAME argument):")
    check_error(*run(capsys, "hardware", "show", "nope"), "error: NAME: unknown system 'nope'", "hardware list")
    check_error(*run(capsys, "models", "show", str(tmp_path / "m.json")), f"error: {tmp_path / 'm.json'} (the NAME argument): file not found")
    check_error(*run(capsys, "models", "show", "nomodel"), "error: NAME: unknown model 'nomodel'", "models list")
    # an option's value keeps the option's name
    check_error(*run(capsys, "hardware", "show", "h200", "--efficiency", "nope"), "--efficiency")


def test_a_file_with_another_suffix_is_not_called_an_unknown_name(capsys, tmp_path, monkeypatch):
    """``hardware show my.cfg`` said "unknown system 'my.cfg' ... or a file path" of a file path."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my.cfg").write_text("x = 1\n")
    check_error(*run(capsys, "hardware", "show", "my.cfg"), "error: NAME: 'my.cfg' is a file but not a catalog system",
                "ends in .toml", "pass it as ./my.cfg")
    check_error(*run(capsys, "models", "show", "my.cfg"), "'my.cfg' is a file but not a catalog model",
                "ends in .json", "./my.cfg")
    check_error(*run(capsys, "predict", "-s", "my.cfg", "-m", "llama-3.3-70b", "-c", "4"), "--system: 'my.cfg' is a file")
    # a name that is no file keeps the catalog's list
    check_error(*run(capsys, "hardware", "show", "nope.cfg"), "unknown system 'nope.cfg'", "hardware list")


def test_collective_group_beyond_the_system_names_the_option(capsys):
    """'error: group size: 100000 chips exceed h200's 8192' named no option; h200's catalog file
    ends at 8,192 chips (its last link level)."""
    check_error(*run(capsys, "collective", "-s", "h200", "--group", "100000"),
                "error: --group: 100000 chips exceed h200's 8192", "at most --group 8192")


def test_deepseek_config_without_expert_count_is_refused(capsys, tmp_path):
    """A DeepSeek config with num_experts_per_tok but no n_routed_experts ran as a 37B dense model."""
    import json
    from importlib import resources

    cfg = json.loads((resources.files("jalapeno") / "data" / "models" / "deepseek-r1.json").read_text())
    del cfg["n_routed_experts"]
    f = tmp_path / "ds.json"
    f.write_text(json.dumps(cfg))
    check_error(*run(capsys, "models", "show", str(f)), "n_routed_experts: missing, while num_experts_per_tok = 8",
                "add \"n_routed_experts\"", "or remove num_experts_per_tok")


def test_agentic_frontier_takes_stack_and_checks_out_first(capsys):
    """--stack and --pricer were dropped by the agentic compare/frontier, silently; a .parquet
    --out was refused only after the sweep."""
    import json

    base = ("frontier", "-s", "h200", "-m", "llama-3.3-70b", "-w", "agentic:coding-agent", "--json")
    code, out, _ = run(capsys, *base)
    assert code == 0
    default = json.loads(out)["frontier"][0]["task_time_s"]
    code, out, _ = run(capsys, *base, "--stack", "kernel")  # every fixed cost zero: a faster task
    assert code == 0 and json.loads(out)["frontier"][0]["task_time_s"] < default
    check_error(*run(capsys, *base, "--stack", "nope"), "--stack: unknown software stack 'nope'")
    check_error(*run(capsys, "compare", "-s", "h200", "-m", "llama-3.3-70b", "-w", "agentic:coding-agent",
                     "--pricer", "nope"), "--pricer: unknown pricer 'nope'")
    check_error(*run(capsys, *base[:-1], "-o", "x.parquet"), "--out: 'x.parquet'", ".json or .csv")


def test_a_list_option_given_twice_is_refused(capsys):
    """click keeps the last value of a repeated option without a word: ``audit --claim a --claim b``
    audited b only, ``compare -s h200 -s b200`` compared b200 alone, ``-c 4 -c 16`` ran 16."""
    check_error(*run(capsys, "audit", "--system", "jalapeno", "--claim", "max_interactivity=700",
                     "--claim", "max_interactivity=800"),
                "--claim: given 2 times ('max_interactivity=700', 'max_interactivity=800')",
                "does not add to it", "give --claim once per run")
    check_error(*run(capsys, "compare", "-s", "h200", "--systems=b200", "-m", "llama-3.3-70b"),
                "--systems: given 2 times ('h200', 'b200')", "e.g. --systems h200,b200")
    check_error(*run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "4", "-c", "16"),
                "--concurrency: given 2 times", "e.g. --concurrency 4,16")
    # a one-value option keeps the last (a wrapper's default overridden), the same value twice and
    # an option that collects values (--set) are not refused
    code, out, err = run(capsys, "hardware", "show", "h200", "--efficiency", "low", "--efficiency", "low",
                         "--set", "chip.tdp_w=600", "--set", "chip.sustained_w=500")
    assert code == 0, err
    assert "600 W" in out and "500 W" in out
    code, out, err = run(capsys, "step", "-s", "h100", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--json")
    assert code == 0, err
    assert '"h200"' in out


def test_an_unknown_name_is_shown_under_the_option_that_gave_it(capsys):
    """``audit --baseline nope`` said '--system: unknown system', ``compare --baseline nope``
    '--systems: unknown system': the library's field is 'system' for both."""
    check_error(*run(capsys, "audit", "--system", "jalapeno", "--baseline", "nope", "--claim",
                     "peak_tok_s_per_kw_ratio=1.7"), "error: --baseline: unknown system 'nope'")
    # (round 20: compare's --baseline names the systems compared, not the whole catalog)
    check_error(*run(capsys, "compare", "-s", "h200", "-m", "llama-3.3-70b", "--baseline", "nope", "--html", ""),
                "error: --baseline: 'nope' is not among --systems (h200)")
    check_error(*run(capsys, "compare", "--systems", "h100,foo", "-m", "llama-3.3-70b"), "error: --systems: unknown system 'foo'")


def test_a_quoted_number_fix_shows_the_users_number(capsys, tmp_path):
    """tdp_w = "700" was told 'e.g. chip.tdp_w.value = 4.8' (4.8 W for a TDP); a variant's bare value
    is named as written, chip.tdp_w, not chip.tdp_w.value (breakit16: that fix failed on a missing source)."""
    f = tmp_path / "v.toml"
    f.write_text('base = "h200"\n[chip]\ntdp_w = "700"\n')
    check_error(*run(capsys, "hardware", "show", str(f)), "chip.tdp_w: must be a number, got '700'",
                "without quotes, e.g. chip.tdp_w = 700")
    check_error(*run(capsys, "hardware", "show", "h200", "--set", 'chip.hbm_stacks="6"'),
                "must be a whole number, got '6'", "e.g. --set chip.hbm_stacks=6")


def test_an_output_path_that_looks_like_an_option_is_refused(capsys, tmp_path, monkeypatch):
    """``validate -o -1`` and ``results export RUN -o -x.csv`` wrote files named '-1' / '-x.csv';
    ``results export RUN -o FOLDER`` said "unknown file type '(none)'"."""
    monkeypatch.chdir(tmp_path)
    check_error(*run(capsys, "validate", "-o", "-1"), "--out: '-1' looks like an option or a number", "./-1")
    assert run(capsys, "frontier", "-s", "h200", "-m", "llama-3.3-70b", "-c", "4", "--store", "st")[0] == 0
    (tmp_path / "sub").mkdir()
    runs = [p.name for p in (tmp_path / "st" / "runs").iterdir()]
    check_error(*run(capsys, "results", "export", runs[0], "--store", "st", "-o", "-x.csv"),
                "--out: '-x.csv' looks like an option")
    check_error(*run(capsys, "results", "export", runs[0], "--store", "st", "-o", "sub"),
                "--out: cannot write 'sub' (a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["st", "sub"]


def test_pair_field_with_one_option_given_is_shown_as_options(capsys):
    """``--isl 100`` without --osl said 'error: isl/osl: give both --isl and --osl'."""
    check_error(*run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "4", "--isl", "100"),
                "error: --isl/--osl: give both --isl and --osl")


def test_design_space_whole_file_check_names_its_table(capsys, tmp_path):
    """A derived entry referring to no parameter said '(top level): derived: ... Fix: correct (top level)'."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "examples" / "explore_700w.toml").read_text()
    f = tmp_path / "space.toml"
    f.write_text(text.replace('[params."chip.hbm_stacks"]', '[params."chip.nope"]'))
    code, out, err = run(capsys, "explore", str(f))
    check_error(code, out, err, "space.toml: derived: 'chip.hbm_bandwidth_tb_per_s' refers to {chip.hbm_stacks}",
                "which is not a parameter", "correct [derived]")
    assert "(top level)" not in err


def test_usage_error_points_at_the_subcommand_help(capsys):
    """``models list --nope`` pointed at `jalapeno models --help`, which does not list --json."""
    check_error(*run(capsys, "models", "list", "--json", "--nope"), "no such option: --nope",
                "see `jalapeno models list --help`")
    check_error(*run(capsys, "hardware", "list", "extra"), "see `jalapeno hardware list --help`")
    check_error(*run(capsys, "hardware", "shwo"), "did you mean 'show'?", "see `jalapeno hardware --help`")


def test_no_fitting_layout_names_the_memory_fraction_given(capsys):
    """--memory-fraction 0.01 made every layout misfit, and the fix named only precision and HBM."""
    check_error(*run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "4", "--memory-fraction", "0.01"),
                "does not fit on any layout of h200", "with --memory-fraction 0.01 of hbm", "or raise --memory-fraction")
    code, out, err = run(capsys, "predict", "-s", "h200", "--set", "chip.hbm_capacity_gb=1", "-m", "llama-3.3-70b",
                         "-c", "4")
    check_error(code, out, err, "does not fit on any layout of h200")
    assert "--memory-fraction" not in err
