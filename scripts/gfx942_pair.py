"""MI300X against MI325X: the same runs measured on both gfx942 parts, against the model (docs/model.md §12).

MI300X and MI325X are one CDNA 3 die (304 CUs, the same datasheet peaks) with different HBM (5.3
and 6.0 TB/s) and board power (750 and 1,000 W). Their GEMM fits come from the same 117 rows of
amd-aiter's ``a8w8_blockscale_tuned_gemm`` at ``cu_num`` 304 (fit/amd.py), so the model prices
their GEMMs with the same absolute times. This script pairs every measured point that ran on both
chips in one publication (InferenceX: same source row date, model, precision, framework, ISL/OSL,
concurrency and mapping; MLPerf: same round, benchmark and scenario) and prints the measured
MI325X/MI300X ratio of each metric against the model's, and the model's error on each chip.

A second column prices MI325X as a transfer of the MI300X fit instead (``--transfer`` also prints the
per-point errors): the 304-CU rows were added by ROCm/aiter PR #365 (commit 1e8ac92007, 2025-05-01,
"add config for 300"; the installed rows' M/N/K/time are identical to that commit's), i.e. they were
tuned on MI300X; MI325X then takes MI300X's GEMM HBM fraction of its own 6.0 TB/s and MI300X's
compute-bound peak fractions scaled by AMD's max-achievable dense FP8 throughput ratio,
1,519 / 1,273 TFLOP/s (median clocks 1,464 / 1,230 MHz under hipBLASLt's MAF GEMM; ROCm blog
"Measuring Max-Achievable FLOPs - Part 2", 2025-02-27, Table 1). Nothing here is fitted.

``--cap`` prices both chips with every compute-bound fraction capped at the chip's max-achievable
throughput in its format (MAF / datasheet peak: no kernel outruns the clock the chip holds under
dense matrix load) and prints the points that move.

Run: python scripts/gfx942_pair.py [--transfer] [--cap]
"""

from __future__ import annotations

import argparse
import csv
import re
from collections import defaultdict

import numpy as np
import pandas as pd

import jalapeno.fit.table_lookup as table_lookup
from jalapeno.fit.amd import SUSTAINED_CLOCK_MHZ
from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.validate import predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS, calibrated_systems
from jalapeno.specs.catalog import load_efficiency, load_system

#: AMD max-achievable dense GEMM throughput, TFLOP/s (ROCm blog "Measuring Max-Achievable FLOPs -
#: Part 2", Table 1; hipBLASLt-bench, normally distributed inputs, thermally stable): format -> (MI300X, MI325X)
MAF_TFLOPS = {"fp16": (654.0, 794.0), "bf16": (708.0, 843.0), "fp8": (1273.0, 1519.0)}
#: median clock during those GEMMs, MHz: format -> (MI300X, MI325X) (same table)
MAF_CLOCK_MHZ = {
    "fp16": (1115.0, 1354.0),
    "bf16": (1207.0, 1447.0),
    "fp8": (SUSTAINED_CLOCK_MHZ["mi300x"], SUSTAINED_CLOCK_MHZ["mi325x"]),
}  # fp8: fit/amd's statement
PAIR = ("mi300x", "mi325x")


def transfer_overrides() -> tuple[tuple[str, float], ...]:
    """MI325X's GEMM parameters as a transfer of MI300X's fit: same HBM fraction, peak x MAF ratio."""
    src = load_efficiency(PAIR[0], "calibrated")
    ratio = MAF_TFLOPS["fp8"][1] / MAF_TFLOPS["fp8"][0]
    out = []
    for fmt in ("fp8", "fp8_block"):
        k = src.gemm[fmt]
        out += [
            (f"efficiency.gemm.{fmt}.peak_fraction", min(1.0, k.peak_fraction * ratio)),
            (f"efficiency.gemm.{fmt}.hbm_fraction", k.hbm_fraction),
            (f"efficiency.gemm.{fmt}.half_rows", k.half_rows),
        ]
    return tuple(out)


