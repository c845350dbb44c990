"""Benchmark: ``jalapeno explore`` trial throughput (issue 14: 1,000 trials of one model and one
workload in <= 2 min on 2 cores), in one process and on a local Ray instance with 2 workers.

The space: Jalapeño with FP8 peak and HBM bandwidth as continuous parameters (so no two trials
repeat a design and nothing is served from the run's cache), DeepSeek-R1 8K/1K, tok/s/kW at
>= 50 tok/s/user. Prints trials, wall time, trials per second and the Ray speed-up.
Run: python benchmarks/bench_explore.py [--trials 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=8)
    a = ap.parse_args()

    from jalapeno.analysis.explore import make_evaluator
    from jalapeno.analysis.search import open_study, run_search
    from jalapeno.specs.design_space import design_space_from_dict

    space = design_space_from_dict(
        {
            "name": "bench",
            "base": "jalapeno",
            "seed": 1,
            "trials": a.trials,
            "objective": {"metrics": ["tok_s_per_kw"], "min_interactivity": 50, "power": "chip"},
            "cases": [{"model": "deepseek-r1", "workload": "8k1k"}],
            "params": {
                "chip.peak_dense_tflops.fp8": {"low": 2000, "high": 5000},
                "chip.hbm_bandwidth_tb_per_s": {"low": 8, "high": 20},
            },
        }
    )
    ev = make_evaluator(space)
    times = {}
    with tempfile.TemporaryDirectory() as d:
        for workers in (1, 2):
            study = open_study(space, f"sqlite:///{d}/b.db", f"w{workers}", resume=False)
            t0 = time.perf_counter()
            run_search(space, ev, study, a.trials, batch=a.batch, workers=workers)
            times[workers] = time.perf_counter() - t0
            print(
                f"{a.trials} trials, {workers} worker(s){' (Ray)' if workers > 1 else ''}: "
                f"{times[workers]:.1f} s = {a.trials / times[workers]:.1f} trials/s"
                f"{'' if a.trials != 1000 else ('; goal <= 120 s: ' + ('met' if times[workers] <= 120 else 'NOT met'))}"
            )
    print(f"Ray speed-up on 2 workers: {times[1] / times[2]:.2f}x (Ray start-up included)")


if __name__ == "__main__":
    main()
