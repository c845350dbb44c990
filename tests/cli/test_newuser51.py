"""Round 51 new-user fixes (newuser51): a model read from ``./config.json`` is named after its folder.

Expected values are worked by hand in each test's comments, not read off the code's printed text.
"""

from __future__ import annotations

import json

import pytest
from cli_runner import check_error, run

#: A Llama-3.1-8B-shaped config.json (the fields a Hugging Face llama config gives).
LLAMA_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


def _config(folder) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(LLAMA_8B))


def test_a_config_json_in_the_working_folder_is_named_after_the_folder(capsys, tmp_path, monkeypatch):
    """`-m config.json` / `-m ./config.json` from the model's own folder named the model '' (the parent of a bare
    file name is '.', whose name is empty): models show printed a blank name, and step's TP error read "TP3 does
    not divide 's 32 attention heads". The folder is llama-8b, so the model is llama-8b."""
    _config(tmp_path / "llama-8b")
    monkeypatch.chdir(tmp_path / "llama-8b")
    for arg in ("config.json", "./config.json"):
        code, out, err = run(capsys, "models", "show", arg, "--json")
        assert code == 0, err
        assert json.loads(out)["name"] == "llama-8b"
    # 32 heads: TP3 does not divide them (32 / 3 is not whole), and the error names the model
    check_error(
        *run(capsys, "step", "-s", "h200", "-m", "./config.json", "--tp", "3", "--batch", "8"),
        "TP3 does not divide llama-8b's 32 attention heads",
    )


def test_a_hub_cache_config_is_named_after_its_repository_not_the_snapshot_hash(capsys, tmp_path):
    """In a Hugging Face hub cache the file sits in models--ORG--NAME/snapshots/HASH/: the name is NAME
    (Llama-3.1-8B here), not the 40-hex snapshot folder."""
    snap = tmp_path / "models--meta-llama--Llama-3.1-8B" / "snapshots" / ("0e9e39f2" * 5)
    _config(snap)
    code, out, err = run(capsys, "models", "show", str(snap / "config.json"), "--json")
    assert code == 0, err
    assert json.loads(out)["name"] == "Llama-3.1-8B"


@pytest.fixture(autouse=True)
def _fresh_notes():
    """The capacity note is said once per process per system: forget the ones an earlier test said."""
    from jalapeno.cli import system_notes

    for k in [k for k in system_notes._NOTED if k.startswith("capacity-only:")]:
        system_notes._NOTED.discard(k)


def _note_lines(err: str, word: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("note:") and word in ln]


def test_raising_the_capacity_alone_says_the_usable_hbm_stays_the_bases(capsys, tmp_path):
    """Jalapeño's file states hbm_usable_gib = 216 (= its 216 GiB nominal). A variant raising hbm_capacity_gib to
    288 (8 x 36 GiB stacks) without hbm_usable_gib is fitted in 216 GiB still: predict's memory fit is the base's,
    and the run said nothing. The note names the key to set and the two figures, 288 and 216 GiB."""
    v = tmp_path / "big.toml"
    v.write_text('base = "jalapeno"\n[chip]\nhbm_capacity_gib = 288\n')
    code, out, err = run(capsys, "hardware", "show", str(v), "--json")
    assert code == 0, err
    chip = json.loads(out)["chip"]
    assert chip["hbm_capacity_bytes"] == 288 * 2**30 and chip["hbm_usable_bytes"] == 216 * 2**30
    (note,) = _note_lines(err, "hbm_capacity_gib")
    for words in ("nominal HBM to 288 GiB", "stays 216 GiB", "set chip.hbm_usable_gib too"):
        assert words in note, note
    # the same by --set, in GB: GB300's file states hbm_usable_gb = 279 of 288 GB; 400 GB nominal keeps 279
    code, out, err = run(capsys, "hardware", "show", "gb300-nvl72", "--set", "chip.hbm_capacity_gb=400", "--json")
    assert code == 0, err
    (note,) = _note_lines(err, "hbm_capacity_gb")
    assert "nominal HBM to 400 GB" in note and "stays 279 GB" in note and "set chip.hbm_usable_gb too" in note


def test_no_capacity_note_where_usable_is_set_or_follows(capsys):
    """Usable given with the capacity: nothing stays behind. H200's file states no usable HBM, so usable follows
    the 200 GB capacity (200 = 200): no note either."""
    sets = ("--set", "chip.hbm_capacity_gib=288", "--set", "chip.hbm_usable_gib=280")
    code, out, err = run(capsys, "hardware", "show", "jalapeno", *sets, "--json")
    assert code == 0, err
    assert not _note_lines(err, "hbm_capacity"), err
    code, out, err = run(capsys, "hardware", "show", "h200", "--set", "chip.hbm_capacity_gb=200", "--json")
    assert code == 0, err
    assert json.loads(out)["chip"]["hbm_usable_bytes"] == 200e9
    assert not _note_lines(err, "hbm_capacity"), err


