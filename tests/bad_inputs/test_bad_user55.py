"""Round 55's break pass (break55): inputs that still read wrong. Each case below fails on main 9cbe5a57."""

from __future__ import annotations

from cli_runner import error_line, run

# ---- compare: the NAME:KEY=VALUE hint names a system that takes the value, or is left out ------------------------


def test_a_value_no_compared_system_takes_gets_no_per_system_hint(capsys):
    """chip.hbm_stacks must be positive on every system (specs/schema), so -8 is refused on h200 as on b200: the hint
    "give it to one as --set h200:chip.hbm_stacks=-8" sent the user to a spelling refused the same way."""
    line = error_line(*run(capsys, "compare", "-s", "b200,h200", "--set", "chip.hbm_stacks=-8", "--json"))
    assert line == (
        "error: --set: chip.hbm_stacks: must be positive, got -8 (on b200, one of the 2 compared systems). "
        "Fix: give chip.hbm_stacks a positive value"
    )


def test_the_per_system_hint_names_a_system_that_takes_the_value(capsys):
    """Of b200, h200 and jalapeno only jalapeno has a 'tray' link level (data/systems: b200's and h200's are node,
    cluster); the hint named h200, the first other system, which refuses levels.tray as b200 does."""
    line = error_line(*run(capsys, "compare", "-s", "b200,h200,jalapeno", "--set", "levels.tray.chips=1", "--json"))
    assert line.endswith("give it to one as --set NAME:levels.tray.chips=1, e.g. --set jalapeno:levels.tray.chips=1")


# ---- a full system file: a misspelt optional key is named with its right spelling ---------------------------------


def _h200_with(tmp_path, old: str, new: str) -> str:
    """The shipped h200.toml (a full system file, no base) with one line's key respelt."""
    from jalapeno.specs.catalog import system_path

    text = system_path("h200")[1].read_text()
    assert old in text
    path = tmp_path / "mine.toml"
    path.write_text(text.replace(old, new, 1))
    return str(path)


def test_a_misspelt_optional_key_of_a_full_file_names_the_key(tmp_path, capsys):
    """chip.sram_mib is optional (docs/catalog.md), so pydantic reports only the unknown sram_mb, no missing key to
    match: the fix read 'remove chip.sram_mb or correct its spelling', while the variant path and --set name it."""
    path = _h200_with(tmp_path, "\nsram_mib = ", "\nsram_mb = ")
    line = error_line(*run(capsys, "hardware", "show", path))
    assert (
        line
        == "error: mine.toml: chip.sram_mb: is not a key this table knows. Fix: write sram_mib (a key of this table), not sram_mb"
    )


def test_a_misspelt_key_of_a_link_level_and_of_the_top_level(tmp_path, capsys):
    """A level's optional note (levels.node.note) and the top-level base of a file (read before the schema,
    specs/variants.py): 'notes' and 'bse' were told only to be removed."""
    line = error_line(
        *run(capsys, "hardware", "show", _h200_with(tmp_path, '\nnote = "NVSwitch', '\nnotes = "NVSwitch'))
    )
    assert line.endswith(
        "levels.node.notes: is not a key this table knows. Fix: write note (a key of this table), not notes"
    )
    (tmp_path / "v.toml").write_text('name = "v"\ndescription = "d"\nbse = "h200"\n')
    line = error_line(*run(capsys, "hardware", "show", str(tmp_path / "v.toml")))
    assert line == "error: v.toml: bse: is not a key this table knows. Fix: write base (a key of this table), not bse"


# ---- simulate: a trace in another tool's column names is told each renaming ------------------------------------


