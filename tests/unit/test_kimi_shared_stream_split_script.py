"""scripts/kimi_shared_stream_split.py: the hand count of NVIDIA's Kimi K2.5 NVFP4 checkpoint and the step table."""

from __future__ import annotations

import json

import pytest
from script_module import load_script

split = load_script("kimi_shared_stream_split")


def test_hand_count_of_the_checkpoint_at_tp8():
    cfg = json.loads(split.CFG.read_text())
    hb = split.hand_bytes(cfg, 8, 0.0)
    # MLA projections BF16, per layer: q_a + kv_a (7168 x (1536 + 512 + 64)) replicated, q_b (1536 x 64 x 192),
    # kv_b (512 x 64 x (128 + 128)) and o_proj (64 x 128 x 7168) split over 8 GPUs; 2 B a weight; 61 layers
    per_layer = 7168 * 2112 + (1536 * 12288 + 512 * 16384 + 8192 * 7168) / 8
    assert hb["attention (BF16)"] == pytest.approx(61 * 2 * per_layer)
    assert hb["attention (BF16)"] / 1e9 == pytest.approx(3.158, abs=1e-3)
    # shared expert NVFP4: 3 x 7168 x 2048 weights x (0.5 + 1/16) B over 8 GPUs, 60 MoE layers
    assert hb["shared expert (NVFP4)"] == pytest.approx(60 * 3 * 7168 * 2048 * 0.5625 / 8)
    # router BF16 7168 x 384, replicated; LM head 163840 x 7168 BF16 over 8
    assert hb["router (BF16)"] == 60 * 7168 * 384 * 2
    assert hb["LM head (BF16)"] == pytest.approx(163840 * 7168 * 2 / 8)


def test_prints_the_four_steps_and_the_vllm_hidden_shared_expert(capsys):
    split.main()
    out = capsys.readouterr().out
    for label, *_ in split.STEPS:
        assert label in out
    hidden = [float(ln.rsplit(" ", 1)[1]) for ln in out.splitlines() if "hidden on the aux stream" in ln]
    assert len(hidden) == 4 and hidden[0] > 0.5 and hidden[1] > 0.5 and hidden[2] == hidden[3] == 0.0
