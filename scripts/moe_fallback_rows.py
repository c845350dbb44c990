"""Which validate rows price their routed experts through the dense-GEMM row rule, and their error (kimimoe40, round 40).

A MoE row's routed experts (op kind ``moe``) are priced by one of five paths (cost/pool_backends.with_moe_backend):

- ``measured``: the pool's engine MoE backend measured on the system at the model's shape
  (cost/moe_backend.MeasuredMoePricer; data/moe_backends.toml, aiconfigurator ``moe_perf`` tables);
- ``kernel-fit``: that backend measured at other shapes only, priced by its own fitted roofline form
  (cost/moe_backend.KernelMoePricer; data/moe_backend_kernels.toml: peak fraction, half rows, HBM fraction
  fitted on a grouped-GEMM ``moe_perf`` table);
- ``floor+gemm``: a derived set (no measurement of its own) with the backend's pooled per-layer floor, the
  experts' compute form still the GEMM fallback below;
- ``moe-fit``: no backend, or one not measured there, and the calibrated set's ``moe[f]`` entry has its own
  peak fraction and half rows (H100, H200, MI355X: fitted on their ``moe_perf`` tables);
- ``gemm``: the same, but the set's ``moe[f]`` gives none, so peak fraction and half rows fall back to the dense
  GEMM fit (specs/efficiency.Efficiency.moe_peak / moe_half; FP8 experts read gemm[fp8_block]): the Blackwell
  sets, MI300X, MI325X (docs/model.md §11.3).

For each point of a validate CSV (``jalapeno validate [--held-out] [--mlperf] --json -o X.csv``) the script
rebuilds the pricer of its decode pool as validate does (its stack's profile, its pool's MoE backend) and asks
``with_moe_backend`` which path it takes; points without a deployment (frontier / best-of sweeps) price through
the sweep's pools, which name no backend: ``sweep`` (the set's entry; format and rows not known here). It
estimates the rows per expert of the decode step as m = (C / workers) · top_k / E (C the concurrency, every sequence decoding, no MTP: a lower bound where MTP
verifies k + 1 tokens), and prints, per path x system x model x precision x expert compute format, the
number of points and the median signed error (%) of interactivity and throughput/chip in bins of m, with the
rule's terms (pf, half rows and where they come from).

Usage: PYTHONPATH=src python scripts/moe_fallback_rows.py X.csv [--metric interactivity] [--split held_out]
Figures: docs/model.md §11 "The borrowed row-count rule on a derived chip", "Which validate rows the borrowed rule prices".
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

import pandas as pd

from jalapeno.cost.moe_backend import KernelMoePricer, MeasuredMoePricer
from jalapeno.cost.pool_backends import with_moe_backend
from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator, point_stack
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.specs.catalog import load_model
from jalapeno.specs.kernel_lookup import MOE_GEMM_KEY

#: bins of rows per expert (upper bounds): few-row decode, tile-sized, up to the FP8 ridge, beyond
BINS = (4.0, 32.0, 128.0, float("inf"))


def moe_path(pricer, backend, model, layout) -> tuple[str, object]:
    """(path, the pricer it gives) of ``model``'s routed experts on ``layout`` under ``pricer`` with MoE ``backend``."""
    got = with_moe_backend(pricer, backend, model, layout)
    if isinstance(got, MeasuredMoePricer):
        return "measured", got
    if isinstance(got, KernelMoePricer):
        return "kernel-fit", got
    return ("gemm" if got is pricer else "floor+gemm"), got


def rule_source(efficiency, fmt: str) -> tuple[float, float, str]:
    """(pf, half rows, where they come from) of the ``moe`` rule in compute format ``fmt``."""
    own = efficiency.moe.get(fmt)
    has = own is not None and own.peak_fraction is not None and own.half_rows is not None
    return efficiency.moe_peak(fmt), efficiency.moe_half(fmt), "moe" if has else f"gemm.{MOE_GEMM_KEY.get(fmt, fmt)}"


