"""TensorRT-LLM GQA decode attention's block floor with the query tile (issue 18, round 51, trtattn51;
cost/decode_blocks.py, docs/gap_large_batch_decode.md "Round 51 (trtattn51)").

Round 50's floor max(model, c·sequences·KV heads) (scripts/trt_decode_blocks50.py) misfit aiconfigurator's TensorRT-LLM
1.3.0rc20 ``generation_attention_perf`` rows at 1-2 KV heads. This script prices every torch_flow row of each NVIDIA
system's table as round 50's script does (:func:`trt_decode_blocks50.gqa_rows`, with the head counts kept) and fits,
per (system, KV dtype), on the declared split of the rows — fit: 32, 128, 512 and 2,048 sequences; held out: 64, 256
and 1,024 (:data:`FIT_SEQS`; rows with fewer than 32 sequences are not used, as round 50) — three forms:

1. round 50's: max(model, c·B·kv_heads);
2. round 51's with the fixed part free: max(model, c·W), W = B·kv_heads·(tile(g) + tau) / (8 + tau) for g = query
   heads per KV head <= 32 (tile 8 / 16 / 32: cost/decode_blocks.TILE_Q), B·query heads above; c and tau fitted;
3. round 51's shipped: the same with tau = cost/decode_blocks.TAU (8); c is cost/decode_blocks.BLOCK_S.

and prints the held-out rows' median / p90 |error| and median signed error (%) before (the calibrated op) and under
each form, on all held-out rows, at 1-2 KV heads, at g > 32, at g <= 32, at >= 1,024 cached tokens and on the
128-token windows; then the per-block time at 2-token contexts by group (the reading the tile is taken from).

Run: python scripts/trt_decode_blocks51.py [SYSTEM ...]   (about 30 s; default every system of round 50's script)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.cost.decode_blocks import TAU, weighted_blocks
from jalapeno.errors import SpecError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trt_decode_blocks50 import KV_DTYPES, MIN_SEQS, SYSTEM_DIRS, errors, fit_block_floor, gqa_rows  # noqa: E402

#: sequences of the rows the constants are fitted on; the other rows with >= MIN_SEQS sequences are held out
FIT_SEQS = (32, 128, 512, 2048)


def rows_with_heads(system: str) -> pd.DataFrame:
    """:func:`trt_decode_blocks50.gqa_rows` with ``q_heads`` and ``kv_heads`` per row (the table's heads, in the
    order gqa_rows prices them: grouped by window and KV dtype)."""
    from jalapeno.fit.kernel_tables import load_table

    g, _ = load_table(SYSTEM_DIRS[system], "attention", "generation_attention_perf")
    g = g[(g.kernel_source == "torch_flow") & g.window_size.isin([0, 128]) & g.kv_cache_dtype.isin(list(KV_DTYPES))]
    g = g.drop_duplicates(
        subset=["batch_size", "step", "num_heads", "num_key_value_heads", "head_dim", "window_size", "kv_cache_dtype"]
    ).reset_index(drop=True)
    heads = pd.concat([d for _, d in g.groupby(["window_size", "kv_cache_dtype"])], ignore_index=True)
    r = gqa_rows(system)
    r["q_heads"] = heads.num_heads.to_numpy(float)
    r["kv_heads"] = heads.num_key_value_heads.to_numpy(float)
    if not np.allclose(r.blocks, r.seqs * r.kv_heads):
        raise SpecError("rows", "head counts out of step with gqa_rows", "price the rows in gqa_rows' order")
    return r


def fit_floor(model_s, weighted, measured_s) -> float:
    """c (s) of max(model, c·weighted) fitted to measured calls (soft-L1 on the log ratio, as round 50's fit).

    Raises:
        SpecError: fewer than 3 rows.
    """
    return fit_block_floor(model_s, weighted, measured_s)


def fit_floor_tau(model_s, seqs, kv_heads, q_heads, measured_s) -> tuple[float, float]:
    """(c s, tau rows) of max(model, c·W(tau)) with W = sequences x KV heads x (tile + tau) / (8 + tau) (g <= 32),
    sequences x query heads above; soft-L1 on the log ratio.

    Raises:
        SpecError: fewer than 3 rows.
    """
    from scipy.optimize import least_squares

    m, b, kv, q, t = (np.asarray(x, dtype=float) for x in (model_s, seqs, kv_heads, q_heads, measured_s))
    if len(t) < 3:
        raise SpecError("rows", f"{len(t)} decode-attention rows", "fit on a table with at least 3 rows")
    g = q / kv
    tile = np.where(g <= 8, 8.0, np.where(g <= 16, 16.0, 32.0))

    def w(tau):
        return np.where(g > 32, b * q, b * kv * (tile + tau) / (8.0 + tau))

    r = least_squares(
        lambda x: np.log(np.maximum(m, x[0] * 1e-9 * w(x[1])) / t),
        [8.0, 8.0],
        loss="soft_l1",
        f_scale=0.05,
        bounds=([0.0, 0.0], [1e3, 1e3]),
        x_scale="jac",
    )
    return float(r.x[0]) * 1e-9, float(r.x[1])


def per_block_ns(d: pd.DataFrame) -> pd.Series:
    """Median (measured - the 2-sequence call's time) / (sequences x KV heads), ns, by group g, over the 2-token
    full-attention calls with >= 1,024 sequences (what a block costs when there is nothing to read)."""
    x = d[(d.window == 0) & (d.ctx == 2) & (d.seqs >= 1024)]
    base = d[(d.window == 0) & (d.ctx == 2) & (d.seqs == 2)].measured_s.median()
    g = (x.q_heads / x.kv_heads).rename("g")
    return ((x.measured_s - base) / x.blocks * 1e9).groupby(g).median()


def main(systems) -> None:
    print(
        "| system | KV | c50 ns | c, tau free | c ns (tau 8) | held out: rows | before | round 50 | tau free | "
        "shipped |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in systems:
        rows = rows_with_heads(s)
        for kv, d in rows.groupby("kv", sort=False):
            d = d[d.seqs >= MIN_SEQS]
            fit = d[d.seqs.isin(FIT_SEQS)]
            ho = d[~d.seqs.isin(FIT_SEQS)]
            c50 = fit_floor(fit.model_s, fit.blocks, fit.measured_s)
            cf, tau = fit_floor_tau(fit.model_s, fit.seqs, fit.kv_heads, fit.q_heads, fit.measured_s)
            w_fit = weighted_blocks(fit.seqs, fit.kv_heads, fit.q_heads)
            c = fit_floor(fit.model_s, w_fit, fit.measured_s)
            g = ho.q_heads / ho.kv_heads
            win = weighted_blocks(ho.seqs, ho.kv_heads, ho.q_heads)
            g_ = np.where(g <= 8, 8.0, np.where(g <= 16, 16.0, 32.0))
            w_free = np.where(g > 32, ho.seqs * ho.q_heads, ho.blocks * (g_ + tau) / (8.0 + tau))
            preds = (
                ho.model_s,
                np.maximum(ho.model_s, c50 * ho.blocks),
                np.maximum(ho.model_s, cf * w_free),
                np.maximum(ho.model_s, c * win),
            )
            head = f"| {s} | {kv} | {c50 * 1e9:.2f} | {cf * 1e9:.2f}, {tau:.1f} | {c * 1e9:.2f} |"
            for name, m in (
                ("all", np.ones(len(ho), bool)),
                ("1-2 KV heads", ho.kv_heads <= 2),
                ("g > 32", g > 32),
                ("g <= 32", g <= 32),
                (">= 1,024 tokens", ho.ctx >= 1024),
                ("128-token windows", ho.window == 128),
            ):
                m = np.asarray(m)
                cells = " | ".join(errors(np.asarray(p)[m], ho.measured_s[m]) for p in preds)
                print(f"{head} {name} ({m.sum()}) | {cells} |")
                head = "| | | | | |"
    print(f"\nPer-block time at 2-token contexts, >= 1,024 sequences (ns per sequence x KV head; tau = {TAU:g})\n")
    for s in systems:
        r = rows_with_heads(s)
        for kv, d in r.groupby("kv", sort=False):
            pb = per_block_ns(d)
            print(f"{s} {kv}: " + ", ".join(f"g {int(k)}: {v:.1f}" for k, v in pb.items()))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("systems", nargs="*", default=list(SYSTEM_DIRS), help="catalog systems (default: all six)")
    a = ap.parse_args()
    bad = [s for s in a.systems if s not in SYSTEM_DIRS]
    if bad:
        raise SystemExit(f"systems: unknown {bad}; fix: one of {', '.join(SYSTEM_DIRS)}")
    main(a.systems)
