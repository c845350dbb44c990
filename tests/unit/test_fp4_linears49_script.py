"""scripts/fp4_linears49.py ``tables``: per-layer sums of the non-expert linears by checkpoint, on a synthetic
aiconfigurator checkout (latencies in ms, worked by hand; no package data, no validate run)."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

f = load_script("fp4_linears49")


def _checkout(tmp_path, scale: float):
    """A checkout holding every table :data:`TABLES` names; each (n, k, dtype) row at m = 1 takes ``lat`` ms."""
    lat = {"bfloat16": 0.005, "fp8_block": 0.010, "nvfp4": 0.008}
    rows = [
        {"m": 1, "n": n, "k": k, "gemm_dtype": d, "latency": v * scale} for _, n, k in f.LINEARS for d, v in lat.items()
    ]
    rows.append({"m": 1, "n": 2048, "k": 7168, "gemm_dtype": "fp8_block", "latency": 0.001})  # a faster duplicate
    for sysdir, ver in f.TABLES:
        d = tmp_path.joinpath(
            "aic-core", "src", "aiconfigurator_core", "systems", "data", sysdir, "gemm", "trtllm", ver
        )
        d.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_parquet(d / "gemm_perf.parquet")
    return tmp_path


def test_per_layer_sums_by_checkpoint(tmp_path):
    t = f.linear_table(str(_checkout(tmp_path, 1.0)), tokens=(1,))
    assert len(t) == len(f.TABLES)
    r = t.iloc[0]
    # FP8 checkpoint: five fp8_block linears, 10 µs each, but the fused-A shape's fastest row is 1 µs: 4·10 + 1 = 41 µs
    assert r["fp8 layer"] == pytest.approx(41.0)
    # NVFP4 -v2 checkpoint: fused-A and q_b BF16 at 5 µs; o_proj and the two shared-expert linears NVFP4 at 8 µs: 34 µs
    assert r["fp4 layer"] == pytest.approx(34.0)
    assert r["fp8 - fp4"] == pytest.approx(7.0)
    assert r["fp4:o_proj"] == pytest.approx(8.0) and r["fp8:fused_a"] == pytest.approx(1.0)


def test_checkpoints_name_every_linear():
    names = {n for n, _, _ in f.LINEARS}
    assert set(f.CHECKPOINTS["fp8"]) == set(f.CHECKPOINTS["fp4"]) == names
    assert f.SETTINGS[0] == "shipped"
