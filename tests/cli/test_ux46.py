"""ux46: what a $ figure rests on, said to the reader. Every JSON output that carries a $ figure (compare, agentic
compare, plan --target and --chips, predict, simulate, explore, hardware show) has one field, ``price_basis``:
``published: ...`` for a price the system file cites (InferenceX's TCO table), ``estimated: ...`` for an
``estimate = true`` one, worded from the file's own source; the terminal prints the same line under its table, and
the report page among its notes.

Expected texts are read off the system files by hand: data/systems/gb200-nvl72.toml's source is "InferenceX
constants.ts costh (hyperscaler owner, 4-year life, SemiAnalysis AI Cloud TCO Model)", jalapeno.toml's opens
"estimate: assumed all-in capex $30k per chip (no published price) x ...".
"""

from __future__ import annotations

import json

import pytest
from cli_runner import run

from jalapeno.analysis.price_reason import BASIS_FIELD, basis_lines, basis_text, system_basis
from jalapeno.specs.catalog import load_system

GB200 = (
    "published: InferenceX constants.ts costh (hyperscaler owner, 4-year life, SemiAnalysis AI Cloud TCO Model); "
    "its source in full: `jalapeno hardware show gb200-nvl72`, cost.usd_per_chip_hour"
)
JALAPENO = (
    "estimated: jalapeno publishes no price; assumed all-in capex $30k per chip; "
    "its source in full: `jalapeno hardware show jalapeno`, cost.usd_per_chip_hour"
)
B200 = GB200.replace("gb200-nvl72", "b200")


def test_the_field_has_one_name():
    assert BASIS_FIELD == "price_basis"


def test_a_published_and_an_estimated_price_are_told_apart():
    assert system_basis(load_system("gb200-nvl72")) == GB200
    assert system_basis(load_system("jalapeno")) == JALAPENO
    # a published source's detail after ';' is dropped (gb200-nvl72.toml's has none; b200.toml's the same text)
    assert system_basis(load_system("b200")) == B200
    # b300.toml: InferenceX's own "temporary - 1.2x B200 pricing" is an estimate, said as one (mend46)
    assert system_basis(load_system("b300")).startswith("estimated: InferenceX's temporary 1.2x B200 rule")


def test_a_variant_s_followed_price_and_an_override_say_so():
    """A --set variant of a published-price system has a price derived from it, not published; an override is the
    user's own figure (specs/system_overrides)."""
    v = system_basis(load_system("gb200-nvl72", (("chip.hbm_stacks", 6),)))
    assert v.startswith("derived: the base's published price + HBM capex +0 GB x 15 $/GB over the TCO/capex ratio")
    o = system_basis(load_system("gb200-nvl72", (("cost.usd_per_chip_hour", 3.0),)))
    assert o.startswith("given: override cost.usd_per_chip_hour = 3.0;")
    # an estimated base keeps its variant an estimate (specs/power.follow_variant marks it)
    e = system_basis(load_system("jalapeno", (("chip.hbm_stacks", 8),)))
    assert e.startswith("estimated: the base's estimated price + HBM capex")
    assert basis_text("x", "", False).startswith("no source given;")


def test_lines_under_a_table_name_each_system_when_there_are_several():
    one = basis_lines([load_system("jalapeno")])
    assert one == [f"price basis: {JALAPENO}"]
    two = basis_lines([load_system("jalapeno"), load_system("gb200-nvl72")])
    assert two == [f"price basis of jalapeno: {JALAPENO}", f"price basis of gb200-nvl72: {GB200}"]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_compare_json_and_tables_carry_the_basis(capsys):
    args = ("compare", "-s", "jalapeno,b200", "-m", "llama-3.3-70b", "-w", "1k1k", "--serving", "agg", "--html", "")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["systems"]["jalapeno"][BASIS_FIELD] == JALAPENO
    assert d["systems"]["b200"][BASIS_FIELD] == B200
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert f"price basis of jalapeno: {JALAPENO}" in _flat(out)
    assert f"price basis of b200: {B200}" in _flat(out)


@pytest.mark.parametrize(("system", "want"), [("jalapeno", JALAPENO), ("gb200-nvl72", GB200)])
def test_plan_target_and_fleet_carry_the_basis(capsys, system, want):
    base = ("plan", "-s", system, "-m", "llama-3.3-70b", "-w", "1k1k", "--serving", "agg")
    for size in (("--target", "1e5"), ("--chips", "72")):
        code, out, err = run(capsys, *base, *size, "--json")
        assert code == 0, err
        assert json.loads(out)[BASIS_FIELD] == want
    code, out, err = run(capsys, *base, "--target", "1e5")
    assert code == 0, err
    assert f"price basis: {want}" in _flat(out)


def test_predict_carries_the_basis(capsys):
    args = ("predict", "--system", "gb200-nvl72", "-m", "llama-3.3-70b", "-w", "1k1k", "--tp", "4", "-c", "16")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    assert json.loads(out)[BASIS_FIELD] == GB200
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert f"price basis: {GB200}" in _flat(out)


def test_simulate_carries_the_basis_beside_its_dollar_figure(capsys):
    args = ("simulate", "--system", "jalapeno", "-m", "llama-3.3-70b", "--tp", "4", "-w", "1k1k", "-c", "8", "-n", "24")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    sm = json.loads(out)["summary"]
    assert "usd_per_mtok" in sm and sm[BASIS_FIELD] == JALAPENO
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert f"price basis: {JALAPENO}" in _flat(out)


