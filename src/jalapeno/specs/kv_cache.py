"""KV-cache storage formats, with the byte layouts serving engines really use.

A KV-cache format fixes how many bytes one token adds to one layer's cache, scales and any part
kept in a wider format included. It is chosen independently of the weights (engines take it
from a flag: vLLM/SGLang ``--kv-cache-dtype``, TensorRT-LLM ``kv_cache_config.dtype``), so a
precision preset names a default and ``--kv-dtype`` overrides it.

Formats (bytes per token per layer; r = kv_lora_rank, d_r = rope dims, g = KV heads held, d =
head dim):

=============  =====================================  =================================================
name           layout                                  engines, source
=============  =====================================  =================================================
``bf16``       2 B per element                         the engines' default (``auto`` = model dtype)
``fp8``        e4m3, 1 B per element + one fp32 scale  vLLM docs "Quantized KV Cache" (per-tensor k/v
               per tensor (negligible)                 scales); SGLang ``--kv-cache-dtype fp8_e4m3``;
                                                       TensorRT-LLM ``kv_cache_config.dtype: fp8``
                                                       (ModelOpt ``kv_cache_quant_algo: FP8``)
``fp8_e5m2``   e5m2, 1 B per element, no scale         vLLM/SGLang ``--kv-cache-dtype fp8_e5m2``
``fp8_ds_mla`` MLA only: r e4m3 values + one fp32      DeepSeek FlashMLA README "FP8 KV cache" format of
               scale per 128 + d_r bf16 rope values    DeepSeek-V3.2 (656 B: 512 + 16 + 128); vLLM
                                                       ``--kv-cache-dtype fp8_ds_mla``
``nvfp4``      e2m1, 0.5 B per element + one e4m3      TensorRT-LLM NVFP4 KV cache (ModelOpt
               scale per 16 elements (0.5625 B/elem)   ``kv_cache_quant_algo: NVFP4``, Blackwell only;
                                                       the decode kernel dequantises to FP8 for the
                                                       attention math: FlashInfer trtllm-gen decode)
=============  =====================================  =================================================

The DSA indexer key cache of DeepSeek-V3.2 (fp8 key + fp32 scale per token per layer, vLLM
layout) is separate from these formats and counted by the model (specs/model.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from jalapeno.errors import UnknownNameError, choice_hint


@dataclass(frozen=True, slots=True)
class KVCacheFormat:
    """How one token's keys and values are stored in one layer.

    Attributes:
        name: catalog name (the ``--kv-dtype`` value).
        element_bits: bits per stored element.
        block_elems: elements sharing one scale (0 = per-tensor scale or none: negligible bytes).
        scale_bits: bits of each block scale.
        rope_bits: MLA only: bits per element of the rope key part when it is kept wider than the
            latent (0 = stored like the latent).
        mla_only: the layout exists only for MLA latents (``fp8_ds_mla``).
        needs: compute format the chip must have for the engines' kernels that read this
            layout ('' = none): ``nvfp4`` KV exists only in TensorRT-LLM's Blackwell kernels.
        label: how a description names it.
        source: where the layout comes from.
    """

    name: str
    element_bits: float
    block_elems: int
    scale_bits: float
    rope_bits: float
    mla_only: bool
    needs: str
    label: str
    source: str

    def vector_bytes(self, elems: float) -> float:
        """Bytes of ``elems`` elements stored in this format, block scales amortised.

        >>> KV_FORMATS["nvfp4"].vector_bytes(128)
        72.0
        """
        scale = self.scale_bits / self.block_elems if self.block_elems else 0.0
        return elems * (self.element_bits + scale) / 8.0

    @property
    def bytes_per_elem(self) -> float:
        """Bytes per element of the K/V (or latent) values, scales included (rope part aside)."""
        return self.vector_bytes(1.0)

    def mla_token_bytes(self, kv_lora_rank: int, rope_dims: int) -> float:
        """Bytes one token adds to one MLA layer's cache: latent + rope key.

        >>> KV_FORMATS["fp8_ds_mla"].mla_token_bytes(512, 64)  # FlashMLA's 656-byte layout
        656.0
        """
        rope = rope_dims * self.rope_bits / 8.0 if self.rope_bits else self.vector_bytes(rope_dims)
        return self.vector_bytes(kv_lora_rank) + rope

    def gqa_token_bytes(self, kv_heads: float, head_dim: int) -> float:
        """Bytes one token adds to one GQA/MHA layer's cache for ``kv_heads`` heads (K and V).

        >>> KV_FORMATS["bf16"].gqa_token_bytes(1, 128)  # one KV head of Qwen3-235B
        512.0
        """
        return 2.0 * kv_heads * self.vector_bytes(head_dim)


KV_FORMATS: MappingProxyType[str, KVCacheFormat] = MappingProxyType(
    {
        "bf16": KVCacheFormat(
            "bf16",
            16,
            0,
            0,
            0,
            False,
            "",
            "BF16",
            "engines' default KV dtype (vLLM/SGLang 'auto', TensorRT-LLM default)",
        ),
        "fp8": KVCacheFormat(
            "fp8",
            8,
            0,
            0,
            0,
            False,
            "",
            "FP8 e4m3 (per-tensor scale)",
            "vLLM 'Quantized KV Cache' docs; SGLang --kv-cache-dtype fp8_e4m3; TensorRT-LLM kv_cache_config.dtype fp8",
        ),
        "fp8_e5m2": KVCacheFormat(
            "fp8_e5m2", 8, 0, 0, 0, False, "", "FP8 e5m2", "vLLM/SGLang --kv-cache-dtype fp8_e5m2"
        ),
        "fp8_ds_mla": KVCacheFormat(
            "fp8_ds_mla",
            8,
            128,
            32,
            16,
            True,
            "",
            "FP8 e4m3 latent with fp32 scale per 128 and BF16 rope (656 B/token/layer for DeepSeek)",
            "deepseek-ai/FlashMLA README, FP8 KV cache of DeepSeek-V3.2; vLLM fp8_ds_mla",
        ),
        "nvfp4": KVCacheFormat(
            "nvfp4",
            4,
            16,
            8,
            0,
            False,
            "fp4",
            "NVFP4 (e4m3 scale per 16)",
            "TensorRT-LLM NVFP4 KV cache (ModelOpt kv_cache_quant_algo NVFP4), Blackwell",
        ),
    }
)

#: Engine spellings accepted for ``--kv-dtype`` (vLLM/SGLang names) → catalog name.
KV_ALIASES = {"fp8_e4m3": "fp8", "auto": "bf16", "bfloat16": "bf16"}


def get_kv_format(name: str, field: str = "--kv-dtype") -> KVCacheFormat:
    """Look up a KV-cache format by name (engine spellings such as ``fp8_e4m3`` accepted).

    Raises:
        UnknownNameError: unknown name; the message lists the valid ones.
    """
    key = KV_ALIASES.get(str(name).lower(), str(name).lower())
    try:
        return KV_FORMATS[key]
    except KeyError:
        raise UnknownNameError(
            field,
            f"unknown KV-cache dtype {name!r}{choice_hint(name, KV_FORMATS)}",
            f"use one of {', '.join(KV_FORMATS)}",
        ) from None
