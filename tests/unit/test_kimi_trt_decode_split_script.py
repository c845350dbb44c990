"""scripts/kimi_trt_decode_split.py: the per-layer split of a step's ops and the implied HBM share, by hand."""

from __future__ import annotations

import math

import pytest
from script_module import load_script

split = load_script("kimi_trt_decode_split")


def test_implied_share_by_hand():
    # Kimi K2.5 TEP8 at 128 sequences per worker, in round numbers: 68.3 GB of routed-expert weights on the busiest
    # rank per step, a 16.13 ms measured step of which 7.34 ms is everything else the model prices: the experts
    # get 8.79 ms, 68.3e9 / 8.79e-3 = 7.77 TB/s, 0.971 of GB200's 8 TB/s
    assert split.implied_hbm_fraction(68.3e9, 16.13e-3, 7.34e-3, 8e12) == pytest.approx(68.3e9 / 8.79e-3 / 8e12)
    assert split.implied_hbm_fraction(68.3e9, 16.13e-3, 7.34e-3, 8e12) == pytest.approx(0.9713, abs=1e-4)
    # hiding 0.78 ms of shared expert leaves the experts 9.57 ms: 0.892
    assert split.implied_hbm_fraction(68.3e9, 16.13e-3, 7.34e-3 - 0.78e-3, 8e12) == pytest.approx(0.8921, abs=1e-4)
    # the rest alone longer than the measured step: no bandwidth can hold the experts
    assert math.isinf(split.implied_hbm_fraction(1e9, 5e-3, 5e-3, 8e12))


def test_parts_per_layer_by_hand():
    # two layers of MLA ops (10 + 6 us each), one MoE layer: shared expert gate_up 9 us (3 us of it HBM) and down
    # 5 us (1 us HBM) -> 14 us, 10 us beyond its bytes; routed experts 7 us, so the overlap hides min(10, 7) = 7 us
    ops = [{"op": "attn.qkv_a_proj", "time_s": 20e-6, "memory_s": 5e-6},
           {"op": "attn.mla_decode", "time_s": 12e-6, "memory_s": 2e-6},
           {"op": "moe.shared_expert.gate_up", "time_s": 9e-6, "memory_s": 3e-6},
           {"op": "moe.shared_expert.down", "time_s": 5e-6, "memory_s": 1e-6},
           {"op": "moe.router", "time_s": 3e-6, "memory_s": 1e-6},
           {"op": "moe.experts", "time_s": 7e-6, "memory_s": 6e-6},
           {"op": "layer.elementwise", "time_s": 4e-6, "memory_s": 1e-6}]
    got = {k: v * 1e6 for k, v in split.per_layer_parts(ops, 2, 1).items()}
    assert got == pytest.approx({"attn": 16.0, "shared": 14.0, "router": 3.0, "experts": 7.0, "hidden_se": 7.0})
