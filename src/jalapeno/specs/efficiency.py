"""Efficiency and overhead parameters of a serving stack on a chip (named, documented defaults).

These are the knobs that turn a roofline into a prediction. Each default below is a named
assumption with its source; a system TOML may override any of them in its ``[efficiency]`` table
(each override with its own source), and calibration (``jalapeno calibrate``) replaces them with
fitted values. Formulas that use them: ``docs/model.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from jalapeno.errors import SpecError


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Achieved fractions of peak and fixed costs (SI units).

    Attributes:
        gemm_peak_fraction: best fraction of dense peak FLOP/s a large GEMM reaches. Default 0.75:
            DeepGEMM reports up to 1,550 TFLOP/s FP8 on H800 (peak 1,979) = 0.78
            (deepseek-ai/DeepGEMM README, 2025); cuBLAS BF16 on H100 reaches ~0.7-0.8.
        gemm_peak_fraction_fp8, gemm_peak_fraction_fp4: the same for GEMMs running in FP8 / FP4
            (None: use ``gemm_peak_fraction``). Calibrations fit them separately: block-scaled
            FP8 and NVFP4 GEMMs reach a lower fraction of their (higher) peak than BF16.
        gemm_half_rows_fp8, gemm_half_rows_fp4: ``gemm_half_rows`` for FP8 / FP4 GEMMs (None: the
            same as BF16).
        gemm_hbm_fraction, gemm_hbm_fraction_fp8, gemm_hbm_fraction_fp4: achieved HBM fraction
            when a GEMM streams its weights (memory-bound, few rows), per format; None: use
            ``hbm_fraction``. Calibration measures block-scaled FP8 and NVFP4 GEMMs streaming
            weights well below the copy bandwidth (scale loads, dequantisation).
        gemm_half_rows: rows (tokens) at which a GEMM reaches half of ``gemm_peak_fraction``;
            functional form eta(m) = peak_fraction * m / (m + half_rows). Default 32: tensor-core
            tiles are 64-128 rows (Hopper wgmma M=64, Blackwell UMMA M=128), so a few-row GEMM
            wastes most of a tile. Assumption to be calibrated on measured GEMMs.
        moe_peak_fraction, moe_half_rows, moe_hbm_fraction (each with ``_fp8`` / ``_fp4``
            variants): the same three GEMM parameters for the routed-expert block of an MoE layer
            (grouped GEMMs plus the token permute, activation quantisation and finalize kernels
            around them), fitted on measured MoE layers (aiconfigurator ``moe_perf``). A format
            without its own value takes the unsuffixed one (as the GEMM fields do); None: the
            GEMM values of the same format.
        moe_token_passes (with ``_fp8`` / ``_fp4`` variants): passes over every token of the
            expert-parallel group's hidden vectors (BF16) that each rank's routed-expert block makes
            besides the expert GEMMs — routing, permutation, activation quantisation, finalize —
            as in the MoE implementations the kernel tables time, which scan the whole group's
            tokens on every rank. Adds tokens · hidden · 2 B · passes to the block's HBM traffic.
            None (default): 0. Fitted on ``moe_perf`` (3-10 passes on NVIDIA).
        moe_floor_s: fixed time of one MoE layer's routed-expert block (its kernels' minimum
            latency at a few tokens), replacing ``3 · kernel_launch_s`` when set. None (default):
            three kernel launches. The NVIDIA calibrations report the fitted floor (28-30 us on
            TRT-LLM 1.3.0rc20) but leave this unset (CUDA graphs and PDL hide it); the AMD sets
            set it to aiter's fused-MoE floor (analysis/calibrate_amd.py).
        attention_peak_fraction: fraction of peak FLOP/s of attention kernels. Default 0.65:
            FlashMLA reaches 660 TFLOP/s BF16 compute-bound on H800 (peak 989) = 0.67
            (deepseek-ai/FlashMLA README, 2025).
        hbm_fraction: achieved fraction of HBM bandwidth for streaming weights and KV. Default
            0.85: FlashMLA reaches 3,000 GB/s memory-bound on H800 SXM5 (3.35 TB/s) = 0.90;
            0.85 allows for smaller, less regular reads (assumption).
        link_fraction: achieved fraction of link bandwidth for large collectives without in-switch
            reduction. Default 0.80 (assumption): tuned kernels reach more — DeepEP's intranode
            all-to-all reaches 153 of ~160 GB/s on H800 (0.96), while NCCL ring collectives on
            NVLink typically land at 0.8-0.85 of the per-direction link rate. docs/collectives.md
            reports the model against DeepEP (held out; the spec default is 17% pessimistic there, the
            calibrated NCCL-fitted scale-up values more).
        scale_out_link_fraction: the same for scale-out NICs (RDMA over InfiniBand/RoCE). Default
            0.80: DeepEP's low-latency all-to-all reaches 39-43 GB/s per 400 Gb/s (50 GB/s) CX7 NIC
            at EP 64-256 (deepseek-ai/DeepEP README). Kernel calibrations fit only the scale-up
            ``link_fraction`` (their NCCL tables are single-node).
        in_switch_fraction: fraction of raw per-chip link bandwidth an in-switch (NVLS/SHARP)
            all-reduce achieves, M/(B·f). Default 0.61: nccl-tests all_reduce bus bandwidth with
            NVLS on 8x H100 is 460-480 GB/s = 1.75 · 450 · f (docs/collectives.md).
        torus_congestion: multiplier (>= 1) on torus all-to-all time for routing conflicts beyond
            the hop and bisection bounds. Default 1 (ideal adaptive routing; assumption).
        kernel_launch_s: fixed cost per kernel in a step (launch and tail, with CUDA graphs).
            Default 4 us: DESIGN.md §7 observes ~100 us per layer of fixed cost for DeepSeek-R1
            TP8 at concurrency 1-4; about 15 kernels and 2 collectives per layer. Assumption.
        collective_launch_s: software cost per collective call on top of the link latency.
            Default 5 us (NCCL/custom all-reduce launch and synchronisation; assumption).
        step_overhead_s: per-step cost outside kernels (scheduler, sampling, input prep).
            Default 0.5 ms with an overlapped scheduler (SGLang/vLLM V1 design; assumption).
        request_overhead_s, prompt_overhead_s_per_token: time a request spends outside the
            accelerator before its first token (HTTP/API server, tokenisation, scheduling hand-off,
            detokenisation), a + b·ISL, added to TTFT and E2E but overlapping other requests'
            GPU work. Defaults a = 0.15 s, b = 6.4 us/token: fitted by scripts/fit_frontend.py on
            a calibration split (5 InferenceX H200 SGLang TP8 points at concurrency <= 8) and
            judged on every other measured TTFT (docs/validation.md). A property of the serving
            software, not the chip, so every system gets it.
        comm_overlap: fraction of collective time hidden under compute (0 = serial, 1 = hidden
            while compute is longer). Default 0: engines run TP all-reduce on the critical path;
            two-batch overlap for EP is an option, not a default.
        moe_load_skew: multiplier on the binomial tail of the busiest expert-parallel rank
            (1 = uniform routing; >1 skewed routers; <1 with redundant experts / EPLB). Default 1.
        memory_reserve_fraction: fraction of usable HBM kept for workspaces, CUDA graphs and
            fragmentation, beyond the modelled activations. Default 0.04 (7 GB of a B200's 180 GB):
            engines give 0.85-0.95 of HBM to weights + KV (SGLang mem_fraction_static), but part
            of the rest is the activation memory modelled separately, and usable HBM already
            excludes the driver's share (assumption; InferenceX ran DeepSeek-R1 FP8, 168 GB of
            weights per GPU, on B200 TP4, so the reserve cannot exceed ~6%).
        source: where this parameter set came from (defaults, a TOML, a calibration id).
    """

    gemm_peak_fraction: float = 0.75
    gemm_peak_fraction_fp8: float | None = None
    gemm_peak_fraction_fp4: float | None = None
    gemm_half_rows_fp8: float | None = None
    gemm_half_rows_fp4: float | None = None
    gemm_hbm_fraction: float | None = None
    gemm_hbm_fraction_fp8: float | None = None
    gemm_hbm_fraction_fp4: float | None = None
    gemm_half_rows: float = 32.0
    moe_peak_fraction: float | None = None
    moe_peak_fraction_fp8: float | None = None
    moe_peak_fraction_fp4: float | None = None
    moe_half_rows: float | None = None
    moe_half_rows_fp8: float | None = None
    moe_half_rows_fp4: float | None = None
    moe_hbm_fraction: float | None = None
    moe_hbm_fraction_fp8: float | None = None
    moe_hbm_fraction_fp4: float | None = None
    moe_floor_s: float | None = None
    moe_token_passes: float | None = None
    moe_token_passes_fp8: float | None = None
    moe_token_passes_fp4: float | None = None
    attention_peak_fraction: float = 0.65
    hbm_fraction: float = 0.85
    link_fraction: float = 0.80
    scale_out_link_fraction: float = 0.80
    in_switch_fraction: float = 0.61
    torus_congestion: float = 1.0
    kernel_launch_s: float = 4e-6
    collective_launch_s: float = 5e-6
    step_overhead_s: float = 0.5e-3
    request_overhead_s: float = 0.15
    prompt_overhead_s_per_token: float = 6.4e-6
    comm_overlap: float = 0.0
    moe_load_skew: float = 1.0
    memory_reserve_fraction: float = 0.04
    source: str = "jalapeno defaults (docs/model.md)"

    def gemm_peak(self, fmt: str) -> float:
        """Best fraction of peak for a GEMM in compute format ``fmt``."""
        v = {"fp8": self.gemm_peak_fraction_fp8, "fp4": self.gemm_peak_fraction_fp4}.get(fmt)
        return self.gemm_peak_fraction if v is None else v

    def gemm_half(self, fmt: str) -> float:
        """Rows at which a GEMM in ``fmt`` reaches half its best fraction of peak."""
        v = {"fp8": self.gemm_half_rows_fp8, "fp4": self.gemm_half_rows_fp4}.get(fmt)
        return self.gemm_half_rows if v is None else v

    def gemm_hbm(self, fmt: str) -> float:
        """Achieved HBM fraction of a weight-streaming GEMM in ``fmt``."""
        v = {"bf16": self.gemm_hbm_fraction, "fp8": self.gemm_hbm_fraction_fp8,
             "fp4": self.gemm_hbm_fraction_fp4}.get(fmt)
        if v is None and fmt != "bf16":
            v = self.gemm_hbm_fraction
        return self.hbm_fraction if v is None else v

    def _moe(self, name: str, fmt: str):
        """The format's own value, else the unsuffixed one (as for the GEMM fields), else None."""
        sfx = {"fp8": "_fp8", "fp4": "_fp4"}.get(fmt, "")
        v = getattr(self, f"{name}{sfx}")
        return getattr(self, name) if v is None and sfx else v

    def moe_peak(self, fmt: str) -> float:
        """Best fraction of peak of the routed-expert block in ``fmt`` (GEMM value if unset)."""
        v = self._moe("moe_peak_fraction", fmt)
        return self.gemm_peak(fmt) if v is None else v

    def moe_half(self, fmt: str) -> float:
        """Rows per expert at which the routed-expert block reaches half its best fraction."""
        v = self._moe("moe_half_rows", fmt)
        return self.gemm_half(fmt) if v is None else v

    def moe_hbm(self, fmt: str) -> float:
        """Achieved HBM fraction of the routed-expert block streaming expert weights."""
        v = self._moe("moe_hbm_fraction", fmt)
        return self.gemm_hbm(fmt) if v is None else v

    def moe_passes(self, fmt: str) -> float:
        """Passes over the group's token vectors of the routed-expert block in ``fmt`` (0 if unset)."""
        v = self._moe("moe_token_passes", fmt)
        return 0.0 if v is None else v

    def with_overrides(self, overrides: dict[str, Any], where: str = "efficiency") -> Efficiency:
        """Return a copy with some parameters replaced, validated.

        Raises:
            SpecError: unknown parameter name, or a value out of range (fractions in (0, 1],
                times and skew >= 0).
        """
        names = {f.name for f in fields(self)} - {"source"}
        clean: dict[str, Any] = {}
        for k, v in overrides.items():
            if k == "source":
                if not isinstance(v, str):
                    raise SpecError(f"{where}.source", f"must be a string, got {v!r}", "quote it")
                clean[k] = v
                continue
            if k not in names:
                raise SpecError(f"{where}.{k}", "unknown efficiency parameter",
                                f"use one of {', '.join(sorted(names))}")
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise SpecError(f"{where}.{k}", f"must be a number, got {v!r}", "give a number")
            v = float(v)
            if v != v or v in (float("inf"), float("-inf")):
                raise SpecError(f"{where}.{k}", f"must be finite, got {v}", "give a finite number")
            frac = "_fraction" in k or k == "comm_overlap"
            if frac and not (0.0 < v <= 1.0 or (k == "comm_overlap" and v == 0.0)):
                raise SpecError(f"{where}.{k}", f"must be in (0, 1], got {v}",
                                "give a fraction of peak between 0 and 1")
            if not frac and v < 0:
                raise SpecError(f"{where}.{k}", f"must be >= 0, got {v}", "give a non-negative value")
            cap = _UPPER.get(k)
            if cap is not None and v > cap[0]:
                raise SpecError(f"{where}.{k}", f"{v:g} is beyond {cap[0]:g} ({cap[1]})", f"give it in {cap[1]}")
            if k == "torus_congestion" and v < 1:
                raise SpecError(f"{where}.{k}", f"must be >= 1, got {v}", "give 1 (ideal routing) or more")
            clean[k] = v
        return replace(self, **clean)


