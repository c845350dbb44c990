"""Where one system's frontier beats another's, the bound at each speed, and the per-kW ratio under every power
convention (analysis/win_ranges.py, report/win_tables.py; ux51).

Expected values are worked by hand from power-law frontiers, on which the log-log interpolation is exact:
a = 1000 / x (100 tok/s/chip at 10 tok/s/user, 25 at 40), b = 20000 / x**2 (200 at 10, 12.5 at 40), so
a / b = x / 20: 1 at 20 tok/s/user, 1/1.05 at 20/1.05 = 19.048, 1.05 at 21."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from jalapeno.analysis.compare import Frontier
from jalapeno.analysis.win_ranges import EVEN_BAND, nearest_points, win_ranges
from jalapeno.report.win_tables import power_ratio_line, segments_text, where_wins_table

A = Frontier(np.array([10.0, 20.0, 40.0]), np.array([100.0, 50.0, 25.0]))  # 1000 / x
B = Frontier(np.array([10.0, 40.0]), np.array([200.0, 12.5]))  # 20000 / x**2


def _ends(segs):
    return [(round(s["from"], 3), round(s["to"], 3), s["result"]) for s in segs]


def test_crossings_are_solved_exactly_and_the_tail_is_one_span():
    w = win_ranges(A, B, {"throughput_per_chip": 1.0})
    # b falls below 10% of its 200 peak at 20000 / x**2 = 20: x = sqrt(1000) = 31.623; a's end rule 0.9 x 40 = 36
    assert w["tail_from"] == pytest.approx(math.sqrt(1000.0))
    assert w["from"] == 10.0 and w["to"] == 40.0 and w["only"] is None and w["even_within"] == EVEN_BAND
    segs = w["throughput_per_chip"]
    assert _ends(segs) == [
        (10.0, 19.048, "loses"),
        (19.048, 21.0, "even"),
        (21.0, 31.623, "wins"),
        (31.623, 40.0, "tail"),
    ]
    # the ratio's span over each: x / 20 at the ends
    assert segs[0]["ratio_min"] == pytest.approx(0.5) and segs[0]["ratio_max"] == pytest.approx(1 / 1.05)
    assert segs[2]["ratio_min"] == pytest.approx(1.05) and segs[2]["ratio_max"] == pytest.approx(math.sqrt(1000) / 20)
    assert segs[3]["ratio_max"] == pytest.approx(2.0)


def test_a_scale_moves_the_crossing_and_a_longer_frontier_runs_alone():
    # per kW with the baseline drawing twice the watts: ratio x / 10, above 1.05 from 10.5 tok/s/user
    b = Frontier(np.array([10.0, 40.0, 50.0]), np.array([200.0, 12.5, 8.0]))  # 20000 / x**2 on to 50
    w = win_ranges(A, b, {"tok_s_per_kw": 2.0}, end_rtol=0.0, tail_fraction=0.0)
    assert w["tail_from"] is None
    assert _ends(w["tok_s_per_kw"]) == [(10.0, 10.5, "even"), (10.5, 40.0, "wins")]
    assert w["only"] == {"who": "baseline", "from": 40.0, "to": 50.0}


def test_below_its_first_point_a_frontier_reads_its_peak():
    # a starts at 20 tok/s/user: below it a reads 50 (its peak); b = 20000 / x**2 is 50 at x = 20, so a loses below
    # 20 and the even band starts where 50 / b = 1/1.05: x = 20 / sqrt(1.05) = 19.518
    a = Frontier(np.array([20.0, 40.0]), np.array([50.0, 25.0]))
    w = win_ranges(a, B, {"throughput_per_chip": 1.0}, end_rtol=0.0, tail_fraction=0.0)
    assert w["from"] == 10.0
    assert _ends(w["throughput_per_chip"])[:2] == [(10.0, 19.518, "loses"), (19.518, 21.0, "even")]


def test_nearest_point_in_log_speed():
    # between 10 and 40 the log midpoint is 20: 19 is nearer 10, 21 nearer 40; past the end: unreachable
    assert nearest_points([10.0, 40.0], [5.0, 19.0, 21.0, 40.0, 41.0]) == [0, 0, 1, 1, None]


def test_the_where_wins_cell_and_table():
    w = win_ranges(A, B, {"throughput_per_chip": 1.0, "tok_s_per_kw": 1.0, "tokens_per_usd": 1.0})
    assert segments_text(w["throughput_per_chip"]) == (
        "loses 10-19 (0.50-0.95x); even 19-21; wins 21-32 (1.05-1.58x); in the tail 32-40 (1.58-2.00x)"
    )
    d = SimpleNamespace(
        baseline="b",
        power_convention="all-in",
        comparisons={"a": SimpleNamespace(where_wins=w), "b": SimpleNamespace(where_wins=None)},
    )
    t = where_wins_table(d)
    assert [c.header for c in t.columns] == [
        "system",
        "speeds compared",
        "per chip",
        "per kW (all-in)",
        "per $",
        "faster reach",
    ]
    assert list(t.columns[0].cells) == ["a"]  # the baseline has no row


def test_the_per_kw_ratio_under_each_convention():
    # a: 1,000 tok/s/chip at 700 W TDP, 550 W sustained, 1,150 W all-in; b: 1,250 at 1,400 W TDP (no sustained
    # figure: its TDP), 2,100 W all-in. Per kW: chip (1000/0.7) / (1250/1.4) = 1.60; sustained (1000/0.55) /
    # (1250/1.4) = 2.04; all-in (1000/1.15) / (1250/2.1) = 1.46
    def head(tput, w):
        return SimpleNamespace(
            peak_throughput_per_chip=tput,
            peak_tok_s_per_kw={c: tput / (v / 1e3) for c, v in w.items()},
            power_labels={
                "sustained": "chip TDP (no sustained figure published)"
                if w["sustained"] == w["chip"]
                else "chip sustained"
            },
        )

    d = SimpleNamespace(
        baseline="b",
        systems={
            "a": SimpleNamespace(headline=head(1000.0, {"chip": 700, "sustained": 550, "all-in": 1150})),
            "b": SimpleNamespace(headline=head(1250.0, {"chip": 1400, "sustained": 1400, "all-in": 2100})),
        },
    )
    line = power_ratio_line(d)
    assert line.endswith("a chip 1.60x (700 / 1,400), sustained 2.04x (550 / 1,400 TDP), all-in 1.46x (1,150 / 2,100)")


def test_a_ratio_wandering_along_an_edge_reads_as_one_stretch():
    # b: 100, 92 at 10, 20 tok/s/user, then flat; a: 90 flat to 20, 85 from 30. Ratio 0.9, 0.978, 0.924, 0.924.
    # Its even stretch reaches 0.978 (2.7% past 1/1.05 = 0.952): kept. Crossings of 1/1.05, log ratio linear in
    # log x: between 10 and 20 at t = (ln(1/1.05) - ln 0.9) / (ln(90/92) - ln 0.9) = 0.678, x = 10 * 2**t = 16.0;
    # between 20 and 30 at t = (ln(1/1.05) - ln(90/92)) / (ln(85/92) - ln(90/92)) = 0.469, x = 20 * 1.5**t = 24.2
    b = Frontier(np.array([10.0, 20.0, 30.0, 40.0]), np.array([100.0, 92.0, 92.0, 92.0]))
    a = Frontier(np.array([10.0, 20.0, 30.0, 40.0]), np.array([90.0, 90.0, 85.0, 85.0]))
    w = win_ranges(a, b, {"throughput_per_chip": 1.0}, end_rtol=0.0, tail_fraction=0.0)
    e = math.log(1 / 1.05)
    t1 = (e - math.log(0.9)) / (math.log(90 / 92) - math.log(0.9))
    t2 = (e - math.log(90 / 92)) / (math.log(85 / 92) - math.log(90 / 92))
    assert _ends(w["throughput_per_chip"]) == [
        (10.0, round(10 * 2**t1, 3), "loses"),
        (round(10 * 2**t1, 3), round(20 * 1.5**t2, 3), "even"),
        (round(20 * 1.5**t2, 3), 40.0, "loses"),
    ]
    assert round(10 * 2**t1, 1) == 16.0 and round(20 * 1.5**t2, 1) == 24.2
    # b at 20 raised to 94: the ratio there is 90/94 = 0.957, 0.5% past the edge (under HYSTERESIS, 1%): one stretch,
    # its span the true extremes, 0.9 to 0.957
    b2 = Frontier(np.array([10.0, 20.0, 30.0, 40.0]), np.array([100.0, 94.0, 94.0, 94.0]))
    w2 = win_ranges(a, b2, {"throughput_per_chip": 1.0}, end_rtol=0.0, tail_fraction=0.0)
    (seg,) = w2["throughput_per_chip"]
    assert (seg["from"], seg["to"], seg["result"]) == (10.0, 40.0, "loses")
    assert seg["ratio_min"] == pytest.approx(90 / 100) and seg["ratio_max"] == pytest.approx(90 / 94)


def test_the_band_row_reads_both_ends():
    w = win_ranges(A, B, {"throughput_per_chip": 1.0, "tok_s_per_kw": 1.0, "tokens_per_usd": 1.0})
    lo = win_ranges(A, A, {"throughput_per_chip": 1.0, "tok_s_per_kw": 1.0, "tokens_per_usd": 1.0})  # even all along
    d = SimpleNamespace(
        baseline="b",
        power_convention="chip",
        comparisons={"a": SimpleNamespace(where_wins=w, bands={"where_wins": {"low": lo, "high": w}})},
    )
    from jalapeno.report.win_tables import where_wins_parts

    _, _, rows, caption = where_wins_parts(d)
    assert [r[0] for r in rows] == ["a", "a band"]
    # a against itself: even to its tail, which starts at 0.9 x its last point (40: 36; its 25 stays above 10% of 100)
    assert (
        rows[1][2]
        == f"low: even 10-36; in the tail 36-40 (1.00-1.00x) · high: {segments_text(w['throughput_per_chip'])}"
    )
    assert "<system> band (--bands)" in caption


def test_the_rack_line_from_the_catalog():
    # jalapeno: 128 chips a rack x 1,150 W all-in = 147.2 kW; GB300 NVL72: 72 x 2,100 W = 151.2 kW (catalog, the
    # same figures `jalapeno hardware show` prints); at peaks of 14,569 and 18,756 tok/s/chip: 1.86 and 1.35 M tok/s;
    # H100 (8-GPU nodes) has no rack level: left out
    from jalapeno.report.win_tables import rack_line
    from jalapeno.specs.catalog import load_system

    syss = [load_system(n) for n in ("jalapeno", "gb300-nvl72", "h100")]
    d = SimpleNamespace(
        systems={
            "jalapeno": SimpleNamespace(headline=SimpleNamespace(peak_throughput_per_chip=14569.0)),
            "gb300-nvl72": SimpleNamespace(headline=SimpleNamespace(peak_throughput_per_chip=18756.0)),
            "h100": SimpleNamespace(headline=SimpleNamespace(peak_throughput_per_chip=5000.0)),
        }
    )
    line = rack_line(syss, d)
    assert line.endswith(
        "jalapeno 128 chips x 1,150 W = 147 kW, 1.86 M tok/s at peak; gb300-nvl72 72 chips x "
        "2,100 W = 151 kW, 1.35 M tok/s at peak"
    )
    assert rack_line(syss[2:], d) is None


def test_the_rack_line_at_each_tier_floor():
    # The capacity planner's question (ux52): racks for N users at >= 50 tok/s/user. compare -w 8k1k --tiers need=50
    # gives jalapeno 11,562 tok/s/chip @ 50 and gb300-nvl72 14,535 @ 50 (in + output). A rack: 128 x 11,562 =
    # 1,479,936 tok/s (1.48 M); output 1/9 of it (mean OSL 921.6 / (ISL 7,372.8 + 921.6), the peak's 1,619 of
    # 14,569) = 164,458 tok/s; at 50 tok/s/user each: 3,289 users decoding at once. GB300: 72 x 14,535 = 1,046,520
    # (1.05 M), / 9 / 50 = 2,326 users. So 100,000 users: ceil(100,000 / 3,289) = 31 jalapeno racks (31 x 147 kW =
    # 4.6 MW) against ceil(100,000 / 2,326) = 43 GB300 racks (6.5 MW). An unreachable floor is said so.
    from jalapeno.report.win_tables import rack_line
    from jalapeno.specs.catalog import load_system

    syss = [load_system(n) for n in ("jalapeno", "gb300-nvl72")]

    def tiers(need):
        return SimpleNamespace(
            tiers={
                "batch": {
                    "status": "at_point",
                    "throughput": 1.0,
                    "interactivity": 1.0,
                    "floor_tok_per_s_per_user": None,
                },
                "need": {
                    "status": "interpolated",
                    "throughput": need,
                    "interactivity": 50.0,
                    "floor_tok_per_s_per_user": 50.0,
                },
                "ultra": {
                    "status": "unreachable",
                    "throughput": float("nan"),
                    "interactivity": float("nan"),
                    "floor_tok_per_s_per_user": 300.0,
                },
            }
        )

    d = SimpleNamespace(
        systems={
            "jalapeno": SimpleNamespace(
                headline=SimpleNamespace(peak_throughput_per_chip=14569.0, peak_output_throughput_per_chip=1619.0)
            ),
            "gb300-nvl72": SimpleNamespace(
                headline=SimpleNamespace(peak_throughput_per_chip=18756.0, peak_output_throughput_per_chip=2084.0)
            ),
        },
        comparisons={"jalapeno": tiers(11562.0), "gb300-nvl72": tiers(14535.0)},
    )
    line = rack_line(syss, d)
    assert (
        "jalapeno 128 chips x 1,150 W = 147 kW, 1.86 M tok/s at peak, at need (>= 50 tok/s/user) 1.48 M tok/s, "
        "3,289 users at 50 tok/s/user, at ultra (>= 300 tok/s/user) unreachable; gb300-nvl72 72 chips x 2,100 W = "
        "151 kW, 1.35 M tok/s at peak, at need (>= 50 tok/s/user) 1.05 M tok/s, 2,326 users at 50 tok/s/user"
    ) in line
    assert "racks for N users at a tier = N / users, rounded up" in line


def test_the_rack_line_at_a_tier_floor_with_its_band():
    # --bands: the planner's uncertainty on racks. jalapeno's low-band frontier through (40 tok/s/user, 12,000
    # tok/s/chip) and (60, 8,000): at 50, log-log, 12,000 x (8,000 / 12,000)^(ln(50/40) / ln(60/40)) = 12,000 x
    # exp(-ln 1.5 x 0.5503) = 12,000 x 0.8 = 9,600 tok/s/chip; a rack 128 x 9,600 = 1.23 M tok/s, output 1/9, / 50:
    # 2,731 users. Its high end is the calibrated frontier (None): the span is calibrated 1.48 M / 3,289 to the low's.
    from jalapeno.report.win_tables import rack_line
    from jalapeno.specs.catalog import load_system

    need = {"status": "interpolated", "throughput": 11562.0, "interactivity": 50.0, "floor_tok_per_s_per_user": 50.0}
    d = SimpleNamespace(
        systems={
            "jalapeno": SimpleNamespace(
                headline=SimpleNamespace(peak_throughput_per_chip=14569.0, peak_output_throughput_per_chip=14569.0 / 9)
            )
        },
        comparisons={"jalapeno": SimpleNamespace(tiers={"need": need})},
    )
    low = SimpleNamespace(
        frontier=[
            SimpleNamespace(interactivity=40.0, throughput_per_chip=12000.0),
            SimpleNamespace(interactivity=60.0, throughput_per_chip=8000.0),
        ]
    )
    line = rack_line([load_system("jalapeno")], d, {"jalapeno": {"low": low, "high": None}})
    assert line.endswith(
        "at need (>= 50 tok/s/user) 1.48 M tok/s (1.23 to 1.48), 3,289 users (2,731 to 3,289) at 50 tok/s/user"
    )
    assert "(LO to HI): the same tier on the system's band frontiers, --bands" in line
    assert "(LO to HI)" not in rack_line([load_system("jalapeno")], d)  # no band: point figures only
