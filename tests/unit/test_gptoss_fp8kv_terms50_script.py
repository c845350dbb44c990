"""scripts/gptoss_fp8kv_terms50.py: the candidate terms for the Blackwell TensorRT-LLM gpt-oss-120b rows with an FP8 KV
cache (docs/gap_large_batch_decode.md, round 50). The aiconfigurator tables are not in the repository, so the tests
build rows by hand from known constants and check the arithmetic by hand; expected values are not the script's output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

from jalapeno.errors import SpecError

terms = load_script("gptoss_fp8kv_terms50")


def test_attention_form_by_hand():
    # 254 sequences at 7,834 tokens, FP8 (1 B): 254 x 7834 = 1,989,836 tokens x 2 (K, V) x 8 heads x 64 x 1 B
    # = 2,037,592,064 B; at 0.9 of 8 TB/s (7.2e12 B/s) that is 283.00 us; + 10 us + 254 x 60 ns = 15.24 us -> 308.24 us
    t = terms.attention_time_s((10e-6, 60e-9, 0.9), 254, 7834, 1.0, 8e12)
    assert float(t) * 1e6 == pytest.approx(10 + 15.24 + 2037592064 / 7.2e12 * 1e6, rel=1e-9)
    assert float(t) * 1e6 == pytest.approx(308.24, abs=0.01)
    # BF16 (2 B) doubles only the streaming part
    t2 = terms.attention_time_s((10e-6, 60e-9, 0.9), 254, 7834, 2.0, 8e12)
    assert float(t2 - t) * 1e6 == pytest.approx(283.00, abs=0.01)


def _rows(t0, a, f, kv_bytes, w, window=0):
    """Rows of a table whose every latency is exactly the form at (t0, a, f) (ms), batches 1-2048, steps 1-8191."""
    b, s = np.meshgrid([1, 8, 64, 256, 1024, 2048], [1, 63, 511, 2047, 8191])
    b, s = b.ravel().astype(float), s.ravel().astype(float)
    ctx = np.minimum(s, window) if window else s
    lat = (t0 + a * b + b * ctx * 2 * 8 * 64 * kv_bytes / (f * w)) * 1e3
    return pd.DataFrame({"batch_size": b, "step": s, "latency": lat})


@pytest.mark.parametrize("window", [0, 128])
def test_fit_recovers_known_constants(window):
    # rows built from t0 = 11 us, 60 ns a sequence, f = 0.88 of 8 TB/s: the fit gives them back
    fit = terms.fit_attention_form(_rows(11e-6, 60e-9, 0.88, 1.0, 8e12, window), 1.0, 8e12, window)
    assert fit["t0_s"] == pytest.approx(11e-6, rel=1e-3)
    assert fit["per_seq_s"] == pytest.approx(60e-9, rel=1e-3)
    # 128-token windows read too little for f to be pinned beyond the floor's share; full attention pins it
    if not window:
        assert fit["fraction"] == pytest.approx(0.88, rel=1e-3)
    assert fit["median_ape"] < 1e-4 and fit["n"] == 30


def test_fit_tells_a_per_sequence_cost_from_streaming():
    # no per-sequence cost in the rows: the fit finds ~0, not a slower stream
    fit = terms.fit_attention_form(_rows(10e-6, 0.0, 0.95, 2.0, 8e12), 2.0, 8e12)
    assert fit["per_seq_s"] < 1e-10 and fit["fraction"] == pytest.approx(0.95, rel=1e-3)


def test_fit_refuses_too_few_rows():
    with pytest.raises(SpecError, match="attention rows.*gpt-oss's shape"):
        terms.fit_attention_form(_rows(1e-5, 6e-8, 0.9, 1.0, 8e12).head(2), 1.0, 8e12)


def test_moe_interpolation_by_hand():
    # aiconfigurator GB200 1.3.0rc20 W4A8 EP2 rows (ms): 1536 -> 0.212, 2048 -> 0.222 (repeated rows: the fastest);
    # 2,028 tokens lie 492 / 512 of the way: 0.212 + 0.010 x 492/512 = 0.221609 ms
    curve = pd.DataFrame({"num_tokens": [1536, 2048, 2048], "latency": [0.212, 0.222, 0.230]})
    assert terms.moe_table_s(curve, 2028) * 1e3 == pytest.approx(0.212 + 0.010 * 492 / 512, rel=1e-9)
    assert terms.moe_table_s(curve, 2048) * 1e3 == pytest.approx(0.222)


def test_moe_refuses_outside_the_table():
    curve = pd.DataFrame({"num_tokens": [1, 16384], "latency": [0.02, 1.5]})
    with pytest.raises(SpecError, match="tokens.*outside"):
        terms.moe_table_s(curve, 20000)
