"""Precision presets per model module (the storage and compute format of each module, the KV cache and the
attention math) and the checks that a model and a chip can run one.

A *storage format* fixes bytes per element, scales included. A *compute format* names the
tensor-core rate an op runs at (``bf16``, ``fp8``, ``fp4``): the one its preset asks for; a chip
without it is an error (:func:`check_precision`, :meth:`Precision.compute_for`) unless the user
asked for the documented fallback (:data:`COMPUTE_FALLBACK`, ``--compute-fallback``). KV-cache
formats live in :mod:`jalapeno.specs.kv_cache`; a precision's attention math format is separate
from its weights (:data:`ATTENTION_FORMATS`).

Storage formats, their sources and the compute fallback live in :mod:`jalapeno.specs.number_formats`
(split from here in round 49; re-exported, so ``from jalapeno.specs.formats import FORMATS`` keeps working).
The checks that a model and a chip can run a precision (``check_precision``, ``check_fallback_used``,
``priced_as``) live in :mod:`jalapeno.specs.precision_checks` (split from here in round 50); they stay importable
from here (:data:`MOVED_TO_PRECISION_CHECKS`, a module ``__getattr__``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from jalapeno.errors import SpecError, UnknownNameError, choice_hint
from jalapeno.specs.kv_cache import KVCacheFormat, get_kv_format
from jalapeno.moved import moved_names
from jalapeno.specs.number_formats import (  # noqa: F401  (re-exported: split from here, round 49)
    COMPUTE_FALLBACK,
    FORMATS,
    FP8_WEIGHT_BLOCK,
    NumberFormat,
    get_format,
    resolve_compute_format,
)

MODULES = ("attention", "dense_ffn", "routed_experts", "shared_experts", "embedding", "lm_head")

#: Names that lived here until round 50 and now live in specs/precision_checks.py; ``from jalapeno.specs.formats
#: import check_precision`` keeps working for callers outside the package, resolved on first use (jalapeno/moved.py:
#: specs/precision_checks.py imports this module, so not at import time).
MOVED_TO_PRECISION_CHECKS = (
    "check_precision",
    "check_fallback_used",
    "priced_as",
    "_present_modules",
    "_check_fp4_blocks",
    "_FP4_BLOCKS",
)
__getattr__ = moved_names(__name__, {"jalapeno.specs.precision_checks": MOVED_TO_PRECISION_CHECKS})


#: Compute formats attention math (scores and softmax·V) may run in: FP8 attention kernels exist
#: for MLA (FlashMLA FP8 on Hopper, TensorRT-LLM trtllm-gen on Blackwell: TensorRT-LLM
#: examples/models/core/deepseek_v3/README.md "FP8 KV Cache and MLA") and GQA/MHA
#: (FlashAttention-3 FP8; vLLM "Quantized KV Cache": with FP8 KV, FA3 computes attention in FP8).
#: No engine runs attention math in FP4 (NVFP4 KV is dequantised to FP8 first).
ATTENTION_FORMATS = ("bf16", "fp8")

#: How descriptions name modules and formats.
_MODULE_LABELS = {
    "attention": "attention projections",
    "dense_ffn": "dense FFN",
    "routed_experts": "routed experts",
    "shared_experts": "shared experts",
    "embedding": "embedding",
    "lm_head": "LM head",
}
_WEIGHT_LABELS = {
    "fp32": "FP32",
    "bf16": "BF16",
    "fp8": "FP8 e4m3 128x128-block",
    "fp8_e4m3": "FP8 e4m3 per-tensor",
    "mxfp4": "MXFP4",
    "nvfp4": "NVFP4",
    "int4": "INT4 g32",
    "int4_g64": "INT4 g64",
    "int4_g128": "INT4 g128",
}


@dataclass(frozen=True, slots=True)
class ModulePrecision:
    """Weight storage format and the compute format its GEMMs ask for."""

    weight: NumberFormat
    compute: str


@dataclass(frozen=True, slots=True)
class Precision:
    """Per-module precision of a deployment, plus the KV-cache and attention-math formats.

    Attributes:
        name: preset name, with any override appended (``fp8,kv=bf16``); recorded with every result.
        modules: module name → :class:`ModulePrecision` for each of :data:`MODULES`.
        kv_cache: :class:`~jalapeno.specs.kv_cache.KVCacheFormat` of the KV cache.
        attention_compute: compute format of the attention math (scores, softmax·V): one of
            :data:`ATTENTION_FORMATS`.
        source: which checkpoint and engine the preset models (no format claims: those are in
            :attr:`description`, generated from the fields).
        requires: modules the preset is defined by; a model without them is refused
            (:func:`check_precision`), so a preset never silently equals another.
        compute_fallback: the user asked for the documented fallback (:data:`COMPUTE_FALLBACK`)
            where the chip lacks a compute format; otherwise that is an error.
    """

    name: str
    modules: MappingProxyType
    kv_cache: KVCacheFormat
    attention_compute: str
    source: str
    requires: tuple[str, ...] = ()
    compute_fallback: bool = False

    def weight_bytes(self, module: str) -> float:
        """Bytes per stored weight element of ``module``."""
        return self.modules[module].weight.bytes_per_elem

    @property
    def description(self) -> str:
        """What the preset computes, generated from its fields, then its source.

        >>> get_precision("mxfp4").description.split("; ")[1]
        'MXFP4 routed experts (FP8 math)'
        """
        groups: dict[tuple[str, str], list[str]] = {}
        for m in MODULES:
            mp = self.modules[m]
            groups.setdefault((mp.weight.name, mp.compute), []).append(_MODULE_LABELS[m])
        parts = [f"{_WEIGHT_LABELS[w]} {', '.join(ms)} ({c.upper()} math)" for (w, c), ms in groups.items()]
        parts.append(f"attention math {self.attention_compute.upper()}")
        parts.append(f"KV cache {self.kv_cache.label}")
        if self.compute_fallback:
            parts.append("compute fallback allowed")
        return "; ".join(parts) + f". Source: {self.source}"

    def with_options(
        self, kv: str | None = None, attention: str | None = None, compute_fallback: bool = False
    ) -> Precision:
        """This precision with the KV-cache dtype, attention-math format or fallback overridden.

        The name records every override (``fp8,kv=bf16,attn=fp8``) so results say what ran. An override
        replaces one the name already records, and one back to the preset's own value leaves the name: a
        model released at ``fp8,kv=bf16`` (minimax-m2.5) run with ``--kv-dtype fp8`` is named ``fp8``, not
        ``fp8,kv=bf16,kv=fp8`` (break51: a name :func:`get_precision` refuses as an override given twice).

        >>> get_precision("fp8,kv=bf16").with_options(kv="fp8").name
        'fp8'
        >>> get_precision("fp8,kv=bf16,attn=fp8").with_options(kv="fp8_e5m2").name
        'fp8,attn=fp8,kv=fp8_e5m2'

        Raises:
            UnknownNameError: unknown KV dtype or attention format (``--kv-dtype``, ``--attention-dtype``).
        """
        p, suffix = self, []
        base, *recorded = self.name.split(",")
        own = PRESETS.get(base)  # None: a precision not built from a preset keeps its name's parts as they are
        if kv is not None:
            fmt = get_kv_format(kv)
            if fmt != p.kv_cache:
                p, recorded = replace(p, kv_cache=fmt), [o for o in recorded if not o.startswith("kv=")]
                if own is None or fmt != own.kv_cache:
                    suffix.append(f"kv={fmt.name}")
        if attention is not None:
            a = str(attention).lower()
            if a not in ATTENTION_FORMATS:
                raise UnknownNameError(
                    "--attention-dtype",
                    f"unknown attention math format {attention!r}{choice_hint(attention, ATTENTION_FORMATS)}",
                    f"use one of {', '.join(ATTENTION_FORMATS)}",
                )
            if a != p.attention_compute:
                p, recorded = replace(p, attention_compute=a), [o for o in recorded if not o.startswith("attn=")]
                if own is None or a != own.attention_compute:
                    suffix.append(f"attn={a}")
        if compute_fallback and not p.compute_fallback:
            p, suffix = replace(p, compute_fallback=True), [*suffix, "fallback"]
        return replace(p, name=",".join([base, *recorded, *suffix])) if p is not self else p

    def compute_for(self, requested: str, supported: frozenset[str], what: str = "an op") -> str:
        """The compute format ``what`` runs at on a chip with tensor-core formats ``supported``.

        The requested format when the chip has it; else, only with :attr:`compute_fallback`,
        the next wider one (:func:`resolve_compute_format`).

        Raises:
            SpecError: the chip lacks the format and no fallback was asked for.
        """
        if requested in supported:
            return requested
        if self.compute_fallback:
            return resolve_compute_format(requested, supported)
        raise SpecError(
            "--precision",
            f"{self.name} runs {what} in {requested.upper()}, which the chip has no tensor "
            f"cores for (it has {', '.join(sorted(f.upper() for f in supported))})",
            f"pick a precision the chip runs ({runs_on(supported)}), or pass --compute-fallback to run it "
            "dequantised at the next wider format the chip has (COMPUTE_FALLBACK, docs/model.md §1)",
        )


def runs_on(supported: frozenset[str]) -> str:
    """The ``-p`` presets whose every compute format (modules and attention) is in ``supported``.

    >>> runs_on(frozenset({"bf16", "fp16"}))
    '-p bf16, -p int4, -p w4a16, -p w4a16-g64 or -p w4a16-g32'
    """
    ok = [
        f"-p {n}"
        for n, p in PRESETS.items()
        if {p.attention_compute, *(m.compute for m in p.modules.values())} <= supported
    ]
    return " or ".join([", ".join(ok[:-1]), ok[-1]] if len(ok) > 1 else ok) or "none of the presets"


def _preset(name, source, kv, attn_compute, requires=(), **mods) -> Precision:
    modules = {}
    for m in MODULES:
        w, c = mods.get(m, ("bf16", "bf16"))
        modules[m] = ModulePrecision(get_format(w, f"preset {name}.{m}"), c)
    return Precision(
        name,
        MappingProxyType(modules),
        get_kv_format(kv, f"preset {name}.kv_cache"),
        attn_compute,
        source,
        tuple(requires),
    )


def _all_linear(weight: str, compute: str) -> dict:
    """The same (weight format, compute format) for every linear module of the decoder."""
    return {m: (weight, compute) for m in ("attention", "dense_ffn", "routed_experts", "shared_experts")}


_FP8_ALL = _all_linear("fp8", "fp8")

PRESETS: MappingProxyType[str, Precision] = MappingProxyType(
    {
        "bf16": _preset(
            "bf16", "dense and MoE release checkpoints in BF16, the engines' default KV dtype.", "bf16", "bf16"
        ),
        "fp8": _preset(
            "fp8",
            "DeepSeek-R1 release checkpoint (quantization_config fp8, weight_block_size 128x128), FP8 KV "
            "as SGLang and TensorRT-LLM serve it. Attention math kept BF16 (assumption; SGLang's default "
            "MLA kernels read FP8 KV into BF16 math): TensorRT-LLM's FP8 MLA is --attention-dtype fp8.",
            "fp8",
            "bf16",
            **_FP8_ALL,
        ),
        "fp8-tensor": _preset(
            "fp8-tensor",
            "Per-tensor / per-channel FP8 checkpoints of dense models (quantization_config fp8 without "
            "weight_block_size; NVIDIA ModelOpt FP8, e.g. nvidia/Llama-3.3-70B-Instruct-FP8 hf_quant_config "
            "quant_algo FP8; AMD-Quark --quant_scheme w_fp8_a_fp8, the AMD Llama 2 70B MLPerf Inference v5.1 "
            "checkpoint), priced by the per-tensor FP8 GEMM (gemm[fp8]); FP8 KV and attention math as in "
            "-p fp8 (the engines serve these checkpoints with --kv-cache-dtype fp8); on MoE models every "
            "linear layer likewise.",
            "fp8",
            "bf16",
            **{m: ("fp8_e4m3", "fp8") for m in _FP8_ALL},
        ),
        "fp4": _preset(
            "fp4",
            "nvidia/DeepSeek-R1-FP4 (hf_quant_config: NVFP4 MoE experts, kv_cache_quant_algo FP8) as served "
            "by TensorRT-LLM in InferenceX, whose FP8 KV runs the FP8 MLA kernels (TensorRT-LLM "
            "deepseek_v3 README, 'FP8 KV Cache and MLA'). MoE models only: -p nvfp4 quantises every "
            "linear layer.",
            "fp8",
            "fp8",
            requires=("routed_experts",),
            attention=("fp8", "fp8"),
            dense_ffn=("fp8", "fp8"),
            routed_experts=("nvfp4", "fp4"),
            shared_experts=("fp8", "fp8"),
        ),
        "quark-mxfp4": _preset(
            "quark-mxfp4",
            "AMD's MXFP4 DeepSeek-R1 checkpoints amd/DeepSeek-R1-0528-MXFP4 and -Preview (model cards: "
            "AMD-Quark --quant_scheme w_mxfp4_a_mxfp4 --group_size 32, --exclude_layers '*self_attn* "
            "*mlp.gate.* *lm_head'), served with --kv-cache-dtype fp8 in the InferenceX MI355X FP4 runs "
            "(amd-master.yaml); attention math as in -p fp8 (assumption). MoE models only",
            "fp8",
            "bf16",
            requires=("routed_experts",),
            attention=("bf16", "bf16"),
            dense_ffn=("mxfp4", "fp4"),
            routed_experts=("mxfp4", "fp4"),
            shared_experts=("mxfp4", "fp4"),
        ),
        "w4a4-mxfp4": _preset(
            "w4a4-mxfp4",
            "AMD-Quark w_mxfp4_a_mxfp4 checkpoints of dense models (group 32, OCP MXFP4 weights and "
            "activations; the MI355X Llama 2 70B MLPerf Inference v5.1 submissions, 'weights mxfp4'); "
            "FP8 KV and attention math as in -p fp8 are assumptions (AMD's MLPerf Llama 2 70B "
            "submissions keep an FP8 KV cache); on MoE models every linear layer of the decoder likewise",
            "fp8",
            "bf16",
            **_all_linear("mxfp4", "fp4"),
        ),
        "nvfp4": _preset(
            "nvfp4",
            "NVIDIA ModelOpt NVFP4 checkpoints of dense models (nvidia/Llama-3.3-70B-Instruct-FP4 "
            "hf_quant_config: quant_algo NVFP4 group 16, kv_cache_quant_algo FP8, lm_head excluded) "
            "served by TensorRT-LLM with FP8 attention kernels on the FP8 KV; on MoE models every "
            "linear layer of the decoder likewise.",
            "fp8",
            "fp8",
            **_all_linear("nvfp4", "fp4"),
        ),
        "mxfp4": _preset(
            "mxfp4",
            "gpt-oss-120b release (quantization_config.modules_to_not_convert keeps attention, router, "
            "embeddings and head in BF16); MXFP8 activations for the experts where the chip has FP8; "
            "BF16 KV, the engines' default.",
            "bf16",
            "bf16",
            requires=("routed_experts",),
            routed_experts=("mxfp4", "fp8"),
        ),
        "int4": _preset(
            "int4",
            "Kimi K2.5 release (compressed-tensors pack-quantized INT4 weight-only experts, group 32, "
            "bf16 scales); BF16 KV, the engines' default.",
            "bf16",
            "bf16",
            requires=("routed_experts",),
            routed_experts=("int4", "bf16"),
        ),
        "w4a16": _preset(
            "w4a16",
            "AWQ / GPTQ / compressed-tensors W4A16 checkpoints: INT4 weight-only in every linear layer, "
            "group 128 with 16-bit scales (AutoAWQ q_group_size and GPTQ group_size default 128), BF16 "
            "math (dequantised in the GEMM kernel); BF16 KV, the engines' default.",
            "bf16",
            "bf16",
            **_all_linear("int4_g128", "bf16"),
        ),
        "w4a16-g64": _preset(
            "w4a16-g64",
            "AWQ / GPTQ / compressed-tensors W4A16 checkpoints with group 64 (64 <= group < 128) in every "
            "linear layer, 16-bit scales, BF16 math; BF16 KV.",
            "bf16",
            "bf16",
            **_all_linear("int4_g64", "bf16"),
        ),
        "w4a16-g32": _preset(
            "w4a16-g32",
            "INT4 weight-only checkpoints with small groups (group <= 32; bitsandbytes NF4 blocksize 64 "
            "with an fp32 absmax stores the same 4.5 bits per weight) in every linear layer, BF16 math; "
            "BF16 KV.",
            "bf16",
            "bf16",
            **_all_linear("int4", "bf16"),
        ),
    }
)


def get_precision(name: str) -> Precision:
    """Look up a precision preset, optionally with overrides in the form names record them.

    ``"fp8"`` is the preset; ``"fp8,kv=bf16,attn=fp8,fallback"`` is it with
    :meth:`Precision.with_options` applied, so every recorded name reads back to what ran.

    Raises:
        UnknownNameError: unknown preset, override key, KV dtype or attention format; an override given twice.
    """
    base, *opts = [s.strip() for s in str(name).split(",")]
    try:
        p = PRESETS[base]
    except KeyError:
        raise UnknownNameError(
            "precision",
            f"unknown precision preset {base!r}{choice_hint(base, PRESETS)}",
            f"use one of {', '.join(PRESETS)}",
        ) from None
    kw: dict = {}
    seen: set[str] = set()
    for o in opts:
        k, eq, v = o.partition("=")
        if k in seen:  # 'fp8,kv=bf16,kv=fp8' priced kv=fp8 and dropped kv=bf16, silently (break50)
            raise UnknownNameError(
                "precision", f"{k} is given twice in {name!r}", f"give {k} once, with the value you mean"
            )
        seen.add(k)
        if (k, bool(eq)) == ("fallback", False):
            kw["compute_fallback"] = True
        elif k in ("kv", "attn") and v:
            kw["kv" if k == "kv" else "attention"] = v
        else:
            raise UnknownNameError(
                "precision",
                f"unknown override {o!r} in {name!r}",
                "write preset[,kv=<dtype>][,attn=<bf16|fp8>][,fallback]",
            )
    return p.with_options(**kw) if kw else p
