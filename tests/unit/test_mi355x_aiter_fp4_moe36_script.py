"""scripts/mi355x_aiter_fp4_moe36.py: MI355X's MXFP4 fused MoE against aiter's table (docs/gap_large_batch_decode.md,
round 36). Expected values are aiter's published rows and arithmetic by hand, not the script's output."""

from __future__ import annotations

import sys
import tomllib
from importlib.resources import files
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import mi355x_aiter_fp4_moe36 as s  # noqa: E402


def test_the_vendored_rows_are_aiters_mi355x_routed_only_shapes():
    d = pd.read_csv(files("jalapeno") / s.TABLE)
    assert len(d) == 47 and set(d.cu_num) == {256} and set(d.topk) == {8} and set(d.model_dim) == {7168}
    assert set(d.q_type) == {"QuantType.per_1x32"}
    counts = d.groupby(["expert", "inter_dim"]).size().to_dict()
    assert counts == {(32, 2048): 14, (64, 2048): 1, (256, 256): 16, (256, 512): 16}
    # ROCm/aiter dsv3_fp4_tuned_fmoe.csv @e4048607a535, TP8 slice at one token: us1 11.3537 + us2 7.5406 = 18.8943 µs
    one = d[(d.expert == 256) & (d.inter_dim == 256) & (d.token == 1)].iloc[0]
    assert one.us == pytest.approx(18.8943) and one.us1 + one.us2 == pytest.approx(one.us, abs=1e-3)
    big = d[(d.expert == 256) & (d.inter_dim == 256) & (d.token == 16384)].iloc[0]
    assert big.us == pytest.approx(1452.8724)


def test_the_measured_rate_and_the_fallbacks_compute_floor_by_hand():
    d = s.table_rows()
    big = d[(d.expert == 256) & (d.inter_dim == 256) & (d.token == 16384)].iloc[0]
    flop = 2 * 16384 * 8 * 3 * 7168 * 256  # 1.443e12 FLOP a layer
    assert big.flop == pytest.approx(flop)
    assert big.tflop_per_s == pytest.approx(flop / 1452.8724e-6 / 1e12)  # ~993 TFLOP/s
    assert big.peak_share == pytest.approx(flop / 1452.8724e-6 / 10.066e15)  # ~9.9% of the dense MXFP4 peak
    # the dense MXFP4 GEMM fit's peak fraction (data/calibration/mi355x.toml gemm.fp4) alone: 288 µs, 5x under aiter's
    floor = flop / (0.49782366 * 10.066e15)
    assert floor == pytest.approx(288.0e-6, rel=0.01) and big.us * 1e-6 > 2 * floor
    # no row at 4,096 tokens or more reaches 30% of the peak (the fallback assumes 49.8% at large row counts)
    assert d[d.token >= 4096].peak_share.max() < 0.30


def test_the_written_set_reads_back_with_its_moe_fp4_entry(tmp_path):
    from jalapeno.specs.catalog import load_efficiency

    joint = {"floor_s": 3.5e-5, "bf16_hbm": 0.76, "fp8_hbm": 0.68, "eta_m": 0.9, "eta": 0.17, "m_half": 55.0}
    path = s.write_set(str(tmp_path), joint)
    raw = tomllib.loads(path.read_text())["parameters"]
    assert raw["moe"]["fp4"] == {"hbm_fraction": 0.9, "peak_fraction": 0.17, "half_rows": 55.0}
    assert raw["moe_floor_s"] == 3.5e-5 and raw["moe"]["bf16"]["hbm_fraction"] == 0.76
    assert (tmp_path / "b200.toml").is_file()  # every system's set beside it: --efficiency DIR reads one per system
    eff = load_efficiency("mi355x", str(tmp_path))
    assert eff.moe_peak("fp4") == pytest.approx(0.17) and eff.moe_hbm("fp4") == pytest.approx(0.9)


def test_moved_lists_only_the_rows_whose_prediction_changed(tmp_path):
    cols = "id,system,stack,concurrency,isl,metric,split,predicted,error\n"
    (tmp_path / "a.csv").write_text(cols + "r1,mi355x,atom-rocm,4,1024,throughput_per_chip,fit,100.0,0.10\n"
                                    "r2,mi355x,atom-rocm,8,1024,throughput_per_chip,held_out,200.0,-0.05\n")
    (tmp_path / "b.csv").write_text(cols + "r1,mi355x,atom-rocm,4,1024,throughput_per_chip,fit,100.0,0.10\n"
                                    "r2,mi355x,atom-rocm,8,1024,throughput_per_chip,held_out,210.0,-0.0025\n")
    m = s.moved(str(tmp_path / "a.csv"), str(tmp_path / "b.csv"))
    assert list(m.id) == ["r2"]
    assert m.before.iloc[0] == pytest.approx(-5.0) and m.after.iloc[0] == pytest.approx(-0.25)
