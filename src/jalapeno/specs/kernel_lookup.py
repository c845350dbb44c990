"""How an efficiency set's kernel parameters are looked up (specs/efficiency.Efficiency inherits these methods): a
GEMM, routed-expert (MoE) or attention parameter of a compute format is the format's own entry, else (a GEMM kernel
key such as ``fp8_block``) its compute format's, else ``bf16``'s (:meth:`KernelLookups._lookup`); an MoE value set
nowhere is its GEMM's (:data:`MOE_GEMM_KEY`: block-scaled FP8 experts take ``gemm[fp8_block]``); FP8 attention without
its own fraction runs at the BF16 fraction x :data:`FP8_ATTENTION_RELATIVE_PEAK`; an attention-kernel family of
:data:`KERNEL_FAMILIES` falls back to the generic attention values; the MoE entries :data:`MOE_BLOCK_KEY` and
:data:`MOE_W4A16_KEY` price the ops that name them (:meth:`KernelLookups.moe_entry`).

Split from specs/efficiency.py (round 50, module budget), which re-exports the constants; ``Efficiency`` keeps its
fields, their documentation, its checks and its copies (``with_kernel``, ``with_overrides``).
"""

from __future__ import annotations

from jalapeno.specs.efficiency_params import BASE_FORMAT, MOE_KEYS
from jalapeno.specs.kernel_efficiency import GEMM_KEYS, FormatTable

#: The GEMM entry an MoE format without its own compute values falls back to: FP8 routed experts
#: run block-scaled kernels — every FP8 MoE checkpoint the catalog serves is 128x128-block
#: (DeepSeek-V3/R1 ``weight_block_size``) or microscaled (gpt-oss MXFP4 experts with MXFP8
#: activations), and the measured FP8 MoE tables are ``fp8_block`` (aiconfigurator ``moe_perf``,
#: aiter ``tuned_fmoe`` per_1x128) — so they take ``gemm[fp8_block]``, not the per-tensor ``gemm[fp8]``.
MOE_GEMM_KEY: dict[str, str] = {"fp8": "fp8_block"}
#: The MoE entry of block-scaled FP8 routed experts (aiter's per_1x128 fused MoE): an FP8 ``moe`` op whose
#: experts do not name kernels of their own (cost/optable.MOE_WEIGHT_KEYS: gpt-oss's MXFP4 experts, which
#: vLLM runs as W4A16 Triton on gfx942) is priced by ``moe[fp8_block]`` where a set has it (MI300X/MI325X with
#: fit/amd.GFX942_PACKAGE on: gfx942's own fused-MoE rows); a field it does not set is ``moe[fp8]``'s (:meth:`Efficiency._lookup`).
MOE_BLOCK_KEY = "fp8_block"
#: The MoE entry and op key of weight-only INT4 routed experts (W4A16), where a set has that entry
#: (specs/w4a16_moe.py: the chip's own measured W4A16 MoE kernel form, data/w4a16_moe_forms.toml; shipped on, round 41).
(MOE_W4A16_KEY,) = MOE_KEYS
#: Measured attention-kernel families with their own entries, priced instead of the generic
#: attention values for the ops that name them (cost/optable.OpTable.kernel): the MLA generation
#: (weight-absorbed, latent KV) and MLA context kernels (cost/attention.py), fitted on TRT-LLM's
#: ``generation_mla_perf`` / ``context_mla_perf`` tables (fit/mla_kernels.py).
KERNEL_FAMILIES: tuple[str, ...] = ("mla_decode", "mla_prefill")