def test_a_mooncake_trace_is_told_its_renamings_and_its_millisecond_times(tmp_path, capsys):
    """Mooncake's trace format (kvcache-ai/Mooncake FAST25 traces; ai-dynamo/dynamo benchmarks/data_generator/README.md):
    one object a line, timestamp in milliseconds since the first request, input_length, output_length, hash_ids. It
    was 'timestamp: unknown column' with no hint, and renaming timestamp alone reads milliseconds as seconds."""
    trace = tmp_path / "mooncake.jsonl"
    trace.write_text(
        '{"timestamp": 0, "input_length": 6755, "output_length": 500, "hash_ids": [0, 1, 2]}\n'
        '{"timestamp": 3052, "input_length": 7234, "output_length": 794, "hash_ids": [0, 28]}\n'
    )
    line = error_line(*run(capsys, "simulate", "-s", "b200", "-w", str(trace), "--json"))
    assert line == (
        "error: mooncake.jsonl: line 1: timestamp: unknown column (a Mooncake trace's name). Fix: rename timestamp to "
        "arrival_s in seconds (Mooncake's are milliseconds: / 1e3), input_length to input_tokens, output_length to "
        "output_tokens; drop hash_ids (KV block hashes: shared prefixes are prefix_group) (a trace holds arrival_s, "
        "input_tokens, output_tokens [, session_id, prefix_group])"
    )


def test_burstgpt_and_isl_osl_columns_are_told_their_renamings(tmp_path, capsys):
    """BurstGPT v1.1's CSV (HPMLL/BurstGPT: Timestamp in s, Model, Request tokens, Response tokens, Total tokens,
    Log Type) and a CSV named as the --isl/--osl options: 'unknown column' with no hint."""
    burst = tmp_path / "burst.csv"
    burst.write_text(
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conv\n"
    )
    line = error_line(*run(capsys, "simulate", "-s", "b200", "-w", str(burst), "--json"))
    assert (
        "Fix: rename Timestamp to arrival_s, Request tokens to input_tokens, Response tokens to output_tokens; " in line
    )
    assert "drop Model, Total tokens, Log Type (a trace holds" in line
    lengths = tmp_path / "lengths.csv"
    lengths.write_text("arrival_s,isl,osl\n0,100,10\n")
    line = error_line(*run(capsys, "simulate", "-s", "b200", "-w", str(lengths), "--json"))
    assert line.startswith(
        "error: lengths.csv: isl: unknown column (the --isl/--osl options' name). Fix: rename isl to input_tokens, "
        "osl to output_tokens"
    )


# ---- audit --claims: a one-bracket [claim] table and a misspelt key ----------------------------------------------


def test_a_claims_file_with_one_bracket_claim_table_is_named_as_such(tmp_path, capsys):
    """TOML reads [claim] as one table (the key claim's sub-keys), [[claim]] as an array of tables (toml.io, v1.0.0,
    'Array of Tables'); a file written with one bracket was told it 'has no [[claim]] tables'."""
    f = tmp_path / "c.toml"
    f.write_text('system = "b200"\n[claim]\nname = "a"\nclaim = "peak_throughput_per_chip=5"\n')
    line = error_line(*run(capsys, "audit", "--claims", str(f)))
    assert line == (
        f"error: --claims: {f} has a [claim] table (one bracket: a single table), not [[claim]] tables. Fix: write "
        "each claim's header as [[claim]] (two brackets: one table per statement, docs/audit.md §7)"
    )


def test_a_misspelt_key_of_a_claim_table_names_the_key_meant(tmp_path, capsys):
    f = tmp_path / "c.toml"
    f.write_text(
        'system = "b200"\n[[claim]]\nname = "a"\nclaim = "peak_throughput_per_chip=5"\nmodle = "deepseek-r1"\n'
    )
    line = error_line(*run(capsys, "audit", "--claims", str(f)))
    assert line.startswith("error: --claims: claim 1: unknown key(s) modle (did you mean model?). Fix: use only name,")


# ---- --stack: a modifier misspelt or given twice, and no profile before @ or + -----------------------------------


