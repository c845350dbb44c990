"""scripts/mi355x_gptoss_a16w4_moe39.py: aiter's gfx950 a16w4 gpt-oss MoE table against the model (docs/
gap_large_batch_decode.md, round 39). Expected values are aiter's published rows and arithmetic by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import mi355x_gptoss_a16w4_moe39 as s  # noqa: E402


def test_the_rows_are_aiters_published_figures():
    # ROCm/aiter gptoss_a16w4_tuned_fmoe.csv @c2b69b9b87: TP1 slice (inter 3072) at 1 and 128 tokens, TP8 at 128
    assert s.A16W4_US[3072][0] == pytest.approx(39.1026) and s.A16W4_US[3072][-1] == pytest.approx(319.4357)
    assert s.A16W4_US[512][-1] == pytest.approx(81.8598)
    assert all(len(v) == len(s.A16W4_TOKENS) for v in s.A16W4_US.values())


def test_atom_padding_by_hand():
    # 2880 / TP 1, 2, 8 rounded up to a multiple of 256
    assert [s.padded(w) for w in (2880, 1440, 360)] == [3072, 1536, 512]
    with pytest.raises(ValueError, match="width"):
        s.padded(0)


def test_interpolation_hits_rows_and_lies_between_them():
    assert s.a16w4_layer_s(64)[0] == pytest.approx(290.5618e-6)
    # log-log midpoint of 64 and 128 tokens: sqrt(290.5618 * 319.4357) at sqrt(64 * 128) tokens
    mid = s.a16w4_layer_s(np.sqrt(64 * 128))[0]
    assert mid == pytest.approx(np.sqrt(290.5618 * 319.4357) * 1e-6)
    # beyond 128: linear from the last two rows, slope (319.4357 - 290.5618) / 64 µs a token
    assert s.a16w4_layer_s(192)[0] == pytest.approx((319.4357 + 64 * (319.4357 - 290.5618) / 64) * 1e-6)


def test_bad_input_names_the_fix():
    with pytest.raises(ValueError, match="padded width"):
        s.a16w4_layer_s(8, inter=2880)
    with pytest.raises(ValueError, match="tokens"):
        s.a16w4_layer_s(0)


def test_a_step_of_36_layers_at_128_tokens():
    # 36 x 319.4357 µs = 11.50 ms of routed experts a TP1 decode step at 128 sequences
    assert s.LAYERS * s.a16w4_layer_s(128)[0] == pytest.approx(11.4997e-3, rel=1e-4)


def test_goals_rejects_a_csv_without_mi355x_rows(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("source,id,system,metric,error\ninferencex,a,h200,interactivity,0.1\n")
    with pytest.raises(ValueError, match="held-out"):
        s.goals(str(p), {})


def test_the_prompt_step_rows_are_aiters_cktile_a8w4_stage_sums():
    # gptoss_fp8fp4_tuned_fmoe.csv @c2b69b9b87, cktile_a8w4_bm32 rows: 8,192 tokens us1 1478.4233 + us2 480.9397
    i = s.A8W4_TOKENS.index(8192)
    assert s.A8W4_US[i] == pytest.approx(1959.363)
    assert s.A8W4_US[s.A8W4_TOKENS.index(1024)] == pytest.approx(286.4048 + 142.6674)
    assert s.BF16_FP8_BOUND == 512 and min(s.A8W4_TOKENS) == s.BF16_FP8_BOUND
