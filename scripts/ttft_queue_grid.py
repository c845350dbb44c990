"""TTFT under load, analytic against the simulator on a grid (docs/model.md §8.7).

Systems x models x concurrency x aggregated/disaggregated; the analytic side is
``serve_at_concurrency`` (InferenceX's idle start, serve/queueing.py), the simulator runs the same
deployment with ``warmup=0`` (InferenceX's protocol: 10·C counted requests from an idle server).
Prints a markdown table and the median / largest |error|.
``--fixed-lengths``: every request exactly ISL/OSL tokens (range ratio 1: genai-perf with zero
stddev, the client of aiconfigurator's silicon rows) instead of InferenceX's uniform [0.8, 1]·L,
over C = 1..512 and a third model (Llama-3.3-70B, dense, TP4, 1k/1k); there the first wave's
burst recurs in every wave, which the analytic side models as a periodic regime
(serve/queueing.py effect 6; docs/model.md §8.7).
Run: python scripts/ttft_queue_grid.py [--fixed-lengths] [--agg-only | --disagg-only]   (a few minutes; fixed ~15)
"""

from __future__ import annotations

import argparse

import numpy as np

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

SYSTEMS = ("h200", "b200", "gb200-nvl72", "mi325x")
CONCURRENCIES = (4, 32, 128)
FIXED_CONCURRENCIES = (1, 4, 16, 64, 256, 512)


def cases(fixed: bool):
    fp8, mx = get_precision("fp8"), get_precision("mxfp4")
    ds = Layout(tp=8, ep=8)
    yield "deepseek-r1", "8k1k", "agg", Deployment(fp8, Pool(ds))
    yield "deepseek-r1", "8k1k", "disagg", Deployment(fp8, Pool(ds), prefill=Pool(ds, 1))
    yield "gpt-oss-120b", "1k1k", "agg", Deployment(mx, Pool(Layout(tp=2)))
    yield "gpt-oss-120b", "1k1k", "disagg", Deployment(mx, Pool(Layout(tp=2)), prefill=Pool(Layout(tp=1), 1))
    if fixed:
        yield "llama-3.3-70b", "1k1k", "agg", Deployment(fp8, Pool(Layout(tp=4)))


def main(fixed: bool, agg_only: bool, disagg_only: bool = False) -> None:
    print("| system | model | workload | mode | deployment | C | analytic TTFT s | simulated TTFT s | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    errs = []
    for s in SYSTEMS:
        pr = load_pricer(s)
        for mname, wname, mode, dep in cases(fixed):
            if (agg_only and mode != "agg") or (disagg_only and mode != "disagg"):
                continue
            model, wl = load_model(mname), get_workload(wname, fixed=fixed)
            for c in FIXED_CONCURRENCIES if fixed else CONCURRENCIES:
                a = serve_at_concurrency(model, pr, dep, wl, [c], recurring_waves=fixed).record(0)
                sim = simulate(model, pr, dep, workload=wl, concurrency=c, seed=0, warmup=0).summary["ttft_s"]["mean"]
                e = a["ttft_s"] / sim - 1
                errs.append(abs(e))
                print(
                    f"| {s} | {mname} | {wname} | {mode} | {dep.label} | {c} | {a['ttft_s']:.3f} | {sim:.3f} | {e:+.1%} |",
                    flush=True,
                )
    print(f"\n{len(errs)} points: median |error| {np.median(errs):.1%}, largest {max(errs):.1%}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fixed-lengths", action="store_true", help="every request exactly ISL/OSL, C = 1..512")
    ap.add_argument("--agg-only", action="store_true", help="aggregated deployments only")
    ap.add_argument("--disagg-only", action="store_true", help="disaggregated deployments only")
    args = ap.parse_args()
    main(args.fixed_lengths, args.agg_only, args.disagg_only)
