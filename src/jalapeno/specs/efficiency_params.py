"""The parameters of an efficiency set (specs/efficiency.Efficiency): their names, the values each
takes, and the validation of an override table (:func:`checked_overrides`, behind
``Efficiency.with_overrides``) with one error naming the key and the fix; the nested (TOML) and
flat (dotted-key) forms of an override table (:func:`flatten_params`, :func:`nest_params`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from jalapeno.errors import SpecError, choice_hint
from jalapeno.specs.kernel_efficiency import COMPUTE_FORMATS, GEMM_KEYS, FormatTable, KernelEfficiency
from jalapeno.specs.schema_errors import as_written

#: The entry every format without its own value falls back to.
BASE_FORMAT = "bf16"
#: Op kinds with per-format kernel parameters, and the fields each may set.
KERNEL_FIELDS: dict[str, tuple[str, ...]] = {
    "gemm": ("peak_fraction", "half_rows", "hbm_fraction", "k_block_s"),
    "moe": ("peak_fraction", "half_rows", "hbm_fraction", "token_passes", "floor_s"),
    "attention": ("peak_fraction",),
    "mla_decode": ("peak_fraction", "hbm_fraction", "floor_s"),
    "mla_prefill": ("peak_fraction", "hbm_fraction"),
}
#: MoE token exchanges an engine runs under attention DP with EP (Efficiency.moe_exchange, set by a
#: software stack; cost/moe_exchange.moe_all_to_all_on applies them): ``all_to_all``, a
#: dispatch/combine all-to-all wherever the layout has one (DeepEP: SGLang, vLLM), or
#: ``nvlink_all_to_all``, TensorRT-LLM's, whose all-to-all kernels (MNNVL/NVLink) need the whole EP
#: group inside one NVLink scale-up domain: beyond it the tokens are all-gathered and the outputs
#: reduce-scattered (DeepEP is off unless TRTLLM_CAN_USE_DEEP_EP is set; NVIDIA/TensorRT-LLM
#: tensorrt_llm/_torch/modules/fused_moe/communication/communication_factory.py: MNNVL, then
#: DeepEP, then the AllGatherReduceScatter fallback). ``nvlink_all_to_all_above_top_k`` is
#: TensorRT-LLM's rule before 1.2.0rc3: the all-to-all also needs more EP ranks than experts per
#: token (fused_moe_cutlass.py select_alltoall_method_type: ``if not (moe_ep_size >
#: experts_per_token and MnnvlMemory.supports_mnnvl()): NotEnabled``, removed by
#: NVIDIA/TensorRT-LLM PR #8950, Nov 2025), so DeepSeek's top-8 at EP8 gathers. ``nvfp4_all_gather``: SGLang's
#: FlashInfer CUTLASS NVFP4 path, set per pool (deploy/deployment.Pool.moe_exchange): with no ``--moe-a2a-backend``,
#: ``--moe-runner-backend flashinfer_cutlass``, modelopt_fp4, DP attention and MoE EP = attention DP it quantises the
#: tokens to NVFP4, all-gathers them over the EP group and reduce-scatters the BF16 outputs, never an all-to-all
#: (sgl-project/sglang python/sglang/srt/layers/moe/utils.py @d737979c should_use_flashinfer_cutlass_moe_fp4_allgather).
#: ``all_to_all_nvfp4``: DeepEP's all-to-all with the dispatch in NVFP4 for FP4 experts (SGLang's
#: ``SGLANG_MOE_NVFP4_DISPATCH=1``: "Use nvfp4 for moe dispatch (on flashinfer_cutlass or flashinfer_cutedsl moe
#: runner backend)", sgl-project/sglang docs/references/environment_variables.md), the combine BF16; set per pool.
MOE_EXCHANGE_NAMES: tuple[str, ...] = (
    "all_to_all",
    "nvlink_all_to_all",
    "nvlink_all_to_all_above_top_k",
    "nvfp4_all_gather",
    "all_to_all_nvfp4",
)
#: the exchanges that gather NVFP4 activations already quantised when the experts run FP4 (cost/ops.py)
NVFP4_GATHER_EXCHANGES: tuple[str, ...] = ("nvlink_all_to_all", "nvlink_all_to_all_above_top_k", "nvfp4_all_gather")
#: ``moe`` entries beyond the compute formats and GEMM kernel keys: ``w4a16``, weight-only INT4 routed experts'
#: measured kernel form (specs/efficiency.MOE_W4A16_KEY, specs/w4a16_moe.py), so ``--set efficiency.moe.w4a16.*`` and
#: the audit's listing of that entry can set it
MOE_KEYS: tuple[str, ...] = ("w4a16",)
#: Efficiency.all_reduce_table values: ``none`` (the link-hierarchy model, cost/collectives.py) or the engine
#: whose measured all-reduce prices the TP all-reduces (``trtllm``: TensorRT-LLM's AllReduce, AUTO strategy;
#: ``sglang``: SGLang's CUDA-graph custom all-reduce; ``vllm``: vLLM's CUDA-graph custom all-reduce; cost/engine_allreduce.py)
ALL_REDUCE_TABLE_NAMES: tuple[str, ...] = ("none", "trtllm", "sglang", "vllm")
#: Whose rule decides the steps the all-reduce + RMSNorm fusion covers (cost/allreduce_rms.py): vLLM's pass
#: (a size cap per chip and TP, every model), SGLang's auto-enabled FlashInfer fusion (2,048 tokens, its models, SM90
#: and SM100: releases from 0.5.7) or SGLang's before 0.5.7 (``sglang_sm100``: SM100-family chips, DeepSeek-V3 and
#: gpt-oss only; the ``sglang`` profile's version rule, data/stacks.toml)
ALLREDUCE_RMS_RULE_NAMES: tuple[str, ...] = ("vllm", "sglang", "sglang_sm100")
#: Efficiency.disagg_handshake values: what a disaggregated request's TTFT holds of the decode worker's loop
#: beyond the model's half decode step (serve/handshake.py): ``none`` (TensorRT-LLM, vLLM: the prefill runs
#: on arrival, the decode side takes the KV after it) or ``decode_prealloc`` (SGLang: the decode worker
#: pre-allocates the KV at the top of an iteration before the prefill may run, and streams the first token
#: after a prebuilt iteration)
DISAGG_HANDSHAKE_NAMES: tuple[str, ...] = ("none", "decode_prealloc")
#: Efficiency.disagg_router values: how the front end picks a disaggregated request's decode worker
#: (serve/rr_wait.py): ``load_aware`` (the least-loaded worker; no wait while any worker has a free slot) or
#: ``round_robin`` (the next worker in turn whatever its load: Dynamo's frontend without ``--router-mode``)
DISAGG_ROUTER_NAMES: tuple[str, ...] = ("load_aware", "round_robin")
#: Efficiency.disagg_prebuilt values: what an attention-DP rank of a disaggregated decode worker does in an
#: iteration that admits transferred requests (serve/prebuilt_skip.py): ``merge`` (it decodes its running batch
#: too) or ``skip`` (SGLang before PR #19568: the iteration returns the prebuilt batch and the rank's running
#: sequences wait a step; priced only with serve/prebuilt_skip.PREBUILT_SKIP_ON)
DISAGG_PREBUILT_NAMES: tuple[str, ...] = ("merge", "skip")
#: the text parameters and their allowed values (() = any string)
_TEXT_NAMES: dict[str, tuple[str, ...]] = {
    "source": (),
    "moe_exchange": MOE_EXCHANGE_NAMES,
    "all_reduce_table": ALL_REDUCE_TABLE_NAMES,
    "allreduce_rms_rule": ALLREDUCE_RMS_RULE_NAMES,
    "disagg_handshake": DISAGG_HANDSHAKE_NAMES,
    "disagg_router": DISAGG_ROUTER_NAMES,
    "disagg_prebuilt": DISAGG_PREBUILT_NAMES,
}


#: The boolean parameters (engine switches) and what ``true`` means, for the error that asks for one.
SWITCHES = {
    "moe_width_term": "price the routed experts' per-rank width term, cost/moe_width.py",
    "gemm_allreduce_fusion": "the engine fuses the GEMM with its TP all-reduce",
    "allreduce_rms_fusion": "the engine fuses the TP all-reduce with the residual add + RMSNorm after it",
    "tp_rank_step_dp": "the per-TP-rank step cost counts the attention-DP ranks too, cost/step.step_overhead",
    "fused_a_prefetch": "the MoE all-reduce hides under the next layer's BF16 fused-A GEMM at <= 16 tokens, "
    "cost/ops.fused_a_cover",
    "kv_handoff_fanout": "the KV hand-off sends an MLA cache whole to every decode attention-TP rank, "
    "serve/disagg.handoff_copies",
    "admission_lag_with_mtp": "the engine keeps its overlap loop (admission_lag_steps) with MTP, "
    "serve/overlap_loop.lag_steps",
}


def checked_overrides(
    overrides: Mapping[str, Any],
    names: set[str],
    tables: dict[str, dict[str, KernelEfficiency]],
    where: str = "efficiency",
) -> dict[str, Any]:
    """``overrides`` (the TOML form, as ``Efficiency.with_overrides`` takes it) validated into the
    fields to replace: each scalar parameter of ``names`` checked, the kernel tables (``tables``: op kind →
    {format: entry}, the current ones, updated in place) merged and returned as FormatTables.

    Raises:
        SpecError: as ``Efficiency.with_overrides``.
    """
    clean: dict[str, Any] = {}
    for k, v in overrides.items():
        if k in _TEXT_NAMES:  # the text parameters
            allowed = _TEXT_NAMES[k]
            if not isinstance(v, str) or allowed and v not in allowed:  # an unknown name, or not text at all
                raise SpecError(
                    f"{where}.{k}",
                    f"unknown {k} {v!r}" if isinstance(v, str) else f"must be a string, got {v!r}",
                    f"use one of {', '.join(allowed)}" if allowed else "quote it",
                )
            clean[k] = v
            continue
        if k in SWITCHES:
            if not isinstance(v, bool):
                raise SpecError(
                    f"{where}.{k}", f"must be true or false, got {v!r}", f"write {k} = true ({SWITCHES[k]}) or false"
                )
            clean[k] = v
            continue
        if k in KERNEL_FIELDS:
            _kernel_overrides(k, v, tables[k], where)
            continue
        if k == "comm_overlap":
            raise SpecError(
                f"{where}.comm_overlap",
                "the scalar overlap fraction was removed: communication "
                "overlap is a deployment option, not an efficiency",
                "delete it; model two-batch overlap with --overlap tbo (Deployment.overlap; docs/model.md §6)",
            )
        if k not in names:
            new = _RENAMED.get(k)
            if new is not None:
                op, fmt, name = new.split(".")
                raise SpecError(
                    f"{where}.{k}",
                    f"{k} is now {new}",
                    f"write {name} = ... in a [{op}.{fmt}] sub-table: [efficiency.{op}.{fmt}] "
                    f"in a system TOML, [parameters.{op}.{fmt}] in a calibration file",
                )
            raise SpecError(
                f"{where}.{k}",
                f"unknown efficiency parameter{choice_hint(k, names)}",
                f"use one of {', '.join(sorted(names))}, or the per-format tables "
                + ", ".join(f"{op}.<format>.{{{','.join(fs)}}}" for op, fs in KERNEL_FIELDS.items()),
            )
        clean[k] = _checked(f"{where}.{k}", k, v)
    for op, t in tables.items():
        clean[op] = FormatTable(t)
    return clean


def _kernel_overrides(op: str, table: Any, current: dict[str, KernelEfficiency], where: str) -> None:
    """Validate ``overrides[op]`` ({format: {field: value}}) into ``current`` (updated in place)."""
    allowed = KERNEL_FIELDS[op]
    if not isinstance(table, Mapping):
        raise SpecError(
            f"{where}.{op}",
            f"must be a table of compute formats, got {table!r}",
            f"give [{op}.<format>] sub-tables (<format> one of {', '.join(COMPUTE_FORMATS)}) "
            f"with some of {', '.join(allowed)}",
        )
    for fmt, entry in table.items():
        if op == "attention" and fmt == BASE_FORMAT:
            raise SpecError(
                f"{where}.attention.bf16",
                "the BF16 attention fraction has its own name",
                "write attention_peak_fraction = ... instead of [attention.bf16]",
            )
        keys = (
            (*COMPUTE_FORMATS, *GEMM_KEYS, *(MOE_KEYS if op == "moe" else ()))
            if op in ("gemm", "moe")
            else COMPUTE_FORMATS
        )
        if fmt not in keys:
            raise SpecError(
                f"{where}.{op}.{fmt}",
                f"unknown compute format{' or kernel key' if op in ('gemm', 'moe') else ''} {fmt!r}",
                f"use one of {', '.join(keys)}",
            )
        if not isinstance(entry, Mapping):
            raise SpecError(
                f"{where}.{op}.{fmt}",
                f"must be a table of {op} parameters, got {entry!r}",
                f"give some of {', '.join(allowed)}, one key each (--set efficiency.{op}.{fmt}.<key>=<value>)",
            )
        changes = {}
        for name, v in entry.items():
            if name not in allowed:
                raise SpecError(
                    f"{where}.{op}.{fmt}.{name}", f"unknown {op} parameter", f"use one of {', '.join(allowed)}"
                )
            changes[name] = _checked(f"{where}.{op}.{fmt}.{name}", name, v)
        current[fmt] = replace(current.get(fmt, KernelEfficiency()), **changes)


def _checked(key: str, name: str, v: Any) -> float:
    """One parameter value checked against its name's rules (``key``: the dotted path for errors)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SpecError(key, f"must be a number, got {as_written(v)}", "give a number")
    v = float(v)
    if not math.isfinite(v):
        raise SpecError(key, f"must be finite, got {v}", "give a finite number")
    frac = "_fraction" in name
    if frac and not 0.0 < v <= 1.0:
        raise SpecError(key, f"must be in (0, 1], got {v}", "give a fraction above 0 and at most 1")
    if name.endswith(_RATE_FRACTIONS) and v < MIN_RATE_FRACTION:
        raise SpecError(
            key,
            f"{v:g} of the hardware's peak is below the {MIN_RATE_FRACTION:g} plausibility floor "
            "(shipped fits: 0.089 to 1)",
            "give the achieved share of peak as a fraction, e.g. 0.6 for 60% (not 0.006)",
        )
    if not frac and v < 0:
        raise SpecError(key, f"must be >= 0, got {v}", "give a non-negative value")
    cap = _UPPER.get(name)
    if cap is not None and v > cap[0]:
        raise SpecError(key, f"{v:g} is beyond {cap[0]:g} ({cap[1]})", f"give it in {cap[1]}")
    if name == "mla_decode_tile_rows" and (v < 1 or v != int(v)):  # 1.5 rows was priced (break50)
        raise SpecError(
            key,
            f"must be a whole number >= 1 of rows, got {v:g}",
            "give the kernel tile's query rows per sequence, e.g. 64",
        )
    # the values a stack profile may give them (specs/stacks.py), which --set and a system's [efficiency] skipped:
    # admission_lag_steps 0.5 ran as no lag (serve/overlap_loop.lag_steps rounds) and 1e9 as a year's TTFT;
    # logits_bytes_per_elem 0 priced the LM head's all-gather free, 3 is no dtype's size
    if name == "admission_lag_steps" and v not in (0.0, 1.0, 2.0):
        raise SpecError(
            key,
            f"must be a whole number of steps 0-2, got {v:g}",
            "write 1 for an overlap loop (it launches the next batch before it reads the last result), "
            "0 for a loop that launches what it reads",
        )
    if name == "logits_bytes_per_elem" and v not in (1.0, 2.0, 4.0):
        raise SpecError(
            key,
            f"{v:g} is not a logit element size",
            "give 1 (FP8 logits), 2 (BF16/FP16, cast to FP32 after the gather) or 4 (FP32)",
        )
    if name == "torus_congestion" and v < 1:
        raise SpecError(key, f"must be >= 1, got {v}", "give 1 (ideal routing) or more")
    return v


