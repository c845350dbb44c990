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
    check_error(*run(capsys, "hardware", "show", nope), f"error: NAME {nope}: file not found")
    # a flag before the argument takes no value: the path is still the argument
    check_error(*run(capsys, "hardware", "show", "--json", nope), f"error: NAME {nope}: file not found")
    check_error(*run(capsys, "hardware", "show", "--efficiency", "low", nope), f"error: NAME {nope}:")
    check_error(*run(capsys, "hardware", "show", "nope"), "error: NAME: unknown system 'nope'", "hardware list")
    check_error(*run(capsys, "models", "show", str(tmp_path / "m.json")), f"error: NAME {tmp_path / 'm.json'}: file not found")
    check_error(*run(capsys, "models", "show", "nomodel"), "error: NAME: unknown model 'nomodel'", "models list")
    # an option's value keeps the option's name
    check_error(*run(capsys, "hardware", "show", "h200", "--efficiency", "nope"), "--efficiency")
