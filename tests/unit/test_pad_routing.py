"""How the MoE prices CUDA-graph padding dummies (Batch.pad_seqs / pad_routing; docs/model.md, graph padding).

Expected values follow from what each engine does, worked out by hand, and are priced independently: the
same op table built for an unpadded batch that carries the tokens the router really sees.

- masked (SGLang, MoE EP > 1: top-k ids -1): the experts see only the n real tokens, and only they travel
  in the all-to-all; the GEMMs outside the MoE still run the g padded rows.
- one_token (TensorRT-LLM: every dummy is token 1 at one position): the dummies pick one top-k set, so the
  experts touched are those of n + 1 tokens.
- routed (vLLM releases before PR #46428; SGLang at MoE EP = 1): the g rows route as g tokens.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.graph_capture import pad_routing
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.limits import padded_to_sizes
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

DEP8 = Layout(dp=8, ep=8)
CTX = 2000.0


@pytest.fixture(scope="module")
def env():
    return load_model("deepseek-r1"), load_pricer("b200", stack="trtllm@1.2.0rc2"), get_precision("fp4")


def _ops(env, batch, layout=DEP8):
    model, pricer, prec = env
    return build_step_ops(model, pricer.system.chip, layout, prec, batch, pricer.efficiency)


def _row(table, name, field):
    if isinstance(table, tuple):  # (ops, collectives): the op table
        table = table[0]
    return getattr(table, field)[table.name.index(name)]


def test_padding_counts_the_dummies_by_hand():
    # 5 sequences per rank on 8 ranks -> captured 8: 3 dummies per rank, 24 in all; context (40·2000 + 24)/64
    b = padded_to_sizes((4, 8), 8, Batch.make(decode_seqs=40.0, decode_ctx=CTX), "masked")
    assert b.decode_seqs.tolist() == [64.0] and b.pad_seqs.tolist() == [24.0] and b.pad_routing == "masked"
    assert b.decode_ctx[0] == pytest.approx((40 * 2000 + 24) / 64)


def test_masked_dummies_route_nowhere(env):
    padded = padded_to_sizes((8,), 8, Batch.make(decode_seqs=40.0, decode_ctx=CTX), "masked")
    ops, colls = _ops(env, padded)
    real_ops, real_colls = _ops(env, Batch.make(decode_seqs=40.0, decode_ctx=CTX))
    routed_ops, _ = _ops(env, padded_to_sizes((8,), 8, Batch.make(decode_seqs=40.0, decode_ctx=CTX)))
    for field in ("weight_bytes", "rows"):  # the experts see the 40 real tokens only
        assert _row(ops, "moe.experts", field) == pytest.approx(_row(real_ops, "moe.experts", field))
    d = colls.name.index("moe.dispatch")  # and only they are dispatched
    assert colls.bytes[d] == pytest.approx(real_colls.bytes[real_colls.name.index("moe.dispatch")])
    # the router GEMM runs every captured row: 64, not 40
    assert _row(ops, "moe.router", "rows") == pytest.approx(_row(routed_ops, "moe.router", "rows"))
    assert _row(ops, "moe.router", "rows")[0] > _row(real_ops, "moe.router", "rows")[0]


def test_masked_at_ep1_routes_the_padded_rows(env):
    """At MoE EP = 1 SGLang does not mask (enable_num_token_non_padded is off): routed like tokens."""
    tp8 = Layout(tp=8)
    masked = padded_to_sizes((8, 16), 1, Batch.make(decode_seqs=5.0, decode_ctx=CTX), "masked")
    routed = padded_to_sizes((8, 16), 1, Batch.make(decode_seqs=5.0, decode_ctx=CTX))
    assert _row(_ops(env, masked, tp8), "moe.experts", "weight_bytes") == \
        pytest.approx(_row(_ops(env, routed, tp8), "moe.experts", "weight_bytes"))


def test_identical_dummies_touch_one_more_tokens_experts(env):
    padded = padded_to_sizes((8,), 8, Batch.make(decode_seqs=40.0, decode_ctx=CTX), "one_token")
    one_more = Batch.make(decode_seqs=41.0, decode_ctx=CTX)  # the 40 real tokens and the dummies' one pick set
    assert _row(_ops(env, padded), "moe.experts", "weight_bytes") == \
        pytest.approx(_row(_ops(env, one_more), "moe.experts", "weight_bytes"))
    routed = padded_to_sizes((8,), 8, Batch.make(decode_seqs=40.0, decode_ctx=CTX))
    as_64 = Batch.make(decode_seqs=64.0, decode_ctx=routed.decode_ctx)
    assert _row(_ops(env, routed), "moe.experts", "weight_bytes") == \
        pytest.approx(_row(_ops(env, as_64), "moe.experts", "weight_bytes"))


def test_identical_dummies_load_the_ranks_holding_their_experts(env):
    """At EP = 1 every assignment is on the one rank: 5 real + 3 dummies -> 8·k assignments over the experts
    of 6 tokens (rows per expert = assignments / experts touched); 6 real tokens: 6·k over the same experts."""
    tp8 = Layout(tp=8)
    b = padded_to_sizes((8,), 1, Batch.make(decode_seqs=5.0, decode_ctx=CTX), "one_token")
    six = Batch.make(decode_seqs=6.0, decode_ctx=CTX)
    assert _row(_ops(env, b, tp8), "moe.experts", "weight_bytes") == \
        pytest.approx(_row(_ops(env, six, tp8), "moe.experts", "weight_bytes"))
    assert _row(_ops(env, b, tp8), "moe.experts", "rows")[0] / _row(_ops(env, six, tp8), "moe.experts", "rows")[0] \
        == pytest.approx(8 / 6)


def test_engines_and_bad_values():
    assert (pad_routing("trt"), pad_routing("dynamo-sglang"), pad_routing("vllm-rocm"), pad_routing("atom")) == \
        ("one_token", "masked", "routed", "routed")
    with pytest.raises(SpecError, match="pad_seqs.*at most decode_seqs") as e:
        Batch.make(decode_seqs=4.0, pad_seqs=5.0)
    assert "between 0 and decode_seqs" in e.value.fix
    with pytest.raises(SpecError, match="'zeros' is not one of routed, masked, one_token"):
        Batch.make(decode_seqs=4.0, pad_routing="zeros")
    with pytest.raises(SpecError, match="cuda_graph_pad_routing"):
        Deployment(get_precision("fp4"), Pool(DEP8), cuda_graph_pad_routing="zeros")
    assert np.asarray(Batch.make(decode_seqs=4.0).pad_seqs).tolist() == [0.0]
