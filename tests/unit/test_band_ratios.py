"""``compare --bands`` carries the efficiency band into the ratios (analysis/ratio_bands.band_ratios).

Expected values are computed here from the band's own sweeps, not from the code under test: the
headline bands (``efficiency_bands``, one re-sweep per end) give the peak and max-tok/s/user ends,
and the band frontiers it keeps give the iso-interactivity ends, interpolated by hand (log-log
between the two frontier points either side of the speed, docs/metrics.md §6). GB300 has measured
kernels, so its band is its measured error (analysis/measured_bands.py): each ratio end is Jalapeño's end
over GB300's opposite end (the crossed pairing, analysis/ratio_bands.BAND_PAIRING_MEASURED).
"""

from __future__ import annotations

import json
import math
import tomllib

import pytest
from cli_runner import run

from jalapeno.analysis.comparison import compare_systems
from jalapeno.analysis.measured_bands import BANDS_PATH
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import band_pricers, load_pricer
from jalapeno.report.compare_cells import band_range
from jalapeno.report.tables import comparison_tables
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


@pytest.fixture(scope="module")
def banded():
    prs = [load_pricer("jalapeno"), load_pricer("gb300-nvl72")]
    return compare_systems(load_model("deepseek-r1"), prs, get_workload("1k1k"), get_precision("fp8"),
                           baseline="gb300-nvl72", options=SweepOptions(serving="agg"), iso_interactivity=(20.0, 50.0),
                           bands={p.system.name: band_pricers(p) for p in prs})


def _loglog(points, x: float) -> float:
    """Throughput per chip at interactivity x between the frontier points either side (by hand)."""
    xs = [p.interactivity for p in points]
    ys = [p.throughput_per_chip for p in points]
    j = next(k for k, v in enumerate(xs) if v >= x)
    if xs[j] == x:
        return ys[j]
    t = (math.log(x) - math.log(xs[j - 1])) / (math.log(xs[j]) - math.log(xs[j - 1]))
    return math.exp(math.log(ys[j - 1]) + t * (math.log(ys[j]) - math.log(ys[j - 1])))


def test_ratio_band_ends_are_the_systems_ends_over_the_baseline(banded):
    jal, gb = banded.headlines["jalapeno"], banded.headlines["gb300-nvl72"]
    gbb = gb.bands
    # GB300 (measured kernels): its band is its measured error (data/validation/measured_bands.toml):
    # the prediction over 1 + p90 (low) and 1 + p10 (high) of its throughput error
    q = tomllib.loads(BANDS_PATH.read_text())["systems"]["gb300-nvl72"]["throughput_per_chip"]
    assert gbb.source.startswith("measured error")
    assert gbb.peak_throughput_per_chip.low == pytest.approx(gb.peak_throughput_per_chip / (1 + q["q_hi"]), rel=1e-12)
    assert gbb.peak_throughput_per_chip.high == pytest.approx(gb.peak_throughput_per_chip / (1 + q["q_lo"]), rel=1e-12)
    b = banded.comparisons["jalapeno"].bands
    assert "unfavourable end over the baseline at its favourable end" in b["pairing"]
    for w, bw in (("low", "high"), ("high", "low")):  # crossed: a measured band is on one side
        assert b["peak_ratio"]["throughput_per_chip"][w] == pytest.approx(
            getattr(jal.bands.peak_throughput_per_chip, w) / getattr(gbb.peak_throughput_per_chip, bw), rel=1e-12)
        assert b["max_interactivity_ratio"][w] == pytest.approx(
            getattr(jal.bands.max_interactivity, w) / getattr(gbb.max_interactivity, bw), rel=1e-12)
        # per kW: the per-chip ratio times GB300's all-in 2,100 W over Jalapeño's 1,150 W (catalog)
        assert b["peak_ratio"]["tok_s_per_kw"][w] == pytest.approx(
            b["peak_ratio"]["throughput_per_chip"][w] * 2100 / 1150, rel=1e-9)
        rec = banded.band_frontiers["jalapeno"][w]
        assert rec is not None  # Jalapeño's band pricers are its own low/high sets (derived system)
        gb_points = banded.band_frontiers["gb300-nvl72"][bw].frontier  # GB300's frontier scaled to that end
        row = b["iso_interactivity"]["throughput_per_chip"][w][1]
        assert row["x"] == 50.0
        assert row["ratio"] == pytest.approx(_loglog(rec.frontier, 50.0) / _loglog(gb_points, 50.0), rel=1e-9)
    # the calibrated ratio lies inside its band (low set <= calibrated <= high set, GB300 fixed)
    mid = banded.comparisons["jalapeno"].peak_ratio["throughput_per_chip"]
    assert b["peak_ratio"]["throughput_per_chip"]["low"] < mid < b["peak_ratio"]["throughput_per_chip"]["high"]


def test_ratios_table_prints_the_band_row(banded):
    from rich.console import Console

    con = Console(width=400, record=True)
    for t in comparison_tables(banded.record()):
        con.print(t)
    text = con.export_text()
    b = banded.comparisons["jalapeno"].bands
    row = next(line for line in text.splitlines() if "jalapeno band" in line)
    pk = b["peak_ratio"]["throughput_per_chip"]
    lo, hi = sorted((pk["low"], pk["high"]))
    assert f"{lo:.2f} to {hi:.2f}x" in row
    assert "gb300-nvl72 band" not in text  # the baseline against itself: no band row
    assert "each ratio with both systems at their low efficiency sets" in text
    assert "where either side's band is its measured error (validate p10/p90) the ends cross" in " ".join(text.split())


