"""scripts/trt_eager_context_floor.py: the launch scripts' piecewise-CUDA-graph cells and the floor arithmetic."""

from __future__ import annotations

import numpy as np
from script_module import load_script

ef = load_script("trt_eager_context_floor")


def test_piecewise_cells_as_the_scripts_write_them():
    # dsr1_fp4_b200_trt.sh @6eecc0e66: only 1k/1k with TP 8 and EP_SIZE 8, at any CONC (attention DP included)
    assert ef.piecewise_on("fp4", "1.2.0rc6.post2", False, 1024, 1024, 4, 8, 8, False)
    assert ef.piecewise_on("fp4", "1.2.0rc6.post2", False, 1024, 1024, 256, 8, 8, True)
    assert not ef.piecewise_on("fp4", "1.2.0rc6.post2", False, 1024, 1024, 64, 8, 1, False)  # EP 1
    assert not ef.piecewise_on("fp4", "1.2.0rc6.post2", False, 1024, 1024, 64, 4, 4, False)  # TP 4
    assert not ef.piecewise_on("fp4", "1.2.0rc6.post2", False, 8192, 1024, 64, 8, 8, False)
    # dsr1_fp8_b200_trt.sh @ec7bafaae: 1k/1k from CONC 64; 1k/8k at 128 only (256 switches to DeepGEMM); 8k/1k from 64
    assert [ef.piecewise_on("fp8", "1.2.0rc6.post2", False, 1024, 1024, c, 8, 1, False) for c in (32, 64)] == [False, True]
    assert [ef.piecewise_on("fp8", "1.2.0rc6.post2", False, 1024, 8192, c, 8, 1, False)
            for c in (64, 128, 256)] == [False, True, False]
    assert [ef.piecewise_on("fp8", "1.2.0rc6.post2", False, 8192, 1024, c, 8, 1, False) for c in (32, 64)] == [False, True]
    # dsr1_fp8_b200_trt_mtp.sh @5d517074c: on unless attention DP, off at 1k/1k C <= 4, 1k/8k C <= 8, 8k/1k C <= 16
    mtp8 = [ef.piecewise_on("fp8", "1.2.0rc6.post3", True, 1024, 1024, c, 8, 1, False) for c in (4, 8)]
    assert mtp8 == [False, True]
    assert [ef.piecewise_on("fp8", "1.2.0rc6.post3", True, 1024, 8192, c, 8, 1, False) for c in (8, 16)] == [False, True]
    assert [ef.piecewise_on("fp8", "1.2.0rc6.post3", True, 8192, 1024, c, 8, 1, False) for c in (16, 32)] == [False, True]
    assert not ef.piecewise_on("fp8", "1.2.0rc6.post3", True, 1024, 1024, 64, 8, 8, True)
    # dsr1_fp4_b200_trt_mtp.sh @0aae52d4c: 1k/1k at CONC 32 and 64, 128 without DP; 1k/8k at 64
    got = [ef.piecewise_on("fp4", "1.2.0rc6.post3", True, 1024, 1024, c, 8, 1, False) for c in (16, 32, 64, 128)]
    assert got == [False, True, True, True]
    assert not ef.piecewise_on("fp4", "1.2.0rc6.post3", True, 1024, 1024, 128, 8, 8, True)
    assert [ef.piecewise_on("fp4", "1.2.0rc6.post3", True, 1024, 8192, c, 8, 1, False) for c in (32, 64)] == [False, True]
    # scripts before ec7bafaae set none
    assert not ef.piecewise_on("fp8", "1.1.0rc2.post2", True, 1024, 1024, 64, 8, 8, False)


def test_implied_step_and_floor_by_hand():
    # B200 DeepSeek-R1 FP4 TP8, 1k/1k, C = 4 (1.2.0rc6.post2): measured 0.1587 s, load 0.7 ms, burst 3.1 ms; a front
    # end of 20 ms + 2.5 µs x 922 tokens = 22.3 ms leaves 0.1587 - 0.0007 - 0.0031 - 0.0223 = 0.1326 s
    got = ef.implied_step_s(0.1587, 0.0007, 0.0031, 0.02 + 2.5e-6 * 922)
    assert abs(float(got) - 0.1326) < 1e-4
    # the floor lifts an eager 1k step (31 ms) to H and leaves an 8k step longer than H, and any graphed step, alone
    out = ef.floored(np.array([0.031, 0.150, 0.031]), 0.145, np.array([True, True, False]))
    assert out.tolist() == [0.145, 0.150, 0.031]
