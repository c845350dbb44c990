"""Attention-kernel fits of the generic set: the prefill attention peak fraction and the HBM fraction
of decode KV reads, from TensorRT-LLM's ``context_attention_perf`` / ``generation_attention_perf``.

Data: aiconfigurator-core's attention tables (fit/kernel_tables.load_table; latency in ms per call,
heads per GPU). The MLA kernels have fits of their own (fit/mla_kernels.py). Every row is priced as a
single op through the same pricer that prices a step (fit/kernels.priced_s), so the fitted numbers
mean what the step cost does with them. Binned model/measured tables of the decode regime:
``python scripts/decode_attention_bins.py`` (docs/gap_large_batch_decode.md, round 25).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from jalapeno.errors import SpecError
from jalapeno.fit.kernels import _ape, _sig, _single_op, priced_s
from jalapeno.specs.hardware import System

#: smallest KV read per call (bytes) of a decode-attention row the HBM fraction is fitted on. The
#: tables time each call repeatedly on one KV cache, so a read that fits in L2 is served from it after
#: the first: on B200 (~126 MB L2, data/systems/b200.toml) a 67 MB read takes ~4.5 us beyond the
#: ~10.7 us floor (~15 TB/s, twice the HBM peak) and a 134 MB one ~22 us (~6.1 TB/s; TensorRT-LLM
#: 1.3.0rc20, 8 query / 1 KV head, BF16). Twice the largest L2 of the calibrated NVIDIA chips (B200 /
#: GB200 ~126 MB; H100/H200 50 MB) so that every row fitted streams from HBM (named assumption: B300 /
#: GB300, whose L2 is unpublished, hold no more than that).
DECODE_FIT_MIN_BYTES = 256 * 2**20
#: shortest context (cached tokens) of a decode row any decode figure uses: shorter contexts are
#: dominated by the kernel floor (the threshold of the MLA decode fit too, fit/mla_kernels.py)
DECODE_MIN_STEP = 1024


def _decode_rows(gen: pd.DataFrame, chip) -> tuple:
    """(rows, KV bytes, FLOPs, measured s, rows read faster than peak HBM) of the full-attention
    decode rows of at least :data:`DECODE_MIN_STEP` cached tokens: K and V of every KV head read
    once per sequence (bytes ``batch·step·2·kv_heads·head_dim·b``), scores and values
    ``2·batch·heads·2·head_dim·step`` FLOPs."""
    g = gen[(gen.window_size == 0) & (gen.step >= DECODE_MIN_STEP)]
    kvb = np.where(g.kv_cache_dtype == "fp8", 1.0, 2.0)
    byt = (g.batch_size * g.step * 2.0 * g.num_key_value_heads * g.head_dim * kvb).to_numpy(float)
    flop = (4.0 * g.batch_size * g.num_heads * g.head_dim * g.step).to_numpy(float)
    tg = g.latency.to_numpy(float) * 1e-3
    real = byt / tg <= chip.hbm_bandwidth_bytes_per_s  # faster than peak HBM: not this read
    return g, byt, flop, tg, real


def fit_attention(ctx: pd.DataFrame, gen: pd.DataFrame, system: System, t0: float) -> tuple[dict, dict]:
    """Prefill attention compute efficiency and the HBM fraction of KV reads (decode attention).

    Prefill (isl >= 2048, BF16): eta_attn = median of flops/((t − t0)·F_bf16). Decode: the row's
    op (KV bytes, FLOPs at eta_attn of the BF16 peak: the tables' ``attn_dtype``) priced by the
    roofline with a per-call floor, t = max(FLOPs/(F·eta_attn), bytes/(W·eta_m)) + t_floor, fitted
    by robust least squares on log(model/measured) (soft-L1, as every kernel fit) over the rows
    that stream their KV from HBM: context >= 1024 tokens and a read of at least
    :data:`DECODE_FIT_MIN_BYTES` (smaller reads are timed warm in L2). eta_m → ``hbm_fraction``
    (capped at 0.95); t_floor is reported (``kernel_floor_s``), not served (as for GEMMs: the
    stacks' ``kernel_launch_s`` carries fixed costs). Reported: the error on the fitted rows and
    on every row of context >= 1024 (``all_rows_*``) under the fitted pair. Until round 25 a
    linear fit in absolute time over every row of context >= 1024 set eta_m: the largest reads
    dominated it and the Blackwell tables gave > 0.95 (capped), with a 44-64 us intercept.
    A decode row that would read its KV cache faster than the chip's peak HBM bandwidth W is not a
    measurement of that read and is left out (reported as ``dropped_above_peak``): A100's
    TensorRT-LLM 1.0.0 table has 230 such rows of 1,215 (up to 1.7 W); the Hopper and Blackwell
    tables have none.
    """
    from scipy.optimize import least_squares

    chip = system.chip
    c = ctx[(ctx.attn_dtype == "bfloat16") & (ctx.window_size == 0) & (ctx.isl >= 2048)]
    flops = 4.0 * c.batch_size * c.num_heads * c.head_dim * c.isl.astype(float) ** 2 / 2
    t = c.latency * 1e-3
    eta = float(np.clip(np.median(flops / ((t - t0).clip(lower=1e-9) * chip.peak("bf16"))), 0.05, 1.0))
    pred = priced_s(
        system,
        _single_op(len(c), "attention", flop=flops.to_numpy(dtype=float)),
        {"attention_peak_fraction": eta, "kernel_launch_s": t0},
    )
    g, byt, flop, tg, real = _decode_rows(gen, chip)
    if not real.any():
        raise SpecError(
            "attention",
            f"every decode-attention row of {system.name}'s table reads its KV cache "
            "faster than the chip's peak HBM bandwidth",
            "check the table's units and version",
        )
    fit = real & (byt >= DECODE_FIT_MIN_BYTES)
    if not fit.any():  # a small table (A100's): every row that streams from HBM
        fit = real

    def decode_s(x, m):
        return priced_s(
            system,
            _single_op(int(m.sum()), "attention", flop=flop[m], kv=byt[m]),
            {"attention_peak_fraction": eta, "hbm_fraction": min(_sig(x[0]), 0.95), "kernel_launch_s": math.exp(x[1])},
        )

    sol = least_squares(
        lambda x: np.log(decode_s(x, fit) / tg[fit]), [1.0, math.log(1e-5)], loss="soft_l1", f_scale=0.2, max_nfev=300
    )
    # capped at 0.95: no kernel streams HBM at its full peak (STREAM-like copies reach 0.9-0.95)
    eta_m, floor = min(_sig(sol.x[0]), 0.95), math.exp(sol.x[1])
    all_ape = {f"all_rows_{k}": v for k, v in _ape(decode_s(sol.x, real), tg[real]).items()}
    report = {
        "prefill": {"rows": int(len(c)), **_ape(pred, t)},
        "decode": {
            "rows": int(fit.sum()),
            **_ape(decode_s(sol.x, fit), tg[fit]),
            "kernel_floor_s": floor,
            "min_bytes": DECODE_FIT_MIN_BYTES,
            **all_ape,
            "dropped_above_peak": int((~real).sum()),
        },
    }
    return {"attention_peak_fraction": eta, "hbm_fraction": eta_m}, report
