"""Round 44, a new user's second question: "what would it cost per million tokens and per kW at the per-user
speed I need (50 tok/s/user)?" `compare` answered it only as ratios (`--at 50`) and as throughput per chip
(`--tiers`); the tok/s/kW and $/M tok at the floor took a division by hand. Each tiers cell now prints both.

Expected values are computed here from the published constants (InferenceX constants.ts: B200 all-in
2.17 kW per GPU and 1.95 $/GPU-hour; H200 1.73 kW and 1.41 $/GPU-hour; DESIGN.md §3), not from the code's
output: tok/s/kW = tok/s/chip / kW, $/M tok = $/chip-hour / (tok/s/chip x 3600 / 10^6).
"""

from __future__ import annotations

import re

import pytest
from cli_runner import run

#: InferenceX constants.ts (all-in provisioned kW per GPU, hyperscaler-owner $/GPU-hour)
PUBLISHED = {"b200": (2.17, 1.95), "h200": (1.73, 1.41)}

CELL = re.compile(r"([\d,]+) @ (\d+) \(([\d,]+) tok/s/kW, \$([\d.]+)/M tok\)")


def _tier_cells(text: str) -> dict[str, list[tuple[float, float, float]]]:
    """system -> [(tok/s/chip, tok/s/kW, $/M tok) per tier cell] from the tiers table's rows."""
    out: dict[str, list] = {}
    for line in text[text.index("operating tiers"):].splitlines():
        m = re.match(r"[│|] (\S+)\s+[│|]", line)
        if m and m.group(1) in PUBLISHED:
            out[m.group(1)] = [(float(a.replace(",", "")), float(c.replace(",", "")), float(d))
                               for a, _, c, d in CELL.findall(line)]
    return out


def test_compare_tier_cells_give_tok_s_per_kw_and_usd_per_mtok():
    from rich.console import Console

    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.report.tables import comparison_tables
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    res = compare_systems(load_model("deepseek-r1"), [load_pricer("b200"), load_pricer("h200")],
                          get_workload("1k1k"), get_precision("fp8"), floors={"need": 20.0},
                          options=SweepOptions(serving="agg", concurrency=(8.0, 64.0)))
    con = Console(width=600, record=True)
    con.print(comparison_tables(res.record())[2])
    text = con.export_text()
    cells = _tier_cells(text)
    assert set(cells) == set(PUBLISHED)
    for name, (kw, usd_h) in PUBLISHED.items():
        assert len(cells[name]) == 2  # batch (peak) and need (>= 20)
        for tput, per_kw, usd in cells[name]:
            assert per_kw == pytest.approx(tput / kw, abs=1.0)  # the cell rounds to whole tok/s/kW
            assert usd == pytest.approx(usd_h / (tput * 3600 / 1e6), rel=6e-3)  # three significant figures
    assert "tok/s per kW, all-in power, and $ per M tokens" in text.replace("\n", " ")


def test_compare_prints_the_tier_figures(capsys):
    """The command line carries them too (what README's planner line runs)."""
    code, out, err = run(capsys, "compare", "-s", "b200", "-m", "deepseek-r1", "-w", "1k1k", "-p", "fp8",
                         "--serving", "agg", "-c", "8,64", "--tiers", "need=20", "--html", "")
    assert code == 0, err
    assert "tok/s/kW, $" in out and "/M tok)" in out


def test_tier_usd_per_mtok_is_the_chip_hour_price_over_the_tokens():
    """By hand: a frontier whose point serves 1,000 tok/s/chip at 0.5 $/M tok costs 1.8 $/chip-hour;
    at 4,000 tok/s/chip that is 1.8 / 14.4 = 0.125 $/M tok."""
    from types import SimpleNamespace

    from jalapeno.report.compare_cells import tier_usd_per_mtok

    fr = [SimpleNamespace(usd_per_mtok=0.5, throughput_per_chip=1000.0)]
    assert tier_usd_per_mtok(4000.0, fr) == pytest.approx(0.125)
    assert tier_usd_per_mtok(float("nan"), fr) != tier_usd_per_mtok(float("nan"), fr)  # NaN: unreachable tier
    assert tier_usd_per_mtok(4000.0, []) != tier_usd_per_mtok(4000.0, [])


