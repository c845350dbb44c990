"""scripts/mori_ep8_decode_check38.py: MoRI EP8 dispatch/combine and aiter's EP8 MXFP4 fused MoE at rows 24/31's decode batch.

Expected values by hand from the quoted tables (ROCm/mori docs/ep8_mi350x_tuning_results.md, aiter
dsv3_fp4_tuned_fmoe.csv): linear interpolation between the 128- and 256-token rows.
"""

from __future__ import annotations

import pytest
from script_module import load_script

m = load_script("mori_ep8_decode_check38")


def test_interp_by_hand_and_refuses_to_extrapolate():
    # 143 tokens: 39.9 + (58.1 - 39.9) x 15 / 128 = 42.03 us (FP8 dispatch)
    assert m.interp(m.MORI_DISPATCH_FP8_US, 143) == pytest.approx(39.9 + 18.2 * 15 / 128)
    # 141.8778 + (161.2901 - 141.8778) x 15 / 128 = 144.15 us (EP8 MXFP4 fused MoE, stages 1 + 2)
    assert m.interp(m.AITER_EP8_FP4_US, 143) == pytest.approx(144.152, abs=1e-3)
    with pytest.raises(ValueError, match="outside the table"):
        m.interp(m.MORI_DISPATCH_FP8_US, 2048)


def test_row_31_all_to_all_and_experts_are_not_priced_too_fast():
    per_rank = 143.4  # Little's law on row 31 (tests/unit/test_mori_disagg_release_script.py: 1,147.4 / 8)
    mp = m.model_decode_parts("31", per_rank)
    assert mp["ep"] == 8 and mp["layers"] == 58  # DeepSeek-R1: 61 layers, the first 3 dense
    # MoRI, FP8 dispatch + BF16 P2P combine, by hand: (42.1 + 42.4) us x 58 layers = 4.90 ms per step
    mori = (m.interp(m.MORI_DISPATCH_FP8_US, per_rank) + m.interp(m.MORI_COMBINE_US["bf16 P2P"], per_rank)) * 58
    assert mori / 1e3 == pytest.approx(4.90, abs=0.02)
    a2a_model = (mp["dispatch"] + mp["combine"]) * 58
    assert 0.9 < a2a_model / mori < 1.15  # priced within the published figure's spread, not 17 ms short
    # the routed experts are priced above aiter's two GEMM stages (its time leaves out the sort and the quant)
    assert mp["experts"] > m.interp(m.AITER_EP8_FP4_US, per_rank)
    # the unpriced remainder is neither: the measured 63.3 ms step less the model's exceeds both terms' whole cost
    assert 63.3 - mp["step_ms"] > (a2a_model + mp["experts"] * 58) / 1e3
