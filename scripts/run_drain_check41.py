"""The run's drain d per point, closed form (serve/run_drain.py) against the simulator (docs/model.md §8.7 effect 8).

InferenceX's client runs R·C counted requests (R = 10) from an idle server with C at once; its run lasts
R + d mean E2Es, the last requests finishing while the batch empties. For each case (system, model,
workload, aggregated or disaggregated, C) this prints d from ``serve_at_concurrency`` with
``serve/point.RUN_DRAIN`` on and off (d = R·(off/on − 1) of the throughput) and d from the request-level
simulator with ``warmup=0`` (InferenceX's protocol: d = R·(C / Little's-law concurrency − 1)), the mean
over ``--seeds`` seeds and its standard error. Then, on the measured InferenceX rows that carry every cell of
the closed-loop identity (fit/data_quality.py rule 1: throughput, C, TTFT, TPOT), the run's own d,
R·(1/residual − 1) — the measured throughput over Little's law at the run's mean E2E, a direct reading of
the ramp-up and drain — beside the closed form's d for the row's validated deployment. A check, not a fit:
no measured figure enters a prediction. Nothing is fitted.

Run: python scripts/run_drain_check41.py [--seeds 6]   (a few minutes)
"""

from __future__ import annotations

import argparse

import numpy as np

import jalapeno.serve.point as point
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.queueing import REQUESTS_PER_USER
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


def cases():
    """(system, model, workload, mode, deployment, concurrencies) of the check."""
    fp8, mx = get_precision("fp8"), get_precision("mxfp4")
    ds = Layout(tp=8, ep=8)
    yield "h200", "deepseek-r1", "1k1k", "agg", Deployment(fp8, Pool(ds)), (4, 16, 64, 256)
    yield "h200", "deepseek-r1", "8k1k", "disagg", Deployment(fp8, Pool(ds), prefill=Pool(ds, 1)), (32, 128)
    yield (
        "b200",
        "gpt-oss-120b",
        "1k1k",
        "disagg",
        Deployment(mx, Pool(Layout(tp=2)), prefill=Pool(Layout(tp=1), 1)),
        (64, 512),
    )


def analytic_d(model, pr, dep, wl, cs) -> np.ndarray:
    """d (N,) of serve_at_concurrency at ``cs``: R·(throughput off / on − 1)."""
    was = point.RUN_DRAIN
    try:
        point.RUN_DRAIN = False
        off = point.serve_at_concurrency(model, pr, dep, wl, list(cs)).throughput_per_chip
        point.RUN_DRAIN = True
        on = point.serve_at_concurrency(model, pr, dep, wl, list(cs)).throughput_per_chip
    finally:
        point.RUN_DRAIN = was
    return REQUESTS_PER_USER * (off / on - 1)


def main(seeds: int) -> None:
    """Print the markdown table and the median |analytic − simulated| d."""
    print("| system | model | workload | mode | C | d closed form | d simulated (± s.e.) |")
    print("|---|---|---|---|---|---|---|")
    gaps = []
    for s, mname, wname, mode, dep, cs in cases():
        pr, model, wl = load_pricer(s), load_model(mname), get_workload(wname)
        d_an = analytic_d(model, pr, dep, wl, cs)
        for i, c in enumerate(cs):
            sims = []
            for seed in range(seeds):
                summ = simulate(model, pr, dep, workload=wl, concurrency=c, seed=seed, warmup=0).summary
                sims.append(REQUESTS_PER_USER * (c / summ["mean_concurrency_littles_law"] - 1))
            m, se = float(np.mean(sims)), float(np.std(sims) / np.sqrt(len(sims)))
            gaps.append(abs(d_an[i] - m))
            print(f"| {s} | {mname} | {wname} | {mode} | {c} | {d_an[i]:.3f} | {m:.3f} ± {se:.3f} |", flush=True)
    print(f"\n{len(gaps)} points: median |closed form − simulated| d {np.median(gaps):.3f}, largest {max(gaps):.3f}")


def measured_rows() -> None:
    """Print each identity-checked row's measured d beside the closed form's, and their medians."""
    from jalapeno.fit.data_quality import quality_table
    from jalapeno.fit.validate import predict_points
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS, calibrated_systems

    q = quality_table(DEFAULT_POINTS)
    q = q[np.isfinite(q.residual.astype(float))]
    pts, _ = load_inferencex(DEFAULT_POINTS)
    pts = [p for p in pts if p.id in set(q.id) and p.mapping == "matched"]
    was, thr = point.RUN_DRAIN, {}
    try:
        for on in (False, True):
            point.RUN_DRAIN = on
            rows = predict_points(pts, calibrated_systems())
            rows = rows[rows.metric == "throughput_per_chip"]
            thr[on] = dict(zip(rows.id, rows.predicted.astype(float)))
    finally:
        point.RUN_DRAIN = was
    print("\n| row | system | C | measured residual | d measured | d closed form |\n|---|---|---|---|---|---|")
    meas, model = [], []
    for _, r in q.iterrows():
        if r.id not in thr[True]:
            continue
        dm = REQUESTS_PER_USER * (1 / float(r.residual) - 1)
        da = REQUESTS_PER_USER * (thr[False][r.id] / thr[True][r.id] - 1)
        meas.append(dm)
        model.append(da)
        print(f"| {r.id} | {r.hardware} | {r.concurrency:g} | {float(r.residual):.3f} | {dm:.3f} | {da:.3f} |")
    print(
        f"\n{len(meas)} rows: median d measured {np.median(meas):.3f}, closed form {np.median(model):.3f}, "
        f"correlation {np.corrcoef(meas, model)[0, 1]:.2f}"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=6, help="simulator seeds per point")
    ap.add_argument("--measured-only", action="store_true", help="only the measured rows' d")
    args = ap.parse_args()
    if not args.measured_only:
        main(args.seeds)
    measured_rows()
