"""scripts/mlperf_step_line44.py: the line through two runs and where the fused GEMM + all-reduce credit sits, by hand."""

from __future__ import annotations

import math

import pytest
from script_module import load_script

msl = load_script("mlperf_step_line44")


def test_line_by_hand():
    # H200 Nebius Llama-2-70B as measured (round 43 table): (106.9, 37.0 ms) and (783.5, 184.2 ms)
    a, s = msl.line((106.9, 783.5), (37.0, 184.2))
    assert s == pytest.approx((184.2 - 37.0) / (783.5 - 106.9), rel=1e-12)
    assert a == pytest.approx(37.0 - s * 106.9, rel=1e-12)
    assert 13.5 < a < 14.1 and 0.215 < s < 0.220


def test_credit_only_on_chunk_steps():
    rows = msl.credit_rows()
    assert {r["row"].rsplit("_", 1)[1] for r in rows} == {"Interactive", "Server"}
    for r in rows:
        # a decode-only step has one row of 256-row tiles: 64 tiles of the 16,384-wide output on B200's 74 SM pairs
        # (TensorRT-LLM allreduce_gemm_impl_sm100.h 256 x 256 per pair; H200: 128 tiles of 128 x 128 on 132 SMs):
        # one wave, nothing hidden
        assert r["w"][0] == 1.0
        assert r["dec"][0] == pytest.approx(r["dec"][1], rel=1e-12)
        # the chunk step hides part of its all-reduces: fused is faster
        assert r["chk"][1] < r["chk"][0]
        assert r["credit_s"] == pytest.approx(
            (1 - r["f"]) * (r["dec"][0] - r["dec"][1]) + r["f"] * (r["chk"][0] - r["chk"][1]), rel=1e-12
        )
    b200 = next(r for r in rows if r["row"] == "NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Server")
    # 2,048 prompt tokens + 62.9 decoding rows: ceil(2110.9 / 256) = 9 row tiles x 64 = 576 tiles / 74 pairs -> 8 waves
    assert math.ceil((b200["running"] + 2048) / 256) == 9
    assert b200["w"][1] == math.ceil(9 * 64 / 74) == 8
