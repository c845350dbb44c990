"""The held-out GB200/GB300 aiconfigurator TTFT error split by every axis a row states, the group that carries each
system's median, and the saturated deployments' closed-loop identity (issue 18, round 43, aicttft43; diagnosis,
nothing fitted or shipped).

Reads a `jalapeno validate --held-out --json -o X.csv` table and keeps the issue's held-out rows (aiconfigurator
``ttft_s`` of gb200-nvl72 / gb300-nvl72, outside the fit split, unflagged: scripts/gb_ttft_median_need.held_out_ttft,
one filter for both scripts). For each axis — ISL/OSL, concurrency band, engine release, prefill and decode attention
layout (tensor- or data-parallel, from the deployment text), MTP — it prints per group n, median |error|, the median
signed error, the rows within the 20% goal, over and under it, and ``med_if_fixed``: the system's median |error| if
that group's rows had no error at all, the most a term confined to the group could buy.

``--knee ALL.csv`` (a `jalapeno validate --json -o` table with every split, which holds the TPOT rows) prints every
GB disaggregated deployment with a row at C ≥ :data:`KNEE_C`: per row the measured and modelled request rate
λ = C / (TTFT + (OSL − 1)·TPOT) (the closed loop's Little's law, every user always holding one request) and the
requests decoding at once, λ·(OSL − 1)·TPOT. Where λ stops growing with C the pool is saturated, and the extra users
wait: TTFT ≈ C/λ − (OSL − 1)·TPOT.

Run: python scripts/aic_gb_ttft_axes43.py HELD_OUT.csv [--knee ALL.csv]  (instant)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gb_ttft_median_need import GOAL, SYSTEMS, held_out_ttft  # noqa: E402  (a sibling script)

#: concurrency bands (edges, inclusive upper): light load, the closed loop's mid range, and the wide-EP throughput
#: sweeps; 512 is the lowest concurrency of the SGLang max-throughput recipes (NVIDIA/srt-slurm @5063eb43
#: recipes/gb300-fp4/1k1k/max_tpt.yaml ``concurrencies: "512x2048x4096x8192"``)
C_BANDS = (8, 64, 512)
#: a deployment enters the knee table when it has a row at this concurrency or above (the throughput sweeps)
KNEE_C = 2048
_POOLS = re.compile(r"P (\d+)x\(attn TP(\d+) DP(\d+).*?\+ D (\d+)x\(attn TP(\d+) DP(\d+)")
AXES = ("isl_osl", "c_band", "release", "prefill_attn", "decode_attn", "mtp")


def c_band(c: float) -> str:
    """The concurrency band of :data:`C_BANDS` a row's concurrency falls in.

    >>> [c_band(c) for c in (4, 8, 9, 64, 512, 513)]
    ['C<=8', 'C<=8', 'C<=64', 'C<=64', 'C<=512', 'C>512']
    """
    for edge in C_BANDS:
        if c <= edge:
            return f"C<={edge}"
    return f"C>{C_BANDS[-1]}"


def pool_axes(deployment: str) -> dict:
    """Prefill and decode attention layouts ('TP' or 'DP<n>') and MTP of a validate table's deployment text.

    Aggregated rows (no ``P ... + D ...``) read 'agg' for both pools.

    >>> pool_axes("disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]")
    {'prefill_attn': 'DP4', 'decode_attn': 'DP32', 'mtp': 'no MTP'}
    >>> pool_axes("disagg P 1x(attn TP4 DP1 · MoE TP1 EP4) + D 4x(attn TP8 DP1 · MoE TP1 EP8) MTP3@0.8 [fp4]")
    {'prefill_attn': 'TP', 'decode_attn': 'TP', 'mtp': 'MTP'}
    """
    d = str(deployment)
    m = _POOLS.search(d)
    mtp = "MTP" if re.search(r"\bMTP\d", d) else "no MTP"
    if not m:
        return {"prefill_attn": "agg", "decode_attn": "agg", "mtp": mtp}
    pdp, ddp = int(m[3]), int(m[6])
    return {
        "prefill_attn": f"DP{pdp}" if pdp > 1 else "TP",
        "decode_attn": f"DP{ddp}" if ddp > 1 else "TP",
        "mtp": mtp,
    }


def median_if_fixed(errors, fixed, goal: float = GOAL) -> float:
    """Median |error| of ``errors`` (fractions, (N,)) with the rows where ``fixed`` (bool, (N,)) is true set to 0.

    >>> median_if_fixed([0.1, 0.3, 0.5, -0.6], [False, False, True, True])  # |e| 0.1, 0.3, 0, 0 -> median 0.05
    0.05
    """
    e = np.abs(np.asarray(errors, dtype=float))
    f = np.asarray(fixed, dtype=bool)
    if e.shape != f.shape:
        raise ValueError(f"errors {e.shape} and fixed {f.shape} differ in shape; fix: pass one flag per row")
    return float(np.median(np.where(f, 0.0, e)))


def rows(path: str) -> pd.DataFrame:
    """The held-out GB TTFT rows of a validate CSV with the :data:`AXES` columns added."""
    d = held_out_ttft(path, {"deployment", "concurrency", "isl", "osl", "stack", "framework"})
    d["isl_osl"] = d.isl.astype(int).astype(str) + "/" + d.osl.astype(int).astype(str)
    d["c_band"] = d.concurrency.map(c_band)
    d["release"] = d["stack"].astype(str)
    ax = pd.DataFrame([pool_axes(x) for x in d.deployment], index=d.index)
    return d.join(ax)


def split(d: pd.DataFrame, axis: str, goal: float = GOAL) -> pd.DataFrame:
    """Per group of ``axis`` in one system's rows: n, median |error| and signed error (%), within / over / under the
    goal, and the system's median |error| (%) if the group's rows had no error (:func:`median_if_fixed`)."""
    out = []
    for key, g in d.groupby(axis, sort=True):
        e = g.error
        out.append(
            {
                axis: key,
                "n": len(g),
                "med_abs": 100 * float(e.abs().median()),
                "med": 100 * float(e.median()),
                "within": int((e.abs() <= goal).sum()),
                "over": int((e > goal).sum()),
                "under": int((e < -goal).sum()),
                "med_if_fixed": 100 * median_if_fixed(d.error, d[axis] == key),
            }
        )
    return pd.DataFrame(out).set_index(axis)


def knee(path: str, systems=SYSTEMS, c_min: float = KNEE_C) -> pd.DataFrame:
    """Rows of the GB disaggregated deployments with a row at C ≥ ``c_min`` (every split, unflagged TTFT): measured
    and modelled λ (requests/s) and requests decoding at once (λ·(OSL − 1)·TPOT)."""
    d = pd.read_csv(path)
    need = {
        "source",
        "system",
        "mode",
        "metric",
        "id",
        "measured",
        "predicted",
        "quality",
        "deployment",
        "concurrency",
        "osl",
        "split",
        "stack",
    }
    if missing := need - set(d):
        raise SystemExit(
            f"{path}: missing column(s) {sorted(missing)}; fix: pass a `jalapeno validate --json -o "
            "X.csv` table of every split"
        )
    d = d[(d.source == "aiconfigurator") & (d["mode"] == "disagg") & d.system.isin(systems)]
    w = d.pivot_table(index="id", columns="metric", values=["measured", "predicted"], aggfunc="first")
    w.columns = [f"{a}_{b}" for a, b in w.columns]
    meta = d[d.metric == "ttft_s"].drop_duplicates("id").set_index("id")
    w = meta[["system", "stack", "deployment", "isl", "osl", "concurrency", "split", "quality"]].join(w)
    w = w[w.quality.isna()].dropna(subset=["measured_ttft_s", "measured_tpot_s", "predicted_tpot_s"])
    for k in ("measured", "predicted"):
        dec = (w.osl - 1) * w[f"{k}_tpot_s"]
        w[f"lam_{k[:4]}"] = w.concurrency / (w[f"{k}_ttft_s"] + dec)
        w[f"decoding_{k[:4]}"] = w[f"lam_{k[:4]}"] * dec
    key = ["system", "stack", "deployment", "isl", "osl"]
    big = w.groupby(key).concurrency.transform("max") >= c_min
    return w[big].sort_values(key + ["concurrency"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("held_out", help="jalapeno validate --held-out --json -o X.csv")
    ap.add_argument("--knee", metavar="ALL.csv", help="also the saturated deployments (every-split validate table)")
    a = ap.parse_args()
    d = rows(a.held_out)
    pd.set_option("display.width", 200)
    for sysname, g in d.groupby("system"):
        e = g.error
        print(
            f"\n{sysname}: n {len(g)}, median |error| {100 * e.abs().median():.1f}%, bias {100 * e.median():+.1f}%, "
            f"within {100 * GOAL:.0f}% {(e.abs() <= GOAL).sum()}"
        )
        for axis in AXES:
            print(split(g, axis).round(1).to_string(), "\n")
    if a.knee:
        k = knee(a.knee)
        cols = [
            "concurrency",
            "split",
            "measured_ttft_s",
            "predicted_ttft_s",
            "measured_tpot_s",
            "predicted_tpot_s",
            "lam_meas",
            "lam_pred",
            "decoding_meas",
            "decoding_pred",
        ]
        for key, g in k.groupby(["system", "stack", "deployment", "isl", "osl"], sort=False):
            print("\n", " | ".join(str(x) for x in key))
            print(g[cols].round(3).to_string(index=False))


if __name__ == "__main__":
    main()
