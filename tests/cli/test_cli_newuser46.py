"""Round 46, a new user's try of the whole tool from the README (analyst, capacity planner, architect, skeptic).

What confused, and is fixed here:

1. ``compare --bands`` folded a band inside a number in the terminal: the peak cell of Jalapeño on gpt-oss-120b
   printed ``82,083 (74,333-97,`` over ``416)``, read as a band ending at 97 and a stray 416, and its max tok/s/user
   ``(339.5-2104`` over ``.9)``. A band is now written ``(lo - hi)`` (since ux47 ``(lo to hi)``, analysis/bound_words.band_span), so a narrow column wraps between the ends.

2. ``plan -w 128k1k`` offered 'fewer racks: ... CP4 ... serves the target with 47,600 chips in 182 racks': 182 NVL72
   racks hold 13,104 chips. The rack count packed each worker's tp x dp chips and dropped its context-parallel
   ranks (capacity.instance_groups used Layout.stage_chips, not cp_span), so a CP4 prefill worker of 16 chips
   was packed as 4.

3. ``validate --held-out -s gb200-nvl72,gb300-nvl72`` printed GB200's rows with no word on GB300 (its rows are
   aiconfigurator's, left out without the package); ``validate -s jalapeno`` was told to install aiconfigurator,
   which has no Jalapeño rows.

4. ``sensitivity`` printed the swing as '9.22e+03' beside its ends '75,523' and '84,742'.

5. docs/simulator.md §11's worked example kept simulate's old row labels (no '(in+out; ...)', no '$ per M tokens').

6. ``plan --racks`` printed its $ per M tokens with a fixed '.3f' ($0.005 for gpt-oss-120b on Jalapeño, total tokens),
   where ``plan --target`` and ``compare`` print three significant figures.

7. ``predict``'s E2E row printed '1721.29 s' under its TTFT row's '1,693,831 ms'.

8. ``audit`` printed a band 3.9x wide ('126.8-500.1') unflagged, where ``compare --bands`` flags it '[wide band: 3.9x]'.

Expected values are worked by hand from the layouts (chips = tp x dp x cp x workers) and the NVL72 rack of 72 GPUs.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from cli_runner import error_line, run
from rich.console import Console
from rich.table import Table

from jalapeno.analysis.packing import instance_groups, packed_boxes
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.report.compare_cells import band_text
from jalapeno.specs.formats import get_precision


def test_a_band_wraps_between_its_ends_not_inside_a_number():
    cell = "82,083" + band_text(74333, 97416, ",.0f")
    assert cell == "82,083 (74,333 to 97,416)"
    t = Table()
    t.add_column("peak tok/s/chip (in+out)", overflow="fold", width=11)  # compare's headline column, narrow
    t.add_row(cell)
    con = Console(width=40, record=True)
    con.print(t)
    lines = [ln.strip("│ ") for ln in con.export_text().splitlines() if ln.startswith("│")]
    # every number whole on one line (the old '(74,333-97,' / '416)' split 97,416 across two)
    assert "97,416)" in lines and "(74,333 to" in lines and "82,083" in lines, lines
    assert band_text(339.5, 2104.9, ".1f") == " (339.5 to 2104.9) [wide band: 6.2x]"  # 2104.9 / 339.5 = 6.20


def _cp4_instance() -> Deployment:
    """128k1k's 'fewer racks' instance on GB200: P 115x(attn TP4 · MoE EP4 · CP4) + D 1x(DP64 EP64), 1,904 chips."""
    return Deployment(get_precision("fp4"), Pool(Layout(dp=64, ep=64)), prefill=Pool(Layout(tp=4, ep=4, cp=4), 115))


def test_a_context_parallel_worker_packs_all_its_chips():
    dep = _cp4_instance()
    assert dep.chips == 115 * 16 + 64 == 1904
    groups = instance_groups(dep, 25)
    assert groups == {16: 2875, 64: 25}  # 4 x 4 chips per CP4 worker, 115 workers x 25 instances
    assert sum(g * n for g, n in groups.items()) == 25 * 1904 == 47_600  # the groups hold every chip
    # by hand: four 16-chip workers fill 64 of a rack's 72 GPUs -> ceil(2875 / 4) = 719 racks; a 64-chip decode
    # worker fits none of their leftovers (8 GPUs; 24 in the last) -> 25 racks more
    racks = packed_boxes(groups, 72)
    assert racks == 719 + 25 == 744
    assert racks >= math.ceil(47_600 / 72)  # never fewer racks than the chips fill (662); was 182


