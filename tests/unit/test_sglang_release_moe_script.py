"""scripts/sglang_release_moe.py: the defect claim of docs/gap_aic_itl.md (round 25, sglrel25), by hand."""

from __future__ import annotations

import pytest
from script_module import load_script

pytest.importorskip("aiconfigurator_core")
s = load_script("sglang_release_moe")


def test_the_0514_deepseek_tp8_rows_read_faster_than_h200_hbm_and_the_0510_ones_do_not():
    # DeepSeek-R1's routed experts at MoE TP8: 256 experts x 3 matrices (gate, up, down) x 7168 x 2048 FP8 bytes / 8
    # ranks = 1.409 GB a rank reads once 64 tokens x top-8 = 512 assignments have touched every expert (balanced).
    bytes_per_rank = 256 * 3 * 7168 * 2048 / 8
    rate = {r: bytes_per_rank / (s.curve(r, "balanced", 8, 1).loc[64] * 1e-3) / 1e12 for r in s.RELEASES}
    assert rate["0.5.10"] < 4.8 < rate["0.5.14"]  # H200's HBM peak, 4.8 TB/s (NVIDIA datasheet)
