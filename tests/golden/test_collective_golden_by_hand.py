"""The two collective golden cases round 30 regenerated (coll30), each computed by hand beside its snapshot
(review30: a regenerated golden file is a snapshot; this is the independent check next to it).

Constants by hand from the shipped calibration files (data/calibration/{h200,gb200-nvl72}.toml, set ``calibrated``,
the set the golden CLI runs with) and the system TOMLs' link levels; formulas of cost/collectives.py's module
docstring (tree: 2·⌈log2 g⌉·α + 2·M/B(M); two-shot: 2·α + 2(g−1)/g·M/B_c(M)) and docs/model.md §5. A regenerated calibration set moves these constants and fails here: type the new ones
in and recompute (that is the check: the golden moves only as the formula with the new constants says).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import jalapeno as jp
from jalapeno.cost.collectives import collective_time

GOLDEN = json.loads((Path(__file__).parent / "data" / "golden_cli.json").read_text())


def _golden(name: str, m: float) -> dict:
    return next(r for r in GOLDEN["cases"][name]["output"]["results"] if r["bytes"] == m)


def _priced(system: str, g: int, m: float, placement: str = "packed") -> float:
    return float(collective_time("all_reduce", g, [m], jp.load_system(system), jp.load_efficiency(system, "calibrated"),
                                 placement=placement).time_s[0])


def test_h200_8_gpus_spread_10_kb_is_the_tree_on_the_nic_ramp():
    # one GPU per node: 8 ranks over the 50 GB/s NICs (α 5 µs); NIC ramp f 0.8 (scale_out_link_fraction),
    # h = 19,716,153 B, p = 0.49975409 (link_half_bytes, link_shape); launch 1.7791549 µs
    m, g = 1e4, 8
    eta = 0.8 / (1 + (19_716_153 / m) ** 0.49975409)
    assert eta == pytest.approx(0.01766, abs=1e-5)
    tree = 2 * math.ceil(math.log2(g)) * 5e-6 + 2 * m / (50e9 * eta)
    ring = 2 * (g - 1) * 5e-6 + 2 * (g - 1) / g * m / (50e9 * eta)
    hand = min(tree, ring) + 1.7791549e-6
    assert hand == pytest.approx(54.44e-6, abs=0.01e-6) and tree < ring  # tests/golden/data/README.md
    row = _golden("coll_h200_allreduce_ring_spread", m)
    assert row["algorithm"] == "tree" and row["time_s"] == pytest.approx(hand, rel=1e-6)
    assert _priced("h200", g, m, "spread") == pytest.approx(hand, rel=1e-6)


def test_gb200_72_gpus_1_kb_two_shot_is_held_at_the_ramps_minimum_time_size():
    # 72 ranks on the 900 GB/s NVLink rack (α 1 µs); the custom all-reduce ramp f 0.54704956, h 72,825.355 B,
    # p 1.4243472 (the sets regenerated under coll30's forms, main da608ff): with p > 1, M/η(M) falls with M below m* = h·(p − 1)^(1/p), so a 1 kB message is priced
    # at m*'s time, M/B_c(M) = m*/(900e9·η(m*)); launch 2.6521961 µs
    f, h, p = 0.54704956, 72_825.355, 1.4243472
    m_star = h * (p - 1) ** (1 / p)
    assert m_star == pytest.approx(39_895, abs=2)  # 39.9 kB
    eta_star = f / (1 + (h / m_star) ** p)
    hand = 2 * 1e-6 + 2 * 71 / 72 * m_star / (900e9 * eta_star) + 2.6521961e-6
    assert hand == pytest.approx(5.1886e-6, abs=0.0001e-6)
    row = _golden("coll_gb200_allreduce_72", 1e3)
    assert row["algorithm"] == "two_shot" and row["time_s"] == pytest.approx(hand, rel=1e-6)
    assert _priced("gb200-nvl72", 72, 1e3) == pytest.approx(hand, rel=1e-6)
