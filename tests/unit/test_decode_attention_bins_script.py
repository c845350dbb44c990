"""scripts/decode_attention_bins.py: the regime summary and the GQA row pricing, against hand arithmetic."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

bins = load_script("decode_attention_bins")


def test_summary_reads_the_end_to_end_regime_only():
    # ratios 0.5 / 0.8 / 1.1 inside 64-512 sequences x 1K-8K context; the batch-8 and 16K rows (ratio 9) stay out:
    # median 0.8, median |error| = median(0.5, 0.2, 0.1) = 0.2
    d = pd.DataFrame({"batch_size": [64, 256, 512, 8, 128], "ctx": [1024, 4096, 8192, 4096, 16384],
                      "ratio": [0.5, 0.8, 1.1, 9.0, 9.0]})
    s = bins.summary("b200", "GQA", d)
    assert s["rows"] == 3
    assert s["ratio median"] == pytest.approx(0.8)
    assert s["median |err|"] == pytest.approx(0.2)


def test_a_gqa_row_is_priced_at_the_calibrated_kv_read():
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.specs.calibration import load_calibration

    # B200, TensorRT-LLM, 256 sequences, 8 query / 1 KV head of 128, BF16 KV, step 4,095 (context 4,096):
    # KV 256·4096·2·1·128·2 = 536,870,912 B and activations 256·8·128·4 = 1,048,576 B read at the calibrated
    # hbm_fraction of 8 TB/s, plus one launch of the set's kernel_launch_s (4 us, efficiency default); the
    # compute (2·256·8·2·128·4096 = 4.3 GFLOP at 0.35 of 2.25 PFLOP/s, 5.5 us) does not bind
    eta = load_calibration("b200")["parameters"]["hbm_fraction"]
    df = bins.gqa_frame("b200", "trtllm")
    r = df[(df.batch_size == 256) & (df.num_heads == 8) & (df.num_key_value_heads == 1) & (df.head_dim == 128)
           & (df.kv == "bf16") & (df.step == 4095)].iloc[0]
    hand_us = (536_870_912 + 1_048_576) / (8e12 * eta) * 1e6 + 4.0
    assert r.kv_bytes == 536_870_912
    assert r.model_us == pytest.approx(hand_us, rel=1e-6)
    assert r.ratio == pytest.approx(hand_us / (r.latency * 1e3), rel=1e-6)
