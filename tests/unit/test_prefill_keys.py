"""RankBatch.prefill_keys: the cached prefix a step's prefill attention reads, and none where nothing is prefilled."""

import numpy as np
import pytest

from jalapeno.cost.attention import RankBatch, add_mla_ops
from jalapeno.cost.optable import OpBuilder
from jalapeno.specs.catalog import load_model

R1 = load_model("deepseek-r1")


def _rb(tokens, seqs, ctx, cp=1):
    t = np.asarray(tokens, float)
    z = np.zeros_like(t)
    return RankBatch(z, z, z, t, np.asarray(seqs, float), np.broadcast_to(np.asarray(ctx, float), t.shape), cp)


def test_prefill_keys_by_hand():
    # Sr·C + Pr·(cp − 1): 2 sequences x 500 cached tokens = 1000; with CP2 each rank also reads the
    # other rank's 100 chunk tokens: 1100. A point with no prefill tokens reads no prefix even if a
    # sequence count is given (it has nothing to prefill this step).
    assert list(_rb([0, 100], [1, 2], 500).prefill_keys()) == [0.0, 1000.0]
    assert list(_rb([0, 100], [1, 2], 500, cp=2).prefill_keys()) == [0.0, 1100.0]
    # window cap per sequence: min(500, 128) = 128 keys each
    assert list(_rb([0, 100], [1, 2], 500).prefill_keys(cap=128)) == [0.0, 256.0]


def test_no_prefix_up_projection_at_a_point_without_prefill():
    # DeepSeek-R1 TP8 (n = 16 heads per chip, r = 512, d_nope = d_v = 128): the up-projection of 1 chunk
    # token and its 1000-token prefix is 2·(1 + 1000)·512·16·256 = 4,198,498,304 FLOPs per layer;
    # the point beside it with a sequence count but no tokens gets none
    ob = OpBuilder(2)
    add_mla_ops(ob, R1, _rb([0, 1], [1, 1], 1000), 8, 1.0, 1.0, "fp8", "fp8", 576.0, 1.0)
    ops, _ = ob.build()
    i = ops.name.index("attn.kv_b_proj")
    assert ops.flop[i, 0] == 0.0
    assert ops.flop[i, 1] == pytest.approx(2 * 1001 * 512 * 16 * 256)
