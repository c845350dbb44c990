"""NVIDIA ModelOpt checkpoints (``quant_method = "modelopt"``) read to the preset they are stored in (break49: they
were refused as an unknown method). The config snippets are written from the field definitions vLLM reads
(vllm-project/vllm @00155cde vllm/model_executor/layers/quantization/modelopt.py ``ModelOptQuantConfigBase.from_config``:
the hf_quant_config.json form nested under ``quantization`` with ``quant_algo``, ``kv_cache_quant_algo``,
``group_size``, ``exclude_modules``; the config.json form flat with ``quant_algo``, ``kv_cache_scheme``, ``ignore``;
QUANT_ALGOS, KV_CACHE_QUANT_ALGOS) and from the releases' published configs named per case. Bytes per weight by
hand: NVFP4 = (4 + 8/16) / 8 = 0.5625 B (e2m1 with one e4m3 scale per 16); FP8 per tensor = 1 B.
"""

from __future__ import annotations

import json
from importlib import resources

import pytest
from cli_runner import check_error, run

from jalapeno.errors import SpecError
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_config import model_from_config


def _cfg(model: str, q: dict) -> dict:
    cfg = json.loads((resources.files("jalapeno") / "data" / "models" / f"{model}.json").read_text())
    cfg = {k: v for k, v in cfg.items() if k != "quantization_config"}
    cfg["quantization_config"] = q
    return cfg


def _precision(model: str, q: dict) -> str:
    return model_from_config(_cfg(model, q), "m").default_precision


#: nvidia/Llama-3.3-70B-Instruct-FP4 hf_quant_config.json: NVFP4 group 16, FP8 KV, lm_head excluded
LLAMA_FP4 = {
    "quant_method": "modelopt",
    "quantization": {
        "quant_algo": "NVFP4",
        "kv_cache_quant_algo": "FP8",
        "group_size": 16,
        "exclude_modules": ["lm_head"],
    },
}
#: nvidia/Llama-3.3-70B-Instruct-FP8 hf_quant_config.json: per-tensor FP8 weights, FP8 KV
LLAMA_FP8 = {
    "quant_method": "modelopt",
    "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]},
}
#: nvidia/MiniMax-M2.5-NVFP4 config.json form: attention, router gate and lm_head excluded, FP8 KV
MINIMAX_FP4 = {
    "quant_method": "modelopt",
    "quant_algo": "NVFP4",
    "group_size": 16,
    "kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "float"},
    "ignore": ["lm_head", "model.layers.*.block_sparse_moe.gate", "model.layers.*.self_attn*"],
}


def test_nvidia_llama_fp4_is_nvfp4_in_every_linear_layer():
    p = get_precision(_precision("llama-3.3-70b", LLAMA_FP4))
    assert p.name == "nvfp4"
    for m in ("attention", "dense_ffn"):
        f = p.modules[m].weight
        assert f.element_bits / 8 + f.scale_bits / f.block_elems / 8 == pytest.approx(0.5625)
    assert p.kv_cache.name == "fp8"


def test_nvidia_llama_fp8_is_per_tensor_fp8():
    p = get_precision(_precision("llama-3.3-70b", LLAMA_FP8))
    assert p.name == "fp8-tensor" and p.modules["dense_ffn"].weight.element_bits == 8
    assert p.kv_cache.name == "fp8"


def test_an_moe_nvfp4_checkpoint_with_bf16_attention_is_the_fp4_preset():
    p = get_precision(_precision("minimax-m2.5", MINIMAX_FP4))
    assert p.name == "fp4" and p.modules["routed_experts"].weight.name == "nvfp4"


def test_deepseek_nvfp4_nested_form_is_fp4():
    # nvidia/DeepSeek-R1-0528-FP4: attention projections BF16 (excluded), experts NVFP4, FP8 KV
    q = {
        "quant_method": "modelopt",
        "quantization": {
            "quant_algo": "NVFP4",
            "kv_cache_quant_algo": "FP8",
            "group_size": 16,
            "exclude_modules": ["lm_head", "model.layers.0.self_attn*"],
        },
    }
    assert _precision("deepseek-r1", q) == "fp4"


@pytest.mark.parametrize(
    "q, preset",
    [
        # no KV algo on a GQA model: 16-bit KV (the engines' default)
        ({"quant_method": "modelopt", "quant_algo": "FP8"}, "fp8-tensor,kv=bf16"),
        # per-channel weights, per-token activations: per-tensor FP8's bytes (scales ignored)
        (
            {"quant_method": "modelopt", "quant_algo": "FP8_PER_CHANNEL_PER_TOKEN", "kv_cache_quant_algo": "FP8"},
            "fp8-tensor",
        ),
        # vLLM upper-cases the algo ("ModelOpt may emit lowercase") and reads NVFP4 KV
        (
            {"quant_method": "modelopt", "quantization": {"quant_algo": "nvfp4", "kv_cache_quant_algo": "nvfp4"}},
            "nvfp4,kv=nvfp4",
        ),
        # an MoE NVFP4 checkpoint that quantises its attention too: every linear layer
        (
            {"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["lm_head"], "kv_cache_quant_algo": "FP8"},
            "nvfp4",
        ),
    ],
)
def test_modelopt_forms(q, preset):
    model = "qwen3-235b-a22b" if q.get("ignore") == ["lm_head"] else "llama-3.3-70b"
    assert _precision(model, q) == preset


@pytest.mark.parametrize(
    "model, q, words",
    [
        ("llama-3.3-70b", {"quant_method": "modelopt"}, ["quant_algo", "missing", "NVFP4", "FP8"]),
        (
            "llama-3.3-70b",
            {"quant_method": "modelopt", "quant_algo": "W4A16_NVFP4"},
            ["quant_algo", "not modelled", "NVFP4"],
        ),
        (
            "llama-3.3-70b",
            {"quant_method": "modelopt", "quant_algo": "INT8_SQ"},
            ["quant_algo", "unknown", "INT8_SQ", "FP8_PER_CHANNEL_PER_TOKEN"],
        ),
        (
            "llama-3.3-70b",
            {"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4", "group_size": 32}},
            ["quantization.group_size", "16", "32"],
        ),
        (
            "llama-3.3-70b",
            {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "INT8"},
            ["kv_cache_quant_algo", "INT8", "FP8, NVFP4"],
        ),
        (
            "llama-3.3-70b",
            {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_scheme": {"type": "int", "num_bits": 8}},
            ["kv_cache_scheme", "num_bits: 8"],
        ),
        (
            "llama-3.3-70b",
            {"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["model.layers.*.self_attn*"]},
            ["ignore", "dense model", "-p nvfp4"],
        ),
        ("llama-3.3-70b", {"quant_method": "modelopt", "quantization": "NVFP4"}, ["quantization", "object"]),
    ],
)
def test_modelopt_configs_no_preset_stores_are_refused(model, q, words):
    with pytest.raises(SpecError) as ei:
        model_from_config(_cfg(model, q), "m", "cfg.json")
    msg = str(ei.value)
    for w in words:
        assert w in msg, msg
    assert "Fix:" in msg


def test_a_modelopt_config_from_the_cli(capsys, tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(_cfg("llama-3.3-70b", LLAMA_FP4)))
    code, out, err = run(capsys, "models", "show", str(p))
    assert code == 0, err
    assert "nvfp4" in out and "quant_method modelopt" in out
    p.write_text(json.dumps(_cfg("llama-3.3-70b", {"quant_method": "modelopt", "quant_algo": "MXFP8"})))
    check_error(*run(capsys, "models", "show", str(p)), "quant_algo", "MXFP8", "not modelled")
