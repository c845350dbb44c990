"""scripts/trt_tp_rms_fusion45.py: the op-term split and the release-pair interpolation against values worked by hand
(no serving, no aiconfigurator tables)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import trt_tp_rms_fusion45 as f  # noqa: E402


def test_op_terms_split_launch_from_work():
    # two attention ops (5 + 3 s, 1 s launch each), the experts (10 s, 2 s launch), the norms (4 s, all launch: 2
    # kernels x 2 s) and a GEMM (6 s, 1 s launch): launch 1 + 1 + 2 + 4 + 1 = 9; attention 4 + 2 = 6; experts 8;
    # norms 0; other GEMMs 5; the terms add back to the 28 s of the ops
    ops = pd.DataFrame(
        {
            "op": ["attn.q_b_proj", "attn.mla_decode", "moe.experts", "layer.elementwise", "lm_head"],
            "time_s": [5.0, 3.0, 10.0, 4.0, 6.0],
            "overhead_s": [1.0, 1.0, 2.0, 4.0, 1.0],
        }
    )
    t = f.op_terms(ops)
    assert t == {"launch": 9.0, "attn": 6.0, "experts": 8.0, "elem": 0.0, "gemm": 5.0}
    assert sum(t.values()) == pytest.approx(28.0)


def test_release_ratio_log_batch_interpolation():
    # the later release timed at batches 4 and 16 (8 and 12 ms): at batch 8, halfway in log batch, 10 ms; over the
    # earlier release's 12.5 ms at batch 8 -> 0.8. Batch 2 and 32 lie outside 4..16 -> NaN
    early = pd.DataFrame({"batch": [8.0, 2.0, 32.0], "measured": [12.5, 9.0, 20.0]})
    late = pd.DataFrame({"batch": [16.0, 4.0], "measured": [12.0, 8.0]})
    r = f.release_ratio(early, late, "measured")
    assert r[0] == pytest.approx(10.0 / 12.5)
    assert math.isnan(r[1]) and math.isnan(r[2])


def test_release_pairs_needs_two_later_rows():
    rows = [
        {
            "system": "s",
            "model": "m",
            "fmt": "fp4",
            "isl_osl": "disagg 1x1",
            "tp": 8,
            "mtp": 0,
            "release": rel,
            "batch": b,
            "measured": t,
            "model_ms": t,
        }
        for rel, b, t in [("1.1.0", 8.0, 10.0), ("1.2.0", 4.0, 8.0), ("1.2.0", 16.0, 8.0), ("1.3.0", 8.0, 5.0)]
    ]
    p = f.release_pairs(pd.DataFrame(rows))
    # 1.2.0 (two rows, flat 8 ms) against 1.1.0's 10 ms -> 0.8; 1.3.0 has one row -> no pair
    assert p.late.tolist() == ["1.2.0"]
    assert p["measured_late/early"].iloc[0] == pytest.approx(0.8)
    assert np.isclose(p["model_late/early"].iloc[0], 0.8)
