"""Benchmark: ``jalapeno audit --claims examples/claims_jalapeno.toml`` (the vendor's 12 statements, docs/audit.md §7).

Each run is a child process (start-up and imports included) timed for wall and CPU (its own and its workers'), in
three ways, interleaved ``--reps`` times (a loaded machine's noise falls on each alike):

- ``each claim alone``: every full sweep fresh (analysis/claims.ClaimContext.full without its memo), one claim after
  the other: the path before round 53's claimsperf53 (106 sweeps);
- ``memo, 1 process``: each distinct frontier swept once per group of claims (63 sweeps), ``JALAPENO_WORKERS=1``;
- ``memo, workers``: the same, the groups (one per model here: 3) in worker processes (analysis/workers.py;
  ``JALAPENO_WORKERS`` as set, else the default).

Round 53 (claimsperf53), 2 cores shared with ~8 other sessions (load 1.4-2.0), best of 2, interleaved: each claim
alone 24.0 s wall / 23.8 s CPU; memo, 1 process 16.5 s / 16.1 s; memo, 2 workers 17.7 s wall / 18.4 s CPU (the
cores were busy; the groups cost 1.7, 5.5 and 8.7 s CPU in one process, so on two free cores the wall would be
about the largest groups' share, ~10-11 s). An earlier single pair at load 1.6: 31.2 s wall / 27.7 s CPU claim by
claim, 16.8 / 16.6 s with the memo.
The JSON is the same bytes each way (tests/unit/test_claim_set_perf.py).

Run: python benchmarks/bench_claims.py [--reps N]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "examples" / "claims_jalapeno.toml"
_NO_MEMO = (
    "from jalapeno.analysis.claims import ClaimContext as C; f = C.full; "
    "C.full = lambda self, pricer, claim, names=None: f(self, pricer, claim); "
)
_RUN = f"from jalapeno.cli.audit_set import run_claims; run_claims({str(FILE)!r}, 'flat', None)"
MODES = {
    "each claim alone": (_NO_MEMO + _RUN, "1"),
    "memo, 1 process": (_RUN, "1"),
    "memo, workers": (_RUN, os.environ.get("JALAPENO_WORKERS", "")),
}


def _time(code: str, workers: str) -> tuple[float, float]:
    """(wall s, CPU s of the child and its workers) of ``python -c code``."""
    env = {k: v for k, v in os.environ.items() if k != "JALAPENO_WORKERS"}
    if workers:
        env["JALAPENO_WORKERS"] = workers
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=2, help="interleaved rounds (default 2)")
    reps = ap.parse_args().reps
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"cores available: {cores}; load average {os.getloadavg()[0]:.1f}")
    best: dict[str, tuple[float, float]] = {}
    for _ in range(reps):
        for name, (code, workers) in MODES.items():
            wall, cpu = _time(code, workers)
            old = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(old[0], wall), min(old[1], cpu))
    for name, (wall, cpu) in best.items():
        print(f"{name:18s} {wall:6.1f} s wall  {cpu:6.1f} s CPU  (best of {reps})")


if __name__ == "__main__":
    main()
