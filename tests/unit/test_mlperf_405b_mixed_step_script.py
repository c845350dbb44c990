"""scripts/mlperf_405b_mixed_step.py: the all-reduce floors and the GEMM look-up, by hand.

NVLink 5 is 900 GB/s per direction (data/systems/gb200-nvl72.toml). A 1,024-token step's TP all-reduce carries
1,024 x 16,384 x 2 B = 33,554,432 B per rank: NVLS floor 33,554,432 / 900e9 = 37.28 us; ring floor at TP4
2·3/4 · 37.28 = 55.92 us. Both all-reduces of 126 layers at the NVLS floor: 252 x 37.28 us = 9.395 ms.
"""

from __future__ import annotations

import pytest
from script_module import load_script

ms = load_script("mlperf_405b_mixed_step")

MSG = 1024 * 16384 * 2


def test_floors_by_hand():
    assert MSG == 33_554_432
    assert ms.nvls_floor_s(MSG) == pytest.approx(37.28e-6, rel=1e-3)
    assert ms.ring_floor_s(MSG, 4) == pytest.approx(55.92e-6, rel=1e-3)
    assert ms.ring_floor_s(MSG, 2) == pytest.approx(ms.nvls_floor_s(MSG))  # 2·1/2 = 1


def test_floor_step_adds_both_all_reduces_of_every_layer():
    # 56.3 ms of GEMMs and 14.1 ms of everything else plus 252 x 37.28 us = 79.8 ms
    assert ms.floor_step_s(0.0563, 0.0141, 1024) == pytest.approx(0.0563 + 0.0141 + 252 * 37.28e-6, rel=1e-4)
    assert ms.floor_step_s(0.0563, 0.0141, 1024) == pytest.approx(0.0798, abs=1e-4)


def test_gemm_lookup_at_a_measured_shape():
    pytest.importorskip("aiconfigurator_core")
    # aiconfigurator-core 0.12.0 gb200 gemm trtllm 1.3.0rc20 gemm_perf.parquet, nvfp4 m 1024, n 16384, k 16384:
    # 0.149712 ms (2 x 1024 x 16384^2 = 549.8 GFLOP: 3.67 PF/s, 37% of the 10 PF dense FP4 peak)
    t, used = ms.gemm_measured_s(16384, 16384)
    assert used == (16384, 16384)
    assert t == pytest.approx(0.149712e-3, rel=1e-4)
    # twice the n at the same k: scaled by n·k from the nearest measured shape
    t2, _ = ms.gemm_measured_s(32768, 16384)
    assert t2 > 0
