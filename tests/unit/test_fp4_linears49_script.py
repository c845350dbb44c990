"""scripts/fp4_linears49.py ``tables``: per-layer sums of the non-expert linears by checkpoint, on a synthetic
aiconfigurator checkout (latencies in ms, worked by hand; no package data, no validate run)."""

from __future__ import annotations

import numpy as np
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


def _release_checkout(tmp_path, old_ms: float, new_ms: float):
    """A checkout with B200's 1.2.0rc5 and 1.3.0rc20 tables: every fp8_block linear at m = 1 takes ``old_ms`` /
    ``new_ms``."""
    for ver, v in (("1.2.0rc5", old_ms), ("1.3.0rc20", new_ms)):
        d = tmp_path.joinpath(
            "aic-core", "src", "aiconfigurator_core", "systems", "data", "b200_sxm", "gemm", "trtllm", ver
        )
        d.mkdir(parents=True, exist_ok=True)
        rows = [{"m": 1, "n": n, "k": k, "gemm_dtype": "fp8_block", "latency": v} for _, n, k in f.LINEARS]
        pd.DataFrame(rows).to_parquet(d / "gemm_perf.parquet")
    return tmp_path


def test_release_sizes_by_hand(tmp_path):
    t = f.release_sizes(str(_release_checkout(tmp_path, 0.020, 0.010)), systems=("b200",), tokens=(1,))
    r = t.iloc[0]
    # five linears at 20 µs (1.2.0rc5) and 10 µs (1.3.0rc20): 100 / 50 µs a layer, ratio 2
    assert r["1.2.0rc5"] == pytest.approx(100.0) and r["1.3.0rc20"] == pytest.approx(50.0)
    assert r["ratio"] == pytest.approx(2.0)
    # table difference: 3 attention linears x 10 µs x 61 layers + 2 shared-expert linears x 10 µs x 58 = 1.83 + 1.16 ms
    assert r["table diff ms"] == pytest.approx(2.99)
    # the ratio rule: the model's own layer time x (2 - 1) over 61 layers
    assert r["rule ms"] == pytest.approx(r["model"] * 61 / 1e3)
    assert 5.0 < r["model"] < 100.0  # five small-M GEMMs of a few µs each


def test_rel12_ratio_interpolates_in_log_m():
    # m = 12 sits log2(12) - 3 = 0.585 of the way from m = 8 (1.59) to m = 16 (1.50): 1.59 - 0.585 x 0.09 = 1.537
    assert f.rel12_ratio(np.array([12.0]))[0] == pytest.approx(1.5374, abs=1e-3)
    # below one row: the m = 1 ratio; above m = 128: no change (decode only)
    assert f.rel12_ratio(np.array([0.0, 129.0])).tolist() == pytest.approx([1.67, 1.0])


def test_rel12_scales_only_fp8_block_gemms():
    from jalapeno.cost.roofline import OpTimes
    from jalapeno.fit.kernels import gemm_table

    def orig(table, *a, **k):  # every op: compute 1, memory 2, overhead 1 (µs) -> 3 µs
        shape = table.rows.shape
        return OpTimes.combine(np.full(shape, 1e-6), np.full(shape, 2e-6), np.full(shape, 1e-6))

    timed = f._rel12_op_times(orig)
    m = np.array([1.0, 256.0])
    blk = timed(gemm_table(m, np.array([2048, 2048]), np.array([7168, 7168]), "fp8", 1.0, 1.0, key="fp8_block"))
    # m = 1: (max(1.67, 3.34) + 1.67) µs = 3 x 1.67 = 5.01 µs; m = 256: unchanged, 3 µs
    assert blk.time_s[0].tolist() == pytest.approx([5.01e-6, 3e-6])
    bf = timed(gemm_table(m, np.array([2048, 2048]), np.array([7168, 7168]), "bf16", 2.0, 2.0))
    assert bf.time_s[0].tolist() == pytest.approx([3e-6, 3e-6])
