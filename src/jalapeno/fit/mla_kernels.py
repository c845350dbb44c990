"""MLA attention-kernel fits: ``mla_decode[fmt]`` and ``mla_prefill[fmt]`` from TRT-LLM's MLA tables.

Data: aiconfigurator-core's ``mla/trtllm/<version>/generation_mla_perf`` (the weight-absorbed MLA
generation kernel alone; the q/uk and uv batched GEMMs are separate tables) and
``context_mla_perf`` (the MLA context attention kernel alone; kv_b_proj is a separate GEMM), for
DeepSeek-V3's MLA shape (kv_lora_rank 512, rope 64, nope 128, v 128), ``num_heads`` heads per
GPU, BF16 or FP8 KV cache. Both are in every NVIDIA system folder of the package (h100_sxm,
h200_sxm, b200_sxm, b300_sxm, gb200, gb300) for TRT-LLM 1.3.0rc20 only (SGLang 0.5.14 has tables
of the same name; vLLM only module-level ones).

Each row becomes the op the step cost builds for it — cost/attention.add_mla_decode_kernel /
add_mla_prefill_kernel on a one-layer RankBatch of that row's batch, heads and context, with
DeepSeek-R1's attention spec from the catalog — and is priced by RooflinePricer under trial
parameters (``mla_decode.<fmt>.peak_fraction``, ``.hbm_fraction`` and a per-kernel floor t0), so
the fitted numbers mean exactly what the step cost does with them. Compute format: the table's
KV-cache dtype (FP8 KV → FP8 math: TRT-LLM's MLA kernels take FP8 Q with an FP8 KV cache —
TensorRT-LLM examples/models/core/deepseek_v3/README.md "FP8 KV Cache and MLA" — and the
measured FP8-KV decode rate, 2.59 PFLOP/s on GB200 at batch 512 / 8K, exceeds the BF16 peak).
Context of a generation row: ``step`` cached tokens + the new one (the table's ``isl`` is 1).

Fit: robust least squares (soft-L1) on log(predicted/measured) over the rows of one phase and
format except the held-out ones — the largest context of the table (generation step 131,071;
context isl 32,768), judged separately as an extrapolation in context. Decode: rows with a
context of 1024 tokens or more (step >= 1023: the serving regime, and the threshold of the GQA
decode fit, fit/attention_kernels.fit_attention; shorter contexts are dominated by fixed costs, which
otherwise pull the HBM fraction down), (peak_fraction, hbm_fraction, t0) — few heads per GPU
make the kernel HBM-bound on the latent read, many heads compute-bound. Prefill: rows with isl >= 2048 only (the chunk sizes engines
prefill in, and the threshold of the GQA prefill fit, fit/attention_kernels.fit_attention), (peak_fraction,
t0): the kernel is compute-bound there under any HBM fraction, so ``mla_prefill[f].hbm_fraction``
is not identified and stays unset (the generic ``hbm_fraction``); below 2K tokens the context
kernel's tiles are not full, an effect the roofline form has no term for. t0 is reported as the
kernel floor, not used as ``kernel_launch_s`` (as for GEMMs: CUDA graphs hide single-launch
latency in serving). The decode t0 is priced as ``mla_decode[f].floor_s`` (per kernel, no launch
besides it), the parameter that carries it to serving when set; calibration does not set it
(specs/kernel_efficiency.KernelEfficiency.floor_s).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from jalapeno.cost.attention import RankBatch, add_mla_decode_kernel, add_mla_prefill_kernel
from jalapeno.cost.optable import OpBuilder
from jalapeno.fit.kernels import _ape, _sig, kernel_params, priced_s
from jalapeno.specs.efficiency import nest_params
from jalapeno.specs.hardware import System
from jalapeno.specs.kv_cache import get_kv_format

#: aiconfigurator MLA table KV-cache dtype → (our KV-cache format, compute format of the kernel)
MLA_KV_DTYPES = {"bfloat16": ("bf16", "bf16"), "fp8": ("fp8", "fp8")}
#: the model whose MLA shape the tables were measured on (aiconfigurator collects DeepSeek-V3's)
MLA_TABLE_MODEL = "deepseek-r1"
#: phase → (kernel family, aiconfigurator table name)
MLA_TABLES = {"decode": ("mla_decode", "generation_mla_perf"), "prefill": ("mla_prefill", "context_mla_perf")}
#: shortest prompt of a context-table row the prefill fit uses (module docstring)
MLA_PREFILL_MIN_ISL = 2048
#: smallest ``step`` (cached tokens) of a generation-table row the decode fit uses: context >= 1024
MLA_DECODE_MIN_STEP = 1023


def mla_rank_batch(phase: str, rows: pd.DataFrame) -> RankBatch:
    """One rank's batch per table row: decode ``batch`` sequences of one query row at context
    step + 1, or prefill ``batch`` fresh prompts of ``isl`` tokens (no cached prefix)."""
    b = rows.batch_size.to_numpy(float)
    z = np.zeros_like(b)
    if phase == "decode":
        return RankBatch(b, b, rows.step.to_numpy(float) + 1.0, z, z, z)
    return RankBatch(z, z, z, b * rows.isl.to_numpy(float), b, z)


def mla_table(phase: str, rows: pd.DataFrame, fmt: str, kv_name: str, attention):
    """The MLA kernel op of every row of ``rows`` (one OpTable row, N = len(rows) points), accounted
    by cost/attention.py's own builder with ``num_heads`` heads per chip, one layer."""
    rb = mla_rank_batch(phase, rows)
    ob = OpBuilder(len(rows))
    kvb = get_kv_format(kv_name).mla_token_bytes(attention.kv_lora_rank, attention.qk_rope_dim)
    add = add_mla_decode_kernel if phase == "decode" else add_mla_prefill_kernel
    add(ob, attention, rb, rows.num_heads.to_numpy(float), fmt, kvb, 1.0)
    return ob.build()[0]