def test_a_calibration_folder_without_the_system_names_what_it_holds(capsys, tmp_path):
    """README: `jalapeno calibrate --out-dir my-calibration && jalapeno validate --efficiency my-calibration`. After
    `calibrate -s h200 --out-dir DIR` (DIR holds h200.toml only), validate said "DIR/gb200-nvl72.toml not found. Fix:
    give ... a directory written by `jalapeno calibrate --out-dir DIR`": the very folder given. Now it names what the
    folder holds (h200), the calibrate command that writes the missing system and --systems."""
    import shutil

    from jalapeno.specs.calibration import _DIR

    shutil.copy(str(_DIR / "h200.toml"), tmp_path / "h200.toml")  # what calibrate -s h200 --out-dir writes

    def predict(system: str, *extra: str):
        return run(
            capsys,
            "predict",
            "-s",
            system,
            "-m",
            "llama-3.3-70b",
            "--tp",
            "8",
            "-c",
            "8",
            "--efficiency",
            str(tmp_path),
            *extra,
        )

    check_error(
        *predict("b200"),
        "b200.toml not found",
        "it holds h200",
        f"jalapeno calibrate -s b200 --out-dir {tmp_path}",
        "--systems",
    )
    code, out, err = predict("h200", "--json")
    assert code == 0, err  # the system it holds is priced with it


def test_efficiency_help_names_the_calibration_folder_every_command_takes(capsys):
    """--efficiency's help said "calibrated, low, high or spec." on validate, predict, plan, compare, ... while each
    takes the folder `calibrate --out-dir` writes (the README's own example) or one calibration .toml."""
    for cmd in ("validate", "predict", "plan", "compare", "hardware show"):
        code, out, err = run(capsys, *cmd.split(), "--help")
        assert code == 0, err
        text = " ".join(out.replace("│", " ").split())
        assert "or a folder written by `jalapeno calibrate --out-dir DIR`" in text, cmd


def test_plan_names_the_efficiency_set_it_priced_and_audits_it(capsys):
    """plan --efficiency spec said "how sure: this plan prices the calibrated efficiencies only", and its audit
    command (no --efficiency) priced the calibrated point instead of the plan's."""
    code, out, err = run(
        capsys,
        "plan",
        "-s",
        "h200",
        "-m",
        "llama-3.3-70b",
        "--chips",
        "8",
        "--min-interactivity",
        "30",
        "--efficiency",
        "spec",
    )
    assert code == 0, err
    text = " ".join(out.split())
    assert "this plan prices the efficiency set spec only" in text and "calibrated efficiencies" not in text
    assert "--efficiency spec --serving" in text  # the audit command prices the same set


def test_a_yaml_system_file_is_told_to_be_toml(capsys, tmp_path, monkeypatch):
    """`hardware show mychip.yaml` said "pass it as ./mychip.yaml (read as a system TOML)", and that said
    "malformed TOML: Expected '=' after a key ... Fix: fix the TOML syntax": a YAML file is never read. Both now say
    a system is a TOML file and show one."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mychip.yaml").write_text("base: jalapeno\nchip:\n  hbm_stacks: 8\n")
    check_error(
        *run(capsys, "hardware", "show", "mychip.yaml"), "is a YAML file", "write it as TOML", 'base = "jalapeno"'
    )
    check_error(*run(capsys, "hardware", "show", "./mychip.yaml"), "this is YAML", "write it as TOML")


#: A chip of the user's own, no base: every figure an assumption the user wrote (docs/catalog.md's schema).
OWN_CHIP = """schema_version = 1
name = "mychip"
description = "hypothetical 8-stack inference chip"
vendor_verified = false

[chip]
name = "MyChip"
peak_dense_tflops.bf16 = { value = 2500, source = "assumption" }
peak_dense_tflops.fp8 = { value = 5000, source = "assumption" }
hbm_capacity_gib = { value = 288, source = "assumption: 8 x 36 GiB" }
hbm_bandwidth_tb_per_s = { value = 16, source = "assumption" }
hbm_stacks = { value = 8, source = "assumption" }
tdp_w = { value = 1000, source = "assumption" }

[[levels]]
name = "node"
chips = 8
scope = "scale_up"
topology = "switched"
bandwidth_gb_per_s = { value = 900, source = "assumption" }
latency_us = { value = 1.0, source = "assumption" }

[power]
allin_kw_per_chip = { value = 2.0, source = "assumption" }

[cost]
usd_per_chip_hour = { value = 2.0, source = "assumption" }
"""

PLAN_8B = ("--target", "1e5", "--min-interactivity", "50", "-w", "1k1k")


def test_a_price_the_user_wrote_is_not_called_published(capsys, tmp_path):
    """plan on a system file of the user's own said "price basis: published: assumption": the $2.00/chip-hour the
    user wrote, source "assumption", read as a published figure. Likewise a variant file that states its own
    price. A catalog system's cited price stays "published"."""
    _config(tmp_path / "llama-8b")
    model = str(tmp_path / "llama-8b" / "config.json")
    (tmp_path / "own.toml").write_text(OWN_CHIP)
    (tmp_path / "quote.toml").write_text(
        'base = "h200"\nname = "h200-quote"\ncost.usd_per_chip_hour = { value = 1.9, source = "my vendor quote" }\n'
    )
    for system, basis in (
        ("own.toml", "given in the system file: assumption"),
        ("quote.toml", "given in the system file: my vendor quote"),
        ("h200", "published: InferenceX constants.ts costh"),
    ):
        code, out, err = run(
            capsys, "plan", "-s", str(tmp_path / system) if system.endswith(".toml") else system, "-m", model, *PLAN_8B
        )
        assert code == 0, err
        (line,) = [ln for ln in out.splitlines() if "price basis:" in ln]
        assert f"price basis: {basis}" in line, line


