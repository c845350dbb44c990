"""KV-cache dtypes independent of the weights, attention math formats, and precision validation.

Every expected figure is computed by hand from the model configs (layers, KV heads, head dim,
MLA latent) and the engines' published layouts, never from the code under test.
"""

from __future__ import annotations

import pytest

from jalapeno.cost.step import Batch, step_cost
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import kv_bytes_per_seq_per_chip, kv_token_layer_bytes, weight_bytes_per_chip
from jalapeno.deploy.kv_capacity import kv_capacity_seqs
from jalapeno.errors import SpecError, UnknownNameError
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import MODULES, PRESETS, get_precision
from jalapeno.specs.precision_checks import check_precision
from jalapeno.specs.kv_cache import KV_FORMATS, get_kv_format
from jalapeno.specs.model_config import model_from_config

# ---- hand-computed KV bytes per token (whole model, one replica) -----------------------------
# DeepSeek-R1: 61 layers x (512 latent + 64 rope).  FlashMLA fp8_ds_mla: 512 x 1 B + 4 fp32 scales
# (16 B) + 64 bf16 rope (128 B) = 656 B.  NVFP4: 4 bits + one 1-byte scale per 16 = 0.5625 B.
# Qwen3-235B-A22B: 94 layers x 4 KV heads x 128 x 2 (K, V).  gpt-oss-120b: 36 layers x 8 x 64 x 2.
HAND = {
    ("deepseek-r1", "bf16"): 61 * 576 * 2,
    ("deepseek-r1", "fp8"): 61 * 576 * 1,
    ("deepseek-r1", "fp8_e5m2"): 61 * 576 * 1,
    ("deepseek-r1", "fp8_ds_mla"): 61 * (512 + 16 + 128),
    ("deepseek-r1", "nvfp4"): 61 * 576 * 9 / 16,
    ("qwen3-235b-a22b", "bf16"): 94 * 4 * 128 * 2 * 2,
    ("qwen3-235b-a22b", "fp8"): 94 * 4 * 128 * 2 * 1,
    ("qwen3-235b-a22b", "nvfp4"): 94 * 4 * 128 * 2 * 9 / 16,
    ("gpt-oss-120b", "bf16"): 36 * 8 * 64 * 2 * 2,
    ("gpt-oss-120b", "fp8"): 36 * 8 * 64 * 2 * 1,
    ("gpt-oss-120b", "nvfp4"): 36 * 8 * 64 * 2 * 9 / 16,
}


@pytest.mark.parametrize("model, kv", sorted(HAND))
def test_kv_bytes_per_token_by_dtype(model, kv):
    assert load_model(model).kv_bytes_per_token(get_kv_format(kv)) == pytest.approx(HAND[(model, kv)], rel=1e-12)


def test_flashmla_fp8_layout_is_656_bytes():
    assert KV_FORMATS["fp8_ds_mla"].mla_token_bytes(512, 64) == 656.0


def test_kv_token_layer_bytes_one_layer_one_chip():
    """One token, one layer, one chip: DeepSeek-R1 MLA keeps the whole 512 + 64 latent on every
    rank (TP8 does not split it) -> 576 B in FP8; Qwen3-235B at TP4 holds 1 of 4 KV heads ->
    1 x 128 x 2 (K, V) x 2 B = 512 B in BF16."""
    ds, qw = load_model("deepseek-r1"), load_model("qwen3-235b-a22b")
    assert kv_token_layer_bytes(ds, Layout(tp=8), get_precision("fp8")) == 576
    assert kv_token_layer_bytes(qw, Layout(tp=4), get_precision("fp8").with_options(kv="bf16")) == 512


def test_qwen3_fp8_weights_tp4_h100_default_bf16_kv():
    """The issue's example: FP8 weights, engines' default BF16 KV, 4 x H100 TP4 ->
    94 layers x 1 KV head per rank x 128 x 2 (K, V) x 2 B = 48,128 B per token per GPU, and
    half the tokens FP8 KV would allow."""
    m, lay = load_model("qwen3-235b-a22b"), Layout(tp=4)
    prec_bf16 = get_precision("fp8").with_options(kv="bf16")
    prec_fp8 = get_precision("fp8")
    assert float(kv_bytes_per_seq_per_chip(m, lay, prec_bf16, 1)) == 94 * 1 * 128 * 2 * 2 == 48_128
    assert float(kv_bytes_per_seq_per_chip(m, lay, prec_fp8, 1)) == 24_064
    h100, eff = load_system("h100"), Efficiency()
    cap16 = kv_capacity_seqs(m, h100, lay, prec_bf16, [4096.0], [64.0], eff)[0]
    cap8 = kv_capacity_seqs(m, h100, lay, prec_fp8, [4096.0], [64.0], eff)[0]
    assert cap16 > 0
    assert cap16 / cap8 == pytest.approx(0.5, rel=1e-12)