def test_hardware_show_json_carries_the_basis(capsys):
    code, out, err = run(capsys, "hardware", "show", "gb200-nvl72", "--json")
    assert code == 0, err
    assert json.loads(out)[BASIS_FIELD] == GB200


def test_explore_summary_carries_the_base_s_basis_for_its_designs():
    from jalapeno.cli.explore_cmd import _base_basis

    assert _base_basis("jalapeno") == (
        f"{JALAPENO}; each design's follows the base's by its changed HBM and power (specs/power.follow_variant)"
    )
    assert _base_basis("no-such-system-ux46") == ""  # a stored run whose base no longer loads


def test_agentic_compare_json_and_tables_carry_the_basis(capsys):
    args = ("compare", "-w", "agentic:coding-agent", "-s", "jalapeno,gb200-nvl72", "-m", "llama-3.3-70b")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["systems"]["jalapeno"][BASIS_FIELD] == JALAPENO
    assert d["systems"]["gb200-nvl72"][BASIS_FIELD] == GB200
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert f"price basis of gb200-nvl72: {GB200}" in _flat(out)


def test_the_report_page_notes_carry_the_basis(capsys, tmp_path):
    import html

    page = tmp_path / "r.html"
    args = ("-s", "jalapeno,b200", "-m", "llama-3.3-70b", "-w", "1k1k", "--serving", "agg", "--measured", "none")
    code, out, err = run(capsys, "report", *args, "--html", str(page))
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    # one note for both systems since ux55 (report/note_groups): each basis without the shared pointer, which the
    # note's head names once
    tail = "; its source in full: `jalapeno hardware show {}`, cost.usd_per_chip_hour"
    note = (
        "price basis ($/chip-hour, cost.usd_per_chip_hour; each source in full: `jalapeno hardware show NAME`): "
        f"jalapeno: {JALAPENO.removesuffix(tail.format('jalapeno'))} · b200: {B200.removesuffix(tail.format('b200'))}"
    )
    assert f'<p class="note">{html.escape(note)}</p>' in text


@pytest.mark.parametrize("example", ["explore_700w.toml", "explore_700w_gpu_stack.toml"])
def test_shipped_spaces_sweep_as_compare_does(example):
    """Both shipped spaces sweep every native precision, agg and disagg (docs/explore.md §4.1: Spearman 0.977 / 0.997
    against compare's figure, 0.935 / 0.961 on the coarse agg sweep); their run time stayed under 2x a coarse one
    (200 trials 69 s CPU against 40 s; 120 trials 37 s against 20 s; ux46), and each file says why in its comment."""
    from pathlib import Path

    from jalapeno.specs.design_space import load_design_space

    path = Path(__file__).resolve().parents[2] / "examples" / example
    sp = load_design_space(path)
    assert (sp.sweep.serving, sp.sweep.precisions) == ("both", "native")
    assert "docs/explore.md §4.1" in path.read_text()


def test_explore_json_and_summary_carry_the_base_s_basis(capsys, tmp_path):
    args = ("explore", "examples/explore_700w.toml", "--trials", "1", "--store", str(tmp_path))
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    want = f"{JALAPENO}; each design's follows the base's by its changed HBM and power (specs/power.follow_variant)"
    assert d[BASIS_FIELD] == want
    code, out, err = run(capsys, "results", "show", d["run"], "--store", str(tmp_path))
    assert code == 0, err
    assert f"price basis: {want}" in _flat(out)


@pytest.mark.parametrize(
    ("system", "workload", "want"), [("gb200-nvl72", "1k1k", GB200), ("jalapeno", "agentic:coding-agent", JALAPENO)]
)
def test_frontier_json_carries_the_basis_of_its_points_dollar_figures(capsys, system, workload, want):
    """``frontier --json``: each point's usd_per_mtok (usd_per_task on an agentic workload) at the system's price."""
    code, out, err = run(capsys, "frontier", "-s", system, "-m", "llama-3.3-70b", "-w", workload, "--json")
    assert code == 0, err
    assert json.loads(out)[BASIS_FIELD] == want


def test_explore_sweep_line_says_how_far_compare_stands_from_its_own_sweep():
    """The shipped spaces' native agg+disagg sweep stands within 10% of compare's figure (docs/explore.md §3: R1 base
    1,721 against 1,730 tok/s/chip, best design 11,733 against 12,899); the coarse agg sweep 2.2x below it (779
    against 1,730, §4.1). The line said '2.2x' whatever the space swept."""
    from jalapeno.cli.explore_lines import base_lines

    b = {"model": "deepseek-r1", "workload": "8k1k", "tok_s_per_kw": 2458.6}
    out = {"base": "jalapeno", "metrics": ["tok_s_per_kw"], "base_metrics": [b], "objective": {}}
    native = base_lines({**out, "sweep": {"serving": "both", "precisions": "native", "batches": [1]}})[-1]
    coarse = base_lines({**out, "sweep": {"serving": "agg", "batches": [1]}})[-1]
    assert "1.00x on Jalapeño's DeepSeek-R1 8K/1K and 1.10x on the example's best design" in native
    assert "2.2x" not in native
    assert "usually higher, 2.2x on Jalapeño's DeepSeek-R1 8K/1K, FP8 -> FP4 and disagg" in coarse
