"""How engines store MXFP4 routed experts on a chip: padded kernel layouts and bias dtype.

The checkpoint stores an expert's gate_up (K = h, N = 2·I) and down (K = I, N = h) weights as
4-bit elements plus one E8M0 byte per 32 along K, and its biases (2·I + h) in BF16 (gpt-oss
``model.safetensors.index.json``: ``*_blocks`` uint8, ``*_scales`` uint8, ``*_bias`` bf16). At
load, the engine's MoE kernel re-lays the tensors out, padding dimensions; the padding is
resident memory the checkpoint does not show. Rules (vLLM ``model_executor/layers/quantization/
mxfp4.py`` ``Mxfp4MoEMethod.create_weights`` / ``process_weights_after_loading`` and
``utils/mxfp4_utils.py`` ``_swizzle_mxfp4``; triton-lang ``triton_kernels/tensor_details/
layout_details/hopper_value.py`` and ``hopper_scale.py``):

- ``hopper_triton`` (vLLM's default MXFP4 backend on H100/H200, "Using Triton backend"):
  intermediate rounded to 64 (2880 stays), hidden unpadded; the Hopper MX value layout pads the
  packed K/2 axis to 64 bytes and N to 256 (``_padded_shape``: align 64 / 256), i.e. K to 128
  elements and N to 256; the Hopper MX scale layout pads N to 2·num_warps·2·8 = 256 rows
  (num_warps = 8 for the non-batched MoE) and K/32 to even; biases are converted to fp32.
- ``blackwell_trtllm`` (vLLM SM100 FlashInfer TRT-LLM MXFP4 path): hidden and intermediate
  rounded to 256; biases fp32.
- ``cdna3`` / ``cdna4`` (vLLM ROCm path): hidden and intermediate rounded to
  ``get_padding_alignment()`` = 128, or 256 on gfx950 (MI355X); biases kept BF16 (assumption:
  the ROCm path keeps the loaded dtype).
- ``checkpoint``: the checkpoint's own layout (no padding, BF16 biases) — any other chip.

Measured check (vLLM v0.14.1, one H100, Triton backend, vLLM issue #33155): "Model loading took
64.38 GiB"; :func:`expert_bytes` + the BF16 rest gives 64.17 GiB (docs/model.md §7). The Marlin
path (``hopper_marlin``: h → 256, I → 128, vLLM before 0.11.1 on Hopper) gives 65.90 GiB against 65.97 GiB measured (vLLM issue #23278).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jalapeno.specs.formats import NumberFormat
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec


@dataclass(frozen=True, slots=True)
class ExpertLayout:
    """Padding an engine's MoE kernel applies to one expert's stored weights.

    Attributes:
        name: layout name.
        hidden_align, inter_align: the hidden and (per-partition) intermediate sizes are rounded
            up to these before the tensors are allocated.
        k_align, n_align: each GEMM's reduction (K) and output (N) axis of the value tensor is
            then rounded up to these (swizzled layouts), in elements.
        scale_n_align: rows (N) of the block-scale tensor rounded up to this.
        bias_bytes: bytes per stored bias element.
        source: where the rule comes from.
    """

    name: str
    hidden_align: int = 1
    inter_align: int = 1
    k_align: int = 1
    n_align: int = 1
    scale_n_align: int = 1
    bias_bytes: float = 2.0
    source: str = ""


_VLLM = "vLLM model_executor/layers/quantization/mxfp4.py Mxfp4MoEMethod.create_weights"
LAYOUTS: dict[str, ExpertLayout] = {
    "checkpoint": ExpertLayout("checkpoint", source="checkpoint tensors (gpt-oss safetensors: bf16 biases)"),
    "hopper_triton": ExpertLayout(
        "hopper_triton",
        inter_align=64,
        k_align=128,
        n_align=256,
        scale_n_align=256,
        bias_bytes=4.0,
        source=f"{_VLLM} (Triton backend: I round_up 64, biases fp32); triton_kernels "
        "hopper_value.py _padded_shape (K/2 to 64 B, N to 256) and "
        "hopper_scale.py SWIZZLE_ALIGN_M = 2*num_warps*2*8 = 256",
    ),
    "hopper_marlin": ExpertLayout(
        "hopper_marlin",
        hidden_align=256,
        inter_align=128,
        source=f"{_VLLM} (Marlin backend, vLLM < 0.11.1 on Hopper: h round_up 256, I "
        "round_up 128, biases bf16); 65.90 GiB modelled vs 65.97 GiB measured "
        "(vLLM issue #23278)",
    ),
    "blackwell_trtllm": ExpertLayout(
        "blackwell_trtllm",
        hidden_align=256,
        inter_align=256,
        bias_bytes=4.0,
        source=f"{_VLLM} (SM100 FlashInfer TRT-LLM: I and h round_up 256; biases fp32)",
    ),
    "cdna3": ExpertLayout(
        "cdna3", hidden_align=128, inter_align=128, source=f"{_VLLM} (ROCm: get_padding_alignment() = 128)"
    ),
    "cdna4": ExpertLayout(
        "cdna4", hidden_align=256, inter_align=256, source=f"{_VLLM} (ROCm gfx950: get_padding_alignment() = 256)"
    ),
}

#: Chip-name prefixes → the MXFP4 MoE layout the serving engine uses there.
_FAMILIES = (
    ("H100", "hopper_triton"),
    ("H200", "hopper_triton"),
    ("GH200", "hopper_triton"),
    ("B200", "blackwell_trtllm"),
    ("B300", "blackwell_trtllm"),
    ("GB200", "blackwell_trtllm"),
    ("GB300", "blackwell_trtllm"),
    ("MI300", "cdna3"),
    ("MI325", "cdna3"),
    ("MI355", "cdna4"),
)


def expert_layout(system: System | None, fmt: NumberFormat, override: str | None = None) -> ExpertLayout:
    """The layout routed experts stored in ``fmt`` take on ``system``'s chip.

    Padding rules are sourced for MXFP4 only; every other format (and ``system`` None, or a chip
    not in the table) keeps the checkpoint layout. ``override`` names the layout an engine
    version uses instead of the chip's default (deploy/engine_memory.py ``moe_layout``).
    """
    if system is None or fmt.name != "mxfp4":
        return LAYOUTS["checkpoint"]
    if override is not None:
        return LAYOUTS[override]
    name = system.chip.name.upper()
    for prefix, layout in _FAMILIES:
        if name.startswith(prefix):
            return LAYOUTS[layout]
    return LAYOUTS["checkpoint"]


def _up(x: float, a: int) -> float:
    return math.ceil(x / a) * a if a > 1 else x


def expert_bytes(model: ModelSpec, fmt: NumberFormat, layout: ExpertLayout, moe_tp: int = 1) -> float:
    """Resident bytes of one routed expert's share on one chip (values + block scales + biases).

    With ``moe_tp`` ranks splitting each expert, the intermediate size per rank is I/moe_tp (the
    gate_up N axis and the down K axis); the hidden axis is whole on every rank.

    Returns:
        bytes per expert per chip. ``checkpoint`` layout, no biases: 3·h·I/moe_tp·bytes_per_elem.

    >>> from jalapeno.specs.catalog import load_model
    >>> from jalapeno.specs.formats import FORMATS
    >>> expert_bytes(load_model("gpt-oss-120b"), FORMATS["mxfp4"], LAYOUTS["checkpoint"])
    13236480.0
    """
    m = model.moe
    if m is None:
        return 0.0
    h = _up(model.hidden_size, layout.hidden_align)
    inter = _up(m.expert_intermediate / moe_tp, layout.inter_align)
    val = fmt.element_bits / 8.0
    blk = fmt.block_elems
    total = 0.0
    for k, n in ((h, 2 * inter), (inter, h)):  # gate_up, down
        total += _up(k, layout.k_align) * _up(n, layout.n_align) * val
        if blk:
            total += (
                _up(n, layout.scale_n_align)
                * _up(math.ceil(k / blk), 2 if layout.scale_n_align > 1 else 1)
                * fmt.scale_bits
                / 8.0
            )
    if m.expert_bias:
        total += (2 * m.expert_intermediate / moe_tp + model.hidden_size) * layout.bias_bytes
    return total
