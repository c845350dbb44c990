"""Round-43 new-user pass: "how sure are we" had no pointer from compare's default output or the README."""

from __future__ import annotations

from pathlib import Path

from cli_runner import run

README = Path(__file__).resolve().parents[2] / "README.md"


def test_compare_without_bands_points_to_bands(capsys, monkeypatch):
    # A capacity planner reading `jalapeno compare` got ratios (0.78x per chip, 1.42x per kW vs GB300) with no
    # error band and no word that --bands exists; the default output now names it, and --bands does not repeat it.
    monkeypatch.setenv("COLUMNS", "300")
    code, out, err = run(capsys, "compare", "--systems", "gb200-nvl72,gb300-nvl72", "-w", "1k1k", "-p", "fp8")
    assert code == 0, err
    assert "add --bands for each figure's band" in out
    assert "docs/metrics.md §6" in out


def test_compare_with_bands_drops_the_hint(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    code, out, err = run(
        capsys, "compare", "--systems", "gb200-nvl72,gb300-nvl72", "-w", "1k1k", "-p", "fp8", "--bands"
    )
    assert code == 0, err
    assert "add --bands" not in out
    assert "gb200-nvl72 band" in out  # the ratio table's band row the hint promises


def test_readme_says_where_the_main_answer_is_read():
    # The set-up section ran `jalapeno compare` but never said which table answers "by how much", "why", "how sure".
    text = README.read_text(encoding="utf-8")
    head = text[: text.index("## What else it does")]
    for needle in (
        "ratios vs gb300-nvl72",
        "the bound that limits each",
        "jalapeno compare --bands",
        "docs/metrics.md §6",
    ):
        assert needle in head, needle
