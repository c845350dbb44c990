"""scripts/gfx942_pair_law40.py: the MI300X / MI325X DeepSeek-R1 pair ran one image, and its measured TPOTs leave no
room for chip-independent decode time (docs/gap_large_batch_decode.md, round 40). Expected values are the published
rows (src/jalapeno/data/validation/inferencex_points.csv) and arithmetic by hand, not the script's output."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from jalapeno.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import gfx942_pair_law40 as s  # noqa: E402


def _published_tpots() -> dict[tuple[str, str, int, str], float]:
    """(hardware, model, isl, framework) -> median TPOT ms of the 2026-02-27 / 03-09 C = 64 best-per-GPU rows."""
    out = {}
    with open(ROOT / "src/jalapeno/data/validation/inferencex_points.csv", newline="") as f:
        for r in csv.DictReader(f):
            if (
                r["hardware"] in ("MI300X", "MI325X")
                and r["conc"] == "64"
                and r["point_type"] == "max_throughput_per_gpu"
            ):
                out[(r["hardware"], r["model"], int(r["isl"]), r["framework"])] = float(r["tpot_ms"])
    return out


def test_pairs_are_the_published_rows():
    pub = _published_tpots()
    (_, _, a325, a300), (_, _, b325, b300), (_, _, c325, c300) = s.PAIRS
    assert (a325, a300) == (
        pub["MI325X", "DeepSeek-R1-0528", 1024, "sglang"],
        pub["MI300X", "DeepSeek-R1-0528", 1024, "sglang"],
    )
    assert (b325, b300) == (
        pub["MI325X", "DeepSeek-R1-0528", 8192, "sglang"],
        pub["MI300X", "DeepSeek-R1-0528", 8192, "sglang"],
    )
    assert (c325, c300) == (pub["MI325X", "gpt-oss-120b", 8192, "vllm"], pub["MI300X", "gpt-oss-120b", 8192, "vllm"])


def test_pair_law_by_hand():
    # (85.3 - 51.3) / (74.8 - 44.7) = 34.0 / 30.1 = 1.12957; 51.3 - 1.12957 x 44.7 = 0.808 ms
    slope, icept = s.pair_law((44.7, 51.3), (74.8, 85.3))
    assert slope == pytest.approx(34.0 / 30.1)
    assert icept == pytest.approx(0.808, abs=0.001)


def test_no_chip_independent_time_fits_the_deepseek_pair():
    r = 6.0 / 5.3
    # 1k/1k: (1.132075 x 44.7 - 51.3) / 0.132075 = (50.6038 - 51.3) / 0.132075 = -5.27 ms
    assert s.fixed_time_allowed(44.7, 51.3) == pytest.approx((r * 44.7 - 51.3) / (r - 1))
    assert s.fixed_time_allowed(44.7, 51.3) == pytest.approx(-5.27, abs=0.01)
    assert s.fixed_time_allowed(74.8, 85.3) < 0
    # a pair exactly at the HBM ratio leaves the whole step HBM-scaled (F = 0); at ratio 1 with F = T, F = T
    assert s.fixed_time_allowed(10.0, 10.0 * r) == pytest.approx(0.0, abs=1e-9)
    assert s.fixed_time_allowed(10.0, 10.0) == pytest.approx(10.0)


def test_clock_share_by_hand():
    # (51.3 - 1.132075 x 44.7) / (1464/1230 - 1.132075) = 0.6962 / 0.058172 = 11.97 ms
    assert s.clock_share_needed(44.7, 51.3) == pytest.approx(11.97, abs=0.01)
    # a pair exactly at the clock ratio: the whole step
    assert s.clock_share_needed(10.0, 10.0 * 1464 / 1230) == pytest.approx(10.0)


def test_bad_input_names_the_field():
    with pytest.raises(SpecError, match="t_a, t_b"):
        s.pair_law((44.7, 51.3), (44.7, 60.0))
    with pytest.raises(SpecError, match="ratio"):
        s.fixed_time_allowed(1.0, 1.1, ratio=1.0)
    with pytest.raises(SpecError, match="clock"):
        s.clock_share_needed(1.0, 1.1, hbm=1.1, clock=1.1)


def test_tp8_shape_untuned_in_every_listed_release():
    # DeepSeek-R1: 256 routed experts + 1 fused shared, top-8 + 1; moe_intermediate 2048 / TP8 = 256
    assert s.DSR1_TP8_SHAPE == (7168, 2048 // 8, 256 + 1, 8 + 1)
    assert all(s.DSR1_TP8_SHAPE not in shapes for shapes in s.AITER_CU304_FMOE.values())
    assert s.AITER_CU304_FMOE["v0.1.20"][(7168, 2048, 33, 9)] == 15  # PR #3951's rows (round 39's fit)


def test_package_moves_step_into_chip_independent_time():
    """The model's decode split: HBM time scales by the bandwidth ratio, the rest does not; the package raises
    the chip-independent share and lowers the pair ratio (the direction round 39 saw on MI300X)."""
    off = {c: s.decode_split(c, 8192, False) for c in ("mi300x", "mi325x")}
    on = {c: s.decode_split(c, 8192, True) for c in ("mi300x", "mi325x")}
    for sp in (off, on):
        assert sp["mi300x"]["hbm_bandwidth"] / sp["mi325x"]["hbm_bandwidth"] == pytest.approx(6.0 / 5.3, rel=0.01)
        assert s.chip_independent_s(sp["mi300x"]) == pytest.approx(s.chip_independent_s(sp["mi325x"]), rel=1e-6)
    share = {k: s.chip_independent_s(v["mi325x"]) / v["mi325x"]["step"] for k, v in (("off", off), ("on", on))}
    assert share["on"] > share["off"]
    ratio = {k: v["mi300x"]["step"] / v["mi325x"]["step"] for k, v in (("off", off), ("on", on))}
    assert ratio["on"] < ratio["off"] < 85.3 / 74.8