def test_fp8_checkpoint_of_a_gqa_model_defaults_to_bf16_kv():
    """Engines keep the KV in BF16 unless told (vLLM/SGLang --kv-cache-dtype auto)."""
    import json
    from importlib import resources

    cfg = json.loads((resources.files("jalapeno") / "data" / "models" / "qwen3-235b-a22b.json").read_text())
    cfg["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    m = model_from_config(cfg, "qwen3-fp8")
    p = get_precision(m.default_precision)
    assert p.kv_cache.name == "bf16" and p.modules["routed_experts"].weight.name == "fp8"
    assert float(kv_bytes_per_seq_per_chip(m, Layout(tp=4), p, 1)) == 48_128
    cfg["quantization_config"]["kv_cache_scheme"] = {"num_bits": 8, "type": "float"}
    assert get_precision(model_from_config(cfg, "q").default_precision).kv_cache.name == "fp8"


def test_gpt_oss_per_gpu_kv_with_sliding_layers():
    # TP8: one KV head per rank; 18 full layers hold 8192 tokens, 18 sliding layers 128
    m, lay = load_model("gpt-oss-120b"), Layout(tp=8)
    per_tok_layer_fp8 = 2 * 1 * 64 * 1
    want = (18 * 8192 + 18 * 128) * per_tok_layer_fp8
    got = float(kv_bytes_per_seq_per_chip(m, lay, get_precision("mxfp4").with_options(kv="fp8"), 8192))
    assert got == want == 19_169_280


def test_kv_dtype_reaches_the_decode_attention_reads():
    m, pr = load_model("deepseek-r1"), load_pricer("h200")
    batch = Batch.make(decode_seqs=64, decode_ctx=4096)
    sc = step_cost(m, pr, Layout(dp=8, ep=8), get_precision("fp8").with_options(kv="fp8_ds_mla"), batch)
    i = sc.ops.name.index("attn.mla_decode")
    assert float(sc.ops.kv_bytes[i, 0]) == pytest.approx(8 * 4096 * 656 * 61, rel=1e-12)


def test_kv_transfer_uses_the_kv_layout():
    from jalapeno.serve.disagg import kv_transfer_s

    m, pr = load_model("deepseek-r1"), load_pricer("gb200-nvl72")
    t8 = kv_transfer_s(m, pr, get_precision("fp8"), 8192, 8, 8, 16)
    t16 = kv_transfer_s(m, pr, get_precision("fp8").with_options(kv="bf16"), 8192, 8, 8, 16)
    assert t16 > t8


# ---- attention math format ------------------------------------------------------------------

def test_fp8_attention_is_flashattention3_ratio_faster_when_compute_bound():
    """On H100 (989 / 1,979 TFLOP/s) FP8 attention runs at FA3's measured 1.2 PFLOP/s vs 740
    TFLOP/s: compute time ratio 1200/740 whatever the BF16 fraction is."""
    m, pr = load_model("deepseek-r1"), load_pricer("h100", "spec")
    batch = Batch.make(decode_seqs=256, decode_ctx=8192)
    lay = Layout(dp=16, ep=16)
    b = step_cost(m, pr, lay, get_precision("fp8"), batch)
    f = step_cost(m, pr, lay, get_precision("fp8").with_options(attention="fp8"), batch)
    i = b.ops.name.index("attn.mla_decode")
    assert b.ops.fmt[i] == "bf16" and f.ops.fmt[i] == "fp8"
    assert b.ops.flop[i, 0] == f.ops.flop[i, 0]
    assert b.times.compute_s[i, 0] / f.times.compute_s[i, 0] == pytest.approx(1200 / 740, rel=2e-3)


def test_attention_fp8_peak_can_be_set_per_format():
    e = Efficiency().with_overrides({"attention": {"fp8": {"peak_fraction": 0.5}}})
    assert e.attention_peak("fp8") == 0.5 and e.attention_peak("bf16") == 0.65


def test_fp4_preset_computes_attention_in_fp8():
    sc = step_cost(load_model("deepseek-r1"), load_pricer("b200"), Layout(dp=8, ep=8), get_precision("fp4"),
                   Batch.make(decode_seqs=64, decode_ctx=1024, prefill_tokens=512))
    assert {sc.ops.fmt[sc.ops.name.index(n)] for n in ("attn.mla_decode", "attn.mla_prefill")} == {"fp8"}


# ---- descriptions say what the presets compute -----------------------------------------------

_WEIGHT_WORD = {"bf16": "BF16", "fp8": "FP8", "fp8_e4m3": "FP8", "nvfp4": "NVFP4", "mxfp4": "MXFP4", "int4": "INT4", "int4_g64": "INT4",
                "int4_g128": "INT4"}
_MODULE_WORDS = {"attention": "attention projections", "dense_ffn": "dense FFN", "routed_experts": "routed experts",
                 "shared_experts": "shared experts", "embedding": "embedding", "lm_head": "LM head"}


@pytest.mark.parametrize("name", list(PRESETS))
def test_description_claims_match_the_fields(name):
    p = PRESETS[name]
    claims, _, source = p.description.partition(". Source: ")
    assert source
    clauses = claims.split("; ")
    for m in MODULES:
        mp = p.modules[m]
        owner = [c for c in clauses if _MODULE_WORDS[m] in c and "math)" in c]
        assert len(owner) == 1, (m, clauses)
        assert owner[0].startswith(_WEIGHT_WORD[mp.weight.name]), (m, owner)
        assert owner[0].endswith(f"({mp.compute.upper()} math)"), (m, owner)
    assert f"attention math {p.attention_compute.upper()}" in clauses
    assert any(c.startswith("KV cache ") and ("BF16" if p.kv_cache.name == "bf16" else "FP8") in c for c in clauses)


def test_overridden_name_reads_back():
    p = get_precision("fp8").with_options(kv="bf16", attention="fp8")
    assert p.name == "fp8,kv=bf16,attn=fp8"
    q = get_precision(p.name)
    assert (q.kv_cache, q.attention_compute, q.modules) == (p.kv_cache, p.attention_compute, p.modules)
    assert get_precision("fp8").with_options(kv="fp8_e4m3") is get_precision("fp8")  # same dtype: no rename


@pytest.mark.parametrize("bad, field", [("fp8,kv=fp9", "--kv-dtype"), ("fp8,attn=fp4", "--attention-dtype"),
                                        ("fp8,speed=2", "precision")])
def test_bad_override_names_the_field(bad, field):
    with pytest.raises(UnknownNameError) as ei:
        get_precision(bad)
    assert ei.value.field == field


# ---- validation against model and chip --------------------------------------------------------

def test_fp4_preset_on_a_dense_model_is_refused():
    with pytest.raises(SpecError) as ei:
        check_precision(get_precision("fp4"), load_model("llama-3.3-70b"), load_system("b200").chip)
    assert "routed experts" in ei.value.problem and "-p nvfp4" in ei.value.fix


def test_nvfp4_dense_weights_hand_count():
    """Llama-3.3-70B NVFP4: every linear layer 0.5625 B/elem, embedding and head BF16."""
    h, layers, heads, kvh, d, inter, vocab = 8192, 80, 64, 8, 128, 28672, 128256
    linear = layers * (h * (heads + 2 * kvh) * d + heads * d * h + 3 * h * inter)
    want = linear * 0.5625 + 2 * vocab * h * 2
    got = weight_bytes_per_chip(load_model("llama-3.3-70b"), Layout(), get_precision("nvfp4"))
    assert got == pytest.approx(want, rel=1e-12)


def test_fp4_on_hopper_is_an_error_unless_fallback_is_asked():
    m, chip = load_model("llama-3.3-70b"), load_system("h100").chip
    with pytest.raises(SpecError) as ei:
        check_precision(get_precision("nvfp4"), m, chip)
    assert "FP4" in ei.value.problem and "--compute-fallback" in ei.value.fix
    check_precision(get_precision("nvfp4").with_options(compute_fallback=True), m, chip)


def test_mla_only_and_blackwell_only_kv_layouts_are_refused_elsewhere():
    with pytest.raises(SpecError) as ei:
        check_precision(get_precision("mxfp4").with_options(kv="fp8_ds_mla"), load_model("gpt-oss-120b"),
                        load_system("h100").chip)
    assert ei.value.field == "--kv-dtype" and "MLA" in ei.value.problem
    with pytest.raises(SpecError) as ei:
        check_precision(get_precision("fp8").with_options(kv="nvfp4"), load_model("deepseek-r1"),
                        load_system("h200").chip)
    assert ei.value.field == "--kv-dtype" and "FP4" in ei.value.problem
