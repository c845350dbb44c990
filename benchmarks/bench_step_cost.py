"""Benchmark: 10,000 step-cost evaluations of DeepSeek-R1 on gb200-nvl72 in one vectorised call.

Goal (issue: foundation): <= 50 ms. Prints the median of several runs and points per second, for
the roofline pricer and (issue 18, when the [calibrate] extra is installed) the table-lookup pricer
(cost/table_pricer.py; its one-off surface build is not timed).
Run: python benchmarks/bench_step_cost.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision


def main(n: int = 10_000, repeats: int = 7) -> None:
    from jalapeno.errors import SpecError
    from jalapeno.fit.table_lookup import load_table_pricer

    pricers = {"roofline": load_pricer("gb200-nvl72")}
    try:
        pricers["table"] = load_table_pricer("gb200-nvl72")
    except SpecError as e:
        print(f"table pricer skipped: {e}")
    for pname, system in pricers.items():
        print(f"-- {pname} pricer")
        _run(system, n, repeats)


def _run(system, n: int, repeats: int) -> None:
    model, prec = load_model("deepseek-r1"), get_precision("fp8")
    rng = np.random.default_rng(0)
    batch = Batch.make(
        decode_seqs=rng.integers(1, 1024, n),
        decode_ctx=rng.integers(128, 16384, n),
        prefill_tokens=rng.integers(0, 8192, n),
    )
    layouts = {
        "TP1 DP8 EP8": Layout(tp=1, dp=8, ep=8),
        "TP8": Layout(tp=8),
        "TP4 DP16 EP64": Layout(tp=4, dp=16, ep=64),
    }
    for name, lay in layouts.items():
        step_cost(model, system, lay, prec, batch)  # warm-up
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            step_cost(model, system, lay, prec, batch)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        print(
            f"{name:14s}: {n} step costs in {med * 1e3:6.1f} ms (median of {repeats}); "
            f"{n / med:,.0f} points/s; goal <= 50 ms: {'met' if med <= 0.05 else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
