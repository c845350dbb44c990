"""The GEMM fit's compute anchor (fit/kernels.compute_anchor): the compute asymptote eta_f is the one
the large GEMMs reach, not a compromise with the mid-size shapes.

Synthetic tables timed by the roofline form itself (fit/kernels.gemm_model_s) with known parameters:
large shapes (m, n, k >= 4096) at eta 0.70, the others at eta 0.55 (the shape dependence in n and k
the m-only ramp does not carry: aiconfigurator-core 0.12.0's H200 per-tensor FP8 table runs its
m = 8,192 Llama projections at 1,240-1,410 TFLOP/s, 0.63-0.71 of 1,979, where the every-row fit gave
0.555). Expected values are the generating parameters, not the fit's output.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jalapeno.specs.catalog import load_system

ETA_BIG, ETA_REST, HALF, ETA_M, FLOOR = 0.70, 0.55, 40.0, 0.8, 5e-6


def _table(system, m, n, k):
    from jalapeno.fit.kernels import compute_anchor, gemm_model_s, gemm_table

    big = compute_anchor(m, n, k)
    t = np.where(big, gemm_model_s(system, gemm_table(m, n, k, "fp8", 1.0, 1.0, "fp8"), "fp8", ETA_BIG, HALF, ETA_M, FLOOR),
                 gemm_model_s(system, gemm_table(m, n, k, "fp8", 1.0, 1.0, "fp8"), "fp8", ETA_REST, HALF, ETA_M, FLOOR))
    return pd.DataFrame({"gemm_dtype": "fp8", "m": m, "n": n, "k": k, "latency": t * 1e3})


def _grid():
    m = np.tile([8.0, 16, 64, 256, 1024, 4096, 8192], 6)
    n = np.repeat([1024.0, 2048, 4096, 8192, 10240, 28672], 7)
    return m, n, np.full_like(m, 8192.0)


def test_the_compute_asymptote_is_the_large_gemms_one():
    pytest.importorskip("scipy")
    from jalapeno.fit.kernels import fit_gemm

    system = load_system("h200")
    params, report = fit_gemm(_table(system, *_grid()), system)
    g = params["gemm"]["fp8"]
    assert g["peak_fraction"] == pytest.approx(ETA_BIG, rel=0.02)
    assert g["hbm_fraction"] == pytest.approx(ETA_M, rel=0.02)  # the memory anchor is untouched
    # 2 m values (4096, 8192) x 4 n values (4096 ... 28672) at k = 8192
    assert report["formats"]["fp8"]["compute_anchor_rows"] == 8


def test_without_the_anchor_the_mid_size_shapes_pull_the_asymptote_down(monkeypatch):
    """The every-row fit alone (anchor switched off) lands between the two efficiencies: the case
    the anchor exists for (so the test above can fail)."""
    pytest.importorskip("scipy")
    from jalapeno.fit import kernels

    system = load_system("h200")
    monkeypatch.setattr(kernels, "COMPUTE_ANCHOR_MIN_ROWS", 10**9)
    params, _ = kernels.fit_gemm(_table(system, *_grid()), system)
    assert params["gemm"]["fp8"]["peak_fraction"] < ETA_BIG * 0.95


def test_a_table_without_large_shapes_keeps_the_every_row_fit():
    """Fewer than COMPUTE_ANCHOR_MIN_ROWS anchor rows: eta_f is the every-row fit's (here the one
    efficiency the table was timed at)."""
    pytest.importorskip("scipy")
    from jalapeno.fit.kernels import fit_gemm

    system = load_system("h200")
    m, n, k = _grid()
    small = n < 4096  # n of 1024 and 2048: no anchor row
    params, report = fit_gemm(_table(system, m[small], n[small], k[small]), system)
    assert report["formats"]["fp8"]["compute_anchor_rows"] == 0
    assert params["gemm"]["fp8"]["peak_fraction"] == pytest.approx(ETA_REST, rel=0.02)


def test_the_block_scaled_fp8_entry_keeps_the_every_row_fit():
    """``fp8_block`` is not in COMPUTE_ANCHOR_KEYS (docs/model.md §11.1): the same two-efficiency table
    timed as block-scaled FP8 fits below the large rows' efficiency, as the every-row fit does."""
    pytest.importorskip("scipy")
    from jalapeno.fit.kernels import COMPUTE_ANCHOR_KEYS, fit_gemm

    assert "fp8_block" not in COMPUTE_ANCHOR_KEYS and "fp8" in COMPUTE_ANCHOR_KEYS
    system = load_system("h200")
    params, _ = fit_gemm(_table(system, *_grid()).assign(gemm_dtype="fp8_block"), system)
    assert params["gemm"]["fp8_block"]["peak_fraction"] < ETA_BIG * 0.95