#: Fraction of peak an FP8 attention kernel reaches relative to the BF16 kernel's fraction of its
#: (half as high) peak: FlashAttention-3 reaches 740 TFLOP/s in BF16 (75% of H100's 989) and close
#: to 1.2 PFLOP/s in FP8 (61% of 1,979): 0.606 / 0.748 = 0.81 (Shah et al., "FlashAttention-3",
#: arXiv 2407.08608, abstract). FP8 attention is therefore 2 x 0.81 = 1.6x the BF16 kernel's rate
#: when compute-bound, not 2x. Used where ``attention[fp8].peak_fraction`` is not set.
FP8_ATTENTION_RELATIVE_PEAK = (1200.0 / 1979.0) / (740.0 / 989.0)


class KernelLookups:
    """The lookup methods of :class:`~jalapeno.specs.efficiency.Efficiency` (its kernel tables ``gemm``, ``moe``,
    ``attention``, ``mla_decode``, ``mla_prefill`` and the scalars ``hbm_fraction``, ``attention_peak_fraction``,
    ``moe_floor_s`` they fall back to); no state of its own (``__slots__ = ()``, so ``Efficiency`` stays slotted)."""

    __slots__ = ()

    def _lookup(self, op: str, fmt: str, name: str) -> float | None:
        """``op[fmt].name``, else (a GEMM kernel key such as ``fp8_block``) its compute format's,
        else ``op[bf16].name``, else None."""
        table: FormatTable = getattr(self, op)
        for key in (fmt, GEMM_KEYS.get(fmt, fmt), BASE_FORMAT):
            e = table.get(key)
            if e is not None and getattr(e, name) is not None:
                return getattr(e, name)
        return None

    def gemm_peak(self, fmt: str) -> float:
        """Best fraction of peak for a GEMM in compute format (or GEMM kernel key) ``fmt``.

        >>> from jalapeno.specs.efficiency import Efficiency
        >>> e = Efficiency().with_overrides({"gemm": {"fp8": {"peak_fraction": 0.6}}})
        >>> e.gemm_peak("fp8_block"), e.with_kernel("gemm", "fp8_block", peak_fraction=0.4).gemm_peak("fp8")
        (0.6, 0.6)
        """
        return self._lookup("gemm", fmt, "peak_fraction")

    def gemm_half(self, fmt: str) -> float:
        """Rows at which a GEMM in ``fmt`` reaches half its best fraction of peak."""
        return self._lookup("gemm", fmt, "half_rows")

    def gemm_hbm(self, fmt: str) -> float:
        """Achieved HBM fraction of a weight-streaming GEMM in ``fmt`` (``hbm_fraction`` if unset)."""
        v = self._lookup("gemm", fmt, "hbm_fraction")
        return self.hbm_fraction if v is None else v

    def attention_peak(self, fmt: str) -> float:
        """Best fraction of the ``fmt`` peak an attention kernel (scores, softmax·V) reaches.

        ``attention[fmt].peak_fraction`` if set; else ``attention_peak_fraction`` for BF16 and
        ``attention_peak_fraction`` x :data:`FP8_ATTENTION_RELATIVE_PEAK` for FP8 (and narrower).

        >>> from jalapeno.specs.efficiency import Efficiency
        >>> round(Efficiency().attention_peak("fp8"), 4)
        0.5268
        """
        e = self.attention.get(fmt)
        if e is not None and e.peak_fraction is not None:
            return e.peak_fraction
        return self.attention_peak_fraction * (1.0 if fmt == BASE_FORMAT else FP8_ATTENTION_RELATIVE_PEAK)

    def kernel_peak(self, family: str, fmt: str) -> float:
        """Best fraction of the ``fmt`` peak of an attention kernel of ``family``.

        ``family`` is one of :data:`KERNEL_FAMILIES` or "" (generic attention):
        ``family[fmt].peak_fraction`` if set, else :meth:`attention_peak` of ``fmt``.

        >>> from jalapeno.specs.efficiency import Efficiency
        >>> e = Efficiency().with_overrides({"mla_decode": {"fp8": {"peak_fraction": 0.5}}})
        >>> e.kernel_peak("mla_decode", "fp8"), e.kernel_peak("mla_decode", "bf16"), e.kernel_peak("", "bf16")
        (0.5, 0.65, 0.65)
        """
        e = getattr(self, family).get(fmt) if family else None
        if e is not None and e.peak_fraction is not None:
            return e.peak_fraction
        return self.attention_peak(fmt)

    def kernel_hbm(self, family: str, fmt: str) -> float:
        """Achieved HBM fraction of an attention kernel of ``family`` in ``fmt`` (``hbm_fraction``
        if unset or ``family`` is "")."""
        e = getattr(self, family).get(fmt) if family else None
        if e is not None and e.hbm_fraction is not None:
            return e.hbm_fraction
        return self.hbm_fraction

    def moe_peak(self, fmt: str) -> float:
        """Best fraction of peak of the routed-expert block in ``fmt`` (GEMM value if unset)."""
        v = self._lookup("moe", fmt, "peak_fraction")
        return self.gemm_peak(MOE_GEMM_KEY.get(fmt, fmt)) if v is None else v

    def moe_half(self, fmt: str) -> float:
        """Rows per expert at which the routed-expert block reaches half its best fraction."""
        v = self._lookup("moe", fmt, "half_rows")
        return self.gemm_half(MOE_GEMM_KEY.get(fmt, fmt)) if v is None else v

    def moe_hbm(self, fmt: str) -> float:
        """Achieved HBM fraction of the routed-expert block streaming expert weights."""
        v = self._lookup("moe", fmt, "hbm_fraction")
        return self.gemm_hbm(MOE_GEMM_KEY.get(fmt, fmt)) if v is None else v

    def moe_entry(self, fmt: str, key: str) -> str:
        """The ``moe`` entry an op of compute format ``fmt`` and key ``key`` (cost/optable.OpTable.keys) is priced
        by: :data:`MOE_BLOCK_KEY` for an FP8 op whose experts name no kernels of their own (``key == fmt``) where
        this set has that entry, else ``fmt``.

        >>> from jalapeno.specs.efficiency import Efficiency
        >>> e = Efficiency().with_kernel("moe", "fp8_block", hbm_fraction=0.7)
        >>> e.moe_entry("fp8", "fp8"), e.moe_entry("fp8", "mxfp4"), Efficiency().moe_entry("fp8", "fp8")
        ('fp8_block', 'fp8', 'fp8')

        An op keyed :data:`MOE_W4A16_KEY` (weight-only INT4 experts, cost/ops.py) is priced by that entry where set.
        """
        if key == MOE_W4A16_KEY and key in self.moe:
            return key
        return MOE_BLOCK_KEY if fmt == "fp8" and key == fmt and MOE_BLOCK_KEY in self.moe else fmt

    def moe_floor(self, entry: str) -> float | None:
        """Fixed time (s) of one MoE layer's routed-expert block priced by ``moe[entry]``: the entry's own
        ``floor_s`` where set, for :data:`MOE_BLOCK_KEY` else ``moe[fp8]``'s (every field of that entry falls back
        to FP8's), else ``moe_floor_s`` (None: the kernels' launches).

        >>> from jalapeno.specs.efficiency import Efficiency
        >>> e = Efficiency().with_kernel("moe", "fp8", floor_s=5e-6).with_kernel("moe", "fp8_block", hbm_fraction=0.7)
        >>> e.moe_floor("fp8_block"), e.with_kernel("moe", "fp8_block", floor_s=6e-6).moe_floor("fp8_block")
        (5e-06, 6e-06)
        """
        for key in (entry, "fp8") if entry == MOE_BLOCK_KEY else (entry,):
            e = self.moe.get(key)
            if e is not None and e.floor_s is not None:
                return e.floor_s
        return self.moe_floor_s

    def moe_passes(self, fmt: str) -> float:
        """Passes over the group's token vectors of the routed-expert block in ``fmt`` (0 if unset)."""
        v = self._lookup("moe", fmt, "token_passes")
        return 0.0 if v is None else v
