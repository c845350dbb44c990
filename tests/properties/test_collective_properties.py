"""Properties of the collective model (cost/collectives.py; round 30, coll30), on every catalog system.

- a group that leaves its switch domain (``spread``) is never priced faster than the same group packed;
- time is non-decreasing in the message size (no message is priced slower than a larger one);
- no collective beats its bytes over the fastest link of the system: every rank moves at least M
  (all-reduce: sent once into a reducing switch at best), (g−1)/g·M (all-gather, reduce-scatter,
  all-to-all) or M (send/recv) over its links.

Expected values computed by hand for the paths the round changed: the NIC tree on the NICs' size ramp
(NCCL derates tree all-reduce bandwidth by message size: treeCorrectionFactor, NVIDIA/nccl
src/graph/tuning.cc @5067397c), and the ramp held flat below its minimum-time size when its shape > 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jalapeno.cost.collectives import COLLECTIVES, collective_time, size_efficiency
from jalapeno.specs.catalog import load_efficiency, load_system

SYSTEMS = ("a100-sxm", "h100", "h200", "h800", "b200", "b300", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72",
           "jalapeno", "mi300x", "mi325x", "mi350x", "mi355x")
PROPS = settings(max_examples=60, deadline=None)
LOWER_BOUND_SHARE = {"all_reduce": lambda g: 1.0, "all_gather": lambda g: (g - 1) / g,
                     "reduce_scatter": lambda g: (g - 1) / g, "all_to_all": lambda g: (g - 1) / g,
                     "send_recv": lambda g: 1.0}


@st.composite
def cases(draw):
    name = draw(st.sampled_from(SYSTEMS))
    system = load_system(name)
    eff = load_efficiency(name, draw(st.sampled_from(("calibrated", "spec"))))
    group = draw(st.one_of(st.sampled_from([2, 4, 8, 16, 64, 72, 128, 256]), st.integers(2, 2048)))
    group = min(group, system.max_chips)
    sizes = np.sort(np.array(draw(st.lists(st.floats(0.0, 4e9), min_size=2, max_size=8))))
    return system, eff, draw(st.sampled_from(COLLECTIVES)), group, sizes


@PROPS
@given(cases())
def test_spread_is_never_faster_than_packed(case):
    system, eff, kind, g, m = case
    packed = collective_time(kind, g, m, system, eff).time_s
    spread = collective_time(kind, g, m, system, eff, placement="spread").time_s
    assert np.all(spread >= packed * (1 - 1e-12)), (system.name, kind, g)


@PROPS
@given(cases(), st.sampled_from(("packed", "spread")))
def test_time_non_decreasing_in_size(case, placement):
    system, eff, kind, g, m = case
    t = collective_time(kind, g, m, system, eff, placement=placement).time_s
    assert np.all(np.diff(t) >= -1e-15), (system.name, kind, g, placement)


@PROPS
@given(cases(), st.sampled_from(("packed", "spread")))
def test_bandwidth_within_the_fastest_link(case, placement):
    system, eff, kind, g, m = case
    t = collective_time(kind, g, m, system, eff, placement=placement).time_s
    fastest = max(lv.bandwidth_bytes_per_s for lv in system.levels)
    assert np.all(LOWER_BOUND_SHARE[kind](g) * m <= fastest * t * (1 + 1e-12)), (system.name, kind, g)


def _eta(m, f, h, p):
    return f / (1 + (h / m) ** p)


def test_h100_spread_all_reduce_takes_the_tree_on_the_nic_ramp():
    # 64 GPUs, one per node: the NIC level (50 GB/s, α 5 µs), spec set's NIC ramp 0.8/(1 + (10.2 MB/M)^0.71)
    eta = _eta(1e6, 0.8, 10.2e6, 0.71)
    assert eta == pytest.approx(0.1290, abs=1e-4)
    tree = 2 * 6 * 5e-6 + 2 * 1e6 / (50e9 * eta)  # 60 + 310.1 µs
    ring = 2 * 63 * 5e-6 + 2 * 63 / 64 * 1e6 / (50e9 * eta)  # 935 µs
    r = collective_time("all_reduce", 64, [1e6], load_system("h100"), load_efficiency("h100", "spec"),
                        placement="spread")
    assert float(r.time_s[0]) == pytest.approx(min(tree, ring) + 5e-6, rel=1e-9)
    assert float(r.time_s[0]) == pytest.approx(375.1e-6, abs=0.05e-6) and r.algorithm[0] == "tree"


def test_tree_bandwidth_ramps_with_size():
    # at 1 GB the NIC ramp is 0.8/(1 + 0.0102^0.71) = 0.7703; the ring's 2·63/64 of the bytes then beats the
    # tree's 2 (its 126 α are 0.6 ms of 51.7): ring 2·63·5 µs + 2·63/64·1e9/(50e9·0.7703), tree 60 µs + 2e9/(...)
    eta = 0.8 / (1 + (10.2e6 / 1e9) ** 0.71)
    assert eta == pytest.approx(0.7703, abs=1e-4)
    ring = 2 * 63 * 5e-6 + 2 * 63 / 64 * 1e9 / (50e9 * eta)
    tree = 60e-6 + 2e9 / (50e9 * eta)
    assert ring < tree
    r = collective_time("all_reduce", 64, [1e9], load_system("h100"), load_efficiency("h100", "spec"),
                        placement="spread")
    assert float(r.time_s[0]) == pytest.approx(ring + 5e-6, rel=1e-9) and r.algorithm[0] == "ring"


def test_ramp_held_flat_below_its_minimum_time_size():
    # GB300's custom all-reduce ramp: f 0.622, h 19,407 B, p 1.244 → m* = h·(p − 1)^(1/p)
    f, h, p = 0.62211748, 19407.355, 1.2437496
    m_star = h * (p - 1) ** (1 / p)
    assert m_star == pytest.approx(6.24e3, rel=0.01)  # 6.1 KiB
    t = lambda m: m / size_efficiency(np.array([m]), f, h, p)[0]  # noqa: E731  (bytes / fraction)
    assert t(1000.0) == pytest.approx(m_star / _eta(m_star, f, h, p), rel=1e-9)  # held at m*'s time
    assert t(1000.0) < 1000.0 / _eta(1000.0, f, h, p)  # the bare ramp prices 1 kB slower than m*
    assert t(20e3) == pytest.approx(20e3 / _eta(20e3, f, h, p), rel=1e-12)  # unchanged above m*
    assert float(size_efficiency(np.array([4e6]), 0.8, 4e6, 0.5)[0]) == pytest.approx(0.4)  # shape ≤ 1: as before


def test_packed_group_may_route_as_the_spread_one():
    # MI300X TP2 all-to-all of 4 GB: one of the 7 xGMI links (64 GB/s·all_to_all_fraction) is slower than
    # the pair's NICs (50 GB/s·0.8), so the packed pair is priced over the NICs, as the spread one is
    sysm, eff = load_system("mi300x"), load_efficiency("mi300x")
    packed = collective_time("all_to_all", 2, [4e9], sysm, eff)
    spread = collective_time("all_to_all", 2, [4e9], sysm, eff, placement="spread")
    assert float(packed.time_s[0]) == pytest.approx(float(spread.time_s[0]), rel=1e-12)
    assert str(packed.algorithm[0]).startswith("spread_") and packed.level == "node"
    assert not math.isnan(float(packed.time_s[0]))


def test_jalapeno_spread_torus_ring_and_send_recv_by_hand():
    # 32 chips, one per 8-chip tray: the (8, 16, 16) torus (200 GB/s, α 1.5 µs per hop), flat; the group's
    # sub-torus (8, 4, 1): ring steps 7 + 3 = 10, diameter 4 + 2 = 6. Spec set: ring ramp 0.79/(1 + (10.2 MB/M)^0.71).
    sysm, eff = load_system("jalapeno"), load_efficiency("jalapeno", "spec")
    eta = _eta(4e6, 0.79, 10.2e6, 0.71)
    assert eta == pytest.approx(0.2683, abs=1e-4)
    ring = 2 * 10 * 1.5e-6 + 2 * 31 / 32 * 4e6 / (200e9 * eta) + 5e-6  # 30 + 144.4 + 5 µs
    r = collective_time("all_reduce", 32, [4e6], sysm, eff, placement="spread")
    assert float(r.time_s[0]) == pytest.approx(ring, rel=1e-9) and r.algorithm[0] == "torus_ring"
    assert ring == pytest.approx(179.4e-6, abs=0.1e-6)
    p2p = 6 * 1.5e-6 + 1e3 / (200e9 * 0.8) + 5e-6  # the peer up to the diameter away, as the hierarchical α_o
    s = collective_time("send_recv", 32, [1e3], sysm, eff, placement="spread")
    assert float(s.time_s[0]) == pytest.approx(p2p, rel=1e-9)
    packed = collective_time("send_recv", 32, [1e3], sysm, eff)  # inside the 128-chip rack: α 2 µs
    assert float(packed.time_s[0]) == pytest.approx(2e-6 + 1e3 / (600e9 * 0.8) + 5e-6, rel=1e-9)
