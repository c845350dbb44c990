"""Kernel efficiency entries by compute format: :class:`KernelEfficiency` (one op kind's kernels in
one format) and :class:`FormatTable` (format → entry), the building blocks of the ``gemm[fmt]``,
``moe[fmt]``, ``attention[fmt]`` and MLA tables of specs/efficiency.Efficiency (fallback rules there).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, fields

from jalapeno.specs.formats import COMPUTE_FALLBACK

#: The compute formats an entry may be keyed by (specs/formats.py; widest first). A format added
#: there (say ``fp6``) gets its own entries with no new fields here.
COMPUTE_FORMATS: tuple[str, ...] = tuple(sorted(COMPUTE_FALLBACK, key=lambda f: len(COMPUTE_FALLBACK[f])))
#: GEMM kernel keys finer than a compute format, each → the compute format it runs at (whose peak
#: it is a fraction of, and whose entry it falls back to). ``fp8_block``: FP8 GEMMs with 1x128
#: activation / 128x128 weight block scales (DeepSeek-V3 report §3.3; the ``weight_block_size``
#: of a checkpoint's ``quantization_config``), a different kernel from the per-tensor / per-channel
#: FP8 GEMM that ``gemm[fp8]`` prices: TensorRT-LLM's tables time the two apart (aiconfigurator
#: ``gemm_perf`` dtypes ``fp8`` and ``fp8_block``), as do aiter's (``a8w8_bpreshuffle_tuned_gemm``
#: vs ``a8w8_blockscale_tuned_gemm``), the block-scaled ones slower on every chip measured
#: (docs/model.md §1). Only GEMM entries take these keys.
GEMM_KEYS: dict[str, str] = {"fp8_block": "fp8"}
#: Elements of the inner dimension per scale block of a block-scaled GEMM (1x128 activation /
#: 128x128 weight blocks, DeepSeek-V3 report §3.3): the unit of ``KernelEfficiency.k_block_s``
K_BLOCK = 128.0


@dataclass(frozen=True, slots=True)
class KernelEfficiency:
    """Efficiency of one op kind's kernels in one compute format (None: inherit; fallbacks: specs/efficiency.Efficiency).

    Attributes:
        peak_fraction: best fraction of the format's dense peak FLOP/s the kernel reaches.
        half_rows: rows (tokens; per expert for MoE) at which it reaches half of ``peak_fraction``:
            eta(m) = peak_fraction * m / (m + half_rows).
        hbm_fraction: achieved HBM fraction when the kernel streams its weights (memory-bound, few rows).
        token_passes: MoE only — passes over the expert-parallel group's BF16 token vectors
            besides the expert GEMMs (see ``Efficiency.moe``).
        k_block_s: GEMM only — serial time per :data:`K_BLOCK` elements of the inner dimension k:
            the op takes at least (k / K_BLOCK) · k_block_s besides its launch (cost/roofline.py).
            A block-scaled FP8 GEMM (``gemm[fp8_block]``) promotes its partial sums to FP32 once
            per 128-element k block (DeepSeek-V3 report §3.3.2) and runs each output tile's whole
            k loop on one SM, so at few rows (few tiles, weights far below what streams HBM) its
            time grows with k, not with its bytes: TensorRT-LLM 1.3.0rc20's ``gemm_perf``
            ``fp8_block`` rows at m 8-16 rise ~0.15 µs (H100/H200) and ~0.105 µs (Blackwell)
            per 128 of k at any n up to 4096, where per-tensor FP8 and BF16 rise 3-7x less.
            Fitted by calibration (fit/kernels.py); None: no such term.
        floor_s: measured attention-kernel families only (``mla_decode``) — least fixed time per
            kernel of the op, as the kernel's table times it replayed in a CUDA graph: the op's
            fixed cost is kernels · max(kernel_launch_s, floor_s) (cost/roofline.py). TensorRT-LLM's
            MLA generation step (RoPE + latent-cache append, the FMHA kernel, the split-KV
            reduction; two kernels in cost/attention.py) takes 12-14 µs on H200 at one sequence
            and a short context in aiconfigurator's ``generation_mla_perf`` (a CUDA-graph replay
            of ``attn.forward``, ai-dynamo/aiconfigurator collector/trtllm/collect_mla.py), where
            two serving launches price ~5 µs. Calibration fits it (fit/mla_kernels.py, the decode
            fit's t0: 8.2-8.5 µs Hopper, 6.1-7.2 µs Blackwell) and reports it, but sets no value:
            carried to serving with the stacks refitted it leaves the end-to-end errors no better
            (docs/model.md §4), the engines' other kernels' floors being in their fitted launch
            costs. None: launches only.
    """

    peak_fraction: float | None = None
    half_rows: float | None = None
    hbm_fraction: float | None = None
    token_passes: float | None = None
    k_block_s: float | None = None
    floor_s: float | None = None

    def is_empty(self) -> bool:
        """True when every field inherits."""
        return all(getattr(self, f.name) is None for f in fields(self))

    def as_dict(self) -> dict[str, float]:
        """The fields that are set, as the TOML table writes them."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


def _format_order(fmt: str) -> tuple[int, str]:
    if fmt in GEMM_KEYS:  # right after its compute format: bf16, fp8, fp8_block, fp4
        return COMPUTE_FORMATS.index(GEMM_KEYS[fmt]), fmt
    return (COMPUTE_FORMATS.index(fmt), "") if fmt in COMPUTE_FORMATS else (len(COMPUTE_FORMATS), fmt)


class FormatTable(Mapping[str, KernelEfficiency]):
    """Immutable, hashable mapping compute format → :class:`KernelEfficiency`.

    Entries that set nothing are dropped and the rest kept in a canonical order (bf16, fp8, fp4,
    then any other format by name), so two tables with the same values compare and hash equal.

    >>> t = FormatTable({"fp8": KernelEfficiency(peak_fraction=0.6), "fp4": KernelEfficiency()})
    >>> list(t), t["fp8"].peak_fraction
    (['fp8'], 0.6)
    """

    __slots__ = ("_items",)

    def __init__(self, entries: Mapping[str, KernelEfficiency] | Iterable[tuple[str, KernelEfficiency]] = ()):
        d = dict(entries)
        for k, v in d.items():
            if not isinstance(k, str) or not isinstance(v, KernelEfficiency):
                raise TypeError(f"FormatTable maps a format name to a KernelEfficiency, got {k!r}: {v!r}")
        self._items: tuple[tuple[str, KernelEfficiency], ...] = tuple(
            sorted(((k, v) for k, v in d.items() if not v.is_empty()), key=lambda kv: _format_order(kv[0]))
        )

    def __getitem__(self, fmt: str) -> KernelEfficiency:
        for k, v in self._items:
            if k == fmt:
                return v
        raise KeyError(fmt)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FormatTable):
            return self._items == other._items
        return Mapping.__eq__(self, other)

    def __hash__(self) -> int:
        return hash(self._items)

    def __reduce__(self):
        return (FormatTable, (self._items,))

    def __repr__(self) -> str:
        return f"FormatTable({dict(self._items)!r})"

    def as_dict(self) -> dict[str, dict[str, float]]:
        """Nested plain dict ``{format: {field: value}}``, as the TOML tables write it."""
        return {k: v.as_dict() for k, v in self._items}
