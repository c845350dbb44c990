"""Benchmark: the sweep with ``--chip-model sliced`` against the flat sweep (issue 13: within 3x).

The default comparison (DeepSeek-R1 8k1k, fp8, Jalapeño / GB200 / GB300 / Vera Rubin), swept with
the flat roofline pricer and with the sliced pricer under each placement; prints the best of three
wall times and the ratio to the flat sweep.
Run: python benchmarks/bench_sliced.py
"""

from __future__ import annotations

import time


def main(repeats: int = 3) -> None:
    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.cost.sliced import chip_model_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    m, p, wl = load_model("deepseek-r1"), get_precision("fp8"), get_workload("8k1k")
    names = ("jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72")

    def timed(chip_model: str, placement: str = "") -> float:
        systems = [chip_model_pricer(load_pricer(n), chip_model, placement) for n in names]
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            compare_systems(m, systems, wl, p, baseline="gb300-nvl72")
            best = min(best, time.perf_counter() - t0)
        return best

    flat = timed("flat")
    print(f"flat sweep: {flat:.3f} s (best of {repeats})")
    for placement in ("", "local_first", "striped", "best"):
        t = timed("sliced", placement)
        print(
            f"sliced sweep, placement {placement or 'chip default'}: {t:.3f} s = {t / flat:.2f}x flat "
            f"(goal <= 3x: {'met' if t <= 3 * flat else 'NOT met'})"
        )


if __name__ == "__main__":
    main()
