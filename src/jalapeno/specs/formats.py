"""Number formats of stored weights and KV cache, and precision presets per model module.

A *storage format* fixes bytes per element, scales included. A *compute format* names the
tensor-core rate an op runs at (``bf16``, ``fp8``, ``fp4``); which one an op gets follows from
its preset and the chip's support (:func:`resolve_compute_format`).

Sources of the storage layouts:
- FP8 e4m3 with 128x128 weight blocks and one fp32 scale per block: DeepSeek-V3 config.json
  ``quantization_config.weight_block_size``; activations use 1x128 groups (DeepSeek-V3 report §3.3).
- MXFP4: 4-bit e2m1 elements, one 8-bit (E8M0) scale per 32 (OCP Microscaling spec v1.0, 2023).
- NVFP4: 4-bit e2m1 elements, one FP8 e4m3 scale per 16, plus a per-tensor fp32 scale
  (NVIDIA Blackwell NVFP4 blog, 2025).
- INT4 weight-only, group 32, symmetric, one bf16 scale per group: Kimi K2.5 / K2-Thinking
  ``quantization_config`` (compressed-tensors pack-quantized).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from jalapeno.errors import UnknownNameError


@dataclass(frozen=True, slots=True)
class NumberFormat:
    """A stored number format.

    Attributes:
        name: catalog name.
        element_bits: bits per element before scales.
        block_elems: elements sharing one scale (0 = no block scale).
        scale_bits: bits of each block scale.
        compute: the tensor-core format an op on this data runs at when the chip supports it
            (W4A4 for nvfp4/mxfp4 where the preset allows it; int4 is weight-only, so bf16).
    """

    name: str
    element_bits: float
    block_elems: int
    scale_bits: float
    compute: str

    @property
    def bytes_per_elem(self) -> float:
        """Bytes per element including amortised block scales.

        >>> FORMATS["mxfp4"].bytes_per_elem
        0.53125
        >>> FORMATS["nvfp4"].bytes_per_elem
        0.5625
        """
        scale = self.scale_bits / self.block_elems if self.block_elems else 0.0
        return (self.element_bits + scale) / 8.0


FORMATS: MappingProxyType[str, NumberFormat] = MappingProxyType(
    {
        "fp32": NumberFormat("fp32", 32, 0, 0, "bf16"),
        "bf16": NumberFormat("bf16", 16, 0, 0, "bf16"),
        # 128x128 weight blocks, fp32 scale each: 32 / 16384 bits per element.
        "fp8": NumberFormat("fp8", 8, 128 * 128, 32, "fp8"),
        # KV cache / activations in plain fp8 (per-tensor scale, negligible).
        "fp8_e4m3": NumberFormat("fp8_e4m3", 8, 0, 0, "fp8"),
        "mxfp4": NumberFormat("mxfp4", 4, 32, 8, "fp4"),
        "nvfp4": NumberFormat("nvfp4", 4, 16, 8, "fp4"),
        "int4": NumberFormat("int4", 4, 32, 16, "bf16"),
        "int4_g128": NumberFormat("int4_g128", 4, 128, 16, "bf16"),
    }
)

#: Order of fallback when a chip lacks a compute format: the op runs one step up (weights are
#: dequantised on the fly). Assumption; matches e.g. Hopper running MXFP4 gpt-oss as W4A16.
COMPUTE_FALLBACK: dict[str, tuple[str, ...]] = {
    "fp4": ("fp4", "fp8", "bf16"),
    "fp8": ("fp8", "bf16"),
    "bf16": ("bf16",),
}

MODULES = ("attention", "dense_ffn", "routed_experts", "shared_experts", "embedding", "lm_head")


def get_format(name: str, field: str = "format") -> NumberFormat:
    """Look up a storage format by name.

    Raises:
        UnknownNameError: the name is not a known format (the message lists the valid ones).
    """
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownNameError(
            field, f"unknown number format {name!r}", f"use one of {', '.join(FORMATS)}"
        ) from None


@dataclass(frozen=True, slots=True)
class ModulePrecision:
    """Weight storage format and the compute format its GEMMs ask for."""

    weight: NumberFormat
    compute: str


@dataclass(frozen=True, slots=True)
class Precision:
    """Per-module precision of a deployment, plus the KV-cache and attention-math formats.

    Attributes:
        name: preset name (recorded with every result).
        modules: module name → :class:`ModulePrecision` for each of :data:`MODULES`.
        kv_cache: storage format of the KV cache.
        attention_compute: compute format of the attention math (scores, softmax·V).
        description: how the seed models are served with this preset, with its source.
    """

    name: str
    modules: MappingProxyType
    kv_cache: NumberFormat
    attention_compute: str
    description: str

    def weight_bytes(self, module: str) -> float:
        """Bytes per stored weight element of ``module``."""
        return self.modules[module].weight.bytes_per_elem


def _preset(name, description, kv, attn_compute="bf16", **mods) -> Precision:
    modules = {}
    for m in MODULES:
        w, c = mods.get(m, ("bf16", "bf16"))
        modules[m] = ModulePrecision(get_format(w, f"preset {name}.{m}"), c)
    return Precision(name, MappingProxyType(modules), get_format(kv, f"preset {name}.kv_cache"), attn_compute,
                     description)


_FP8_ALL = dict(
    attention=("fp8", "fp8"),
    dense_ffn=("fp8", "fp8"),
    routed_experts=("fp8", "fp8"),
    shared_experts=("fp8", "fp8"),
)

PRESETS: MappingProxyType[str, Precision] = MappingProxyType(
    {
        "bf16": _preset("bf16", "BF16 weights, BF16 KV cache (dense release checkpoints).", "bf16"),
        "fp8": _preset(
            "fp8",
            "FP8 e4m3 128x128-block weights in every linear layer, BF16 embeddings/head, FP8 KV "
            "(DeepSeek-R1 release checkpoint; FP8 KV as SGLang/TRT-LLM serve it on Blackwell).",
            "fp8_e4m3",
            **_FP8_ALL,
        ),
        "fp4": _preset(
            "fp4",
            "NVFP4 routed and shared experts (W4A4), FP8 attention and dense FFN, FP8 KV "
            "(nvidia/DeepSeek-R1-FP4 as served by TRT-LLM in InferenceX).",
            "fp8_e4m3",
            attention=("fp8", "fp8"),
            dense_ffn=("fp8", "fp8"),
            routed_experts=("nvfp4", "fp4"),
            shared_experts=("fp8", "fp8"),
        ),
        "mxfp4": _preset(
            "mxfp4",
            "MXFP4 routed experts (W4A8: MXFP8 activations where the chip has FP8), BF16 "
            "attention, router, embeddings and head, BF16 KV (gpt-oss-120b release; "
            "quantization_config.modules_to_not_convert).",
            "bf16",
            routed_experts=("mxfp4", "fp8"),
        ),
        "int4": _preset(
            "int4",
            "INT4 weight-only routed experts (group 32, bf16 scales; W4A16), BF16 attention, "
            "shared expert, dense layers, embeddings and head; BF16 KV (Kimi K2.5 release).",
            "bf16",
            routed_experts=("int4", "bf16"),
        ),
    }
)


def get_precision(name: str) -> Precision:
    """Look up a precision preset.

    Raises:
        UnknownNameError: unknown preset; the message lists the valid ones.
    """
    try:
        return PRESETS[name]
    except KeyError:
        raise UnknownNameError(
            "precision", f"unknown precision preset {name!r}", f"use one of {', '.join(PRESETS)}"
        ) from None


def resolve_compute_format(requested: str, supported: frozenset[str]) -> str:
    """The compute format an op runs at: the requested one, else the next wider the chip has.

    >>> resolve_compute_format("fp4", frozenset({"bf16", "fp8"}))
    'fp8'

    Raises:
        UnknownNameError: the requested format is not one of bf16/fp8/fp4.
    """
    chain = COMPUTE_FALLBACK.get(requested)
    if chain is None:
        raise UnknownNameError(
            "compute format", f"unknown compute format {requested!r}", "use bf16, fp8 or fp4"
        )
    for fmt in chain:
        if fmt in supported:
            return fmt
    return "bf16"
