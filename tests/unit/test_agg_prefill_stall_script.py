"""scripts/agg_prefill_stall.py: the implied stall, the chunk-carrying fraction and the MHA-rows batch, by hand."""

from __future__ import annotations

import numpy as np
import pytest
from script_module import load_script

stall = load_script("agg_prefill_stall")


def test_implied_stall_by_hand():
    # aiconfigurator B200 SGLang 0.5.9 FP8 TP8 8k/1k, C = 256: TPOT 117.709 ms, decode-only step 42.9 ms:
    # (0.117709 - 0.0429) * 1023 / 255 = 0.074809 * 4.011765 = 0.300116 s per prompt
    assert stall.implied_stall_s(0.117709, 0.0429, 1024, 256) == pytest.approx(0.300116, rel=1e-5)
    # a TPOT below the decode-only step implies a negative stall (the decode step is priced too slow)
    assert stall.implied_stall_s(0.010, 0.012, 11, 3) == pytest.approx(-0.002 * 10 / 2)


def test_implied_stall_names_the_field():
    with pytest.raises(ValueError, match="users: 1 leaves no other prompt"):
        stall.implied_stall_s(0.01, 0.01, 1024, 1)
    with pytest.raises(ValueError, match="osl: 1 has no decode step"):
        stall.implied_stall_s(0.01, 0.01, 1, 8)


def test_chunk_step_fraction_by_hand():
    # 254 users, 8192-token prompts, 1023 decode steps, whole prompts per chunk: 254 / 1023 = 0.248289
    assert stall.chunk_step_fraction(254, 8192, 1024, 8192) == pytest.approx(254 / 1023)
    # a 4096-token chunk doubles the chunk-carrying steps; the fraction caps at every step
    assert stall.chunk_step_fraction(254, 8192, 1024, 4096) == pytest.approx(508 / 1023)
    assert stall.chunk_step_fraction(1000, 8192, 1024, 4096) == 1.0
    with pytest.raises(ValueError, match="chunk: 0 tokens"):
        stall.chunk_step_fraction(1, 8192, 1024, 0)


def test_mha_rows_batch_puts_the_decode_rows_in_prefill_form():
    b = stall.mha_rows_batch(64.0, 8704.0)
    # point 0: 64 decode rows, no prefill; point 1: 64 one-token prefill sequences, each with a 8704-token prefix
    assert list(b.decode_seqs) == [64.0, 0.0]
    assert list(b.prefill_tokens) == [0.0, 64.0] and list(b.prefill_seqs) == [0.0, 64.0]
    assert np.all(b.prefill_ctx == 8704.0)


def _moe_table():
    import pandas as pd

    base = {"moe_dtype": "fp8_block", "distribution": "balanced", "hidden_size": 7168, "inter_size": 2048,
            "num_experts": 256, "topk": 8}
    rows = [  # (kernel_source, moe_tp, ep, num_tokens, latency ms)
        ("deepgemm", 8, 1, 8192, 1.500), ("deepgemm", 8, 1, 8192, 1.438), ("deepgemm", 8, 1, 16384, 2.736),
        ("deepgemm", 1, 8, 8192, 0.502), ("deepgemm", 1, 8, 16384, 0.855), ("other", 8, 1, 8192, 0.100)]
    return pd.DataFrame([{**base, "kernel_source": k, "moe_tp_size": tp, "moe_ep_size": ep, "num_tokens": t,
                          "latency": ms} for k, tp, ep, t, ms in rows])


def test_measured_curve_by_hand():
    df = _moe_table()
    c = stall.measured_curve(df, "deepgemm", "fp8_block", 7168, 2048, 256, 8, 8, 1, "fp8")
    # MoE TP8: each rank holds 2048 / 8 = 256 columns of every expert; EP1: every rank sees all
    # 8192 · 8 = 65,536 token-expert assignments; repeated rows keep the fastest (1.438 ms)
    assert (c.h, c.inter, c.fmt) == (7168.0, 256.0, "fp8")
    assert list(c.load) == [65536.0, 131072.0]
    assert c.time_s == pytest.approx([1.438e-3, 2.736e-3])
    # EP8, MoE TP1: 8192 · 8 / 8 = 8192 assignments on the busiest rank, the full 2048 columns
    c = stall.measured_curve(df, "deepgemm", "fp8_block", 7168, 2048, 256, 8, 1, 8, "fp8")
    assert c.inter == 2048.0 and list(c.load) == [8192.0, 16384.0]
    assert c.time_s == pytest.approx([0.502e-3, 0.855e-3])


def test_measured_curve_names_the_missing_layout():
    with pytest.raises(ValueError, match="kernel_source: no deepgemm fp8_block curve .* moe_tp 4, ep 2"):
        stall.measured_curve(_moe_table(), "deepgemm", "fp8_block", 7168, 2048, 256, 8, 4, 2, "fp8")


def test_unmeasured_layout_is_one_error_line():
    # H200 TRT-LLM DeepSeek-R1 rows run EP8 at moe_tp 1, a layout aiconfigurator's deepgemm fp8_block table does not
    # measure: the script ended in a ValueError traceback; now one 'error:' line naming kernel_source (exit status 1)
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(root / "scripts" / "agg_prefill_stall.py"), "--system", "h200",
                        "--framework", "trtllm", "--isl", "1024"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: kernel_source: no deepgemm fp8_block curve")
