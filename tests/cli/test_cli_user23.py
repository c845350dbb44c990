"""Round 23's analyst pass (a capacity planner answering the mission's questions from the README alone): what
tripped them, each pinned by its message or label."""

from __future__ import annotations

import re

import pytest

from cli_runner import run
from jalapeno.report.tables import usd_text


@pytest.mark.parametrize(("x", "text"), [(0.0054, "0.00540"), (0.0046, "0.00460"), (1.234, "1.23"), (12.345, "12.3"),
                                         (1234.5, "1234"), (0.0, "0"), (float("inf"), "-"), (None, "-")])
def test_usd_text_keeps_three_significant_figures(x, text):
    # a fixed .3f printed 0.0054 and 0.0046 $/M tok both as 0.005: a 17% gap between two systems vanished
    assert usd_text(x) == text


def _cells(text: str, name: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if re.match(rf"\W*{re.escape(name)}\s", ln))
    return [c.strip() for c in line.split("│")[1:-1]]


def test_compare_cost_column_has_three_figures_and_names_its_basis(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "compare", "-m", "gpt-oss-120b", "--systems", "jalapeno,gb300-nvl72", "--html", "")
    assert code == 0, err
    for name, usd_per_chip_hour in (("jalapeno", 1.43), ("gb300-nvl72", None)):
        cells = _cells(out, name)
        peak, usd = float(cells[1].replace(",", "")), cells[4]
        assert re.fullmatch(r"0\.00\d\d\d", usd), usd  # three significant figures, not '0.005'
        if usd_per_chip_hour is not None:  # catalog: jalapeno.toml cost.usd_per_chip_hour = 1.43 $/h (an estimate)
            assert float(usd) == pytest.approx(usd_per_chip_hour / (peak * 3600 / 1e6), rel=2e-3)
    flat = " ".join(out.split())
    assert "$/M tok: the system's cost per chip-hour (total cost of ownership, cost.usd_per_chip_hour" in flat
    assert "jalapeno hardware show NAME" in flat