#: Fractions of a hardware peak (FLOP/s, HBM or link bandwidth) that a time is divided by.
_RATE_FRACTIONS = (
    "peak_fraction",
    "hbm_fraction",
    "link_fraction",
    "in_switch_fraction",
    "all_to_all_fraction",
    "custom_ar_fraction",
)
#: Least achieved share of a peak accepted, a named plausibility floor (not a measurement): the shipped
#: fits span 0.089 (the least: a MoE backend kernel's fitted peak_fraction, data/moe_backend_kernels.toml; the
#: least in data/calibration/*.toml is 0.140, gfx9's MLA decode) to 1, and this is ~100x below the least of them.
#: ``--set efficiency.hbm_fraction=1e-300`` was accepted and printed a TTFT of a 300-digit number of ms.
MIN_RATE_FRACTION = 1e-3

#: Sanity ceilings (value, unit hint) that catch unit slips (µs written as s): a kernel or
#: collective launch above 1 ms, a step overhead above 1 s, a front-end cost above a minute.
#: Keyed by the parameter's (or kernel field's) name.
_UPPER = {
    "kernel_launch_s": (1e-3, "seconds: 4e-6 is 4 µs"),
    "collective_launch_s": (1e-3, "seconds"),
    "moe_floor_s": (1e-3, "seconds"),
    "step_overhead_s": (1.0, "seconds"),
    "all_to_all_latency_s": (1e-3, "s"),
    "request_overhead_s": (60.0, "seconds"),
    "prompt_overhead_s_per_token": (1e-3, "seconds per token"),
    # as step_overhead_s and prompt_overhead_s_per_token: 1e30 of either was priced, a TPOT of 1e31 s (break50)
    "tp_rank_step_s": (1.0, "seconds"),
    "prompt_step_s_per_token": (1e-3, "seconds per token"),
    "first_wave_stall_s": (600.0, "seconds"),
    "floor_s": (1e-3, "seconds: 1.5e-5 is 15 µs"),
    "logits_bytes_per_elem": (8.0, "bytes per element: 2 = BF16, 4 = FP32"),
    "half_rows": (1e6, "rows"),
    "token_passes": (1e3, "passes"),
    "moe_load_skew": (100.0, "a multiplier"),
    "torus_congestion": (100.0, "a multiplier"),
    "mla_decode_tile_rows": (1024.0, "query rows per sequence"),
    "k_block_s": (1e-5, "seconds per 128 of k: 1.5e-7 is 0.15 µs"),
    **{
        f"{f}_{k}": cap
        for f in ("link", "in_switch", "custom_ar")
        for k, cap in (("half_bytes", (1e11, "bytes")), ("shape", (4.0, "an exponent")))
    },
    "memory_reserve_fraction": (0.5, "a fraction of usable HBM; engines keep well under half"),
}

