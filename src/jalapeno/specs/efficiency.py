"""Efficiency and overhead parameters of a serving stack on a chip (named, documented defaults).

These are the knobs that turn a roofline into a prediction. Each default below is a named
assumption with its source; a system TOML may override any of them in its ``[efficiency]`` table
(each override with its own source), and calibration (``jalapeno calibrate``) replaces them with
fitted values. Formulas that use them: ``docs/model.md``.

The GEMM and routed-expert (MoE) kernel parameters are grouped by op kind and compute format:
``gemm[fp8]`` is a :class:`KernelEfficiency` (peak fraction, half rows, HBM fraction, token
passes) for FP8 GEMMs. In TOML they are nested tables::

    [efficiency]
    hbm_fraction = 0.9
    [efficiency.gemm.fp8]
    peak_fraction = 0.6
    half_rows = 40
    [efficiency.moe.fp4]
    hbm_fraction = 0.7

(a calibration file writes the same under ``[parameters]``, ``[low]`` and ``[high]``). The
``bf16`` entry is also the fallback of every format without its own value; the lookup methods
(:meth:`Efficiency.gemm_peak` ...) implement the fallback rules. The parameters' names, the values
each takes and the validation of an override table are specs/efficiency_params.py; the lookup methods and their
constants (:data:`MOE_GEMM_KEY`, :data:`FP8_ATTENTION_RELATIVE_PEAK`, ...) are specs/kernel_lookup.py (round 50,
module budget), whose ``KernelLookups`` ``Efficiency`` inherits.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields, replace
from typing import Any

from jalapeno.specs.efficiency_params import (  # noqa: F401  (the names and forms re-exported: they lived here)
    ALL_REDUCE_TABLE_NAMES,
    ALLREDUCE_RMS_RULE_NAMES,
    BASE_FORMAT,
    DISAGG_HANDSHAKE_NAMES,
    DISAGG_PREBUILT_NAMES,
    DISAGG_ROUTER_NAMES,
    KERNEL_FIELDS,
    MOE_EXCHANGE_NAMES,
    MOE_KEYS,
    SWITCHES,
    checked_overrides,
    flatten_params,
    nest_params,
)
from jalapeno.specs.kernel_efficiency import FormatTable, KernelEfficiency
from jalapeno.specs.kernel_lookup import (  # noqa: F401  (the lookup constants re-exported: they lived here)
    FP8_ATTENTION_RELATIVE_PEAK,
    KERNEL_FAMILIES,
    MOE_BLOCK_KEY,
    MOE_GEMM_KEY,
    MOE_W4A16_KEY,
    KernelLookups,
)

_DEFAULT_GEMM = FormatTable({BASE_FORMAT: KernelEfficiency(peak_fraction=0.75, half_rows=32.0)})
_NO_ENTRIES = FormatTable()


@dataclass(frozen=True, slots=True)
class Efficiency(KernelLookups):
    """Achieved fractions of peak and fixed costs (SI units).

    Attributes:
        gemm: GEMM kernel parameters by compute format (:class:`KernelEfficiency`; written
            ``gemm[fmt]``, in TOML ``[efficiency.gemm.<fmt>]``). Lookups
            (:meth:`gemm_peak`, :meth:`gemm_half`, :meth:`gemm_hbm`): the format's own value,
            else ``gemm[bf16]``'s (the bf16 entry serves every format without its own value);
            an HBM fraction set nowhere is ``hbm_fraction``. Fields:

            - ``gemm[bf16].peak_fraction``: best fraction of dense peak FLOP/s a large GEMM
              reaches. Default 0.75: DeepGEMM reports up to 1,550 TFLOP/s FP8 on H800 (peak
              1,979) = 0.78 (deepseek-ai/DeepGEMM README, 2025); cuBLAS BF16 on H100 reaches
              ~0.7-0.8.
            - ``gemm[fp8].peak_fraction``, ``gemm[fp4].peak_fraction``: the same for GEMMs running
              in FP8 / FP4 (None: use ``gemm[bf16].peak_fraction``). Calibrations fit them
              separately: block-scaled FP8 and NVFP4 GEMMs reach a lower fraction of their
              (higher) peak than BF16.
            - ``gemm[bf16].half_rows``: rows (tokens) at which a GEMM reaches half of its
              ``peak_fraction``; functional form eta(m) = peak_fraction * m / (m + half_rows).
              Default 32: tensor-core tiles are 64-128 rows (Hopper wgmma M=64, Blackwell UMMA
              M=128), so a few-row GEMM wastes most of a tile. Assumption to be calibrated on
              measured GEMMs.
            - ``gemm[fp8].half_rows``, ``gemm[fp4].half_rows``: ``half_rows`` for FP8 / FP4 GEMMs
              (None: the same as BF16).
            - ``gemm[fp8_block]`` (every field): FP8 GEMMs with 128x128 weight / 1x128 activation
              block scales (specs/kernel_efficiency.GEMM_KEYS), a slower kernel than the
              per-tensor / per-channel FP8 GEMM ``gemm[fp8]`` prices; unset fields fall back to
              ``gemm[fp8]``, then ``gemm[bf16]``. An op asks for it when its weights are
              block-scaled FP8 (specs/formats.NumberFormat.gemm_key).
            - ``gemm[f].hbm_fraction`` (bf16, fp8, fp4): achieved HBM fraction when a GEMM streams
              its weights (memory-bound, few rows), per format; None: use ``hbm_fraction``.
              Calibration measures block-scaled FP8 and NVFP4 GEMMs streaming weights well below
              the copy bandwidth (scale loads, dequantisation).
        moe: the same parameters for the routed-expert block of an MoE layer (grouped GEMMs plus
            the token permute, activation quantisation and finalize kernels around them), by
            compute format (``moe[fmt]``, in TOML ``[efficiency.moe.<fmt>]``), fitted on measured
            MoE layers (aiconfigurator ``moe_perf``). A format without its own value takes
            ``moe[bf16]``'s (as the GEMM entries do); None there: the GEMM value of the same
            format (:meth:`moe_peak`, :meth:`moe_half`, :meth:`moe_hbm`; FP8: ``gemm[fp8_block]``,
            :data:`MOE_GEMM_KEY`). Besides the GEMM fields:

            - ``moe[f].token_passes``: passes over every hidden vector (BF16) the rank's
              routed-expert block takes in that it makes besides the expert GEMMs — routing,
              permutation, activation quantisation, finalize — as in the MoE implementations the
              kernel tables time, which feed every rank the whole group's tokens. Adds vectors ·
              hidden · 2 B · passes to the block's HBM traffic (vectors: the group's tokens, or
              under an all-to-all the ones the rank receives, cost/ops.build_step_ops). None
              (default): 0 (:meth:`moe_passes`). Fitted on ``moe_perf`` (3-10 passes on NVIDIA).
            - ``moe[fp8_block]`` (every field, and ``floor_s``: the block's fixed time in place of
              ``moe_floor_s``): block-scaled FP8 routed experts (:data:`MOE_BLOCK_KEY`,
              :meth:`moe_entry`); unset: ``moe[fp8]``. Only the gfx942 sets take it, and only with
              fit/amd.GFX942_PACKAGE on (off as shipped: no set has it).
        moe_floor_s: fixed time of one MoE layer's routed-expert block (its kernels' minimum
            latency at a few tokens), replacing ``3 · kernel_launch_s`` when set. None (default):
            three kernel launches. The NVIDIA calibrations report the fitted floor (28-30 us on
            TRT-LLM 1.3.0rc20) but leave this unset (CUDA graphs and PDL hide it); the AMD sets
            set it to aiter's fused-MoE floor (fit/amd.py).
        attention_peak_fraction: fraction of BF16 peak FLOP/s of BF16 attention kernels. Default
            0.65: FlashMLA reaches 660 TFLOP/s BF16 compute-bound on H800 (peak 989) = 0.67
            (deepseek-ai/FlashMLA README, 2025). Calibrations fit it on BF16 prefill attention.
        attention: attention kernels in other compute formats (``attention[fp8]``, in TOML
            ``[efficiency.attention.fp8]``): ``peak_fraction`` of that format's peak. None
            (default): ``attention_peak_fraction`` x :data:`FP8_ATTENTION_RELATIVE_PEAK` for FP8
            (FlashAttention-3's FP8/BF16 ratio), so a calibrated BF16 value carries over
            (:meth:`attention_peak`). The BF16 value is ``attention_peak_fraction`` itself.
        mla_decode, mla_prefill: the MLA attention kernels' own entries by compute format
            (``mla_decode[fp8]``, in TOML ``[efficiency.mla_decode.fp8]``): ``peak_fraction`` of
            the format's peak and ``hbm_fraction`` of HBM bandwidth reading the latent KV cache,
            for the ``attn.mla_decode`` (weight-absorbed generation kernel) and
            ``attn.mla_prefill`` (context kernel) ops of cost/attention.py. Calibrations fit them
            on TRT-LLM's measured MLA kernels (aiconfigurator ``generation_mla_perf`` /
            ``context_mla_perf``; fit/mla_kernels.py): the generation kernel reaches 0.5-0.6 of
            peak at 128 heads and 8K context, about twice the GQA-prefill-fitted attention
            fraction. Each format stands alone — an unset field is the generic value of the same
            format, ``attention_peak(fmt)`` and ``hbm_fraction`` (:meth:`kernel_peak`,
            :meth:`kernel_hbm`), never another format's MLA entry (the BF16 and FP8 MLA kernels
            are different kernels) — so a set without MLA entries prices MLA exactly as before.
        mla_decode_tile_rows: query rows per sequence the MLA generation kernel computes for a BF16 query
            over an 8-bit latent KV cache, where its tile is larger than the valid rows (heads per rank x query
            rows): its MFMA work is padded by ceil(valid / tile) x tile / valid (cost/attention.mla_decode_padding).
            None (default): no padding. The gfx942 sets take 64 with fit/amd.GFX942_PACKAGE on (off as shipped;
            fit/amd.py, GFX942_MLA_DECODE_TILE_ROWS: aiter's
            only BF16-query, FP8-KV 16-head kernel on gfx942 is ``mla_a16w8_qh16_m16x4_n16x1_coex0_mask1_ps``,
            16 heads x 4 query rows).
        hbm_fraction: achieved fraction of HBM bandwidth for streaming weights and KV. Default
            0.85: FlashMLA reaches 3,000 GB/s memory-bound on H800 SXM5 (3.35 TB/s) = 0.90;
            0.85 allows for smaller, less regular reads (assumption).
        link_fraction, link_half_bytes, link_shape: NCCL ring / direct collectives on a scale-up
            level reach eta(M) = link_fraction / (1 + (link_half_bytes/M)^link_shape) of the
            per-direction link bandwidth at message size M (cost/collectives.size_efficiency).
            Defaults 0.79, 10.2 MB, 0.71: fitted (fit/collectives.py) on aiconfigurator's NCCL
            2.27.3 table of an 8x H100 node (>= 1 MiB); judged on published nccl-tests figures.
        scale_out_link_fraction: the same for scale-out NICs (RDMA over InfiniBand/RoCE). Default
            0.80: DeepEP's low-latency all-to-all reaches 39-43 GB/s per 400 Gb/s (50 GB/s) CX7 NIC
            at EP 64-256 (deepseek-ai/DeepEP README). Not calibrated (the tables are single-node).
        in_switch_fraction, in_switch_half_bytes, in_switch_shape: the same ramp for an
            in-switch (NVLS/SHARP) all-reduce, t = M/(B·eta(M)). Defaults 0.66, 20.4 MB, 0.63:
            fitted on the same table's NVLS all-reduce rows (>= 1 MiB); judged on nccl-tests's
            460-480 GB/s bus bandwidth at 4-8 GiB on H100 and 215 GB/s on H800.
        all_to_all_fraction, all_to_all_latency_s: share of a scale-up link an all-to-all (MoE dispatch/combine;
            send/recv: the share too) reaches, and its fixed time per call beyond hop latency + collective_launch_s.
            The latency applies on every level (NICs too: cost/collectives._a2a_latency). Defaults 0.80
            (assumption), 0; calibrated sets carry 0.45-0.60 and 0, except GB200's latency, fitted on
            TensorRT-LLM's measured NVLink all-to-all at the carried fraction (fit/calibrate.py).
        custom_ar_fraction, custom_ar_half_bytes, custom_ar_shape: the ramp of the serving
            engines' custom one-shot / two-shot all-reduce kernels (the TP all-reduce of decode).
            Defaults 1.0, 2.65 MB, 0.21: fitted on aiconfigurator-core's TensorRT-LLM custom
            all-reduce table of an H100 node (TP 2/4/8, 256 B - 1 GiB); judged on SGLang's H100
            table. Calibration fits each system's own table (Blackwell's kernels reach a smaller
            share of NVLink 5, docs/collectives.md).
        torus_congestion: multiplier (>= 1) on torus all-to-all time for routing conflicts beyond
            the hop and bisection bounds. Default 1 (ideal adaptive routing; assumption).
        kernel_launch_s: fixed cost per kernel in a step (launch and tail, with CUDA graphs).
            Default 4 us: DESIGN.md §7 observes ~100 us per layer of fixed cost for DeepSeek-R1
            TP8 at concurrency 1-4; about 15 kernels and 2 collectives per layer. Assumption.
        collective_launch_s: software cost per collective call on top of the link latency.
            Default 5 us (NCCL/custom all-reduce launch and synchronisation; assumption).
        step_overhead_s: per-step cost outside kernels (scheduler, sampling, input prep).
            Default 0.5 ms with an overlapped scheduler (SGLang/vLLM V1 design; assumption).
        tp_rank_step_s: per-step cost per TP rank beyond the first (host work growing with the TP
            workers: inputs handed to each, rank skew); 0 here, fitted per stack (docs/stacks.md).
        request_overhead_s, prompt_overhead_s_per_token: time a request spends outside the
            accelerator before its first token (HTTP/API server, tokenisation, scheduling hand-off,
            detokenisation), a + b·ISL, added to TTFT and E2E but overlapping other requests'
            GPU work. Defaults a = 0.15 s, b = 6.4 us/token: fitted by scripts/fit_frontend.py on
            a calibration split (5 InferenceX H200 SGLang TP8 points at concurrency <= 8) and
            judged on every other measured TTFT (docs/validation.md). A property of the serving
            software, not the chip, so every system gets it.
        prompt_step_s_per_token: engine time per prompt token a step carries, beyond its kernels, s/token
            (cost/step.prompt_token_s; paid only while cost/step.PROMPT_TOKEN_STEP_ON). Default 0; set per engine
            release by a stack's ``version_rules`` (TensorRT-LLM 1.1.0rc2 to before 1.2.0rc2: data/stacks.toml,
            scripts/trt_prompt_release43.py; docs/gap_aic_itl.md round 43).
        first_wave_stall_s: one-off stall S of a benchmark run's first wave, s (+S/R on its mean TTFT,
            none on the median; serve/queueing.idle_start). Default 0; set per engine by its stack
            (SGLang-ROCm 2.24 s: data/stacks.toml, scripts/first_wave_stall.py; docs/model.md §8.7 (10)).
        prefill_burst_fraction, agg_burst_fraction: share in (0, 1] of a disaggregated / aggregated
            run's counted requests that meet the idle-start prefill burst (serve/queueing.idle_start).
            None (default): 1/10, InferenceX's protocol (serve/queueing.REQUESTS_PER_USER). A property
            of the benchmark client, fitted per engine (a stack's ``clients`` entry; docs/model.md §8.7 (7)).
        moe_load_skew: multiplier on the binomial tail of the busiest expert-parallel rank
            (1 = uniform routing; >1 skewed routers; <1 with redundant experts / EPLB). Default 1.
        memory_reserve_fraction: share of usable HBM kept for workspaces, CUDA graphs and
            fragmentation beyond the modelled activations. Default 0.04 (7 GB of a B200's 180 GB;
            assumption: InferenceX ran DeepSeek-R1 FP8, 168 GB of weights per GPU, on B200 TP4, so
            it cannot exceed ~6%); 1 − 0.04 of the nominal 80 / 180 GB equals vLLM's default 0.9 of
            the 81,559 / 183,359 MiB an H100 / B200 reports within 0.3% (deploy/memory_fit.
            usable_fraction). A deployment's ``memory_fraction`` overrides it.
        moe_exchange: MoE token exchange under attention DP with EP, set by the software stack
            (:data:`MOE_EXCHANGE_NAMES`: ``all_to_all``, DeepEP; ``nvlink_all_to_all``, TRT-LLM).
        logits_bytes_per_elem: bytes per logit element of the LM head's TP all-gather, set by the
            software stack. Default 2 (BF16, the model dtype): vLLM, SGLang, TensorRT-LLM and ATOM
            gather the LM head's output as it comes out of the GEMM and cast to FP32 after the
            gather (sources per engine in data/stacks.toml; docs/stacks.md).
        moe_width_term: price the routed experts' per-rank width term at MoE TP > 1 (cost/moe_width.py,
            data/moe_width.toml; set by the TensorRT-LLM stack profiles, whose kernels it was fitted on).
        gemm_allreduce_fusion: the engine fuses each row-parallel GEMM (attention o_proj, FFN down) with the TP
            all-reduce of its output (TensorRT-LLM's ``gemm_allreduce_plugin``: the all-reduce runs tile by tile as
            the GEMM's output tiles complete), set by the software stack or a measured point's declared engine
            build. Default False: the all-reduce follows its GEMM. What stays exposed: cost/ops.py, docs/model.md §6.3.
        allreduce_rms_fusion: vLLM's ``fuse_allreduce_rms`` (TP all-reduce + add + RMSNorm, cost/allreduce_rms.py).
        allreduce_rms_rule: whose rule decides the steps that fusion covers (cost/allreduce_rms.py): ``vllm``
            (default; vLLM's size cap per chip and TP, every model), ``sglang`` (SGLang's auto-enabled FlashInfer
            fusion: steps up to 2,048 tokens, only the model families SGLang enables it for) or ``sglang_sm100``
            (SGLang before 0.5.7: SM100-family chips, DeepSeek-V3 and gpt-oss only).
        tp_rank_step_dp: ``tp_rank_step_s`` is paid per rank of the attention TP x DP group, not of attention TP
            alone (cost/step.step_overhead): TensorRT-LLM runs attention-DP ranks as its mapping's TP group, whose
            executor collectives run every step (data/stacks.toml, docs/stacks.md). Default False (attention TP).
        fused_a_prefetch: the engine runs an MLA model's fused q_a + kv_a projection with BF16 weights at <= 16 tokens
            a rank in a kernel that prefetches its weights while the all-reduce before it runs (TensorRT-LLM's
            ``dsv3_fused_a_gemm_op``), so that all-reduce hides under it (cost/ops.fused_a_cover; read only while
            cost/ops.FUSED_A_PREFETCH_ON, shipped off: round 49). Set by the TensorRT-LLM profiles.
        kv_handoff_fanout: the engine's disaggregated KV hand-off sends an MLA cache whole to every receiving
            decode attention-TP rank, from the prefill ranks that hold the request (TensorRT-LLM's
            ``MLACacheFormatter``: serve/disagg.handoff_copies, docs/model.md §8.4). Default False: one copy
            spread over min(prefill, decode) chips.
        admission_lag_steps: whole steps an aggregated engine's loop adds before a prompt read while it is busy can
            run (serve/overlap_loop.admission_lag_s): 1 for SGLang's overlap loop (``event_loop_overlap`` launches the
            next batch before it reads the previous one's result, so a prompt read there goes into the step after
            the one already queued), 0 (default) for a loop that launches what it reads. Set by the software stack.
        admission_lag_with_mtp: the engine keeps that loop with MTP (TensorRT-LLM: its one-model MTP supports the
            overlap scheduler); default False (SGLang turns it off for speculative decoding without spec v2).
        disagg_handshake: the disaggregated request path's handshake with the decode worker's loop, set by
            the software stack (:data:`DISAGG_HANDSHAKE_NAMES`; serve/handshake.py): ``none`` (default) or
            ``decode_prealloc`` (SGLang: + one prebuilt decode step and the pre-allocation poll's residual
            past the prefill queue wait on TTFT).
        disagg_router: how the front end picks a disaggregated request's decode worker, set by the software
            stack (:data:`DISAGG_ROUTER_NAMES`; serve/rr_wait.py): ``load_aware`` (default: no wait while a
            worker has a free slot) or ``round_robin`` (+ the wait for a slot on a full worker in turn).
        disagg_prebuilt: what an attention-DP rank of a disaggregated decode worker does in an iteration that
            admits transferred requests, set by the software stack (:data:`DISAGG_PREBUILT_NAMES`;
            serve/prebuilt_skip.py): ``merge`` (default: it decodes too) or ``skip`` (its running sequences wait
            that step; priced only with serve/prebuilt_skip.PREBUILT_SKIP_ON).
        all_reduce_table: whose measured all-reduce prices the TP all-reduces, set by the software
            stack (cost/engine_allreduce.ALL_REDUCE_TABLE_NAMES: ``none``, the link-hierarchy model;
            ``trtllm`` / ``sglang`` / ``vllm``, the engine's own kernel as measured on the system, where measured).
        source: where this parameter set came from (defaults, a TOML, a calibration id).
    """

    gemm: FormatTable = _DEFAULT_GEMM
    moe: FormatTable = _NO_ENTRIES
    moe_floor_s: float | None = None
    attention: FormatTable = _NO_ENTRIES
    attention_peak_fraction: float = 0.65
    mla_decode: FormatTable = _NO_ENTRIES
    mla_prefill: FormatTable = _NO_ENTRIES
    mla_decode_tile_rows: float | None = None
    hbm_fraction: float = 0.85
    link_fraction: float = 0.79
    scale_out_link_fraction: float = 0.80
    in_switch_fraction: float = 0.66
    link_half_bytes: float = 10.2e6
    link_shape: float = 0.71
    in_switch_half_bytes: float = 20.4e6
    in_switch_shape: float = 0.63
    all_to_all_fraction: float = 0.80
    all_to_all_latency_s: float = 0.0
    custom_ar_fraction: float = 1.0
    custom_ar_half_bytes: float = 2.65e6
    custom_ar_shape: float = 0.21
    torus_congestion: float = 1.0
    kernel_launch_s: float = 4e-6
    collective_launch_s: float = 5e-6
    step_overhead_s: float = 0.5e-3
    tp_rank_step_s: float = 0.0
    request_overhead_s: float = 0.15
    prompt_overhead_s_per_token: float = 6.4e-6
    prompt_step_s_per_token: float = 0.0
    first_wave_stall_s: float = 0.0
    prefill_burst_fraction: float | None = None
    agg_burst_fraction: float | None = None
    moe_load_skew: float = 1.0
    moe_exchange: str = "all_to_all"
    disagg_handshake: str = "none"
    disagg_router: str = "load_aware"
    disagg_prebuilt: str = "merge"
    logits_bytes_per_elem: float = 2.0
    all_reduce_table: str = "none"
    memory_reserve_fraction: float = 0.04
    gemm_allreduce_fusion: bool = False
    allreduce_rms_fusion: bool = False
    allreduce_rms_rule: str = "vllm"
    moe_width_term: bool = False
    tp_rank_step_dp: bool = False
    kv_handoff_fanout: bool = False
    fused_a_prefetch: bool = False
    admission_lag_steps: float = 0.0
    admission_lag_with_mtp: bool = False
    source: str = "jalapeno defaults (docs/model.md)"

    def __post_init__(self) -> None:
        for op in KERNEL_FIELDS:
            t = getattr(self, op)
            if not isinstance(t, FormatTable):
                object.__setattr__(self, op, FormatTable(t))
        base = self.gemm.get(BASE_FORMAT, KernelEfficiency())
        if base.peak_fraction is None or base.half_rows is None:
            raise ValueError(
                "Efficiency.gemm needs a bf16 entry with peak_fraction and half_rows (the fallback of every format)"
            )
        if BASE_FORMAT in self.attention:
            raise ValueError("the BF16 attention fraction is attention_peak_fraction; attention[bf16] is not used")
        if any(e.token_passes is not None for e in self.gemm.values()):
            raise ValueError("token_passes is a moe parameter; GEMM entries do not take it")
        # every value through the one check with_overrides makes (ranges, ceilings, names): Efficiency(
        # kernel_launch_s=-1) built directly was priced as given (break52)
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values = {k: (v.as_dict() if k in KERNEL_FIELDS else v) for k, v in values.items() if v is not None}
        checked_overrides(values, set(values) - set(KERNEL_FIELDS), {op: {} for op in KERNEL_FIELDS}, "Efficiency")

    def with_kernel(self, op: str, fmt: str, **values: float | None) -> Efficiency:
        """Return a copy with fields of the ``op[fmt]`` entry set (None: inherit again).

        Validated as construction validates (``Efficiency.__post_init__``; keys named ``Efficiency.<op>.<fmt>.<field>``).

        Raises:
            SpecError: a value out of its range (as :meth:`with_overrides`).
        """
        return replace(self, **{op: self.kernel_table(op, fmt, **values)})

    def kernel_table(self, op: str, fmt: str, **values: float | None) -> FormatTable:
        """The ``op`` table with fields of its ``fmt`` entry set (None: inherit again), unchecked."""
        table: FormatTable = getattr(self, op)
        return FormatTable({**table, fmt: replace(table.get(fmt, KernelEfficiency()), **values)})

    def as_dict(self) -> dict[str, Any]:
        """Every parameter in the nested form :meth:`with_overrides` reads (kernel tables as dicts)."""
        return {
            f.name: (getattr(self, f.name).as_dict() if f.name in KERNEL_FIELDS else getattr(self, f.name))
            for f in fields(self)
        }

    def with_overrides(self, overrides: dict[str, Any], where: str = "efficiency") -> Efficiency:
        """Return a copy with some parameters replaced, validated.

        ``overrides`` is the TOML form: scalar parameters by name, and the kernel parameters as
        ``{"gemm": {"fp8": {"peak_fraction": 0.6}}, "moe": {...}}``; a kernel field not given
        keeps its current value.

        Raises:
            SpecError: unknown parameter, op kind, compute format or kernel field (a former flat
                name such as ``gemm_peak_fraction_fp8`` names its new spelling), or a value out
                of range (fractions in (0, 1], times and skew >= 0).
        """
        names = {f.name for f in fields(self)} - {"source"} - set(KERNEL_FIELDS)
        tables = {op: dict(getattr(self, op)) for op in KERNEL_FIELDS}
        return replace(self, **checked_overrides(overrides, names, tables, where))


DEFAULT_EFFICIENCY = Efficiency()


def unchecked_replace(eff: Efficiency, **values: Any) -> Efficiency:
    """A copy of ``eff`` with fields replaced, without the range checks construction makes: for an optimiser's
    trial points only (fit/kernel_model.fit_efficiency), which may stray past the sanity ceilings before
    converging. Every other copy goes through ``dataclasses.replace`` (checked)."""
    out = copy.copy(eff)
    for k, v in values.items():
        object.__setattr__(out, k, v)
    return out
