"""scripts/large_batch_decode_gap.py: the measured steps it derives (by hand from the published figures) and the
ordering of its model steps."""

from __future__ import annotations

import math

import pytest
from script_module import load_script

gap = load_script("large_batch_decode_gap")


def test_blog_steps_are_the_published_per_user_rates():
    b200, h200 = gap.BLOG
    # 11.7967 tok/s/user -> 84.77 ms a token; 17.5825 req/s x 84.77 ms = 1.4905 prompts a step
    assert b200[-1] == pytest.approx(0.08477, rel=1e-4) and b200[-2] == pytest.approx(1.4905, rel=1e-4)
    assert h200[-1] == pytest.approx(0.09533, rel=1e-4) and h200[-2] == pytest.approx(0.4952, rel=1e-3)


def test_mlperf_server_batch_is_littles_law():
    cases = {c[0]: c for c in gap.mlperf_cases()}
    srv = cases["MLPerf B200 Server ~155/rank"]
    # published per chip 2324.0 output tok/s (18,592.24 / 8) x mean TPOT 66.46 ms = 154.5 decoding per chip
    assert srv[3] == pytest.approx(2324.0 * 0.06646, rel=2e-3)
    off = cases["MLPerf B200 Offline 512/rank"]
    assert off[-1] == pytest.approx(512 / 4172.4, rel=2e-3)  # 33,379 / 8 = 4,172.4 output tok/s per chip


def test_model_steps_are_ordered_and_the_hot_share_is_poisson():
    m = gap.model_steps("b200", "fp4", 384, 2048, 1024, 1.49)
    assert m["decode"] < m["even"] < m["hot"]  # a prompt on one rank costs more than the same prompt spread
    assert m["q"] == pytest.approx(1 - math.exp(-1.49))


def test_graph_padding_rounds_up_to_the_captured_sizes():
    # MLPerf configs: cuda_graph_batch_sizes [128, 256, 384, 512]; TensorRT-LLM pads to the smallest size >= the
    # batch (bisect_left), runs eager beyond the largest; no graph sizes given -> the batch itself
    g = gap.MLPERF_GRAPHS
    assert [gap.padded_batch(b, g) for b in (1, 128, 129, 154.5, 385, 512, 600)] == [128, 128, 256, 256, 512, 512, 600]
    assert gap.padded_batch(154.5, None) == 154.5


def test_mlperf_offline_rows_hold_what_their_kv_pool_holds():
    cases = {c[0]: c for c in gap.mlperf_cases()}
    # B200 FP4, free fraction 0.9: by hand ~60 GiB of weights per GPU leaves ~0.9 x 110 GB ~ 99 GB of KV; a
    # sequence at 4,812 tokens needs 4,812 x 35,136 B (576 B FP8 latent + rope key x 61 layers) = 169 MB -> ~585
    # per rank > 512 slots: every slot resident
    assert cases["MLPerf B200 Offline 512/rank"][3] == 512
    # H200 FP8, free fraction 0.6: weights alone are 654e9 routed-expert params / 8 = 81.7 GB plus ~17 GB replicated
    # (attention, dense and shared layers, embeddings) ~ 99 GB of 141 GB, so the pool is at most 0.6 x 42 GB = 25 GB
    # = 146 sequences of 4,915 x 35,136 B = 173 MB: fewer than the 216 slots
    h200 = cases["MLPerf H200 Offline 216 slots"]
    assert 100 < h200[3] < 146
    # its step is the resident count over the per-GPU output rate: the 216-slot step scaled by resident / 216
    assert h200[-1] == pytest.approx(h200[3] / (216 / 0.1941), rel=0.01)


def test_padded_step_prices_the_padded_batch():
    m = gap.model_steps("b200", "fp4", 154.5, 4825, 804, 0.33, gap.MLPERF_GRAPHS)
    # 154.5 per rank padded to 256: more rows of GEMM and routed-expert work, the same KV read -> slower than
    # the decode-only step, faster than 256 real sequences at the full context
    full = gap.model_steps("b200", "fp4", 256, 4825, 804, 0.33)
    assert m["decode"] < m["padded"] < full["decode"]
    assert gap.model_steps("b200", "fp4", 154.5, 4825, 804, 0.33)["padded"] is None