def cap_overrides(system: str) -> tuple[tuple[str, float], ...]:
    """Every compute-bound fraction of ``system``'s set above MAF / peak in its format, capped there."""
    eff, chip = load_efficiency(system, "calibrated"), load_system(system).chip
    idx = PAIR.index(system)
    cap = {f: MAF_TFLOPS[f][idx] * 1e12 / chip.peak(f) for f in ("bf16", "fp8")}
    cap["fp8_block"] = cap["fp8"]
    out = []
    for op in ("gemm", "mla_decode", "mla_prefill"):
        for fmt, k in getattr(eff, op).items():
            if fmt in cap and k.peak_fraction is not None and k.peak_fraction > cap[fmt]:
                out.append((f"efficiency.{op}.{fmt}.peak_fraction", cap[fmt]))
    if eff.attention_peak_fraction > cap["bf16"]:
        out.append(("efficiency.attention_peak_fraction", cap["bf16"]))
    return tuple(out)


#: the cap's MAF figures are already the clock a board holds under dense load: with cost/roofline.POWER_CLOCK on
#: (round 41) MI300X's pricer would slow its capped dense ops by 1,464 / 1,230 again, so the cap prices both chips
#: at the calibration's clock (Chip.dense_clock_ratio 1)
CALIBRATION_CLOCK = (("chip.dense_clock_ratio", 1.0),)


def mode_overrides(mode: str) -> dict[str, tuple]:
    """System -> the overrides :func:`predict` adds to its calibrated pricer in ``mode`` (``transfer``: MI325X's;
    ``cap``: both chips', with :data:`CALIBRATION_CLOCK`)."""
    if mode == "transfer":
        return {PAIR[1]: transfer_overrides()}
    return {s: cap_overrides(s) + CALIBRATION_CLOCK for s in PAIR}


def _ix_keys() -> dict[str, tuple]:
    """InferenceX point id -> the publication key two chips' rows must share (and their TPOT, ms)."""
    keys = {}
    with open(DEFAULT_POINTS, newline="") as f:
        for n, r in enumerate(csv.DictReader(f), start=2):  # id = the row's line number in the file
            keys[f"inferencex_points:{n}"] = (
                r["model"],
                r["precision"].split()[0],
                r["framework"],
                r["disagg"],
                r["isl"],
                r["osl"],
                r["conc"],
                r["date"],
                r["point_type"],
                r["source"].split(" @")[0],
                r["tpot_ms"],
                r["ttft_ms"],
            )
    return keys


def _ml_key(pid: str) -> str:
    """MLPerf point id without its system token (``8xMI300X_..._1``)."""
    return re.sub(r"_\d+x(MI300X|MI325X)_[^_]+_[^_]+(_\d)?_", "_", pid.split("#")[0])


def predict(points, mode: str = "shipped") -> pd.DataFrame:
    """Per point and metric predictions: ``shipped``, ``transfer`` (MI325X on MI300X's fit) or ``cap``."""
    if mode == "shipped":
        return predict_points(points, calibrated_systems())
    orig = table_lookup.load_any_pricer
    extra = mode_overrides(mode)

    def patched(system, efficiency="calibrated", overrides=(), pricer="roofline", stack=None):
        more = extra.get(system, ()) if efficiency == "calibrated" else ()
        return orig(system, efficiency, tuple(overrides) + more, pricer, stack)

    table_lookup.load_any_pricer = patched
    try:
        return predict_points(points, calibrated_systems())
    finally:
        table_lookup.load_any_pricer = orig


