"""Model specs: parameter counts against published figures, per-module counts worked by hand from
config.json fields, KV-cache bytes per token, attention labels and the summary JSON.

Published figures (each from the public model card or README it names):
- DeepSeek-V3/R1 README_WEIGHTS: "671B total, 36.6B activated incl. 0.9B output head; MTP 11.5B
  unique"; the paper's headline 37B activated.
- Kimi K2 / K2.5 model card: 1T total (1.03T = 1,026B counted), 32B activated.
- gpt-oss model card (OpenAI, 2025): 116.8B total, 5.1B active per token.
- Llama-3.3-70B: 70.55B (70,553,706,496 parameters on the Hugging Face model page).
- Qwen3-235B-A22B model card: 235B total, 22B activated.
"""

from __future__ import annotations

import json

import pytest

from jalapeno.specs.catalog import load_model


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# ---- totals and actives against published figures ----------------------------------------

@pytest.mark.parametrize(
    "name, published, tol",
    [
        ("deepseek-r1", 671e9, 0.005),        # DeepSeek-V3 README_WEIGHTS: 671B main model
        ("kimi-k2.5", 1.03e12, 0.01),         # Kimi K2 model card: 1.03T (marketed "1T")
        ("gpt-oss-120b", 116.8e9, 0.005),     # gpt-oss model card: 116.8B
        ("llama-3.3-70b", 70.55e9, 0.005),    # HF model page: 70.55B
        ("qwen3-235b-a22b", 235e9, 0.005),    # Qwen3 model card: 235B
    ],
)
def test_total_params_match_published(name, published, tol):
    m = load_model(name)
    assert _rel(m.total_params, published) < tol, (name, m.total_params)


@pytest.mark.parametrize(
    "name, published, tol",
    [
        ("deepseek-r1", 37e9, 0.03),          # DeepSeek-V3 paper: 37B activated
        ("deepseek-r1", 36.6e9, 0.005),       # README_WEIGHTS: 36.6B excl. input embedding
        ("kimi-k2.5", 32e9, 0.03),            # Kimi K2 model card: 32B activated
        ("gpt-oss-120b", 5.1e9, 0.02),        # gpt-oss model card: 5.1B active
        ("qwen3-235b-a22b", 22e9, 0.03),      # Qwen3 model card: 22B activated
    ],
)
def test_active_params_match_published(name, published, tol):
    m = load_model(name)
    assert _rel(m.active_params, published) < tol, (name, m.active_params)


def test_deepseek_mtp_params_match_published():
    # README_WEIGHTS: "MTP 11.5B unique" (14B incl. the shared embedding and head);
    # hand count: 2 norms (2*7168) + eh_proj 2*7168*7168 + one MoE layer 11,507,286,272
    # + shared_head norm 7168 = 11,610,068,224 -> 11.5-11.7B band.
    m = load_model("deepseek-r1")
    assert 11.5e9 <= m.mtp_params <= 11.7e9, m.mtp_params


@pytest.mark.parametrize("name", ["kimi-k2.5", "gpt-oss-120b", "llama-3.3-70b", "qwen3-235b-a22b"])
def test_models_without_mtp_have_zero_mtp_params(name):
    assert load_model(name).mtp_params == 0


def test_llama_is_dense_and_active_is_total_minus_input_embedding():
    m = load_model("llama-3.3-70b")
    assert m.moe is None
    # every weight is touched except the input-embedding table: 128256 * 8192 = 1,050,673,152
    assert m.total_params - m.active_params == 128256 * 8192


# ---- per-module counts by hand from config.json ------------------------------------------

def test_deepseek_attention_params_per_layer_by_hand():
    # h 7168, q_lora 1536, 128 heads x (nope 128 + rope 64) = 192 q dims, kv_lora 512,
    # kv_a output 512 + 64 = 576, kv_b 128 heads x (nope 128 + v 128) = 256, o_proj 128 x 128 -> h.
    expected = (7168 * 1536          # q_a_proj
                + 1536               # q_a_layernorm
                + 1536 * 128 * 192   # q_b_proj
                + 7168 * 576         # kv_a_proj_with_mqa
                + 512                # kv_a_layernorm
                + 512 * 128 * 256    # kv_b_proj
                + 128 * 128 * 7168)  # o_proj
    assert expected == 187_107_328  # ~187 M params per MLA layer, summed by hand above
    assert load_model("deepseek-r1").attention_params() == expected


def test_kimi_attention_params_per_layer_by_hand():
    # Same MLA shapes as DeepSeek with 64 heads: ~101 M per layer, summed by hand here.
    expected = (7168 * 1536 + 1536 + 1536 * 64 * 192 + 7168 * 576 + 512
                + 512 * 64 * 256 + 64 * 128 * 7168)
    assert load_model("kimi-k2.5").attention_params() == expected


def test_deepseek_expert_params_by_hand():
    # gate, up, down of one expert: 3 x h x moe_intermediate = 3 * 7168 * 2048 = 44,040,192
    m = load_model("deepseek-r1")
    assert m.expert_params() == 3 * 7168 * 2048
    assert m.shared_expert_params() == 3 * 7168 * 2048  # n_shared_experts = 1


def test_deepseek_total_params_by_hand():
    # 3 dense layers + 58 MoE layers + embedding + head + final norm.
    attn = 187_107_328
    norms = 2 * 7168
    dense_layer = attn + 3 * 7168 * 18432 + norms
    router = 7168 * 256 + 256                       # gate + e_score_correction_bias (noaux_tc)
    moe_layer = attn + router + 256 * 3 * 7168 * 2048 + 3 * 7168 * 2048 + norms
    total = 3 * dense_layer + 58 * moe_layer + 2 * 129280 * 7168 + 7168
    assert load_model("deepseek-r1").total_params == total


