"""MiniMax-M2.5 in the catalog: sizes by hand from its config.json, its per-layer q/k norm priced, and
every feature no spec field prices refused with a message naming the field."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest

from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.step import Batch
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.aic_rows import AIC_MODELS, row_precision
from jalapeno.specs.catalog import load_efficiency, load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_config import model_from_config


def _cfg() -> dict:
    return json.loads((resources.files("jalapeno") / "data" / "models" / "minimax-m2.5.json").read_text())


def test_parameter_count_by_hand_matches_the_published_230b_10b():
    m = load_model("minimax-m2.5")
    h, d, layers, vocab = 3072, 128, 62, 200064
    attn = h * (48 + 2 * 8) * d + 48 * d * h + (48 + 8) * d  # q,k,v,o + per-layer q/k norm weights
    expert = 3 * h * 1536
    router = h * 256 + 256                                      # gate + e_score_correction_bias
    layer = attn + router + 256 * expert + 2 * h
    total = layers * layer + 2 * vocab * h + h                  # untied embedding and head, final norm
    active = layers * (attn + router + 8 * expert + 2 * h) + vocab * h + h
    assert m.total_params == total
    assert m.active_params == active
    # MiniMax-M2 model card: "230 billion total parameters with 10 billion active parameters"
    assert total / 1e9 == pytest.approx(230, rel=0.01)
    assert active / 1e9 == pytest.approx(10, rel=0.05)
    assert (m.moe.num_experts, m.moe.top_k, m.moe.num_shared, m.num_dense_layers) == (256, 8, 0, 0)
    assert m.moe.router_bias and m.moe.aux_loss_free
    assert m.mtp_layers == 3 and m.max_context == 196608


def test_kv_bytes_per_token_by_hand():
    m = load_model("minimax-m2.5")
    # 62 layers x K and V x 8 KV heads x 128 dims: BF16 2 bytes, FP8 1 byte
    assert m.kv_bytes_per_token(2) == 62 * 2 * 8 * 128 * 2 == 253_952
    assert m.kv_bytes_per_token(1) == 126_976
    assert m.default_precision == "fp8,kv=bf16"  # block-128 FP8 weights, no KV scales in the checkpoint


def test_attention_features_are_read():
    a = load_model("minimax-m2.5").attention
    assert (a.kind, a.num_heads, a.num_kv_heads, a.head_dim) == ("gqa", 48, 8, 128)
    assert a.qk_norm and a.qk_norm_tp and a.rotary_dim == 64 and not a.windows


def test_per_layer_qk_norm_adds_one_small_all_reduce_per_layer_under_tp():
    m = load_model("minimax-m2.5")
    chip = load_system("b200").chip
    eff = load_efficiency("b200")
    batch = Batch.make(decode_seqs=np.array([64.0]), decode_ctx=np.array([2048.0]))
    prec = get_precision("fp8")
    _, colls = build_step_ops(m, chip, Layout(tp=4), prec, batch, eff)
    i = list(colls.name).index("attn.qk_norm_all_reduce")
    # 64 decode tokens x (q, k) partial variances x fp32, once per layer of the 62
    assert colls.bytes[i][0] == 64 * 2 * 4
    assert colls.calls[i] == 62
    _, single = build_step_ops(m, chip, Layout(tp=1), prec, batch, eff)
    assert "attn.qk_norm_all_reduce" not in list(single.name)


@pytest.mark.parametrize("change, field, text", [
    ({"attn_type_list": [0] + [1] * 61}, "attn_type_list", "linear (lightning) attention"),
    ({"attn_type_list": [1] * 3}, "attn_type_list", "one attention type per layer"),
    ({"qk_norm_type": "per_head"}, "qk_norm_type", "not modelled"),
    ({"partial_rotary_factor": 0.25}, "rotary_dim", "disagrees with partial_rotary_factor"),
    ({"rotary_dim": 256}, "rotary_dim", "<= head_dim 128"),
    ({"shared_intermediate_size": 1536}, "shared_intermediate_size", "shared expert is not modelled"),
    ({"mtp_transformer_layers": 2}, "mtp_transformer_layers", "MTP modules of 2 layers"),
])
def test_unpriced_features_are_refused_naming_the_field(change, field, text):
    cfg = _cfg() | change
    with pytest.raises(SpecError) as e:
        model_from_config(cfg, "mm")
    assert field in str(e.value) and text in str(e.value)


def test_mtp_off_and_full_rotary_read():
    m = model_from_config(_cfg() | {"use_mtp": False, "rotary_dim": 128}, "mm")
    assert m.mtp_layers == 0 and m.attention.rotary_dim == 0


def test_aiconfigurator_precisions_map_to_the_released_checkpoints():
    assert AIC_MODELS["MiniMaxAI/MiniMax-M2.5"] == "minimax-m2.5"
    # fp8 rows: MiniMaxAI's block-128 FP8 release; fp4 rows: nvidia/MiniMax-M2.5-NVFP4 (NVFP4 experts)
    assert row_precision("minimax-m2.5", "fp8", "MiniMaxAI/MiniMax-M2.5", "fp8") == "fp8"
    assert row_precision("minimax-m2.5", "fp4", "MiniMaxAI/MiniMax-M2.5", "nvfp4") == "fp4"
