"""Round 26 new-user pass and break-it (newuser26): what a newcomer typed and what it did."""

from __future__ import annotations

import pytest
from cli_runner import run


@pytest.mark.parametrize("argv", [
    ("compare", "-s", "jalapeno", "-w", "1k1k", "--isl", "8192", "--osl", "1024"),
    ("predict", "-s", "gb200-nvl72", "--tp", "4", "--ep", "4", "-c", "8", "-w", "1k1k", "--isl", "8192", "--osl", "1024"),
    ("plan", "-s", "gb200-nvl72", "--target", "1e6", "-w", "1k1k", "--isl", "8192", "--osl", "1024"),
    ("simulate", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "-c", "4", "-w", "1k1k", "--isl", "8192",
     "--osl", "1024"),
])
def test_a_preset_and_lengths_together_are_refused(capsys, argv):
    """`compare -w 1k1k --isl 8192 --osl 1024` ran 8192/1024 and dropped the named preset without a
    word (the help said --isl 'overrides --workload'); the user asked for two different workloads."""
    code, out, err = run(capsys, *argv)
    assert code == 2, out
    assert "Traceback" not in err + out
    assert ("error: --workload: 1k1k and --isl 8192 --osl 1024 both give the request lengths; one of them "
            "would be ignored. Fix: drop --workload 1k1k") in err


def test_get_workload_refuses_a_name_with_lengths():
    from jalapeno.errors import SpecError
    from jalapeno.specs.workload import get_workload

    with pytest.raises(SpecError, match="8k1k and --osl 100 both give the request lengths"):
        get_workload("8k1k", None, 100)
    assert get_workload("8k1k", 8192, 1024).name == "8192/1024"  # the same lengths twice: nothing ignored
    w = get_workload(None, 100, 10)  # lengths alone, and a preset alone, still run
    assert (w.isl, w.osl) == (100, 10)
    assert (get_workload("8k1k").isl, get_workload().osl) == (8192, 1024)


def test_simulate_lengths_alone_still_run(capsys):
    """simulate's --workload default moved from '8k1k' to None (so a given preset can be told from the
    default): --isl/--osl alone and no workload at all still run."""
    code, out, err = run(capsys, "simulate", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "-c", "2",
                         "--isl", "100", "--osl", "20", "--requests", "4", "--json")
    import json

    assert code == 0, err
    wl = json.loads(out)["config"]["workload"]
    assert (wl["name"], wl["isl"], wl["osl"]) == ("100/20", 100, 20)
    code, out, err = run(capsys, "simulate", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "-c", "2",
                         "--requests", "4", "--json")
    assert code == 0, err
    wl = json.loads(out)["config"]["workload"]
    assert (wl["name"], wl["isl"], wl["osl"]) == ("8k1k", 8192, 1024)


@pytest.mark.parametrize("argv, option, example", [
    (("frontier", "-s", "jalapeno", "--concurrency", " , "), "--concurrency", "1,4,16,64"),
    (("compare", "-s", "jalapeno", "-c", ","), "--concurrency", "1,4,16,64"),
    (("compare", "-s", "jalapeno", "--at", ","), "--at", "10,50,100"),
])
def test_an_empty_list_option_is_refused(capsys, argv, option, example):
    """`frontier --concurrency ','` ran the default concurrency grid without a word: the list was read
    as 'not given'. An empty list now names the option (an empty value: the test below)."""
    code, out, err = run(capsys, *argv)
    assert code == 2, out
    assert "Traceback" not in err + out
    assert f"error: {option}: names no value (" in err
    assert f"Fix: write e.g. {option} {example}, or leave it out" in err


@pytest.mark.parametrize("argv, option", [
    (("compare", "-s", "jalapeno", "-w", ""), "--workload"),
    (("predict", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "-c", "8", "-p", ""), "--precision"),
    (("compare", "-s", "jalapeno", "--serving", " "), "--serving"),
    (("compare", "-s", "jalapeno,gb300-nvl72", "--baseline", ""), "--baseline"),
    (("frontier", "-s", "jalapeno", "--out="), "--out"),
    (("frontier", "-s", "jalapeno", "--concurrency", ""), "--concurrency"),
    (("step", "-s", "jalapeno", "--batch", "4", "--chip-model", ""), "--chip-model"),
    (("simulate", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "--rate", "1", "--arrival", ""), "--arrival"),
])
def test_an_empty_option_value_is_refused(capsys, argv, option):
    """An empty value (a shell variable that was empty) ran as if the option were not given: `-w ''`
    ran 8k1k, `-p ''` the default precision, `--serving ''` both modes, `--baseline ''` the default,
    `frontier --out ''` wrote no file, `--arrival ''` Poisson - each rc 0 without a word."""
    code, out, err = run(capsys, *argv)
    assert code == 2, out
    assert "Traceback" not in err + out
    assert f"error: {option}: is empty (" in err and "an empty value would run as if the option were not given" in err
    assert f"Fix: give {option} a value (see `jalapeno {argv[0]} --help`), or leave it out for its default" in err


def test_html_empty_keeps_its_documented_meaning(capsys):
    """compare's --html help says '' = none (no chart): that one empty value still runs."""
    code, out, err = run(capsys, "compare", "-s", "jalapeno", "-c", "4", "--serving", "agg", "--html", "")
    assert code == 0, err


def test_tiers_comma_alone_is_refused(capsys):
    """`compare --tiers ,` printed no tier table without a word (`--tiers ''` was refused already)."""
    code, out, err = run(capsys, "compare", "-s", "jalapeno", "-c", "4", "--serving", "agg", "--html", "",
                         "--tiers", ",")
    assert code == 2, out
    assert "error: --tiers: names no tier (an empty list). Fix: write e.g. --tiers fast=100,ultra_fast=300" in err


@pytest.mark.parametrize("arg, says", [("", "error: design-space file: is empty ('')"),
                                       (".", "error: design-space file: '.' is a folder, not a file")])
def test_explore_an_empty_or_folder_argument(capsys, arg, says):
    """`explore ''` said "cannot read '.': [Errno 21] Is a directory: '.'" (the empty path read as the
    current folder) and told the user to check permissions."""
    code, out, err = run(capsys, "explore", arg)
    assert code == 2, out
    assert says in err and "Fix: give the path of a design-space .toml, e.g. examples/explore_700w.toml" in err


def test_explore_table_headers_are_whole_and_pruned_is_explained(capsys, tmp_path, monkeypatch):
    """explore's table cut its headers at the terminal width ('chip.peak_dense_tfl…', 'efficiency.kernel_…'),
    dropping the unit the key carries, and 'pruned: chip_power_w 2' named no meaning."""
    pytest.importorskip("optuna")
    monkeypatch.setenv("COLUMNS", "100")  # a narrow terminal, where the headers were cut
    code, out, err = run(capsys, "explore", "examples/explore_700w.toml", "--trials", "6", "--store", str(tmp_path))
    assert code == 0, err
    assert "…" not in out  # folded onto a second header line where the terminal is narrow, never cut
    if "pruned" in out:
        assert "pruned (trials that broke a constraint, not priced; docs/explore.md): " in out
