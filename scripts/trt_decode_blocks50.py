"""TensorRT-LLM GQA decode attention's latency floor per (sequence, KV head) block, fitted per system and KV dtype on
aiconfigurator's measured tables (issue 18, round 50, trtattn50; cost/decode_blocks.py, docs/gap_large_batch_decode.md).

Reads aiconfigurator-core's TensorRT-LLM 1.3.0rc20 ``generation_attention_perf`` (fit/kernel_tables.load_table; the
release the NVIDIA sets are calibrated on) and ``generation_mla_perf`` for every NVIDIA system the package has, and
prices each row with the op the step builds for it (cost/attention.add_gqa_decode_kernel + the ``attn.norm_rope_kv_write``
the table's torch_flow op also times; cost/attention.add_mla_decode_kernel through fit/mla_kernels.mla_table) under the
system's calibrated set (fit/table_lookup.load_any_pricer). Prints:

1. per (system, KV dtype), the floor c of :func:`fit_block_floor` (time = max(model, c·B·kv_heads)), fitted on every
   torch_flow row with >= 32 sequences (full and 128-token windows, every head shape), and the rows' median / p90 /
   median signed error before and after, on all of them, on >= 256 sequences, on the serving contexts (>= 32
   sequences, >= 1,024 cached tokens) and on the 128-token windows alone — the figures round 50's
   cost/decode_blocks.BLOCK_S quoted (round 51 re-forms the floor with the query tile and refits it on a split of the
   rows: scripts/trt_decode_blocks51.py);
2. the double-count check: a free per-sequence slope over the calibrated op (time = model + t0 + a·B,
   :func:`fit_residual_slope`) on the rows the set's HBM fraction is fitted on (full attention, >= 1,024 cached
   tokens, reads >= 256 MiB, fit/attention_kernels.DECODE_FIT_MIN_BYTES), and on the MLA generation rows
   (>= 1,023 cached tokens, fit/mla_kernels.MLA_DECODE_MIN_STEP): a = 0 says the fitted set carries the per-sequence
   cost there already (nothing to add), a > 0 what it lacks.

Run: python scripts/trt_decode_blocks50.py [SYSTEM ...]   (about 20 s; default every system below)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from jalapeno.errors import SpecError

#: catalog system → aiconfigurator system folder (fit/kernel_tables.AIC_SYSTEM_DIRS names)
SYSTEM_DIRS = {
    "h100": "h100_sxm",
    "h200": "h200_sxm",
    "b200": "b200_sxm",
    "b300": "b300_sxm",
    "gb200-nvl72": "gb200",
    "gb300-nvl72": "gb300",
}
#: table KV dtype → (bytes per element, cost/decode_blocks.BLOCK_S column)
KV_DTYPES = {"bfloat16": (2.0, "bf16"), "fp8": (1.0, "fp8")}
#: fewest sequences of a row the floor is fitted on (below, the per-call floor the stacks' launch carries dominates)
MIN_SEQS = 32
#: the set's HBM-fraction fit rows (fit/attention_kernels.fit_attention): context and read floor
FIT_MIN_CTX, FIT_MIN_BYTES = 1024, 256 * 2**20


def block_floor_s(model_s, blocks, c: float) -> np.ndarray:
    """Time of a call with the floor: max(model, c·blocks), s.

    >>> block_floor_s([10e-6, 50e-6], [1000, 1000], 12e-9).round(9).tolist()  # 12 ns x 1,000 blocks = 12 us
    [1.2e-05, 5e-05]
    """
    return np.maximum(np.asarray(model_s, dtype=float), c * np.asarray(blocks, dtype=float))


def fit_block_floor(model_s, blocks, measured_s) -> float:
    """The floor per block c (s) of :func:`block_floor_s` fitted to measured calls (soft-L1 least squares on
    log(predicted / measured), as the project's kernel fits).

    Raises:
        SpecError: fewer than 3 rows.
    """
    from scipy.optimize import least_squares

    m, b, t = (np.asarray(x, dtype=float) for x in (model_s, blocks, measured_s))
    if len(t) < 3:
        raise SpecError("rows", f"{len(t)} decode-attention rows", "fit on a table with at least 3 rows")
    r = least_squares(
        lambda x: np.log(block_floor_s(m, b, x[0] * 1e-9) / t),
        [5.0],
        loss="soft_l1",
        f_scale=0.05,
        bounds=([0.0], [1e3]),
    )
    return float(r.x[0]) * 1e-9


def fit_residual_slope(model_s, seqs, measured_s) -> tuple[float, float]:
    """(t0 s, a s per sequence) of measured = model + t0 + a·B, both >= 0 (soft-L1 on the log ratio).

    Raises:
        SpecError: fewer than 3 rows.
    """
    from scipy.optimize import least_squares

    m, b, t = (np.asarray(x, dtype=float) for x in (model_s, seqs, measured_s))
    if len(t) < 3:
        raise SpecError("rows", f"{len(t)} rows", "fit on a table with at least 3 rows")
    r = least_squares(
        lambda x: np.log((m + x[0] * 1e-6 + x[1] * 1e-9 * b) / t),
        [5.0, 20.0],
        loss="soft_l1",
        f_scale=0.05,
        bounds=([0.0, 0.0], [1e3, 1e4]),
    )
    return float(r.x[0]) * 1e-6, float(r.x[1]) * 1e-9


def errors(pred, measured) -> str:
    """``median / p90 / median signed`` relative error of ``pred`` against ``measured``, in percent.

    >>> errors([1.1, 0.9, 1.0], [1.0, 1.0, 1.0])
    '10.0 / 10.0 / +0.0'
    """
    e = np.asarray(pred, dtype=float) / np.asarray(measured, dtype=float) - 1
    return f"{100 * np.median(abs(e)):.1f} / {100 * np.percentile(abs(e), 90):.1f} / {100 * np.median(e):+.1f}"


def gqa_rows(system: str) -> pd.DataFrame:
    """The torch_flow full and 128-token-window rows of ``system``'s table with the model's time (``model_s``) beside
    the measured (``measured_s``), ``blocks`` (sequences x KV heads) and ``kv_read`` (bytes) per row."""
    from jalapeno.cost.attention import RankBatch, add_gqa_decode_kernel
    from jalapeno.cost.optable import OpBuilder
    from jalapeno.fit.kernel_tables import load_table
    from jalapeno.fit.table_lookup import load_any_pricer

    pricer = load_any_pricer(system, "calibrated")
    g, _ = load_table(SYSTEM_DIRS[system], "attention", "generation_attention_perf")
    g = g[(g.kernel_source == "torch_flow") & g.window_size.isin([0, 128]) & g.kv_cache_dtype.isin(list(KV_DTYPES))]
    g = g.drop_duplicates(
        subset=["batch_size", "step", "num_heads", "num_key_value_heads", "head_dim", "window_size", "kv_cache_dtype"]
    ).reset_index(drop=True)
    out = []
    for (win, dt), d in g.groupby(["window_size", "kv_cache_dtype"]):
        kvb = KV_DTYPES[dt][0]
        b, ctx = d.batch_size.to_numpy(float), d.step.to_numpy(float) + 1.0
        n, kvr, hd = (d[c].to_numpy(float) for c in ("num_heads", "num_key_value_heads", "head_dim"))
        ob = OpBuilder(len(d))
        add_gqa_decode_kernel(
            ob, RankBatch(b, b, ctx, 0 * b, 0 * b, 0 * b), n, kvr, hd, "bf16", hd * kvb, 1.0, int(win)
        )
        ob.op(
            "attn.norm_rope_kv_write",
            "memory",
            "bf16",
            act=b * (n + 2 * kvr) * hd * 4,
            kv=b * 2 * kvr * hd * kvb,
            kernels=2,
        )
        model = pricer.op_times(ob.build()[0]).time_s.sum(axis=0)
        eff = np.minimum(ctx, win) if win else ctx
        out.append(
            pd.DataFrame(
                {
                    "window": int(win),
                    "kv": KV_DTYPES[dt][1],
                    "seqs": b,
                    "ctx": ctx,
                    "blocks": b * kvr,
                    "kv_read": b * eff * 2 * kvr * hd * kvb,
                    "model_s": model,
                    "measured_s": d.latency.to_numpy(float) * 1e-3,
                }
            )
        )
    return pd.concat(out, ignore_index=True)


def mla_slopes(system: str) -> dict:
    """KV dtype → (t0, a) of :func:`fit_residual_slope` over ``system``'s MLA generation rows (>= 1,023 cached tokens)."""
    from jalapeno.fit.kernel_tables import load_table
    from jalapeno.fit.mla_kernels import MLA_DECODE_MIN_STEP, MLA_KV_DTYPES, MLA_TABLE_MODEL, mla_table
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.specs.catalog import load_model

    pricer = load_any_pricer(system, "calibrated")
    att = load_model(MLA_TABLE_MODEL).attention
    g, _ = load_table(SYSTEM_DIRS[system], "mla", "generation_mla_perf")
    out = {}
    for dt, d in g.groupby("kv_cache_dtype"):
        if dt not in MLA_KV_DTYPES or MLA_KV_DTYPES[dt][1] not in pricer.system.chip.peak_flop_per_s:
            continue
        kv_name, fmt = MLA_KV_DTYPES[dt]
        d = d.drop_duplicates(subset=["num_heads", "batch_size", "isl", "step"])
        d = d[d.step >= MLA_DECODE_MIN_STEP]
        model = pricer.op_times(mla_table("decode", d, fmt, kv_name, att)).time_s.sum(axis=0)
        out[KV_DTYPES[dt][1]] = fit_residual_slope(
            model, d.batch_size.to_numpy(float), d.latency.to_numpy(float) * 1e-3
        )
    return out


def main(systems) -> None:
    print(
        "| system | KV | rows >= 32 seqs | floor ns / (seq x KV head) | all: before -> after | >= 256 seqs | "
        ">= 1,024 tokens | 128-token windows |"
    )
    print("|---|---|---|---|---|---|---|---|")
    checks = []
    for s in systems:
        rows = gqa_rows(s)
        for kv, d in rows.groupby("kv", sort=False):
            fit = d[d.seqs >= MIN_SEQS]
            c = fit_block_floor(fit.model_s, fit.blocks, fit.measured_s)
            after = block_floor_s(d.model_s, d.blocks, c)
            cells = []
            for m in (
                d.seqs >= MIN_SEQS,
                d.seqs >= 256,
                (d.seqs >= MIN_SEQS) & (d.ctx >= FIT_MIN_CTX),
                (d.seqs >= MIN_SEQS) & (d.window == 128),
            ):
                cells.append(f"{errors(d.model_s[m], d.measured_s[m])} -> {errors(after[m], d.measured_s[m])}")
            print(f"| {s} | {kv} | {len(fit)} | {c * 1e9:.2f} | " + " | ".join(cells) + " |")
            h = d[(d.window == 0) & (d.ctx >= FIT_MIN_CTX) & (d.kv_read >= FIT_MIN_BYTES)]
            t0, a = fit_residual_slope(h.model_s, h.seqs, h.measured_s)
            checks.append(f"| {s} | GQA full, set's fit rows | {kv} | {len(h)} | {t0 * 1e6:.2f} | {a * 1e9:.1f} |")
        for kv, (t0, a) in mla_slopes(s).items():
            checks.append(f"| {s} | MLA generation | {kv} | - | {t0 * 1e6:.2f} | {a * 1e9:.1f} |")
    print("\nDouble-count check: measured = model + t0 + a·B over the calibrated op\n")
    print("| system | rows | KV | n | t0 us | a ns per sequence |")
    print("|---|---|---|---|---|---|")
    print("\n".join(checks))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("systems", nargs="*", default=list(SYSTEM_DIRS), help="catalog systems (default: all six)")
    a = ap.parse_args()
    bad = [s for s in a.systems if s not in SYSTEM_DIRS]
    if bad:
        raise SystemExit(f"systems: unknown {bad}; fix: one of {', '.join(SYSTEM_DIRS)}")
    main(a.systems)