def main(show_transfer: bool, show_cap: bool) -> None:
    ix, _ = load_inferencex(DEFAULT_POINTS)
    ml, _ = load_mlperf(server_mapping="frontier@limits")
    pts = [p for p in ix + ml if p.system in PAIR]
    base = predict(pts)
    alt = predict(pts, "transfer")
    base = base.merge(alt[["id", "metric", "predicted", "error"]], on=["id", "metric"], suffixes=("", "_t"))
    keys = _ix_keys()
    groups: dict[tuple, dict] = defaultdict(dict)
    for r in base.dropna(subset=["error"]).itertuples():
        k = (r.source, keys[r.id][:10] if r.source == "inferencex" else _ml_key(r.id), r.metric)
        groups[k][r.system] = r
    print(
        f"MAF (AMD, dense GEMM): MI325X/MI300X fp8 {MAF_TFLOPS['fp8'][1] / MAF_TFLOPS['fp8'][0]:.3f}, "
        f"bf16 {MAF_TFLOPS['bf16'][1] / MAF_TFLOPS['bf16'][0]:.3f}; median clock fp8 "
        f"{MAF_CLOCK_MHZ['fp8'][1] / MAF_CLOCK_MHZ['fp8'][0]:.3f}; HBM 6.0/5.3 = {6.0 / 5.3:.3f}\n"
    )
    print(
        "| pair | metric | measured MI300X / MI325X | measured ratio | model ratio | transfer ratio | "
        "error MI300X | error MI325X | MI325X on the transfer |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    up = {"throughput_per_chip", "interactivity"}  # higher is faster; TPOT/TTFT are inverted
    for (src, key, metric), d in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if len(d) < 2:
            continue
        a, b = d[PAIR[0]], d[PAIR[1]]
        inv = metric in up
        meas = b.measured / a.measured if inv else a.measured / b.measured
        mod = b.predicted / a.predicted if inv else a.predicted / b.predicted
        tra = b.predicted_t / a.predicted if inv else a.predicted / b.predicted_t
        name = f"{key[0]} {key[4]}/{key[5]} C={key[6]} {key[2]} {key[7]}" if src == "inferencex" else key
        print(
            f"| {name} | {metric} | {a.measured:.4g} / {b.measured:.4g} | {meas:.3f} | {mod:.3f} | {tra:.3f} | "
            f"{a.error:+.1%} | {b.error:+.1%} | {b.error_t:+.1%} |"
        )
    tp = {k: v for k, v in keys.items() if v[10] and any(k == r.id for r in pts if r.system in PAIR)}
    by: dict[tuple, dict] = defaultdict(dict)
    for pid, k in tp.items():
        sysname = next(p.system for p in pts if p.id == pid)
        by[k[:10]][sysname] = float(k[10])
    extra = [(k, d) for k, d in by.items() if len(d) == 2]
    if extra:
        print(
            "\nTPOT the source publishes beside a best-of-sweep throughput (not validated as a metric): "
            "MI300X / MI325X ms, ratio"
        )
        for k, d in extra:
            print(
                f"- {k[0]} {k[4]}/{k[5]} C={k[6]} {k[2]} {k[7]}: {d[PAIR[0]]:.1f} / {d[PAIR[1]]:.1f} ms, "
                f"{d[PAIR[0]] / d[PAIR[1]]:.3f}"
            )
    if show_transfer:
        own = base[base.system == PAIR[1]].dropna(subset=["error"])
        print("\nMI325X, every validated point: error as shipped -> on the transfer")
        for r in own.itertuples():
            print(f"- {r.id} {r.metric}: {r.error:+.1%} -> {r.error_t:+.1%}")
        for src in ("inferencex", "mlperf"):
            s = own[own.source == src]
            for m, g in s.groupby("metric"):
                print(
                    f"  {src} {m}: median |err| {np.median(np.abs(g.error)):.1%} -> "
                    f"{np.median(np.abs(g.error_t)):.1%}, bias {np.median(g.error):+.1%} -> "
                    f"{np.median(g.error_t):+.1%} (n {len(g)})"
                )
    if show_cap:
        print(
            "\nCapped at MAF: "
            + "; ".join(f"{s} {', '.join(f'{k} {v:.3f}' for k, v in cap_overrides(s))}" for s in PAIR)
        )
        capped = base.merge(
            predict(pts, "cap")[["id", "metric", "error"]], on=["id", "metric"], suffixes=("", "_c")
        ).dropna(subset=["error"])
        for r in capped.itertuples():
            if abs(r.error_c - r.error) >= 0.0005:
                print(f"- {r.id} {r.metric}: {r.error:+.1%} -> {r.error_c:+.1%}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transfer", action="store_true", help="also print every MI325X point on the transfer")
    ap.add_argument("--cap", action="store_true", help="also price both chips capped at their MAF")
    a = ap.parse_args()
    main(a.transfer, a.cap)
