"""Benchmark: heavy input through ``jalapeno simulate`` (issue 17).

A 1,000,000-request trace (Poisson arrivals, ISL uniform in [256, 2048], OSL uniform in
[32, 512]; gpt-oss-120b MXFP4 on h200, 8 aggregated TP1 replicas, offered at ~70% of their
capacity) written to a CSV and replayed through the CLI. Goal: <= 60 s wall and <= 1 GB peak
resident memory (bounded time series: fixed bins; the trace read into columns, not row objects).
Prints wall time, CPU time (user + system: the wall time of an unloaded machine) and peak RSS
of the child process (``resource.getrusage`` of the children).
Run: python benchmarks/bench_trace.py [N]   (N requests, default 1,000,000)
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_trace(path: Path, n: int, rate_per_s: float, seed: int = 0) -> None:
    """A synthetic trace of ``n`` requests at ``rate_per_s`` (Poisson)."""
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(1 / rate_per_s, n))
    isl, osl = rng.integers(256, 2049, n), rng.integers(32, 513, n)
    with path.open("w") as f:
        f.write("arrival_s,input_tokens,output_tokens\n")
        np.savetxt(f, np.column_stack([arrival, isl, osl]), fmt=["%.6f", "%d", "%d"], delimiter=",")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rate = 160.0  # requests/s offered to 8 replicas (~20/s each)
    with tempfile.TemporaryDirectory(prefix="jalapeno-bench-") as d:
        trace = Path(d) / "trace.csv"
        write_trace(trace, n, rate)
        cmd = [
            sys.executable,
            "-m",
            "jalapeno.cli.app",
            "simulate",
            "-s",
            "h200",
            "-m",
            "gpt-oss-120b",
            "--replicas",
            "8",
            "-w",
            str(trace),
            "--requests",
            str(n),
            "--json",
        ]  # past the 200,000 default
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stderr[-2000:])
        sys.exit(proc.returncode)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    rss_mb = ru.ru_maxrss / 1024  # Linux reports KiB
    cpu = ru.ru_utime + ru.ru_stime  # on a shared machine, CPU time is the figure wall time tends to
    import json

    sm = json.loads(proc.stdout)["summary"]
    print(
        f"{n:,}-request trace, 8 replicas: wall {wall:.1f} s (goal <= 60 s: {'met' if wall <= 60 else 'NOT met'}), "
        f"CPU {cpu:.1f} s, peak RSS {rss_mb:,.0f} MB (goal <= 1,000 MB: {'met' if rss_mb <= 1000 else 'NOT met'}); "
        f"simulated {sm['simulated_s']:,.0f} s, {sm['events']:,} events, "
        f"TTFT p50 {sm['ttft_s']['p50'] * 1e3:.0f} ms, TPOT p50 {sm['tpot_s']['p50'] * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