def test_plan_never_prices_more_chips_than_its_racks_hold(capsys):
    code, out, err = run(
        capsys,
        "plan",
        "-s",
        "gb200-nvl72",
        "-m",
        "deepseek-r1",
        "-w",
        "128k1k",
        "--target",
        "1e6",
        "--min-interactivity",
        "30",
        "--json",
    )
    assert code == 0, err
    d = json.loads(out)
    plans = [d] + [a for a in (d["highest_rate"], d["fewest_boxes"]) if a]
    for p in plans:
        racks = p["packaging"]["rack"]
        assert racks * 72 >= p["chips"], p  # the 'fewer racks' line read 47,600 chips in 182 racks (13,104)


def test_validate_names_a_system_it_has_no_row_for(capsys):
    """3. ``validate --held-out -s gb200-nvl72,gb300-nvl72`` (a skeptic checking the claim's baselines) printed GB200's
    rows alone: GB300 has no InferenceX point, its rows are aiconfigurator's, and nothing said so, where ``-s
    gb300-nvl72`` alone is refused with the reason."""
    code, out, err = run(capsys, "validate", "--no-aiconfigurator", "--held-out", "-s", "gb200-nvl72,gb300-nvl72")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "gb300-nvl72: no row above: no measured point in the sources loaded" in flat
    assert "gb200-nvl72: no row above" not in flat  # it has held-out InferenceX rows


def test_no_rows_says_why():
    import pandas as pd

    from jalapeno.fit.validation_run import _systems_without_rows

    class P:
        def __init__(self, system):
            self.system = system

    rows = pd.DataFrame({"system": ["gb200-nvl72"]})
    aic = {"aiconfigurator": "not installed"}
    got = _systems_without_rows(("gb200-nvl72", "gb300-nvl72", "h100"), rows, [P("gb200-nvl72"), P("h100")], True, aic)
    assert set(got) == {"gb300-nvl72", "h100"}
    assert got["h100"].startswith("every point of it is in a fit's half")  # measured, none held out
    assert got["gb300-nvl72"].startswith("no measured point in the sources loaded (aiconfigurator's rows")
    # Jalapeño has no measured point in any source: the aiconfigurator package would not add one
    assert _systems_without_rows(("jalapeno",), rows, [], False, aic) == {
        "jalapeno": "no measured point in the sources loaded"
    }


def test_validate_does_not_send_a_jalapeno_skeptic_to_install_aiconfigurator(capsys, monkeypatch):
    """'validate -s jalapeno' answered '(the aiconfigurator-core package is not installed: its end-to-end rows are
    left out (pip install ...))': aiconfigurator has no Jalapeño rows (fit/aic_rows.AIC_SYSTEMS); GB300's it has."""
    import jalapeno.fit.validation_run as vr
    from jalapeno.errors import SpecError
    from jalapeno.fit.aic_rows import AIC_SYSTEMS

    assert "jalapeno" not in AIC_SYSTEMS.values() and "gb300-nvl72" in AIC_SYSTEMS.values()

    def no_package(frame=None):  # the base install's case (README's first command)
        raise SpecError("aiconfigurator", "the aiconfigurator-core package is not installed", "pip install it")

    monkeypatch.setattr(vr, "load_aiconfigurator", no_package)
    line = error_line(*run(capsys, "validate", "-s", "jalapeno"))
    assert "no measured point on jalapeno." in line and "aiconfigurator" not in line.split("Fix:")[0], line
    line = error_line(*run(capsys, "validate", "-s", "gb300-nvl72"))
    assert "no measured point on gb300-nvl72 (the aiconfigurator-core package is not installed" in line, line


def _labels(text: str) -> list[str]:
    """The left-column labels of a simulate summary table (a row's first line: its label cell is not blank)."""
    out = []
    for ln in text.splitlines():
        if ln.startswith("│") and ln.count("│") >= 3:
            label = ln.split("│")[1].strip()
            if label:
                out.append(label)
    return out


