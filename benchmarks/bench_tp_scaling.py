"""Small-batch tensor-parallel scaling: QwQ-32B (BF16) on A100 80GB SXM, static batch, 1 input /
200 output tokens, TP2 → TP8 decode speed-up at batch 1 and 16.

Published measurement (held out; never fitted): speed-up 1.74x at batch 1 and 1.44x at batch 16
(issue 18, part 4). Run: python benchmarks/bench_tp_scaling.py [SYSTEM_TOML MODEL_JSON]
Prints, per batch, the E2E latency at TP2 and TP8, the speed-up, and where the TP8 step's time
goes (weights/compute, kernel fixed costs, all-reduces).
"""

from __future__ import annotations

import sys

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload

MEASURED = {1: 1.74, 16: 1.44}


def main(system: str = "a100-sxm", model: str = "qwq-32b") -> None:
    m, p = load_model(model), load_pricer(system)
    wl = Workload("1/200", 1, 200, 1.0)
    e2e = {}
    for tp in (2, 8):
        dep = Deployment(get_precision("bf16"), Pool(Layout(tp=tp)))
        r = serve_at_concurrency(m, p, dep, wl, [1.0, 16.0])
        e2e[tp] = {1: float(r.tpot_s[0]), 16: float(r.tpot_s[1])}
    print(f"{system} / {model}: TPOT ms (TP2, TP8), speed-up model vs measured")
    for b in (1, 16):
        s = e2e[2][b] / e2e[8][b]
        print(f"  batch {b:2d}: {e2e[2][b] * 1e3:6.2f} {e2e[8][b] * 1e3:6.2f}  model {s:.2f}x  measured "
              f"{MEASURED[b]:.2f}x  error {s / MEASURED[b] - 1:+.0%}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
