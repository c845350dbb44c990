"""scripts/mi355x_kernel_vintage40.py: the MLPerf MI355X runs' MXFP4 GEMM kernels against aiter's table versions
(docs/gap_large_batch_decode.md, round 40). Expected values are aiter's published rows, the shipped calibration file
and arithmetic by hand, not the script's output."""

from __future__ import annotations

import sys
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import mi355x_kernel_vintage40 as s  # noqa: E402


def _shipped() -> dict:
    return tomllib.loads(files("jalapeno.data").joinpath("calibration/mi355x.toml").read_text())


def test_the_installed_table_fit_is_the_shipped_gemm_fp4():
    # data/calibration/mi355x.toml [parameters.gemm.fp4], fitted on amd-aiter 0.1.7.post2 (v0.1.7.post2 = 169acefff8)
    fp4 = _shipped()["parameters"]["gemm"]["fp4"]
    f = s.VINTAGE_FITS["169acefff8"]
    for k in ("peak_fraction", "half_rows", "hbm_fraction"):
        assert f[k] == pytest.approx(fp4[k], rel=1e-6)


def test_gate_up_rates_by_hand():
    # aiter's tflops column at 2f2fbb2567 (2025-09-08) for 32768 x 57344 x 8192: 4414.11 TFLOP/s at 6974.528 us
    flop = 2 * 32768 * 57344 * 8192
    old, new = (s.LLAMA_ROWS[v][(57344, 8192)][32768] for v in ("2025-08-24", "2025-11-14"))
    assert flop / (old * 1e-6) / 1e12 == pytest.approx(4414.11, rel=1e-4)
    assert flop / (new * 1e-6) / 1e12 == pytest.approx(5013.0, rel=1e-3)
    assert s.shape_ratios()[(57344, 8192)][32768] == pytest.approx(6974.528 / 6141.7014)
    # the decode batch's own gate-up row is the same kernel time in both versions
    assert s.shape_ratios()[(57344, 8192)][3072] == 1.0


def test_rows_interpolate_and_extend_by_hand():
    assert s.rows_s("2025-08-24", 57344, 8192, 3072) == pytest.approx(735.2449e-6)
    assert s.rows_s("2025-08-24", 10240, 8192, 3072) == pytest.approx((91.1052 + 151.2279) / 2 * 1e-6)
    # past the largest row: that row's rate, time proportional to M
    assert s.rows_s("2025-11-14", 8192, 28672, 40960) == pytest.approx(2662.8512e-6 * 40960 / 32768)


def test_the_vintage_set_changes_gemm_fp4_only():
    new = tomllib.loads(s.vintage_set_text())
    old = _shipped()
    f = s.VINTAGE_FITS["bee6843de5"]
    assert new["parameters"]["gemm"]["fp4"] == {k: f[k] for k in ("peak_fraction", "half_rows", "hbm_fraction")}
    del new["parameters"]["gemm"]["fp4"], old["parameters"]["gemm"]["fp4"]
    assert new == old


def test_littles_law_by_hand():
    got = s.littles_law()
    # row 31: 3,024.4 tok/s/GPU x 12 GPUs, half of it output (1k/1k), x 63.3 ms mean TPOT
    assert got["row 31 (1k/1k)"]["running"] == pytest.approx(3024.4 * 12 * 1024 / 2048 * 0.0633)
    assert got["row 24 (8k/1k)"]["running"] == pytest.approx(4222.8 * 24 * 1024 / 9216 * 0.1081)
    assert all(v["running"] < v["cap"] == 1280 for v in got.values())


def test_per_request_measured_is_the_runs_rate():
    pr = s.per_request()
    assert pr["measured_s"] == pytest.approx(8 / 333.216)
    # the decode step's GEMMs from the 2025-08-24 rows by hand at 3,072 (x 80 layers)
    dec = pr["steps"][0]["2025-08-24"]
    by_hand = ((91.1052 + 151.2279) / 2 + (60.453 + 114.6354) / 2 + 735.2449 + (172.7778 + 336.8039) / 2) * 80e-6
    assert dec == pytest.approx(by_hand)
