"""MTP drafting passes priced as the MTP module they run (cost/mtp_draft.py).

Expected values by hand from DeepSeek-R1's config.json (hidden 7168, vocabulary 129,280, 256 routed
experts of intermediate 2048, one MTP module) and the B200 datasheet (8 TB/s HBM): an NVFP4 routed
expert is 3·7168·2048·0.5625 B = 24.8 MB and an EP8 rank holds 32; the BF16 LM head split over TP8
is 129,280·7168·2/8 B = 232 MB per rank.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.mtp_draft import mtp_draft_s, mtp_module
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import MTP
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

EXPERT_ELEMS = 3 * 7168 * 2048          # gate, up, down of one routed expert (config.json)
HEAD_ELEMS = 129280 * 7168              # the shared LM head (config.json vocab_size x hidden_size)
B200_HBM_B_PER_S = 8.0e12               # NVIDIA B200 datasheet


@pytest.fixture(scope="module")
def setup():
    return load_model("deepseek-r1"), load_pricer("b200")


def test_mtp_module_is_one_moe_layer_with_the_shared_head(setup):
    model, _ = setup
    mod = mtp_module(model)
    assert (mod.num_layers, mod.num_dense_layers, mod.num_moe_layers) == (1, 0, 1)
    assert (mod.vocab_size, mod.hidden_size, mod.moe) == (model.vocab_size, model.hidden_size, model.moe)


def test_draft_reads_the_module_weights_once_per_pass(setup):
    """At 256 sequences every pass touches all 32 experts of each EP8 rank (pass 1: 256·4·8 = 8192
    picks over 256 experts, passes 2-3: 2048) and reads the TP8 share of the LM head: per pass at
    least 32·24.8 MB + 232 MB from HBM, so three passes take at least 3 x 0.128 ms at 8 TB/s."""
    model, pricer = setup
    fp4 = get_precision("fp4")
    batch = Batch.make(decode_seqs=np.array([256.0]), decode_ctx=np.array([1536.0]))
    draft = mtp_draft_s(model, pricer, Layout(tp=8, ep=8), fp4, batch, MTP(3, 0.8), False)[0]
    floor = 3 * (32 * EXPERT_ELEMS * 0.5625 + HEAD_ELEMS * 2 / 8) / B200_HBM_B_PER_S
    assert floor == pytest.approx(0.384e-3, rel=1e-2)
    assert floor <= draft
    # and no pass costs more than two mean layers of the verify step (pass 1 runs a layer at the
    # verify's rows, the others at a quarter of them; each adds one head)
    sc = step_cost(model, pricer, Layout(tp=8, ep=8), fp4, batch, MTP(3, 0.8))
    verify = sc.step_time_s[0] - sc.draft_s[0]
    assert draft <= 3 * 2 * verify / model.num_layers


def test_draft_passes_by_rows(setup):
    """Pass 1 sees 1 + k rows per sequence, the later passes one: with k drafts the draft grows by
    one single-row pass per extra draft plus the first pass's extra rows, and is 0 without
    decoding sequences; inside step_cost it is the step's ``draft_s``."""
    model, pricer = setup
    fp4, lay = get_precision("fp4"), Layout(tp=8, ep=8)
    batch = Batch.make(decode_seqs=np.array([16.0, 0.0]), decode_ctx=np.array([2048.0, 2048.0]))
    d = {k: mtp_draft_s(model, pricer, lay, fp4, batch, MTP(k, 0.8), False) for k in (1, 2, 3)}
    assert d[1][1] == d[2][1] == d[3][1] == 0.0
    assert 0.0 < d[1][0] < d[2][0] < d[3][0]
    # k = 1 -> 2 adds a one-row pass and widens pass 1 by one row per sequence; 2 -> 3 the same
    # again, so the increments agree to within the pass-1 widening (a few rows of a weight-bound layer)
    assert d[3][0] - d[2][0] == pytest.approx(d[2][0] - d[1][0], rel=0.05)
    sc = step_cost(model, pricer, lay, fp4, Batch.make(decode_seqs=16.0, decode_ctx=2048.0), MTP(3, 0.8))
    assert sc.draft_s[0] == pytest.approx(d[3][0], rel=1e-12)
    # the draft does not depend on the verify step's prefill tokens: only decoding sequences draft
    mixed = step_cost(model, pricer, lay, fp4, Batch.make(decode_seqs=16.0, decode_ctx=2048.0, prefill_tokens=4096.0,
                                                        prefill_seqs=1.0), MTP(3, 0.8))
    assert mixed.draft_s[0] == pytest.approx(d[3][0], rel=1e-12)