def test_deepseek_v32_indexer_adds_its_params():
    # DSA indexer per layer: wq_b 1536 -> 64 x 128, wk 7168 -> 128, k_norm (weight + bias) 2 x 128,
    # weights_proj 7168 -> 64: 61 layers x ~14 M = ~0.85 B (worked by hand).
    per_layer = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64
    v32, r1 = load_model("deepseek-v3.2"), load_model("deepseek-r1")
    assert v32.attention_params() - r1.attention_params() == per_layer
    assert _rel(v32.total_params - r1.total_params, 0.85e9) < 0.01


def test_gpt_oss_expert_params_by_hand():
    # gate_up [2880 -> 2 x 2880] with bias 2 x 2880, down [2880 -> 2880] with bias 2880.
    m = load_model("gpt-oss-120b")
    assert m.expert_params() == 3 * 2880 * 2880 + 2 * 2880 + 2880
    # 114.7 B of the model card's 116.8 B sit in the experts (36 layers x 128 experts, worked by hand)
    assert _rel(36 * 128 * m.expert_params(), 114.7e9) < 0.005


# ---- KV cache bytes per token -------------------------------------------------------------

def test_deepseek_fp8_kv_bytes_per_token():
    # one latent of kv_lora 512 + rope 64 per token per layer, 61 layers, 1 B each (FP8)
    assert load_model("deepseek-r1").kv_bytes_per_token(1.0) == 61 * (512 + 64) == 35_136
    # BF16: 2 x 35,136 = 70,272 B
    assert load_model("deepseek-r1").kv_bytes_per_token(2.0) == 70_272


def test_kimi_kv_bytes_per_token_same_latent_as_deepseek():
    assert load_model("kimi-k2.5").kv_bytes_per_token(1.0) == 61 * 576


def test_deepseek_v32_adds_indexer_key_cache():
    # MLA latent as R1 plus, per layer, the indexer key: 128 fp8 values + one fp32 scale
    # (vLLM indexer cache layout: head_dim + head_dim/128 * 4 B) = 132 B; always fp8.
    v32 = load_model("deepseek-v3.2")
    assert v32.kv_bytes_per_token(1.0) == pytest.approx(61 * (576 + 128 + 4))
    assert v32.kv_bytes_per_token(2.0) == pytest.approx(61 * (576 * 2 + 128 + 4))
    assert v32.kv_bytes_per_token(1.0) > load_model("deepseek-r1").kv_bytes_per_token(1.0)


@pytest.mark.parametrize("ctx", [64, 128, 8192])
def test_gpt_oss_sliding_layers_capped_at_window(ctx):
    # 8 kv heads x 64 dims x (K and V) x 2 B = 2048 B per token per layer; 18 full layers always,
    # 18 sliding layers (window 128) hold only min(128, L) of the L tokens.
    expected = 18 * 2 * 8 * 64 * 2 + 18 * 2048 * min(128, ctx) / ctx
    got = load_model("gpt-oss-120b").kv_bytes_per_token(2.0, context_tokens=ctx)
    assert got == pytest.approx(expected, rel=1e-12)


def test_gpt_oss_kv_without_context_counts_every_layer():
    assert load_model("gpt-oss-120b").kv_bytes_per_token(2.0) == 36 * 2048


@pytest.mark.parametrize(
    "name, expected",
    [
        ("llama-3.3-70b", 80 * 2 * 8 * 128 * 2),    # 327,680 B BF16
        ("qwen3-235b-a22b", 94 * 2 * 4 * 128 * 2),  # 192,512 B BF16
    ],
)
def test_gqa_kv_bytes_per_token(name, expected):
    assert load_model(name).kv_bytes_per_token(2.0) == expected


# ---- labels and summary -------------------------------------------------------------------

@pytest.mark.parametrize(
    "name, kind",
    [("deepseek-r1", "mla"), ("deepseek-v3.2", "mla"), ("kimi-k2.5", "mla"),
     ("gpt-oss-120b", "gqa"), ("llama-3.3-70b", "gqa"), ("qwen3-235b-a22b", "gqa")],
)
def test_attention_kind(name, kind):
    m = load_model(name)
    assert m.attention.kind == kind
    assert m.attention_label.lower().startswith(kind)


def test_attention_labels_name_the_variants():
    assert "DSA" in load_model("deepseek-v3.2").attention_label
    label = load_model("gpt-oss-120b").attention_label
    assert "sinks" in label and "sliding" in label and "128" in label


@pytest.mark.parametrize("name", ["deepseek-r1", "gpt-oss-120b", "llama-3.3-70b"])
def test_summary_is_json_with_required_keys(name):
    m = load_model(name)
    s = json.loads(json.dumps(m.summary()))
    for key in ("total_params", "active_params", "mtp_params", "num_layers", "attention",
                "kv_bytes_per_token"):
        assert key in s, key
    assert s["total_params"] == m.total_params
    assert s["active_params"] == m.active_params
    assert s["num_layers"] == m.num_layers
    assert s["attention"] == m.attention.kind


def test_deepseek_summary_values():
    s = load_model("deepseek-r1").summary()
    assert s["num_layers"] == 61
    assert s["attention"] == "mla"
    assert s["kv_bytes_per_token"] == 35_136  # FP8 KV of the release preset
