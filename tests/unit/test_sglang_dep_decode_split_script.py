"""scripts/sglang_dep_decode_split.py: the line fit, the table interpolation, the CUDA-graph padding and the
SGLang table reads (values by hand)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

sd = load_script("sglang_dep_decode_split")


def test_line_fit_recovers_intercept_and_slope():
    # gap 0.6 ms + 37 us per sequence at 30 / 60 / 120 sequences per rank: 1.71 / 2.82 / 5.04 ms
    a, s = sd.line_fit([30.0, 60.0, 120.0], [0.6 + 0.037 * b for b in (30.0, 60.0, 120.0)])
    assert (a, s) == (pytest.approx(0.6), pytest.approx(0.037))
    assert all(math.isnan(v) for v in sd.line_fit([64.0, 64.0], [1.0, 2.0]))  # one batch: no line


def test_bilinear_between_grid_points_and_nan_outside():
    g = pd.DataFrame([[0.10, 0.12], [0.14, np.nan]], index=[64, 128], columns=[1024, 2048])
    # a quarter of the way in batch, half in context: 0.75 (0.10 + 0.12) / 2 + 0.25 (0.14 + nan) / 2 -> nan
    assert math.isnan(sd.bilinear(g, 80, 1536))
    assert sd.bilinear(g, 64, 1536) == pytest.approx(0.11)  # on the batch 64 row, halfway: (0.10 + 0.12) / 2
    assert sd.bilinear(g, 96, 1024) == pytest.approx(0.12)  # halfway in batch at 1024: (0.10 + 0.14) / 2
    assert math.isnan(sd.bilinear(g, 32, 1024))  # below the grid


def test_padding_to_the_recipe_capture_list():
    # the decode cuda-graph-bs list: 1, 2, 4, then steps of 8 to 384, of 32 to 768, then 1024
    assert [sd.padded(b) for b in (1, 3, 5, 29.7, 384, 385, 769)] == [1, 4, 8, 32, 384, 416, 1024]


def test_interp_tokens_is_linear_in_log_tokens():
    moe = pd.DataFrame({"uniform": [0.08, 0.10]}, index=[1024, 4096])
    assert sd.interp_tokens(moe, 2048, "uniform") == pytest.approx(0.09)  # log2: halfway from 1024 to 4096
    assert math.isnan(sd.interp_tokens(moe, 8192, "uniform"))


def test_reads_sglang_gb200_tables():
    pytest.importorskip("aiconfigurator_core")
    mla, moe = sd.sglang_tables("gb200-nvl72")
    # aiconfigurator-core 0.12.0 gb200 mla/sglang/0.5.10 wideep_generation_mla_perf, 128 heads, batch 128 at 1024
    # tokens: 0.1305 ms; moe/sglang/0.5.10 wideep_generation_moe_perf, EP32 fp8_block, 4096 tokens: uniform
    # 0.0869 ms, power_law_1.01 0.1589 ms (the table's rows, printed by pandas when this test was written)
    assert mla.loc[128, 1024] == pytest.approx(0.1305, abs=1e-4)
    assert moe.loc[4096, "uniform"] == pytest.approx(0.0869, abs=1e-4)
    assert moe.loc[4096, "power_law_1.01"] == pytest.approx(0.1589, abs=1e-4)
