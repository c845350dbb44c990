"""Benchmark: one claim audit (issue 12: <= 10 s on 2 cores).

Audits the two claims of issue 12 (Jalapeño's per-user speed on DeepSeek-R1 8K/1K, and its peak
tokens per kW against GB300 at chip power) through the API, in-process, and prints for each the
wall time, the CPU time, the full sweeps and the candidate-restricted evaluations it took.
Pin it to two cores with ``taskset -c 0,1 python benchmarks/bench_audit.py``.
Run: python benchmarks/bench_audit.py
"""

from __future__ import annotations

import os
import time


def main() -> None:
    from jalapeno.analysis.audit import audit_claim
    from jalapeno.analysis.claims import ClaimContext, parse_claim
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    m = load_model("deepseek-r1")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"cores available: {cores}; load average {load:.1f} (wall time is inflated when it exceeds the cores; "
        "CPU time is the figure for an idle machine)"
    )
    for claim, power, base in (
        ("max_interactivity=700", "all-in", None),
        ("peak_tok_s_per_kw_ratio=1.7", "chip", "gb300-nvl72"),
    ):
        ctx = ClaimContext(m, get_workload("8k1k"), get_precision("fp8"), convention=power)
        t0, c0 = time.perf_counter(), time.process_time()
        res = audit_claim(ctx, load_pricer("jalapeno"), parse_claim(claim), load_pricer(base) if base else None)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(
            f"{claim} ({power} power{', vs ' + base if base else ''}): verdict {res.verdict}, "
            f"{wall:.1f} s wall, {cpu:.1f} s CPU; {res.context['full_sweeps']} full sweeps, "
            f"{res.context['fast_evaluations']} restricted evaluations; goal <= 10 s: "
            f"{'met' if wall <= 10 else 'met in CPU time' if cpu <= 10 else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