#: Former flat names (``gemm_peak_fraction_fp8``) → their nested spelling (``gemm.fp8.peak_fraction``),
#: for the error that points a stale file at the new form.
_RENAMED = {
    f"{op}_{name}{'' if fmt == BASE_FORMAT else '_' + fmt}": f"{op}.{fmt}.{name}"
    for op, names in KERNEL_FIELDS.items()
    for name in names
    for fmt in ("bf16", "fp8", "fp4")
}


def flatten_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Overrides in the nested form → one level with dotted kernel keys, order kept.

    >>> flatten_params({"hbm_fraction": 0.9, "gemm": {"fp8": {"peak_fraction": 0.6}}})
    {'hbm_fraction': 0.9, 'gemm.fp8.peak_fraction': 0.6}
    """
    out: dict[str, Any] = {}
    for k, v in params.items():
        if isinstance(v, Mapping):
            out.update({f"{k}.{kk}": vv for kk, vv in flatten_params(v).items()})
        else:
            out[k] = v
    return out


def nest_params(flat: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`flatten_params` (dotted keys → nested dicts, first-appearance order).

    >>> nest_params({"gemm.fp8.peak_fraction": 0.6, "hbm_fraction": 0.9})
    {'gemm': {'fp8': {'peak_fraction': 0.6}}, 'hbm_fraction': 0.9}
    """
    out: dict[str, Any] = {}
    for k, v in flat.items():
        *path, last = k.split(".")
        d = out
        for p in path:
            d = d.setdefault(p, {})
        d[last] = v
    return out
