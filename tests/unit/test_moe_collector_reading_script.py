"""scripts/moe_collector_reading.py (round 35): reading H100's MoE kernel rows with the collector's own routing.

The physical claim, checked without the script's numbers: a balanced row of T tokens at EP 1 touches min(E, T·k)
experts, never fewer than the uniform expectation E·(1 − (1 − k/E)^T), so the same measured time read under
``collector`` spreads over at least as many experts' weights: the fitted HBM fraction cannot fall, and (the round's
finding) the fit error falls.
"""

from __future__ import annotations

import pytest
from script_module import load_script

pytest.importorskip("aiconfigurator_core")
sp = load_script("moe_collector_reading")


@pytest.fixture(scope="module")
def h100():
    return {r["format"]: r for r in sp.rows_of("h100")}


def test_collector_reading_reads_more_bytes_per_second(h100):
    for fmt in ("bf16", "fp8"):
        assert h100[fmt]["collector hbm"] > h100[fmt]["uniform hbm"]


def test_collector_reading_fits_the_rows_better(h100):
    for fmt in ("bf16", "fp8"):
        med = {rule: float(h100[fmt][f"{rule} fit"].split(" / ")[0]) for rule in sp.RULES}
        assert med["collector"] < med["uniform"]


def test_unknown_system_is_refused(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["moe_collector_reading.py", "--systems", "nope"])
    with pytest.raises(SystemExit, match="--systems: no kernel tables for nope"):
        sp.main()
