"""Fit the request front-end cost (TTFT outside the accelerator) on a calibration split.

Split (fit/heldout.frontend_calibration): the InferenceX H200 SGLang TP8 points at concurrency <= 8
(little queueing) are the calibration split (`jalapeno validate`'s split column marks them fit); every other measured point (other systems, higher concurrency, the
aiconfigurator rows) is judged in docs/validation.md and never enters this fit. Model:
TTFT_measured − TTFT_predicted(front end = 0) = a + b·ISL, by least squares.
Prints a and b; their values are the defaults of specs/efficiency.py.
Run: python scripts/fit_frontend.py
"""

from __future__ import annotations


import numpy as np

from jalapeno.fit.heldout import frontend_calibration
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.workload import Workload


def main() -> None:
    pts, _ = load_inferencex(DEFAULT_POINTS)
    split = frontend_calibration(pts)  # the rule lives in fit/heldout.py: validate's split column reads it
    isl, resid = [], []
    for p in split:
        pr = load_pricer(p.system)
        sysm = pr.with_efficiency(
            pr.efficiency.with_overrides({"request_overhead_s": 0.0, "prompt_overhead_s_per_token": 0.0})
        )
        wl = Workload("x", p.isl, p.osl)
        pred = float(serve_at_concurrency(load_model(p.model), sysm, p.deployment, wl, [p.concurrency]).ttft_s[0])
        isl.append(wl.mean_isl)
        resid.append(p.measured["ttft_s"] - pred)
        print(
            f"{p.id}: ISL {p.isl} conc {p.concurrency:.0f}: measured {p.measured['ttft_s'] * 1e3:.0f} ms, "
            f"accelerator-only {pred * 1e3:.0f} ms"
        )
    b, a = np.polyfit(np.array(isl), np.array(resid), 1)
    print(f"{len(split)} points: request_overhead_s = {a:.4f}, prompt_overhead_s_per_token = {b:.3e}")


if __name__ == "__main__":
    main()
