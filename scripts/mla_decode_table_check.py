"""Attention-DP MLA decode at 64-1024 sequences per rank: TRT-LLM's measured tables against the step cost.

Question (issue 18, helper mla12): is the weight-absorbed MLA decode kernel, or the whole MLA attention
block, priced too fast where attention DP puts all 128 DeepSeek-R1 heads on one rank with hundreds of
sequences (the regime of MLPerf DeepSeek-R1, NVIDIA's trtllm-bench max-throughput figures and the
DEP8 decodes of docs/gap_disagg_overprediction.md)? Those miss ~100-210 us per sequence per step.

Data: aiconfigurator-core's TRT-LLM 1.3.0rc20 tables per system (fit/kernel_tables.load_table):
``generation_mla_perf`` (the MLA generation kernel alone, what fit/mla_kernels.py fits
``mla_decode[f]`` on) and ``mla_generation_module_perf`` (the complete attention module forward:
projections + attention + output; aiconfigurator collector/trtllm/collect_mla_module.py docstring),
DeepSeek-V3's MLA shape, ``num_heads`` heads per GPU, BF16 or FP8 KV cache; the module's GEMMs in
FP8 block scales (``gemm_type`` fp8_block, the DeepSeek-R1 FP8 checkpoint's and the FP4 checkpoint's
attention projections).

Model: the kernel row is priced as calibration prices it (fit/mla_kernels.mla_table: one layer of
cost/attention.add_mla_decode_kernel) by the calibrated roofline pricer of the system (what serving
uses: no kernel floor); the module row is the sum of the step's ``attn.*`` ops per layer
(cost/ops.build_step_ops, attention DP over ``num_heads`` = 128 heads per rank, batch per rank, the
context of the row) under the same pricer. Tables:

1. per (heads, batch per rank, context): measured and modelled time per layer, ratio model/measured;
2. per (heads, batch): a line t = a + s·L through the contexts 1K-8K of each (least squares),
   measured and modelled: a/b is the per-sequence cost the kernel pays whatever the context, s the
   cost per context token;
3. what the measured-minus-modelled time comes to per sequence per step (x 61 layers), the unit of
   the gap the brief names.

Prints; no prediction depends on it.

    python scripts/mla_decode_table_check.py [SYSTEM ...]   (default: every NVIDIA system with the tables)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from jalapeno.cost.step import Batch
from jalapeno.cost.ops import build_step_ops
from jalapeno.deploy.layout import Layout
from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
from jalapeno.fit.mla_kernels import MLA_KV_DTYPES, MLA_TABLE_MODEL, mla_table
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

#: batches per rank and contexts of the regime in question (the tables' grid points)
BATCHES = (64, 128, 256, 512, 1024)
HEADS = (128, 16)
#: systems with both TRT-LLM MLA tables (fit/kernel_tables.AIC_SYSTEM_DIRS)
DEFAULT_SYSTEMS = ("h100", "h200", "b200", "b300", "gb200-nvl72", "gb300-nvl72")
#: DeepSeek-R1's layers: every one runs the MLA block
LAYERS = 61
#: attention-DP width of the module check (any width: the attention ops are per rank)
DP = 8


def kernel_frame(system: str, regime: bool = True) -> pd.DataFrame:
    """``generation_mla_perf`` rows of the regime (``regime=False``: every row) with the modelled kernel time (us per
    layer) and its KV bytes (``kv_bytes``, B per call)."""
    att = load_model(MLA_TABLE_MODEL).attention
    pricer = load_any_pricer(system, "calibrated")
    df, _ = load_table(AIC_SYSTEM_DIRS[system], "mla", "generation_mla_perf")
    df = df.drop_duplicates(subset=["num_heads", "batch_size", "isl", "step", "kv_cache_dtype"])
    if regime:
        df = df[df.num_heads.isin(HEADS) & df.batch_size.isin(BATCHES) & df.step.between(1023, 8191)]
    out = []
    for kvd, d in df.groupby("kv_cache_dtype"):
        if kvd not in MLA_KV_DTYPES:
            continue
        kv_name, fmt = MLA_KV_DTYPES[kvd]
        tab = mla_table("decode", d, fmt, kv_name, att)
        t = pricer.op_times(tab).time_s[0]
        out.append(
            d.assign(kv=kv_name, ctx=d.step + 1, meas_us=d.latency * 1e3, model_us=t * 1e6, kv_bytes=tab.kv_bytes[0])
        )
    return pd.concat(out)


def module_frame(system: str) -> pd.DataFrame:
    """``mla_generation_module_perf`` rows (FP8 block GEMMs) of the regime with the step's attention
    ops per layer (us)."""
    model = load_model(MLA_TABLE_MODEL)
    pricer = load_any_pricer(system, "calibrated")
    df, _ = load_table(AIC_SYSTEM_DIRS[system], "mla", "mla_generation_module_perf")
    df = df[
        (df.gemm_type == "fp8_block")
        & df.num_heads.isin([128])
        & df.batch_size.isin(BATCHES)
        & df.step.between(1024, 8192)
    ].drop_duplicates(subset=["num_heads", "batch_size", "step", "kv_cache_dtype"])
    out = []
    for kvd, d in df.groupby("kv_cache_dtype"):
        kv_name = MLA_KV_DTYPES[kvd][0]
        prec = get_precision("fp8").with_options(kv_name, MLA_KV_DTYPES[kvd][1], False)
        b = d.batch_size.to_numpy(float)
        batch = Batch.make(decode_seqs=b * DP, decode_ctx=d.step.to_numpy(float))
        ops, _ = build_step_ops(model, pricer.system.chip, Layout(tp=1, dp=DP, ep=DP), prec, batch, pricer.efficiency)
        times = pricer.op_times(ops).time_s
        attn = [i for i, n in enumerate(ops.name) if n.startswith("attn.")]
        per_layer = sum(times[i] for i in attn) / model.num_layers  # every layer runs the MLA block
        out.append(
            d.assign(
                kv=kv_name,
                ctx=d.step,
                meas_us=d.latency * 1e3,
                model_us=per_layer * 1e6,
                ops=", ".join(ops.name[i] for i in attn),
            )
        )
    return pd.concat(out)


def lines(df: pd.DataFrame) -> pd.DataFrame:
    """Per (kv, heads, batch): measured and modelled t = a + s·L over the contexts (least squares);
    a per sequence (us) and s per 1K tokens of context (us per sequence)."""
    rows = []
    for (kv, h, b), d in df.groupby(["kv", "num_heads", "batch_size"]):
        if len(d) < 3:
            continue
        x = d.ctx.to_numpy(float) / 1024
        sm, am = np.polyfit(x, d.meas_us.to_numpy(float), 1)
        sp, ap = np.polyfit(x, d.model_us.to_numpy(float), 1)
        rows.append(
            {
                "kv": kv,
                "heads": h,
                "batch": b,
                "meas a/b us": am / b,
                "model a/b us": ap / b,
                "meas s/b us per 1K": sm / b,
                "model s/b us per 1K": sp / b,
            }
        )
    return pd.DataFrame(rows)


def _md(df: pd.DataFrame, fmt: str = "{:.3g}") -> str:
    cols = list(df.columns)
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        out.append("| " + " | ".join(fmt.format(v) if isinstance(v, float) else str(v) for v in r) + " |")
    return "\n".join(out)


def summary_rows(system: str, k: pd.DataFrame, m: pd.DataFrame) -> list[dict]:
    """Per KV dtype at 128 heads per rank: model/measured ratio range and the largest measured-minus-
    modelled time per sequence per step (us), kernel and module."""
    out = []
    for what, df in (("kernel", k[k.num_heads == 128]), ("module", m)):
        for kv, d in df.groupby("kv"):
            out.append(
                {
                    "system": system,
                    "check": what,
                    "kv": kv,
                    "ratio median": float(d.ratio.median()),
                    "ratio min": float(d.ratio.min()),
                    "ratio max": float(d.ratio.max()),
                    "largest gap us/seq/step": float(d["gap us/seq/step"].max()),
                }
            )
    return out


def report(system: str) -> list[dict]:
    """Print the tables of one system; return its summary rows."""
    k = kernel_frame(system)
    k["ratio"] = k.model_us / k.meas_us
    k["gap us/seq/step"] = (k.meas_us - k.model_us) / k.batch_size * LAYERS
    print(f"\n## {system}: MLA generation kernel (generation_mla_perf) vs attn.mla_decode, per layer\n")
    cols = ["kv", "num_heads", "batch_size", "ctx", "meas_us", "model_us", "ratio", "gap us/seq/step"]
    print(_md(k.sort_values(["kv", "num_heads", "batch_size", "ctx"])[cols]))
    print(f"\n### {system}: per-sequence intercept and per-context slope (kernel)\n")
    print(_md(lines(k)))
    m = module_frame(system)
    m["ratio"] = m.model_us / m.meas_us
    m["gap us/seq/step"] = (m.meas_us - m.model_us) / m.batch_size * LAYERS
    print(
        f"\n## {system}: MLA attention module (mla_generation_module_perf, FP8-block GEMMs, 128 heads) "
        f"vs the step's attention ops ({m.ops.iloc[0]}), per layer\n"
    )
    cols = ["kv", "batch_size", "ctx", "meas_us", "model_us", "ratio", "gap us/seq/step"]
    print(_md(m.sort_values(["kv", "batch_size", "ctx"])[cols]))
    print(f"\n### {system}: per-sequence intercept and per-context slope (module)\n")
    print(_md(lines(m)))
    return summary_rows(system, k, m)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("systems", nargs="*", default=list(DEFAULT_SYSTEMS))
    rows = [r for s in ap.parse_args().systems for r in report(s)]
    print("\n## Summary: 128 heads per rank, 64-1024 sequences, contexts 1K-8K\n")
    print(_md(pd.DataFrame(rows)))


if __name__ == "__main__":
    main()