def test_simulator_doc_worked_example_has_the_rows_simulate_prints(capsys):
    """5. docs/simulator.md §11 quoted 'throughput per kW (all-in, 1,150 W/chip)' and no '$ per M tokens' row, where
    simulate prints 'throughput per kW (in+out; all-in, 1,150 W/chip)' and '$ per M tokens (in+out; $1.43/chip-hour)'
    (round 45): the figures were held to simulate --json, the labels to nothing."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "simulator.md").read_text()
    sec = doc[doc.index("## 11. A worked example") :]
    block = sec[sec.index("```\n                 deepseek-r1 on jalapeno") : sec.index("Reading it by hand")]
    args = ("simulate", "--system", "jalapeno", "--dp", "8", "--ep", "8", "--workload", "agentic")
    code, out, err = run(capsys, *args, "--concurrency", "8", "--sessions", "8")
    assert code == 0, err
    assert _labels(block) == _labels(out)
    # by hand: $1.43/chip-hour (catalog, estimate) over 6,785.1 tok/s/chip x 3,600 s / 1e6 = 0.05854 $/M tokens
    assert "0.0585 (an estimate" in block and "0.0585 (an estimate" in out
    assert round(1.43 / (6785.1 * 3600 / 1e6), 4) == 0.0585


def test_sensitivity_swing_reads_as_the_figures_beside_it(capsys):
    """4. ``sensitivity`` printed each swing as '9.22e+03' beside its ends '75,523' and '84,742' (tok/s/chip): the one
    column in exponent form. The swing is now written as the ends are: 84,742 - 75,523 = 9,219."""
    args = ("sensitivity", "-s", "jalapeno", "-m", "gpt-oss-120b", "--metric", "throughput_per_chip@50")
    code, out, err = run(capsys, *args, "--html", "")
    assert code == 0, err
    assert "e+0" not in out  # no figure of the table in exponent form (launch times stay as 4e-06: 'e-0')
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    rows = [r for r in json.loads(js)["rows"] if r["swing"] >= 1000]
    assert rows
    flat = " ".join(out.split())
    for r in rows:  # the swing is |at high - at low| (by hand from the two ends), with thousands separators
        assert r["swing"] == abs(r["metric_at_high"] - r["metric_at_low"])
        assert f"{r['swing']:,.0f}" in flat


def test_fleet_plan_prices_a_million_tokens_to_three_figures(capsys):
    """6. ``plan --racks/--chips`` (the fleet you have) printed '$ per M tokens' with a fixed '.3f': Jalapeño's 4 racks on
    gpt-oss-120b at >= 50 tok/s/user, total tokens, priced at $0.005 (two figures lost), where ``plan --target``
    and compare print three significant figures (power_cost.usd_text, whose docstring names this very loss)."""
    args = (
        "plan",
        "-s",
        "jalapeno",
        "-m",
        "gpt-oss-120b",
        "--racks",
        "4",
        "--min-interactivity",
        "50",
        "--target-kind",
        "total",
    )
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(js)
    # by hand: the fleet's $/hour over the millions of tokens it delivers in an hour
    usd = d["usd_per_hour"] / (d["delivered_tok_per_s"] * 3600 / 1e6)
    assert usd == pytest.approx(d["usd_per_mtok"], rel=1e-12) and usd < 0.01  # ~0.005: where .3f hid two figures
    code, out, err = run(capsys, *args)
    assert code == 0, err
    digits = 2 - math.floor(math.log10(usd))  # three significant figures
    assert f"per M total tokens: ${usd:.{digits}f}" in " ".join(out.split())


def test_predict_separates_thousands_of_seconds_as_it_does_milliseconds(capsys):
    """7. ``predict -s jalapeno --dp 64 --ep 64 -c 4096 -p fp4`` printed 'E2E mean / p50 / p90 / p99 185.98 / 99.14 /
    101.51 / 1721.29 s' under 'TTFT mean / p99 161,226 / 1,693,831 ms': the one figure past 1,000 without a separator."""
    args = ("predict", "-s", "jalapeno", "-m", "deepseek-r1", "--dp", "64", "--ep", "64", "-c", "4096", "-p", "fp4")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    p = json.loads(js)
    p = p.get("point", p)
    e2e = [p["e2e_s"], p["e2e_p50_s"], p["e2e_p90_s"], p["e2e_p99_s"]]
    assert max(e2e) >= 1000  # the whole run's first wave: its p99 over 1,000 s
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert " / ".join(f"{v:,.2f}" for v in e2e) + " s" in " ".join(out.split())


def test_audit_flags_a_wide_band_as_compare_does(capsys):
    """8. ``audit -s jalapeno --claim max_interactivity=700`` printed the band '126.8-500.1' with no word that its ends
    are 3.9x apart (Jalapeño's GPU-like to compiled stacks), where ``compare --bands`` flags the same band
    '[wide band: 3.9x]'; a PLAUSIBLE inside such a band rests on the assumption's spread."""
    code, out, err = run(
        capsys, "audit", "-s", "jalapeno", "-m", "deepseek-r1", "-w", "8k1k", "--claim", "max_interactivity=700"
    )
    assert code == 0, err
    m = re.search(r"│ ([\d.]+) to ([\d.]+) tok/s/user \[wide band: ([\d.]+)x\] │", out)  # unit: plan49
    assert m, out
    lo, hi, n = (float(g) for g in m.groups())
    assert hi / lo >= 2 and n == pytest.approx(hi / lo, abs=0.06)  # by hand: 500.1 / 126.8 = 3.94
    assert "[wide band: Nx]: high / low of 2x or more" in " ".join(out.split())