def classify(points) -> pd.DataFrame:
    """One row per MoE point: id, path, expert compute format, rows per expert m, pf, half, source."""
    out, pricers = [], {}
    for p in points:
        model = load_model(p.model)
        if model.moe is None:
            continue
        dep = (
            p.deployment
            if p.deployment is not None
            else (p.candidates[0] if p.mapping == "best_entry@concurrency" and p.candidates else None)
        )
        key = (p.system, id(point_stack(p)))
        if key not in pricers:
            pricers[key] = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p))
        pr = pricers[key]
        if dep is None:
            path, fmt, m = "sweep", "", float("nan")
        else:
            pool = dep.decode
            path, got = moe_path(pr, pool.moe_backend, model, pool.layout)
            fmt = dep.precision.modules["routed_experts"].compute
            c = p.concurrency or float("nan")
            m = c / pool.workers * model.moe.top_k / model.moe.num_experts
        pf, half, src = rule_source(pr.efficiency, fmt) if fmt else (float("nan"), float("nan"), "")
        if path == "gemm" and src == "moe":  # the set's own routed-expert fit, not the GEMM's
            path = "moe-fit"
        if path == "kernel-fit":  # the backend's own fitted form, in its kernel's compute format
            fmt, pf, half, src = got.fmt, got.peak_fraction, got.half_rows, f"{got.backend} fit"
        elif path == "measured":
            pf, half, src = float("nan"), float("nan"), "moe_perf table"
        out.append({"id": p.id, "path": path, "fmt": fmt, "m": m, "pf": pf, "half": half, "src": src})
    return pd.DataFrame(out)


def report(rows: pd.DataFrame, cls: pd.DataFrame, metrics) -> None:
    """Print, per path x system x model x precision x format, n and median signed error (%) per bin of m."""
    d = rows.merge(cls, on="id")
    d = d[d.metric.isin(metrics) & d.error.notna()]
    if "quality" in d:
        d = d[d.quality.isna() | (d.quality == "")]
    labels = [f"m<={b:g}" for b in BINS]
    print(
        f"{'path':10s} {'system':12s} {'model':16s} {'prec':11s} {'fmt':5s} {'metric':20s} {'pf':>5s} {'half':>6s} "
        f"{'from':15s} {'n':>4s} {'med%':>6s} " + " ".join(f"{x:>13s}" for x in labels)
    )
    for k, g in d.groupby(["path", "system", "model", "precision", "fmt", "metric"], dropna=False):
        cells = defaultdict(list)
        for m, e in zip(g.m, g.error):
            lab = next((lbl for b, lbl in zip(BINS, labels) if m <= b), "m=?")
            cells[lab].append(100 * e)
        cell = " ".join(
            f"{len(cells[x]):3d}:{statistics.median(cells[x]):+7.1f}%" if cells[x] else f"{'-':>13s}" for x in labels
        )
        first = g.iloc[0]
        print(
            f"{k[0]:10s} {k[1]:12s} {k[2]:16s} {k[3]:11s} {k[4]:5s} {k[5]:20s} {first.pf:5.3f} {first.half:6.1f} "
            f"{first.src:15s} {len(g):4d} {100 * g.error.median():+6.1f} {cell}"
        )
    print("\nper path (all systems), n / median signed / median |error| %, then n:median signed % per bin of m:")
    for k, g in d.groupby(["path", "metric"]):
        b = pd.cut(g.m, (0.0,) + BINS, labels=labels)
        cell = " ".join(
            f"{len(x):4d}:{100 * x.error.median():+6.1f}%" if len(x) else f"{'-':>12s}"
            for _, x in g.groupby(b, observed=False)
        )
        print(
            f"  {k[0]:10s} {k[1]:20s} n {len(g):5d}  {100 * g.error.median():+6.1f}  {100 * g.error.abs().median():5.1f}"
            f"   {cell}"
        )


def main() -> None:
    """Parse the arguments, classify the points of the CSV and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="a validate CSV (jalapeno validate [--held-out] [--mlperf] --json -o X.csv)")
    ap.add_argument(
        "--metric", action="append", help="metric(s) to report (default: interactivity, throughput_per_chip)"
    )
    ap.add_argument("--split", default="", help="only rows of this split (held_out, fit, none; default: all)")
    a = ap.parse_args()
    rows = pd.read_csv(a.csv)
    if a.split:
        rows = rows[rows.split == a.split]
    pts = load_inferencex(DEFAULT_POINTS)[0] + load_aiconfigurator()[0]
    if (rows.source == "mlperf").any():
        pts += load_mlperf()[0]
    pts = [p for p in pts if p.id in set(rows.id)]
    report(rows, classify(pts), a.metric or ["interactivity", "throughput_per_chip"])


if __name__ == "__main__":
    main()