def mla_model_s(system: System, phase: str, table, fmt: str, eta_f, eta_m, t0) -> np.ndarray:
    """Modelled kernel time (s) of every point of ``table`` through the roofline pricer, ``t0`` per
    kernel: for decode as ``mla_decode[fmt].floor_s`` (KernelEfficiency.floor_s, no launch besides it),
    so the reported ``kernel_floor_s`` is the value that parameter takes; for prefill as the launch."""
    fam = MLA_TABLES[phase][0]
    if phase == "decode":
        return priced_s(
            system,
            table,
            {**kernel_params(fam, fmt, peak_fraction=eta_f, hbm_fraction=eta_m, floor_s=t0), "kernel_launch_s": 0.0},
        )
    return priced_s(
        system, table, {**kernel_params(fam, fmt, peak_fraction=eta_f, hbm_fraction=eta_m), "kernel_launch_s": t0}
    )


def fit_mla_phase(df: pd.DataFrame, system: System, phase: str, attention) -> tuple[dict, dict]:
    """(parameters, report) of one MLA table (``phase`` decode | prefill), per compute format.

    Returns parameters as dotted keys (``mla_decode.fp8.peak_fraction`` ...) and a report per
    format: fit rows and error, held-out rows (the largest context) and error, kernel floor.
    """
    from scipy.optimize import least_squares

    ctx_col = "step" if phase == "decode" else "isl"
    with_hbm = phase == "decode"  # prefill rows are compute-bound: hbm not identified
    df = df[df.step >= MLA_DECODE_MIN_STEP] if with_hbm else df[df.isl >= MLA_PREFILL_MIN_ISL]
    params, report = {}, {}
    for kv_dtype, d in df.groupby("kv_cache_dtype"):
        if kv_dtype not in MLA_KV_DTYPES:
            continue
        kv_name, fmt = MLA_KV_DTYPES[kv_dtype]
        if fmt not in system.chip.peak_flop_per_s:
            continue
        d = d.drop_duplicates(subset=["num_heads", "batch_size", "isl", "step"])
        held = d[ctx_col] == d[ctx_col].max()
        train, test = d[~held], d[held]
        tab = mla_table(phase, train, fmt, kv_name, attention)
        t = train.latency.to_numpy(float) * 1e-3

        def resid(x, tab=tab, t=t, fmt=fmt):
            em = _sig(x[1]) if with_hbm else None
            return np.log(mla_model_s(system, phase, tab, fmt, _sig(x[0]), em, math.exp(x[2])) / t)

        sol = least_squares(resid, [0.0, 1.0, math.log(5e-6)], loss="soft_l1", f_scale=0.2, max_nfev=300)
        # capped at 0.95 like the generic HBM fraction (no kernel streams HBM at its full peak)
        eta, t0 = _sig(sol.x[0]), math.exp(sol.x[2])
        em = min(_sig(sol.x[1]), 0.95) if with_hbm else None
        params.update(kernel_params(MLA_TABLES[phase][0], fmt, peak_fraction=eta, hbm_fraction=em))
        rep = {
            "kv_cache_dtype": kv_dtype,
            "fit": _ape(mla_model_s(system, phase, tab, fmt, eta, em, t0), t),
            "kernel_floor_s": t0,
        }
        if len(test):
            ttab = mla_table(phase, test, fmt, kv_name, attention)
            rep["held_out_largest_context"] = {
                ctx_col: int(test[ctx_col].iloc[0]),
                **_ape(mla_model_s(system, phase, ttab, fmt, eta, em, t0), test.latency.to_numpy(float) * 1e-3),
            }
        report[fmt] = rep
    return params, report


def fit_mla(tables: dict[str, pd.DataFrame], system: System) -> tuple[dict, dict]:
    """(parameters in the nested TOML form, report) from the MLA tables of one system.

    ``tables``: phase (decode | prefill) → its aiconfigurator table (:data:`MLA_TABLES`); a phase
    without a table is skipped (its MLA ops keep the generic attention values).
    """
    from jalapeno.specs.catalog import load_model

    attention = load_model(MLA_TABLE_MODEL).attention
    params, report = {}, {}
    for phase, df in tables.items():
        p, r = fit_mla_phase(df, system, phase, attention)
        params.update(p)
        report[phase] = r
    return nest_params(params), report
