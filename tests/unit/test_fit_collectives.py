"""Link-efficiency ramps of collectives: the functional form, the shipped data, the fit and its
held-out check against published nccl-tests figures (expected values are the published ones)."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.collectives import collective_time, size_efficiency
from jalapeno.fit.collectives import load_nccl_tests, node_system
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY


def test_size_efficiency_half_point_and_plateau():
    # eta(h) = f / 2 by definition; eta(100 h) = f / (1 + 0.01^0.5) = f / 1.1
    assert size_efficiency(np.array([4e6]), 0.8, 4e6, 0.5)[0] == pytest.approx(0.4)
    assert size_efficiency(np.array([4e8]), 0.8, 4e6, 0.5)[0] == pytest.approx(0.8 / 1.1)
    assert size_efficiency(np.array([10.0]), 0.8, 0.0, 0.5)[0] == 0.8  # no ramp


def test_shipped_points_have_sources_and_both_splits():
    df = load_nccl_tests()
    assert df.source.str.len().min() > 20
    assert set(df.role) == {"fit", "check"}
    assert (df.time_s > 0).all() and (df.busbw > 0).all()
    # a published point is never in the fit split
    assert not df[(df.role == "fit")].id.str.contains("nccl2|nccl3|alaya|mooncake|sglang").any()


def _busbw(kind, g, m, link, nvls):
    t = collective_time(kind, g, np.array([float(m)]), node_system(link, nvls, g), DEFAULT_EFFICIENCY,
                        algorithms=("in_switch",) if nvls else ("ring", "direct")).time_s[0]
    return m * (2 if kind == "all_reduce" else 1) * (g - 1) / g / t


def test_h100_plateaus_match_nccl_tests():
    """NVIDIA/nccl-tests #212: ~370 GB/s busbw ring / all-gather, ~480 GB/s NVLS all-reduce on
    8x H100 at 1-8 GB (450 GB/s per direction). Held out from the fit."""
    assert _busbw("all_gather", 8, 4 * 2**30, 450e9, False) == pytest.approx(370e9, rel=0.10)
    assert _busbw("all_reduce", 8, 4 * 2**30, 450e9, True) == pytest.approx(480e9, rel=0.10)


def test_a100_and_h800_plateaus():
    """A100 NVLink 3 (300 GB/s per direction): 230-250 GB/s busbw (Alaya NeW blog); H800 NVLS
    (200 GB/s per direction): 215 GB/s (NVIDIA/nccl #1374)."""
    assert _busbw("all_reduce", 8, 8 * 2**30, 300e9, False) == pytest.approx(240e9, rel=0.10)
    assert _busbw("all_reduce", 8, 8 * 2**30, 200e9, True) == pytest.approx(215e9, rel=0.10)


def test_small_messages_cost_more_than_the_plateau_rate():
    """A 1 MiB ring all-gather moves its bytes at well under the plateau rate (nccl-tests curves:
    ~60 GB/s busbw at 1 MiB on H100, aiconfigurator NCCL table), not at 0.79 x 450."""
    assert _busbw("all_gather", 8, 2**20, 450e9, False) < 0.5 * 0.79 * 450e9


def test_fit_reproduces_the_shipped_defaults():
    pytest.importorskip("scipy")
    from jalapeno.fit.collectives import fit_custom_allreduce, fit_link_efficiency

    p, rep = fit_link_efficiency()
    c, _ = fit_custom_allreduce()
    e = DEFAULT_EFFICIENCY
    for k, v in {**p, **c}.items():
        assert getattr(e, k) == pytest.approx(v, rel=0.03), k
    assert rep["median_ape"] < 0.05
