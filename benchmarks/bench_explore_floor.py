"""Benchmark: the explorer's floor metric read at a point or interpolated (round 42, kimi42): continuity and cost.

The space of examples/explore_700w.toml with the fixed costs at their compiled ends (0.25 µs per kernel, 50 µs per
step) and one parameter swept finely: the FP8 peak (BF16 = FP8 / 2, FP4 at Jalapeño's 13.4 / 3.4), 3,000-6,000
TFLOP/s in steps of 100. For each rule of ``[sweep] at_floor`` (analysis/explore.throughput_at_floor) it prints the
Kimi K2.5 8K/1K tok/s/chip at >= 100 tok/s/user per step, the largest relative jump between neighbouring steps
(the coarse decode-batch grid's step: docs/explore.md §3), and the wall time per design evaluation (both cases),
so the interpolated rule is shown to keep the explorer as fast.

Run: PYTHONPATH=src python benchmarks/bench_explore_floor.py [--step 100]
"""

from __future__ import annotations

import argparse
import time


def space_dict(rule: str) -> dict:
    """examples/explore_700w.toml's objective and cases, the FP8 peak its only parameter, ``at_floor = rule``."""
    return {
        "name": f"floor-{rule}",
        "base": "jalapeno",
        "seed": 1,
        "trials": 1,
        "objective": {"metrics": ["tok_s_per_kw"], "min_interactivity": 100, "power": "chip"},
        "cases": [{"model": "deepseek-r1", "workload": "8k1k"}, {"model": "kimi-k2.5", "workload": "8k1k"}],
        "params": {"chip.peak_dense_tflops.fp8": {"low": 1500, "high": 6000, "step": 100}},
        "derived": {
            "chip.peak_dense_tflops.fp4": "{chip.peak_dense_tflops.fp8} * 13.4 / 3.4",
            "chip.peak_dense_tflops.bf16": "{chip.peak_dense_tflops.fp8} / 2",
            "efficiency.kernel_launch_s": "0.00000025",
            "efficiency.step_overhead_s": "0.00005",
        },
        "sweep": {"at_floor": rule},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=100)
    a = ap.parse_args()

    from jalapeno.analysis.explore import make_evaluator
    from jalapeno.specs.design_space import design_space_from_dict

    peaks = list(range(3000, 6001, a.step))
    for rule in ("point", "interpolated"):
        ev = make_evaluator(design_space_from_dict(space_dict(rule)))
        kimi, t0 = [], time.perf_counter()
        for pf in peaks:
            r = ev.evaluate({"chip.peak_dense_tflops.fp8": pf})
            kimi.append(r.cases[1].metrics.get("tok_s_per_chip", float("nan")) if r.cases else float("nan"))
        dt = (time.perf_counter() - t0) / len(peaks)
        jumps = [b / x - 1 for x, b in zip(kimi, kimi[1:], strict=False)]
        worst = max(range(len(jumps)), key=lambda i: abs(jumps[i]))
        print(
            f"{rule:12s}: Kimi tok/s/chip at >= 100 tok/s/user, FP8 {peaks[0]}-{peaks[-1]} TFLOP/s: "
            + ", ".join(f"{v:,.0f}" for v in kimi)
        )
        print(
            f"{'':12s}  largest step {100 * jumps[worst]:+.1f}% ({peaks[worst]} -> {peaks[worst + 1]} TFLOP/s); "
            f"{dt * 1e3:.0f} ms per design (2 cases)"
        )


if __name__ == "__main__":
    main()
