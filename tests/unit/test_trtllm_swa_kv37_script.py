"""scripts/trtllm_swa_kv37.py: gpt-oss KV bytes windowed and at full length, worked by hand, and the claim of
docs/gap_aic_itl.md (round 37, swakv37) that full-length storage alone leaves the model's H200 TP1 pool above the
knee the runs show."""

from __future__ import annotations

import pytest
from script_module import load_script

from jalapeno.specs.catalog import load_model

s = load_script("trtllm_swa_kv37")


def test_request_kv_bytes_by_hand():
    m = load_model("gpt-oss-120b")
    layer_token = 2 * 8 * 64 * 2  # K and V, 8 KV heads x 64 dims, BF16: 2,048 B
    tokens = 8294  # 0.9 x (8,192 + 1,024)
    assert s.request_kv_bytes(m, 2, tokens, True) == pytest.approx(36 * tokens * layer_token)
    assert s.request_kv_bytes(m, 2, tokens, False) == pytest.approx(18 * (tokens + 128) * layer_token)
    assert s.request_kv_bytes(m, 1, 100, False) == pytest.approx(18 * (100 + 100) * layer_token / 2)  # inside the window


def test_implied_resident_row_43():
    # C·D/(TTFT + D), D = (0.9·1024 − 1)·31.3 ms = 28.81 s: 64 x 28.81 / 33.10
    assert s.implied_resident(64, 4.287, 0.0313, 0.9 * 1024) == pytest.approx(64 * 28.8110 / 33.0980, rel=1e-4)


def test_full_length_pool_still_holds_the_knee_concurrency():
    # H200 TP1, BF16 KV: even with every layer at full length the model's pool holds more than the 64 users'
    # whole 8,294-token requests (531 k tokens), so the full-length rule alone cannot make row 43 queue
    windowed, full = s.pool_tokens("h200", "trtllm", "agg attn TP1 DP1 · MoE TP1 EP1 [mxfp4]", 64.0, 8294.0)
    assert full > 64 * 8294
    assert windowed / full == pytest.approx(2 * 8294 / (8294 + 128), rel=1e-6)


def test_full_length_kv_patch_is_undone():
    m = load_model("gpt-oss-120b")
    before = m.window_counts
    with s.full_length_kv():
        assert m.window_counts == ((0, 36),)
    assert m.window_counts == before == ((0, 18), (128, 18))


def test_row_layout_refuses_disaggregated_labels():
    assert s.row_layout("disagg prefill 2x attn TP1 DP1 · MoE TP1 EP1 | decode attn TP1 DP2 · MoE TP2 EP2") is None
