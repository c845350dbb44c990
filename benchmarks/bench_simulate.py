"""Benchmark: the simulator on 10,000 requests of 8K/1K at concurrency 256 (DeepSeek-R1 FP8,
gb200-nvl72, one TP1/DP8/EP8 instance). Goal (issue: simulator): <= 10 s wall.
Prints wall time, simulated time, speed-up, events and step-cost evaluations.
Run: python benchmarks/bench_simulate.py
"""

from __future__ import annotations

import time

from jalapeno.serve.sim.simulation import simple_deployment, simulate
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


def main() -> None:
    m, s, p = load_model("deepseek-r1"), load_pricer("gb200-nvl72"), get_precision("fp8")
    t0 = time.perf_counter()
    res = simulate(m, s, simple_deployment(p, tp=1, dp=8, ep=8), workload=get_workload("8k1k"),
                   concurrency=256, num_requests=10_000, seed=0)
    wall = time.perf_counter() - t0
    sm = res.summary
    print(f"10,000 counted requests (+512 warm-up) at concurrency 256: wall {wall:.2f} s "
          f"(goal <= 10 s: {'met' if wall <= 10 else 'NOT met'}); simulated {sm['simulated_s']:.0f} s; "
          f"speed-up {sm['simulated_s'] / wall:,.0f}x; {sm['events']:,} events; "
          f"{sm['step_cost_evaluations']} step-cost evaluations; "
          f"throughput {sm['throughput_per_chip']:.0f} tok/s/chip, TPOT p50 {sm['tpot_s']['p50'] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
