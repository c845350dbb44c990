"""Decode attention as served against aiconfigurator's measured decode-attention tables, binned by batch x context.

Question (issue 18, helper attn25): is the step cost's decode attention priced too fast where the end-to-end gaps
are (64-512 sequences per rank, 1K-8K of context), on which chip, shape and KV format?

Data: aiconfigurator-core 0.12.0's per-system tables (fit/kernel_tables.load_table): ``generation_attention_perf``
(one GQA/MHA generation-attention call per row: ``batch_size`` sequences of one query token at ``step`` cached
tokens, ``num_heads`` / ``num_key_value_heads`` per GPU, ``head_dim``, BF16 or FP8 KV) of TensorRT-LLM 1.3.0rc20 (what
calibration reads) and vLLM 0.24.0 (FlashInfer's TRT-LLM-gen decode kernel on Blackwell, FA3 on Hopper: the kernel
the vLLM rows run), full attention only (``window_size`` 0); and ``generation_mla_perf`` (MLA, 128 heads per GPU).

Model: each row's op as the step cost builds it — GQA: cost/attention.add_gqa_decode_kernel, MLA:
fit/mla_kernels.mla_table — priced by the system's calibrated pricer (what serving uses; the per-kernel cost is the
set's ``kernel_launch_s``, no table floor). Printed per system, table and KV format: the median model/measured ratio
per (batch, context) bin (below 1: the model is too fast), for head-128 GQA; and per KV bytes per call, the median
achieved HBM fraction (KV bytes / measured time / peak) beside the ratio. Rows that read under ~128 MB are timed
with the KV cache warm in L2 (the table times each call repeatedly on one cache; B200: 67 MB rows read at ~15 TB/s
beyond the floor, 134 MB ones at ~6 TB/s), so the small-bytes bins say nothing about HBM streaming.

    python scripts/decode_attention_bins.py [SYSTEM ...]   (default: h100 h200 b200 b300 gb200-nvl72 gb300-nvl72)

Prints; nothing is fitted or written. Needs the [calibrate] extra.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.cost.attention import RankBatch, add_gqa_decode_kernel
from jalapeno.cost.optable import OpBuilder
from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.specs.kv_cache import get_kv_format

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mla_decode_table_check import kernel_frame  # noqa: E402

DEFAULT_SYSTEMS = ("h100", "h200", "b200", "b300", "gb200-nvl72", "gb300-nvl72")
#: aiconfigurator KV dtype -> (our KV format, compute format of the math priced)
KV = {"bfloat16": ("bf16", "bf16"), "fp8": ("fp8", "fp8")}
BATCH_BINS = ([0, 8, 32, 128, 512, 4096], ["1-8", "16-32", "64-128", "256-512", "1k-2k"])
CTX_BINS = ([0, 512, 1024, 2048, 8192, 1e9], ["<=512", "1k", "2k", "4k-8k", "16k+"])
MB_BINS = ([0, 32, 128, 256, 512, 1024, 1e9], ["<32", "32-128", "128-256", "256-512", "512-1G", ">1G"])


def _binned(df: pd.DataFrame, pricer) -> pd.DataFrame:
    df = df.assign(
        ratio=df.model_us / df.meas_us,
        bw_frac=df.kv_bytes / (df.meas_us * 1e-6) / pricer.system.chip.hbm_bandwidth_bytes_per_s,
    )
    return df.assign(
        B=pd.cut(df.batch_size, bins=BATCH_BINS[0], labels=BATCH_BINS[1]),
        Lb=pd.cut(df.ctx, bins=CTX_BINS[0], labels=CTX_BINS[1]),
        MB=pd.cut(df.kv_bytes / 1e6, bins=MB_BINS[0], labels=MB_BINS[1]),
    )


def gqa_frame(system: str, backend: str) -> pd.DataFrame:
    """``generation_attention_perf`` full-attention rows of ``backend`` with the modelled time (us)."""
    pricer = load_any_pricer(system, "calibrated")
    g, _ = load_table(AIC_SYSTEM_DIRS[system], "attention", "generation_attention_perf", backend)
    g = g[g.window_size == 0]
    out = []
    for kvd, d in g.groupby("kv_cache_dtype"):
        if kvd not in KV:
            continue
        kv_name, fmt = KV[kvd]
        b = d.batch_size.to_numpy(float)
        ctx = d.step.to_numpy(float) + 1.0
        z = np.zeros_like(b)
        ob = OpBuilder(len(d))
        vec = np.array([get_kv_format(kv_name).vector_bytes(int(h)) for h in d.head_dim])
        add_gqa_decode_kernel(
            ob,
            RankBatch(b, b, ctx, z, z, z),
            d.num_heads.to_numpy(float),
            d.num_key_value_heads.to_numpy(float),
            d.head_dim.to_numpy(float),
            fmt,
            vec,
            1.0,
        )
        tab = ob.build()[0]
        t = pricer.op_times(tab).time_s[0]
        out.append(d.assign(kv=kv_name, ctx=ctx, meas_us=d.latency * 1e3, model_us=t * 1e6, kv_bytes=tab.kv_bytes[0]))
    return _binned(pd.concat(out), pricer)


def mla_frame(system: str) -> pd.DataFrame:
    """``generation_mla_perf`` rows (TensorRT-LLM) with the modelled ``attn.mla_decode`` time (us): every row of
    scripts/mla_decode_table_check.kernel_frame, binned."""
    return _binned(kernel_frame(system, regime=False), load_any_pricer(system, "calibrated"))


def _md(df: pd.DataFrame, index: bool = True) -> str:
    """A markdown table of ``df`` (no tabulate dependency)."""
    cols = ([df.index.name or ""] if index else []) + [str(c) for c in df.columns]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for i, r in df.iterrows():
        cells = ([str(i)] if index else []) + [
            "" if isinstance(v, float) and np.isnan(v) else f"{v:.3g}" if isinstance(v, float) else str(v) for v in r
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _print(title: str, d: pd.DataFrame) -> None:
    print(f"\n### {title} (rows {len(d)})\n")
    print(_md(d.pivot_table(index="B", columns="Lb", values="ratio", aggfunc="median", observed=True).round(2)))
    print()
    print(_md(d.groupby("MB", observed=True)[["bw_frac", "ratio"]].median().round(2).T))


def summary(system: str, what: str, d: pd.DataFrame) -> dict:
    """Median ratio and median |error| in the end-to-end regime (64-512 sequences, 1K-8K context)."""
    r = d[d.batch_size.between(64, 512) & d.ctx.between(1024, 8192)].ratio
    return {
        "system": system,
        "table": what,
        "rows": len(r),
        "ratio median": round(float(r.median()), 3),
        "median |err|": round(float((r - 1).abs().median()), 3),
        "ratio p10": round(float(r.quantile(0.1)), 3),
        "ratio p90": round(float(r.quantile(0.9)), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("systems", nargs="*", default=list(DEFAULT_SYSTEMS))
    rows = []
    for s in ap.parse_args().systems:
        print(f"\n## {s}")
        for backend in ("trtllm", "vllm"):
            try:
                df = gqa_frame(s, backend)
            except Exception as e:  # a system without the engine's table  # noqa: BLE001
                print(f"\n({backend}: no table: {e})")
                continue
            for (src, kv), d in df[df.head_dim == 128].groupby(["kernel_source", "kv"]):
                _print(f"{s} GQA head 128, {backend} {src}, KV {kv}: model/measured", d)
                rows.append(summary(s, f"GQA {backend} {src} {kv}", d))
        m = mla_frame(s)
        for kv, d in m[m.num_heads == 128].groupby("kv"):
            _print(f"{s} MLA 128 heads, trtllm, KV {kv}: model/measured", d)
            rows.append(summary(s, f"MLA trtllm {kv}", d))
    print("\n## Summary: 64-512 sequences, 1K-8K context (model/measured; below 1 = too fast)\n")
    print(_md(pd.DataFrame(rows), index=False))


if __name__ == "__main__":
    main()
