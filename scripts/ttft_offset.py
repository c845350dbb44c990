"""Where the TTFT of a measured sweep goes: steady state, first wave, and what is left (docs/model.md §12).

For each matched InferenceX point with a measured TTFT (default: the MI325X and H200 DeepSeek-R1
8k/1k SGLang sweeps, rows 76-80 and 61-65), the point's validation deployment is served twice
(serve/point.serve_at_concurrency): with InferenceX's idle start (the run's mean, what validation
reports) and without it (the steady state). The difference is the first wave's term (§8.7 (3));
measured minus both is the residual. A residual that is flat in the concurrency is a per-request
latency off the GPU's critical path; a slower GPU prefill would grow it with the load (its queue
and the first wave scale with the prefill time). A flat residual in a *mean* TTFT has a second
reading: a one-off stall of S seconds while the run's first C requests wait for their first token
adds C·S / (R·C) = S / R to the mean at every C (R = serve/queueing.REQUESTS_PER_USER counted
requests per user, 10 in InferenceX's client) and nothing to the median; the last column is that S
(R x the residual), the stall the residual would imply read that way (docs/model.md §12).
Run: python scripts/ttft_offset.py [ROW ...]   (seconds; ROW = the number after inferencex_points:)
"""

from __future__ import annotations

import argparse

from jalapeno.fit.mlperf_scenarios import priced_point

from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.queueing import REQUESTS_PER_USER

ROWS = (61, 62, 63, 64, 65, 76, 77, 78, 79, 80)


def main(rows) -> None:
    want = {f"inferencex_points:{r}" for r in rows}
    pts, _ = load_inferencex(DEFAULT_POINTS)
    print(
        f"| row | system | C | TTFT stat | measured s | steady s | first wave s | residual s | "
        f"one-off stall s ({REQUESTS_PER_USER} x residual) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for p in pts:
        if p.id not in want or p.deployment is None or not p.measured.get("ttft_s"):
            continue
        model, pricer, dep, wl = priced_point(p)
        field = "ttft_p50_s" if p.ttft_median else "ttft_s"  # as validation compares (fit/validate.py)
        run = getattr(serve_at_concurrency(model, pricer, dep, wl, [p.concurrency]), field)[0]
        steady = getattr(serve_at_concurrency(model, pricer, dep, wl, [p.concurrency], idle_start=False), field)[0]
        meas = p.measured["ttft_s"]
        stat = "median" if p.ttft_median else "mean"
        print(
            f"| {p.id.split(':')[1]} | {p.system} | {p.concurrency:g} | {stat} | {meas:.3f} | {steady:.3f} | "
            f"{run - steady:.3f} | {meas - run:+.3f} | {REQUESTS_PER_USER * (meas - run):+.1f} |"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", nargs="*", type=int, default=list(ROWS), help="InferenceX row numbers")
    main(ap.parse_args().rows)
