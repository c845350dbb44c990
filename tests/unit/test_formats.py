"""Number formats and precision presets: stored bytes per element with block scales, the module
formats each preset claims, and the compute-format fallback on chips without FP4.

Layouts: FP8 e4m3 with one fp32 scale per 128x128 block (DeepSeek-V3 quantization_config);
MXFP4 4-bit + one 8-bit E8M0 scale per 32 (OCP MX spec v1.0); NVFP4 4-bit + one FP8 scale per 16
(NVIDIA); INT4 group 32 with a bf16 scale (Kimi K2.5 compressed-tensors).
"""

from __future__ import annotations

import pytest

from jalapeno.errors import UnknownNameError
from jalapeno.specs.catalog import load_system
from jalapeno.specs.formats import (
    FORMATS,
    MODULES,
    PRESETS,
    get_format,
    get_precision,
    resolve_compute_format,
)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("bf16", 16 / 8),                        # 2 B
        ("fp8", (8 + 32 / (128 * 128)) / 8),     # 1 B + fp32 scale per 16,384 elements
        ("mxfp4", (4 + 8 / 32) / 8),             # 4.25 bits
        ("nvfp4", (4 + 8 / 16) / 8),             # 4.5 bits
        ("int4", (4 + 16 / 32) / 8),             # 4.5 bits
    ],
)
def test_bytes_per_elem(name, expected):
    assert get_format(name).bytes_per_elem == pytest.approx(expected, rel=1e-12)


def test_fp8_is_about_one_byte():
    b = FORMATS["fp8"].bytes_per_elem
    assert 1.0 < b < 1.001  # scales add 4 B per 16,384 elements = 0.024 %


def test_unknown_format_names_the_valid_ones():
    with pytest.raises(UnknownNameError) as ei:
        get_format("fp6")
    assert "fp6" in str(ei.value) and "mxfp4" in str(ei.value)


@pytest.mark.parametrize("name", ["bf16", "fp8", "fp4", "mxfp4", "int4"])
def test_presets_exist_and_cover_every_module(name):
    p = get_precision(name)
    assert p.name == name
    assert set(MODULES) <= set(p.modules)
    assert p.description


def test_unknown_preset_lists_the_valid_ones():
    with pytest.raises(UnknownNameError) as ei:
        get_precision("fp2")
    msg = str(ei.value)
    assert "fp2" in msg and "Fix:" in msg
    for name in PRESETS:
        assert name in msg


def _w(preset: str, module: str) -> str:
    return get_precision(preset).modules[module].weight.name


def test_bf16_preset_all_bf16():
    p = get_precision("bf16")
    assert all(_w("bf16", m) == "bf16" for m in MODULES)
    assert p.kv_cache.bytes_per_elem == 2.0


def test_fp8_preset_linear_layers_fp8_embeddings_bf16_kv_fp8():
    for m in ("attention", "dense_ffn", "routed_experts", "shared_experts"):
        assert _w("fp8", m) == "fp8", m
        assert get_precision("fp8").modules[m].compute == "fp8"
    assert _w("fp8", "embedding") == "bf16" and _w("fp8", "lm_head") == "bf16"
    assert get_precision("fp8").kv_cache.bytes_per_elem == 1.0


def test_gpt_oss_mxfp4_preset():
    # gpt-oss-120b release: MXFP4 expert MLPs; attention, router, embeddings, head in BF16.
    assert _w("mxfp4", "routed_experts") == "mxfp4"
    for m in ("attention", "embedding", "lm_head"):
        assert _w("mxfp4", m) == "bf16", m
    assert get_precision("mxfp4").kv_cache.bytes_per_elem == 2.0


def test_fp4_preset_nvfp4_experts_fp8_attention():
    # nvidia/DeepSeek-R1-FP4: NVFP4 routed experts (W4A4), FP8 attention, FP8 KV.
    p = get_precision("fp4")
    assert _w("fp4", "routed_experts") == "nvfp4"
    assert p.modules["routed_experts"].compute == "fp4"
    assert _w("fp4", "attention") == "fp8"
    assert p.kv_cache.bytes_per_elem == 1.0


def test_int4_preset_routed_experts_only():
    # Kimi K2.5 release: INT4 weight-only routed experts (W4A16), everything else BF16.
    p = get_precision("int4")
    assert _w("int4", "routed_experts") == "int4"
    assert p.modules["routed_experts"].compute == "bf16"
    for m in ("attention", "shared_experts", "dense_ffn", "embedding", "lm_head"):
        assert _w("int4", m) == "bf16", m


def test_weight_bytes_uses_module_format():
    p = get_precision("mxfp4")
    assert p.weight_bytes("routed_experts") == pytest.approx(4.25 / 8)
    assert p.weight_bytes("attention") == 2.0


def test_fp4_falls_back_to_fp8_on_h100():
    h100 = load_system("h100").chip.formats
    assert "fp4" not in h100
    assert resolve_compute_format("fp4", h100) == "fp8"
    assert resolve_compute_format("fp8", h100) == "fp8"
    assert resolve_compute_format("bf16", h100) == "bf16"


def test_fp4_kept_on_blackwell():
    assert resolve_compute_format("fp4", load_system("gb200-nvl72").chip.formats) == "fp4"


def test_fp4_falls_back_to_bf16_without_fp8():
    assert resolve_compute_format("fp4", frozenset({"bf16"})) == "bf16"


def test_unknown_compute_format():
    with pytest.raises(UnknownNameError):
        resolve_compute_format("fp6", frozenset({"bf16"}))