def test_audit_names_the_estimated_specs_that_meet_the_claim():
    """"What the chip would need" searches the stated headline specs only; an estimated spec (kind ``spec``) that
    alone meets the claim is named on a line under it, with its value and factor; efficiency rows, spec rows
    that do not reach the claim, and an audit with none of them print no line."""
    from jalapeno.cli.audit_tables import estimated_spec_line

    bf16 = {"parameter": "chip.peak_dense_tflops.bf16", "kind": "spec", "required": 2105.0, "factor": 2105 / 1700,
            "within_band": False}
    tray = {"parameter": "levels.tray.bandwidth_gb_per_s", "kind": "spec", "required": 660.0, "factor": 1.1,
            "within_band": True}
    eff = {"parameter": "efficiency.hbm_fraction", "kind": "efficiency", "required": 0.99, "factor": 1.06,
           "within_band": True}
    none = {"parameter": "levels.rack.latency_us", "kind": "spec", "required": None, "factor": None,
            "within_band": False}
    line = estimated_spec_line([eff, none, bf16, tray])
    # the nearer move first: tray x1.10 before BF16 x1.24 (2,105 / 1,700)
    assert line.endswith("levels.tray.bandwidth_gb_per_s 660 (1.1x, inside its band); "
                         "chip.peak_dense_tflops.bf16 2,105 (1.24x, outside its band)")
    assert "efficiency.hbm_fraction" not in line and "latency_us" not in line
    assert estimated_spec_line([eff, none]) is None and estimated_spec_line([]) is None


def test_plan_prints_tok_s_per_kw_and_joules_per_token(capsys):
    """`plan` gave the fleet's power and $ per M tokens but not its tokens per kW: the line is now there, the
    all-in figure first. By hand from the plan's own operating point and InferenceX's B200 constants: all-in
    2.17 kW per GPU; chip TDP 1.0 kW (MLPerf Inference v5.1 hw_notes, "B200 TGP 1000W")."""
    code, out, err = run(capsys, "plan", "-s", "b200", "-m", "deepseek-r1", "-w", "1k1k", "-p", "fp8", "--serving",
                         "agg", "--target", "1e5", "--min-interactivity", "20")
    assert code == 0, err
    tput = float(re.search(r"operating point: .*?: ([\d,.]+) tok/s/chip", out).group(1).replace(",", ""))
    line = next(ln.strip() for ln in out.splitlines() if ln.strip().startswith("per kW"))
    m = re.match(r"per kW \(output tokens\): ([\d,.]+) tok/s/chip / 2\.17 kW all-in = ([\d,.]+) tok/s per kW "
                 r"\(([\d.]+) J/token\); chip 1\.00 kW: ([\d,.]+)", line)
    assert m, line
    assert float(m.group(2).replace(",", "")) == pytest.approx(tput / 2.17, abs=0.06)
    assert float(m.group(3)) == pytest.approx(2170 / tput, abs=0.006)
    assert float(m.group(4).replace(",", "")) == pytest.approx(tput / 1.0, abs=0.06)


def test_plan_fleet_prints_tok_s_per_kw_over_the_whole_fleet(capsys):
    """`plan --chips N`: the fleet's delivered tok/s over its whole power (idle chips included), by hand from the
    printed delivered rate and InferenceX's B200 all-in 2.17 kW per GPU."""
    code, out, err = run(capsys, "plan", "-s", "b200", "-m", "deepseek-r1", "-w", "1k1k", "-p", "fp8", "--serving",
                         "agg", "--chips", "20", "--min-interactivity", "20")
    assert code == 0, err
    delivered = float(re.search(r"= ([\d,.]+) output tok/s at", out).group(1).replace(",", ""))
    line = next(ln.strip() for ln in out.splitlines() if ln.strip().startswith("per kW"))
    m = re.search(r"/ 2\.17 kW all-in = ([\d,.]+) tok/s per kW", line)
    assert m and "per fleet chip (idle ones included)" in line, line
    assert float(m.group(1).replace(",", "")) == pytest.approx(delivered / (20 * 2.17), abs=0.06)
