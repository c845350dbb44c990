"""Number formats of stored weights and activations: bytes per element with their block scales, the
tensor-core (compute) format an op on them runs at, and the fallback order when a chip lacks one.

A *storage format* fixes bytes per element, scales included. A *compute format* names the
tensor-core rate an op runs at (``bf16``, ``fp8``, ``fp4``). Precision presets per model module,
which pick a storage and a compute format for each, are :mod:`jalapeno.specs.formats` (split from
there in round 49 for the module budget; it re-exports every name here); KV-cache formats are
:mod:`jalapeno.specs.kv_cache`.

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

    def gemm_key(self, compute: str) -> str:
        """The GEMM efficiency entry a GEMM on these weights in ``compute`` is priced by: ``fp8_block``
        for 8-bit weights with 2-D block scales (128x128: :data:`FP8_WEIGHT_BLOCK`) run in FP8 (the
        block-scale kernels, specs/kernel_efficiency.GEMM_KEYS), else ``compute`` itself (per-tensor
        or per-channel FP8, and every other format).

        >>> FORMATS["fp8"].gemm_key("fp8"), FORMATS["fp8_e4m3"].gemm_key("fp8"), FORMATS["fp8"].gemm_key("bf16")
        ('fp8_block', 'fp8', 'bf16')
        """
        return (
            "fp8_block"
            if compute == "fp8" and self.element_bits == 8 and self.block_elems >= FP8_WEIGHT_BLOCK
            else compute
        )


#: Elements of one FP8 weight block with its own scale in block-scaled checkpoints: 128 x 128
#: (DeepSeek-V3 config.json ``quantization_config.weight_block_size`` [128, 128]).
FP8_WEIGHT_BLOCK = 128 * 128


FORMATS: MappingProxyType[str, NumberFormat] = MappingProxyType(
    {
        "fp32": NumberFormat("fp32", 32, 0, 0, "bf16"),
        "bf16": NumberFormat("bf16", 16, 0, 0, "bf16"),
        # 128x128 weight blocks, fp32 scale each: 32 / 16384 bits per element.
        "fp8": NumberFormat("fp8", 8, 128 * 128, 32, "fp8"),
        # Per-tensor (or per-channel) scaled fp8 weights, KV cache, activations (scales negligible).
        "fp8_e4m3": NumberFormat("fp8_e4m3", 8, 0, 0, "fp8"),
        "mxfp4": NumberFormat("mxfp4", 4, 32, 8, "fp4"),
        "nvfp4": NumberFormat("nvfp4", 4, 16, 8, "fp4"),
        "int4": NumberFormat("int4", 4, 32, 16, "bf16"),
        "int4_g64": NumberFormat("int4_g64", 4, 64, 16, "bf16"),
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


def get_format(name: str, field: str = "format") -> NumberFormat:
    """Look up a storage format by name.

    Raises:
        UnknownNameError: the name is not a known format (the message lists the valid ones).
    """
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownNameError(field, f"unknown number format {name!r}", f"use one of {', '.join(FORMATS)}") from None


def resolve_compute_format(requested: str, supported: frozenset[str]) -> str:
    """The compute format an op runs at: the requested one, else the next wider the chip has.

    >>> resolve_compute_format("fp4", frozenset({"bf16", "fp8"}))
    'fp8'

    Raises:
        UnknownNameError: the requested format is not one of bf16/fp8/fp4.
    """
    chain = COMPUTE_FALLBACK.get(requested)
    if chain is None:
        raise UnknownNameError("compute format", f"unknown compute format {requested!r}", "use bf16, fp8 or fp4")
    for fmt in chain:
        if fmt in supported:
            return fmt
    return "bf16"
