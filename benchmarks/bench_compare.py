"""Benchmark: the default ``jalapeno compare`` (DeepSeek-R1 8k1k, 4 systems).

Goals (issue: main job): sweep <= 1 s, whole command <= 3 s wall including start-up, peak
memory <= 1 GB. Prints the sweep time, points evaluated per second, the command's wall time
and its peak RSS (from a child process, so start-up and imports are included).
Run: python benchmarks/bench_compare.py
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time


def sweep_only(repeats: int = 3) -> None:
    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    m, p, wl = load_model("deepseek-r1"), get_precision("fp8"), get_workload("8k1k")
    systems = [load_pricer(n) for n in ("jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72")]
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = compare_systems(m, systems, wl, p, baseline="gb300-nvl72")
        best = min(best, time.perf_counter() - t0)
    n = sum(h.points_evaluated for h in res.headlines.values())
    print(f"sweep + frontiers + comparisons: {best:.3f} s (best of {repeats}); {n:,} points; "
          f"{n / best:,.0f} points/s; goal <= 1 s: {'met' if best <= 1 else 'NOT met'}")


def whole_command() -> None:
    exe = os.path.join(os.path.dirname(sys.executable), "jalapeno")
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        subprocess.run([exe, "compare"], cwd=d, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"`jalapeno compare` wall: {wall:.2f} s (goal <= 3 s: {'met' if wall <= 3 else 'NOT met'}); "
          f"peak RSS {rss_mb:.0f} MB (goal <= 1024 MB: {'met' if rss_mb <= 1024 else 'NOT met'})")


if __name__ == "__main__":
    sweep_only()
    whole_command()