#: Sanity ceilings (value, unit hint) that catch unit slips (µs written as s): a kernel or
#: collective launch above 1 ms, a step overhead above 1 s, a front-end cost above a minute.
_UPPER = {"kernel_launch_s": (1e-3, "seconds: 4e-6 is 4 µs"), "collective_launch_s": (1e-3, "seconds"),
          "moe_floor_s": (1e-3, "seconds"), "step_overhead_s": (1.0, "seconds"),
          "request_overhead_s": (60.0, "seconds"), "prompt_overhead_s_per_token": (1e-3, "seconds per token"),
          "gemm_half_rows": (1e6, "rows"), "gemm_half_rows_fp8": (1e6, "rows"), "gemm_half_rows_fp4": (1e6, "rows"),
          "moe_half_rows": (1e6, "rows"), "moe_half_rows_fp8": (1e6, "rows"), "moe_half_rows_fp4": (1e6, "rows"),
          "moe_token_passes": (1e3, "passes"), "moe_token_passes_fp8": (1e3, "passes"),
          "moe_token_passes_fp4": (1e3, "passes"), "moe_load_skew": (100.0, "a multiplier"),
          "torus_congestion": (100.0, "a multiplier"),
          "memory_reserve_fraction": (0.5, "a fraction of usable HBM; engines keep well under half")}

DEFAULT_EFFICIENCY = Efficiency()