def test_stack_modifiers_are_named_not_read_as_an_unknown_profile(capsys):
    """specs/stacks.split_stack_name reads NAME[@VERSION][+ar_rms]: 'sglang+ar_rm' was "unknown software stack
    'sglang+ar_rm' (did you mean 'sglang'?)" (the fix dropped the modifier), 'vllm+ar_rms+ar_rms' an unknown stack
    'vllm+ar_rms', and '+ar_rms' an unknown stack ''."""
    line = error_line(*run(capsys, "predict", "-s", "b200", "-c", "8", "--stack", "sglang+ar_rm"))
    assert line == (
        "error: --stack: '+ar_rm' is not a modifier (did you mean +ar_rms?): +ar_rms (vLLM's all-reduce + RMSNorm "
        "fusion) is the one. Fix: write --stack sglang+ar_rms, or drop '+ar_rm'"
    )
    line = error_line(*run(capsys, "predict", "-s", "b200", "-c", "8", "--stack", "vllm+ar_rms+ar_rms"))
    assert line == "error: --stack: 'vllm+ar_rms+ar_rms' gives +ar_rms twice. Fix: write it once: --stack vllm+ar_rms"
    line = error_line(*run(capsys, "predict", "-s", "b200", "-c", "8", "--stack", "+ar_rms"))
    assert line.startswith("error: --stack: '+ar_rms' names no profile before its +. Fix: write the profile first")


# ---- the Python API: a pathlib.Path is a path; a list is one clear error, not a cache's TypeError ------------------


def test_the_loaders_take_a_pathlib_path(tmp_path):
    """load_model / load_system / load_pricer / load_efficiency document 'a name or a path'; a pathlib.Path was refused
    as "expected a name or a path, got PosixPath". The shipped h200.toml by its path is the catalog h200."""
    from pathlib import Path

    import jalapeno as jp
    from jalapeno.specs.catalog import system_path

    h200 = Path(system_path("h200")[1])
    assert jp.load_system(h200).name == "h200"
    assert jp.load_pricer(h200).system.name == "h200"
    assert jp.load_efficiency(h200) == jp.load_efficiency("h200")
    config = tmp_path / "config.json"
    config.write_text(Path(h200.parent.parent / "models" / "llama-3.3-70b.json").read_text())
    assert jp.load_model(config).num_layers == 80  # llama-3.3-70b's config.json: num_hidden_layers 80


def test_a_list_for_a_system_name_is_one_error():
    """lru_cache hashed the argument before the loader checked it: load_system(['b200']) raised TypeError: unhashable
    type: 'list' (load_model(['x']) was already refused by name)."""
    import pytest

    import jalapeno as jp
    from jalapeno.errors import UnknownNameError

    for load in (jp.load_system, jp.load_pricer, jp.load_efficiency, jp.load_model):
        with pytest.raises(UnknownNameError) as e:
            load(["b200"])
        assert str(e.value) == (
            "name: expected a name or a path (a str or a pathlib.Path), got list. Fix: pass one catalog name "
            "(`jalapeno hardware list`, `jalapeno models list`) or one file path"
        )


def test_api_objects_refuse_a_wrong_shape_when_built():
    """Pool(None) was built and raised AttributeError: 'NoneType' object has no attribute 'dp' when priced;
    SweepOptions(engine_release=('vllm',)) raised release_moe_backend's TypeError inside the sweep."""
    import pytest

    import jalapeno as jp
    from jalapeno.errors import SpecError

    with pytest.raises(SpecError) as e:
        jp.Pool(None)
    assert str(e.value) == "pool.layout: expected a Layout, got NoneType. Fix: pass Pool(Layout(tp=8))"
    with pytest.raises(SpecError) as e:
        jp.SweepOptions(engine_release=("vllm",))
    assert str(e.value).startswith("options.engine_release: must be () or a (profile, release) pair, got ('vllm',)")
    assert jp.SweepOptions(engine_release=("vllm", "")).engine_release == ("vllm", "")  # --stack vllm: no release


