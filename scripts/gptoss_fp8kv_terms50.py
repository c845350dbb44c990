"""gpt-oss-120b on Blackwell TensorRT-LLM with the runs' FP8 KV cache: the candidate terms for the missing decode time,
sized at InferenceX rows 40 / 41 / 47 / 48 (issue 18, round 50, gptoss50; docs/gap_large_batch_decode.md).

Round 49 (scripts/gptoss_decode_occupancy49.py ``--kv``) priced the KV format these runs stored (FP8: InferenceX
benchmarks/gptoss_fp4_b200_trt.sh @d7dbd045b234 ``kv_cache_config: dtype: fp8``; ai-dynamo/dynamo
components/backends/trtllm/performance_sweeps/scripts/gen_yaml.py ``"dtype": "fp8"``) and found rows 40 / 47 15-22%
too fast: about 5 ms a step missing. This script sizes, per row, what the sources read give (ms a decode step; nothing
fitted to an end-to-end point, nothing written, no shipped prediction moves):

1. **Decode attention at gpt-oss's own shape** (``attention``). aiconfigurator's TensorRT-LLM 1.3.0rc20
   ``generation_attention_perf`` (B200 and GB200) times the whole attention op (QKV preprocessing, RoPE, KV append
   and the kernel) at 64 query / 8 KV heads, head 64 — gpt-oss's per-rank shape at attention TP1 — with full
   attention (window 0) and 128-token windows, BF16 and FP8 KV. Each (system, window, KV dtype) is fitted
   (:func:`fit_attention_form`) to t = t0 + a·B + KV bytes / (f·W) (B sequences, W the chip's HBM peak): a per-call
   floor, a per-sequence cost and a streaming fraction. The form is then evaluated at the row's sequences a rank and
   mean decode context, 18 full + 18 sliding layers, against the model's ``attn.decode_full`` + ``attn.decode_sliding128``
   + ``attn.norm_rope_kv_write`` (the op the table times; cost/attention.add_gqa_ops).
2. **The routed experts as TRT-LLM-gen runs them** (``moe``): the same release's ``moe_perf`` rows of gpt-oss's
   shape (hidden 2880, intermediate 2880, 128 experts, top-4; ``moe_torch_flow``, W4A8 MXFP4 x MXFP8, balanced, MoE
   TP1 at the row's EP), interpolated at the tokens entering the MoE (the decode batch a worker: attention DP
   all-gathers its ranks' tokens, as aiconfigurator's own query scales them, sdk/operations/moe_comm.py), x 36 layers,
   against the model's ``moe.experts``. The GB200 decode workers ran ``moe_config.backend: CUTLASS`` (gen_yaml.py
   under attention DP, TP < 16): aiconfigurator has no CUTLASS MXFP4 row (its collector pins TRTLLM for MXFP4 on
   SM100, collector/trtllm/collect_moe.py), so the TRT-LLM-gen curve stands as the measured MXFP4 kernel.
3. **The prompts' stall** (``stall`` column): the model's TPOT minus its decode-only step (aggregated rows only).

Run: python scripts/gptoss_fp8kv_terms50.py AIC_CHECKOUT [ROW ...]   (a checkout of github.com/ai-dynamo/aiconfigurator,
     e.g. commit 095f58a51, read by fit/kernel_tables.load_repo_table; ROW = the number after inferencex_points:)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.errors import SpecError
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gptoss_decode_occupancy49 import FP8_KV_ROWS, _points  # noqa: E402

#: the aiconfigurator TensorRT-LLM release read (the one calibration reads, data/calibration/*.toml provenance)
RELEASE = "1.3.0rc20"
#: system → aiconfigurator system folder (fit/kernel_tables.AIC_SYSTEM_DIRS)
SYSTEM_DIRS = {"b200": "b200_sxm", "gb200-nvl72": "gb200"}
#: gpt-oss-120b's attention per rank at attention TP1 (data/models gpt-oss-120b: 64 query / 8 KV heads, head 64)
HEADS, KV_HEADS, HEAD_DIM = 64, 8, 64
#: its layers: 36, alternating full attention and 128-token sliding windows (18 each)
LAYERS, WINDOW = 36, 128
#: gpt-oss's MoE shape in the tables (hidden, intermediate, experts, top-k)
MOE_SHAPE = (2880, 2880, 128, 4)
#: KV bytes per element of each table dtype
KV_BYTES = {"bfloat16": 2.0, "fp8": 1.0}


def attention_time_s(params: tuple[float, float, float], batch, ctx, kv_bytes: float, hbm_bytes_per_s: float):
    """One attention call of the fitted form, s: t0 + a·B + B·ctx·2·KV_HEADS·HEAD_DIM·kv_bytes / (f·W).

    ``params``: (t0 s, a s per sequence, f fraction of ``hbm_bytes_per_s``). ``ctx``: tokens read (the window's length
    on a sliding layer).

    >>> round(float(attention_time_s((10e-6, 60e-9, 0.9), 1000, 1000, 1.0, 8e12)) * 1e6, 2)  # 10 + 60 + 1.024 GB / 7.2 TB/s
    212.22
    """
    b, c = np.asarray(batch, dtype=float), np.asarray(ctx, dtype=float)
    t0, a, f = params
    return t0 + a * b + b * c * 2 * KV_HEADS * HEAD_DIM * kv_bytes / (f * hbm_bytes_per_s)


def fit_attention_form(rows: pd.DataFrame, kv_bytes: float, hbm_bytes_per_s: float, window: int = 0) -> dict:
    """Fit :func:`attention_time_s` to measured attention calls (robust least squares on log(model / measured),
    soft-L1 as the project's kernel fits, fit/attention_kernels.py).

    ``rows``: ``batch_size``, ``step`` (cached tokens) and ``latency`` (ms) columns, one KV dtype and window.
    Returns t0_s, per_seq_s, fraction, n and the fit's median / p90 |error|.

    Raises:
        SpecError: fewer than 3 rows.
    """
    from scipy.optimize import least_squares

    if len(rows) < 3:
        raise SpecError("attention rows", f"{len(rows)} rows at gpt-oss's shape", "give a table with that shape's rows")
    b = rows.batch_size.to_numpy(float)
    ctx = rows.step.to_numpy(float)
    ctx = np.minimum(ctx, window) if window else ctx
    t = rows.latency.to_numpy(float) * 1e-3

    def res(p):
        return np.log(attention_time_s((p[0] * 1e-6, p[1] * 1e-9, p[2]), b, ctx, kv_bytes, hbm_bytes_per_s) / t)

    r = least_squares(res, [10.0, 50.0, 0.8], loss="soft_l1", f_scale=0.05, bounds=([0, 0, 0.1], [1e3, 1e4, 1.0]))
    e = np.abs(np.exp(r.fun) - 1)
    return {
        "t0_s": r.x[0] * 1e-6,
        "per_seq_s": r.x[1] * 1e-9,
        "fraction": float(r.x[2]),
        "n": len(rows),
        "median_ape": float(np.median(e)),
        "p90_ape": float(np.percentile(e, 90)),
    }


def moe_table_s(curve: pd.DataFrame, tokens: float) -> float:
    """One MoE layer's time (s) at ``tokens``, linear between the table's token counts (``num_tokens``, ``latency``
    ms; fastest of repeated rows).

    Raises:
        SpecError: ``tokens`` outside the table's range.

    >>> round(moe_table_s(pd.DataFrame({"num_tokens": [1024, 2048], "latency": [0.2, 0.3]}), 1536) * 1e3, 3)
    0.25
    """
    g = curve.groupby("num_tokens").latency.min().sort_index()
    if not g.index[0] <= tokens <= g.index[-1]:
        raise SpecError("tokens", f"{tokens} outside the table's {g.index[0]}-{g.index[-1]}", "read a wider table")
    return float(np.interp(tokens, g.index.to_numpy(float), g.to_numpy(float))) * 1e-3


def attention_fits(repo: str, system: str, hbm_bytes_per_s: float) -> dict:
    """(window, KV dtype) → :func:`fit_attention_form` on ``system``'s gpt-oss-shape rows of the checkout's table."""
    from jalapeno.fit.kernel_tables import load_repo_table

    g = load_repo_table(repo, SYSTEM_DIRS[system], "attention", "generation_attention_perf", "trtllm", RELEASE)
    g = g[(g.num_heads == HEADS) & (g.num_key_value_heads == KV_HEADS) & (g.head_dim == HEAD_DIM)]
    g = g[g.kernel_source == "torch_flow"]
    return {
        (w, dt): fit_attention_form(g[(g.window_size == w) & (g.kv_cache_dtype == dt)], kb, hbm_bytes_per_s, w)
        for w in (0, WINDOW)
        for dt, kb in KV_BYTES.items()
    }


def moe_curve(repo: str, system: str, ep: int) -> pd.DataFrame:
    """The W4A8 MXFP4 x MXFP8 TRT-LLM-gen ``moe_perf`` rows of gpt-oss's shape, balanced, MoE TP1 at ``ep``."""
    from jalapeno.fit.kernel_tables import load_repo_table

    d = load_repo_table(repo, SYSTEM_DIRS[system], "moe", "moe_perf", "trtllm", RELEASE)
    h, i, e, k = MOE_SHAPE
    return d[
        (d.hidden_size == h)
        & (d.inter_size == i)
        & (d.num_experts == e)
        & (d.topk == k)
        & (d.kernel_source == "moe_torch_flow")
        & (d.moe_dtype == "w4a8_mxfp4_mxfp8")
        & (d.distribution == "balanced")
        & (d.moe_tp_size == 1)
        & (d.moe_ep_size == ep)
    ]


def _op_s(sc, names) -> float:
    return sum(r["time_s"] for r in sc.op_rows(0) if r["op"] in names)


def print_fits(repo: str, systems=("b200", "gb200-nvl72")) -> dict:
    """Print and return the attention fits per system (part 1's table)."""
    from jalapeno.fit.table_lookup import load_any_pricer

    out = {}
    print("| system | window | KV | rows | t0 µs | per sequence ns | HBM fraction | fit median / p90 abs error |")
    print("|---|---|---|---|---|---|---|---|")
    for s in systems:
        w = load_any_pricer(s, "calibrated").system.chip.hbm_bandwidth_bytes_per_s
        out[s] = attention_fits(repo, s, w)
        for (win, dt), f in out[s].items():
            print(
                f"| {s} | {win or 'full'} | {dt} | {f['n']} | {f['t0_s'] * 1e6:.1f} | {f['per_seq_s'] * 1e9:.1f} | "
                f"{f['fraction']:.3f} | {f['median_ape'] * 100:.1f} / {f['p90_ape'] * 100:.1f}% |"
            )
    return out


def sized(repo: str, rows, fits: dict) -> None:
    """Print part 2: per row, the FP8-KV model's gap to the measured TPOT beside each candidate's size (ms a step)."""
    print(
        "\n| row | system | ISL | C | a rank B / ctx | TPOT meas / FP8-KV model ms | gap ms | stall ms | "
        "attention model / table ms (Δ) | MoE model / TRT-LLM-gen table ms (Δ) | gap left after both ms | "
        "attention Δ at BF16 KV ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p, pricer, wl, model, dep in _points(rows):
        if p.system not in SYSTEM_DIRS:
            continue
        fp8 = dataclasses.replace(dep, precision=dep.precision.with_options(kv="fp8_e4m3"))
        run = serve_at_concurrency(model, pricer, fp8, wl, [int(p.concurrency)])
        workers = fp8.decode.workers if fp8.prefill is not None else 1
        lay = fp8.decode.layout
        per_worker = float(run.decode_batch[0]) / workers
        sc = decode_pool_step(model, pricer, fp8, wl.decode_ctx, [per_worker])
        b, ctx = per_worker / lay.dp, float(wl.decode_ctx)
        w = pricer.system.chip.hbm_bandwidth_bytes_per_s
        table_attn, model_attn = _attention_pair(fits[p.system], sc, b, ctx, w, "fp8")
        bf_run = serve_at_concurrency(model, pricer, dep, wl, [int(p.concurrency)])
        bf_worker = float(bf_run.decode_batch[0]) / workers
        bf_sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [bf_worker])
        bf_table, bf_model = _attention_pair(fits[p.system], bf_sc, bf_worker / lay.dp, ctx, w, "bfloat16")
        table_moe = LAYERS * moe_table_s(moe_curve(repo, p.system, lay.ep), per_worker)
        model_moe = _op_s(sc, ("moe.experts",))
        tpot, meas = float(run.tpot_s[0]), p.measured["tpot_s"]
        stall = tpot - float(sc.step_time_s[0]) * lay.pp if fp8.prefill is None else 0.0
        da, dm = float(table_attn) - model_attn, table_moe - model_moe
        gap = meas - tpot
        print(
            f"| {p.id.split(':')[1]} | {p.system} | {p.isl} | {int(p.concurrency)} | {b:.0f} / {ctx:.0f} | "
            f"{meas * 1e3:.1f} / {tpot * 1e3:.1f} | {gap * 1e3:+.1f} | {stall * 1e3:.1f} | "
            f"{model_attn * 1e3:.2f} / {float(table_attn) * 1e3:.2f} ({da * 1e3:+.2f}) | "
            f"{model_moe * 1e3:.2f} / {table_moe * 1e3:.2f} ({dm * 1e3:+.2f}) | {(gap - da - dm) * 1e3:+.1f} | "
            f"{(bf_table - bf_model) * 1e3:+.2f} |"
        )


def _attention_pair(fits: dict, sc, b: float, ctx: float, hbm: float, kv: str) -> tuple[float, float]:
    """(table form, model) time of a step's 18 full + 18 sliding attention calls, s, at ``kv`` (a table dtype)."""
    kb, half = KV_BYTES[kv], LAYERS / 2
    table = half * (
        attention_time_s(_par(fits[0, kv]), b, ctx, kb, hbm)
        + attention_time_s(_par(fits[WINDOW, kv]), b, min(ctx, WINDOW), kb, hbm)
    )
    model = _op_s(sc, ("attn.decode_full", f"attn.decode_sliding{WINDOW}", "attn.norm_rope_kv_write"))
    return float(table), model


def _par(f: dict) -> tuple[float, float, float]:
    return f["t0_s"], f["per_seq_s"], f["fraction"]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", help="a checkout of github.com/ai-dynamo/aiconfigurator (e.g. commit 095f58a51)")
    ap.add_argument("rows", nargs="*", type=int, help="InferenceX row numbers (default: 40 41 47 48)")
    args = ap.parse_args()
    sized(args.repo, args.rows or FP8_KV_ROWS, print_fits(args.repo))