def test_band_range_by_hand():
    assert band_range(1.16, 0.64) == "0.64 to 1.16x"
    assert band_range(1.23, 9.27) == "1.23 to 9.27x [wide band: 7.5x]"  # 9.27 / 1.23 = 7.54
    assert band_range(1.23, 9.27, flag=False) == "1.23 to 9.27x"
    assert band_range(float("nan"), 2.0) == "- to 2.00x"


def test_compare_json_carries_ratio_bands_only_with_bands(capsys):
    args = ("compare", "--systems", "jalapeno,gb300-nvl72", "-w", "1k1k", "-p", "fp8", "--serving", "agg",
            "--at", "50", "--json")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "bands" not in json.loads(out)["comparisons"]["jalapeno"]
    code, out, err = run(capsys, *args, "--bands")
    assert code == 0, err
    d = json.loads(out)
    b = d["comparisons"]["jalapeno"]["bands"]
    h = d["systems"]["jalapeno"]["headline"]["bands"]["peak_throughput_per_chip"]
    base = d["systems"]["gb300-nvl72"]["headline"]["peak_throughput_per_chip"]
    gbb = d["systems"]["gb300-nvl72"]["headline"]["bands"]
    assert gbb["source"] == "measured error (validate p10/p90)" and "source" not in d["systems"]["jalapeno"]["headline"]["bands"]
    assert b["peak_ratio"]["throughput_per_chip"]["low"] == pytest.approx(
        h["low"] / gbb["peak_throughput_per_chip"]["high"], rel=1e-12)
    assert gbb["peak_throughput_per_chip"]["mid"] == base
    assert [r["x"] for r in b["iso_interactivity"]["tok_s_per_kw"]["high"]] == [50.0]


def test_report_page_prints_the_band_row(banded):
    from jalapeno.report.page import tables_html

    page = tables_html(banded.record())
    pk = banded.comparisons["jalapeno"].bands["peak_ratio"]["throughput_per_chip"]
    lo, hi = sorted((pk["low"], pk["high"]))
    assert f"<td>jalapeno band</td><td>{lo:.2f} to {hi:.2f}x (" in page and "gb300-nvl72 band" not in page
    assert "each ratio with both systems at their low efficiency sets" in page


def test_report_page_headline_gives_the_bands_the_terminal_gives(banded):
    """newuser37: with --bands the terminal's headline gives each figure's (low to high) and the page's ratio caption
    points at 'the headline's (low to high)', but the page's headline had none. The ends are the headline bands' own
    sweeps (efficiency_bands), printed as the terminal prints them."""
    from jalapeno.report.page import tables_html

    rec = banded.record()
    page = tables_html(rec)
    row = page.split("<td>jalapeno</td>", 1)[1].split("</tr>", 1)[0]
    cells = [c.split("</td>")[0] for c in row.split("<td>")[1:]]  # peak, out, per kW, $/M, bound, load, max, ...
    b = rec.systems["jalapeno"].headline.bands
    lo, hi = b.peak_throughput_per_chip.low, b.peak_throughput_per_chip.high
    assert cells[0].endswith(f" ({lo:,.0f} to {hi:,.0f})"), cells[0]
    klo, khi = b.peak_tok_s_per_kw["low"]["all-in"], b.peak_tok_s_per_kw["high"]["all-in"]
    assert f" ({klo:,.0f} to {khi:,.0f})" in cells[2], cells[2]
    ilo, ihi = b.max_interactivity.low, b.max_interactivity.high
    assert f" ({ilo:.1f} to {ihi:.1f})" in cells[6], cells[6]


def test_where_it_wins_at_each_band_end(banded):
    """ux51: the where-it-wins ranges again at the band's ends, paired as the ratios are (crossed: GB300's band is
    its measured error); each span holds the ratio worked by hand at every frontier point inside it."""
    b = banded.comparisons["jalapeno"].bands
    for w, bw in (("low", "high"), ("high", "low")):
        ww = b["where_wins"][w]
        jal = banded.band_frontiers["jalapeno"][w].frontier
        gb = banded.band_frontiers["gb300-nvl72"][bw].frontier
        assert ww["from"] == min(jal[0].interactivity, gb[0].interactivity)
        assert ww["to"] == min(jal[-1].interactivity, gb[-1].interactivity)
        start = max(jal[0].interactivity, gb[0].interactivity)
        checked = 0
        for s in ww["throughput_per_chip"]:
            inside = [p.interactivity for p in (*jal, *gb) if s["from"] < p.interactivity < s["to"]]
            for x in [x for x in inside if x > start]:
                r = _loglog(jal, x) / _loglog(gb, x)
                assert s["ratio_min"] * (1 - 1e-9) <= r <= s["ratio_max"] * (1 + 1e-9)
                checked += 1
        assert checked >= 2
    assert "where_wins" not in (banded.comparisons["gb300-nvl72"].bands or {})  # the baseline: none