def test_compare_systems_reads_one_iso_interactivity_number_as_one_speed():
    """The check wrapped a lone number in a list, the ratios then called list(5): TypeError: 'int' object is not
    iterable, after every sweep had run. 5 is the speed (5,) asks for."""
    import jalapeno as jp

    model, pricer = jp.load_model("llama-3.3-70b"), jp.load_pricer("h200")
    wl, p = jp.get_workload("1k1k"), jp.get_precision("fp8")
    opts = jp.SweepOptions(serving="agg", batches=(1.0, 8.0))
    one = jp.compare_systems(model, [pricer], wl, p, iso_interactivity=5, options=opts)
    as_tuple = jp.compare_systems(model, [pricer], wl, p, iso_interactivity=(5,), options=opts)
    assert one.comparisons["h200"].iso_interactivity == as_tuple.comparisons["h200"].iso_interactivity


def test_an_agentic_file_with_its_keys_under_a_table_header_is_told_to_drop_the_header(tmp_path, capsys):
    """docs/agentic.md §2: the keys are top-level. Under [agent] TOML reads them as agent.turns, ...; the error was
    'agent: unknown key' and did not say the keys under it were the right ones."""
    f = tmp_path / "a.toml"
    f.write_text(
        "[agent]\nturns = 10\nsystem_prompt_tokens = 1000\ntool_output_tokens = 500\nreply_tokens = 100\nthink_s = 2\n"
    )
    line = error_line(*run(capsys, "simulate", "-s", "b200", "--dp", "8", "--ep", "8", "-c", "2", "-w", f"agentic:{f}"))
    assert line == (
        "error: a.toml: agent: a [agent] table holds the workload's keys (reply_tokens, system_prompt_tokens, think_s, "
        "tool_output_tokens, turns), which the file reads at its top level. Fix: remove the [agent] header line so its "
        "keys are top-level (docs/agentic.md §2)"
    )


def test_a_system_file_under_a_table_header_and_a_wrapped_config_json(tmp_path, capsys):
    """A system file's keys are top-level (docs/catalog.md); under [system] TOML reads them as system.base, ...:
    'system: remove it or correct its spelling' named no cause. A config.json saved as {"config": {...}} (a
    wrapper around the Hugging Face config) was told model_type 'is missing'."""
    import json

    from jalapeno.specs.catalog import system_path

    (tmp_path / "wrapped.toml").write_text('[system]\nbase = "h200"\nname = "mine"\n')
    line = error_line(*run(capsys, "hardware", "show", str(tmp_path / "wrapped.toml")))
    assert line == (
        "error: wrapped.toml: system: is not a key this table knows. Fix: remove the [system] header line: the keys "
        "under it belong one level up"
    )
    config = json.loads((system_path("h200")[1].parent.parent / "models" / "llama-3.3-70b.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({"config": config}))
    line = error_line(*run(capsys, "models", "show", str(tmp_path / "config.json")))
    assert line.endswith(
        'model_type: is missing at the top level, and the object under "config" has one: the config is wrapped. '
        'Fix: save the "config" object alone as the config.json (its keys at the top level)'
    )


def test_a_named_set_on_a_system_listed_twice_says_it_cannot_pick_one(capsys):
    """compare -s h200,h200 --set h200:chip.tdp_w=800 (h200 against a variant of itself): NAME: set both entries, and
    the refusal read "two systems are named 'h200+chip.tdp_w=800'", a name the user never wrote."""
    line = error_line(*run(capsys, "compare", "-s", "h200,h200", "--set", "h200:chip.tdp_w=800", "--json"))
    assert line.startswith(
        "error: --set: 'h200:chip.tdp_w=800': --systems names h200 2 times, so 'h200:' picks none of them alone (it "
        'sets each). Fix: compare h200 with a variant of it by writing the variant as a file: base = "h200"'
    )