def test_plan_on_a_file_without_calibration_says_it_priced_the_defaults(capsys, tmp_path):
    """A system file with no base is priced with the documented default efficiencies (set spec; the run's own note
    says so), yet plan's closing line said "this plan prices the calibrated efficiencies only"."""
    _config(tmp_path / "llama-8b")
    (tmp_path / "own.toml").write_text(OWN_CHIP)
    code, out, err = run(
        capsys, "plan", "-s", str(tmp_path / "own.toml"), "-m", str(tmp_path / "llama-8b" / "config.json"), *PLAN_8B
    )
    assert code == 0, err
    text = " ".join(out.split())
    assert "this plan prices the documented default efficiencies (set spec:" in text
    assert "calibrated efficiencies" not in text


def test_a_one_chip_instance_reads_1_chip(capsys, tmp_path):
    """An 8B model on a 288 GiB chip fits one chip per instance (16 GB of BF16 weights): plan read "(1 chips per
    instance)", "one instance: ... (1 chips at ...)" and, with --chips, "delivered: ... (1 chips at ...)"."""
    _config(tmp_path / "llama-8b")
    (tmp_path / "own.toml").write_text(OWN_CHIP)
    common = ("plan", "-s", str(tmp_path / "own.toml"), "-m", str(tmp_path / "llama-8b" / "config.json"))
    # --chips 1 (review51): the header, the fleet's floor and its chips used read "1 chips" too
    for sized in (PLAN_8B, *(("--chips", n, "--min-interactivity", "50", "-w", "1k1k") for n in ("3", "1"))):
        code, out, err = run(capsys, *common, *sized)
        assert code == 0, err
        text = " ".join(out.split())
        assert "(1 chip per instance)" in text and "(1 chip at " in text, text
        assert "1 chips" not in text, text


def test_calibrate_says_why_it_fits_a_system_not_named(capsys, monkeypatch, tmp_path):
    """`calibrate -s h200 --out-dir DIR` printed "fitting h100 (1/2) ..." first, with no word (h100 is h200's
    predecessor, fitted for the ordering check) and then wrote h200.toml alone. The progress line of a system not
    named says it is fitted for a named one and not written. calibrate_catalog's two progress calls are replayed
    (the fit needs the calibrate extra), as fit/calibrate.py makes them: sorted h100, h200."""
    import jalapeno.fit.calibrate as cal

    def fake(names, out_dir, on_progress=None):
        for i, n in enumerate(["h100", "h200"]):
            on_progress(n, i, 2)
        return {"_ordering_flags": [], "h200": {"parameters": {}}}

    monkeypatch.setattr(cal, "calibrate_catalog", fake)
    code, out, err = run(capsys, "calibrate", "-s", "h200", "--out-dir", str(tmp_path))
    assert code == 0, err
    lines = [ln for ln in out.splitlines() if ln.startswith("fitting")]
    assert lines == [
        "fitting h100 (1/2): not in --systems, fitted for a named one (predecessor or derivation), not written ...",
        "fitting h200 (2/2) ...",
    ], lines


def test_results_store_help_says_read_not_created_and_the_default_once(capsys):
    """results list/show/export --help said the store folder is "created" (a missing one is refused: "no results
    store at ...") and printed the default twice: "Default jalapeno-results. [default: jalapeno-results]"."""
    for cmd in ("results list", "results show", "results export", "explore"):
        code, out, err = run(capsys, *cmd.split(), "--help")
        assert code == 0, err
        text = " ".join(out.replace("│", " ").split())
        assert "Default jalapeno-results." not in text, cmd
        assert ("created if missing" in text) == (cmd == "explore"), cmd
        if cmd != "explore":
            assert "a run wrote" in text, cmd


def test_a_linked_model_folder_keeps_its_own_name(capsys, tmp_path):
    """A model folder that is a symbolic link to a checkpoint store (llama-8b -> store/abc123) is named by the link,
    as `-m DIR/config.json` named it before round 51 (the folder's ``name``); resolving the folder named it abc123
    (review51). The hub cache's own links are on the files (snapshots/HASH/config.json -> blobs/), not the folder."""
    _config(tmp_path / "store" / "abc123")
    (tmp_path / "llama-8b").symlink_to(tmp_path / "store" / "abc123", target_is_directory=True)
    code, out, err = run(capsys, "models", "show", str(tmp_path / "llama-8b" / "config.json"), "--json")
    assert code == 0, err
    assert json.loads(out)["name"] == "llama-8b"
