"""Issue 17 kind 9: a checkpoint's quantization_config maps to the storage it really has; an
unknown method is refused with the list (it used to read as BF16 weights: 4x INT4's bytes).
Expected bytes per weight are by hand: INT4 group 128 with a 16-bit scale = 4 + 16/128 = 4.125
bits = 0.515625 B; group 32 = 4.5 bits = 0.5625 B; BF16 = 2 B."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from cli_runner import check_error, run
from jalapeno.errors import SpecError
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_config import model_from_config

LLAMA = json.loads((resources.files("jalapeno") / "data" / "models" / "llama-3.3-70b.json").read_text())


def _with(q: dict | None) -> dict:
    cfg = {k: v for k, v in LLAMA.items() if k != "quantization_config"}
    if q is not None:
        cfg["quantization_config"] = q
    return cfg


def _bytes_per_weight(q: dict) -> float:
    p = get_precision(model_from_config(_with(q), "m").default_precision)
    f = p.modules["dense_ffn"].weight
    return f.element_bits / 8 + (f.scale_bits / f.block_elems / 8 if f.block_elems else 0)


@pytest.mark.parametrize("q, preset, bytes_per_weight", [
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}, "w4a16", 0.515625),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False}, "w4a16", 0.515625),
    ({"quant_method": "gptq", "bits": 4, "group_size": 32}, "w4a16-g32", 0.5625),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, "w4a16-g32", 0.5625),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}, "targets": ["Linear"]}}},
     "fp8-tensor,kv=bf16", None),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "weights": {"num_bits": 4, "type": "int", "group_size": 128}, "targets": ["Linear"]}}}, "w4a16", 0.515625),
])
def test_known_methods_map_to_their_storage(q, preset, bytes_per_weight):
    m = model_from_config(_with(q), "m")
    assert m.default_precision == preset
    if bytes_per_weight is not None:
        assert _bytes_per_weight(q) == pytest.approx(bytes_per_weight)


def test_no_quantization_config_is_bf16():
    assert model_from_config(_with(None), "m").default_precision == "bf16"


def test_int4_weights_are_a_quarter_of_bf16_plus_scales():
    """A 70B AWQ checkpoint's linear layers take 0.515625 / 2 of the BF16 bytes."""
    awq = get_precision("w4a16").modules["attention"].weight
    assert (awq.element_bits / 8 + awq.scale_bits / awq.block_elems / 8) / 2 == pytest.approx(0.2578125)


@pytest.mark.parametrize("q, words", [
    ({"quant_method": "hqq"}, ["quant_method", "'hqq'", "awq", "gptq", "bitsandbytes"]),
    ({"quant_method": "gptq", "bits": 8}, ["bits", "8-bit", "4-bit only"]),
    # transformers' GPTQConfig(bits, ...) has no default: a file without it does not say its storage
    ({"quant_method": "gptq", "group_size": 128}, ["quantization_config.bits", "without bits", '"bits": 4']),
    ({"quant_method": "bitsandbytes", "load_in_8bit": True}, ["load_in_8bit", "not modelled"]),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 2, "type": "int"}}}},
     ["config_groups", "2-bit"]),
])
def test_unknown_or_unmodelled_methods_are_refused(q, words):
    with pytest.raises(SpecError) as ei:
        model_from_config(_with(q), "m", "cfg.json")
    msg = str(ei.value)
    for w in words:
        assert w in msg, msg
    assert "Fix:" in msg


def test_unknown_method_from_the_cli(capsys, tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(_with({"quant_method": "quanto"})))
    check_error(*run(capsys, "models", "show", str(p)), "quant_method", "quanto", "awq")


@pytest.mark.parametrize("q, preset, bytes_per_weight", [
    # group 64: 4 + 16/64 = 4.25 bits = 0.53125 B (it was priced as group 128, 0.515625 B)
    ({"quant_method": "awq", "bits": 4, "group_size": 64, "zero_point": True}, "w4a16-g64", 0.53125),
    # GPTQ per-channel (group_size -1) is priced as group 128 (module docstring)
    ({"quant_method": "gptq", "bits": 4, "group_size": -1}, "w4a16", 0.515625),
    # 96: the largest preset group at or below it, 64
    ({"quant_method": "gptq", "bits": 4, "group_size": 96}, "w4a16-g64", 0.53125),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "weights": {"num_bits": 4, "type": "int", "strategy": "channel", "group_size": None},
        "targets": ["Linear"]}}}, "w4a16", 0.515625),
])
def test_group_size_sets_the_scale_bytes(q, preset, bytes_per_weight):
    assert model_from_config(_with(q), "m").default_precision == preset
    assert _bytes_per_weight(q) == pytest.approx(bytes_per_weight)


@pytest.mark.parametrize("q, field", [
    ({"quant_method": "awq", "bits": 4, "group_size": 128.5}, "quantization_config.group_size"),
    ({"quant_method": "gptq", "bits": 4, "group_size": "128"}, "quantization_config.group_size"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 0}, "quantization_config.group_size"),
    ({"quant_method": "gptq", "bits": 4, "group_size": True}, "quantization_config.group_size"),
    ({"quant_method": "awq", "bits": 4, "q_group_size": -8}, "quantization_config.q_group_size"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {
        "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": None}, "targets": ["Linear"]}}},
     "quantization_config.config_groups.weights.group_size"),
])
def test_a_group_size_that_is_not_a_whole_number_is_refused(q, field):
    """It was read as 128, silently (128.5, "128", 0 all priced as group 128)."""
    with pytest.raises(SpecError) as ei:
        model_from_config(_with(q), "m", "cfg.json")
    msg = str(ei.value)
    assert msg.startswith(f"cfg.json: {field}: must be a whole number of weights per scale (or -1, per channel)"), msg
    assert "Fix: give the checkpoint's group size, e.g. 128" in msg


def test_awq_without_bits_is_awqconfigs_default_4_bit():
    """transformers' AwqConfig(bits=4, ...) and AutoAWQ's w_bit default to 4: a file that omits it is 4-bit."""
    m = model_from_config(_with({"quant_method": "awq", "group_size": 128}), "m", "cfg.json")
    assert m.default_precision == "w4a16"
