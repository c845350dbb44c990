"""DeepEP dispatch / combine (cost/deepep.py): bytes by hand, time by hand, the published figures."""

import pytest

from jalapeno.cost.deepep import DEEPEP_NVLINK_FRACTION, deepep_call, row_bytes
from jalapeno.cost.pricer import load_pricer
from jalapeno.errors import SpecError, UnknownNameError


@pytest.fixture(scope="module")
def h100():
    p = load_pricer("h100")
    return p.system, p.efficiency


def test_row_bytes_fp8_scales_and_bf16():
    assert row_bytes(7168, "dispatch") == 7168 + 7168 / 128 * 4  # FP8 + one fp32 scale per 128 values
    assert row_bytes(7168, "dispatch", fp8_dispatch=False) == 7168 * 2
    assert row_bytes(7168, "combine") == 7168 * 2


def test_low_latency_ep16_bytes_and_time(h100):
    sy, ef = h100
    r = deepep_call("low_latency", "dispatch", 16, 128, 7168, 8, sy, ef)
    copies = 128 * 8 * 7392.0  # 7,569,408 B: k copies of every row
    assert r.nic_bytes == pytest.approx(copies / 2)  # 8 of 16 ranks are on the other node
    assert r.nvlink_bytes == pytest.approx(copies * 7 / 16)
    # H100 catalog: 50 GB/s NIC (CX7 400 Gb/s), 5 us scale-out latency
    want = 5e-6 + ef.collective_launch_s + copies / 2 / (50e9 * ef.scale_out_link_fraction)
    assert r.time_s == pytest.approx(want, rel=1e-9)
    assert r.bound == "nic"


def test_normal_ep16_one_copy_per_node(h100):
    sy, ef = h100
    r = deepep_call("normal", "combine", 16, 4096, 7168, 8, sy, ef)
    row = 4096 * 14336.0
    assert r.nic_bytes == pytest.approx(row * (1 - 0.5 ** 8))  # the other node is hit unless all 8 stay home
    ranks = 16 * (1 - (15 / 16) ** 8)
    assert r.nvlink_bytes == pytest.approx(row * ranks * 7 / 8)
    t_nvl = row * ranks * 7 / 8 / (450e9 * DEEPEP_NVLINK_FRACTION)
    t_nic = row * (1 - 0.5 ** 8) / (50e9 * ef.scale_out_link_fraction)
    assert r.time_s == pytest.approx(5e-6 + ef.collective_launch_s + max(t_nvl, t_nic), rel=1e-9)


def test_normal_node_limited_routing_caps_at_four_nodes(h100):
    sy, ef = h100
    r = deepep_call("normal", "dispatch", 64, 100, 7168, 8, sy, ef)
    # 8 nodes; uncapped 8·(1 − (7/8)^8) = 5.25 nodes per token, capped at 4: 4·7/8 of them remote
    assert r.nic_bytes == pytest.approx(100 * 7392.0 * 4 * 7 / 8)
    free = deepep_call("normal", "dispatch", 64, 100, 7168, 8, sy, ef, max_nodes=None)
    assert free.nic_bytes == pytest.approx(100 * 7392.0 * 7 * (1 - (7 / 8) ** 8))


def test_intranode_sends_nothing_over_the_nic(h100):
    sy, ef = h100
    r = deepep_call("normal", "dispatch", 8, 4096, 7168, 8, sy, ef)
    assert r.nic_bytes == 0 and r.bound == "nvlink"


def test_published_low_latency_figures_held_out(h100):
    """DeepEP docs/legacy.md (H800, CX7): EP64 dispatch 173 us, EP128 combine 369 us; never fitted."""
    sy, ef = h100
    for ep, kind, pub in ((64, "dispatch", 173e-6), (128, "combine", 369e-6)):
        t = deepep_call("low_latency", kind, ep, 128, 7168, 8, sy, ef, nvlink_bytes_per_s=160e9).time_s
        assert abs(t / pub - 1) < 0.10


def test_bad_inputs_named(h100):
    sy, ef = h100
    with pytest.raises(UnknownNameError, match="unknown DeepEP mode 'fast'"):
        deepep_call("fast", "dispatch", 16, 1, 7168, 8, sy, ef)
    with pytest.raises(UnknownNameError, match="unknown DeepEP call"):
        deepep_call("normal", "gather", 16, 1, 7168, 8, sy, ef)
    with pytest.raises(SpecError, match="ep >= 2"):
        deepep_call("normal", "dispatch", 1, 1, 7168, 8, sy, ef)
