"""Small-batch tensor-parallel scaling: QwQ-32B (BF16) on A100 80GB SXM, static batch, 1 input /
200 output tokens, TP2 → TP8 decode speed-up at batch 1 and 16.

Published measurement (held out; never fitted): speed-up 1.74x at batch 1 and 1.44x at batch 16
(issue 18, part 4). Run: python benchmarks/bench_tp_scaling.py [SYSTEM_TOML MODEL_JSON]
Prints, per serving-stack profile (the default one, and the vLLM, TRT-LLM and SGLang profiles
whose per-TP-rank step cost ``tp_rank_step_s`` is fitted on other end-to-end data), the TPOT at TP2
and TP8, the speed-up and its error against the measurement.
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
STACKS = ("default", "vllm", "trtllm", "sglang")


def main(system: str = "a100-sxm", model: str = "qwq-32b") -> None:
    m = load_model(model)
    wl = Workload("1/200", 1, 200, 1.0)
    print(f"{system} / {model}: TPOT ms (TP2, TP8), speed-up model vs measured")
    for stack in STACKS:
        p = load_pricer(system, stack=stack)
        tpot = {tp: serve_at_concurrency(m, p, Deployment(get_precision("bf16"), Pool(Layout(tp=tp))), wl,
                                         [1.0, 16.0]).tpot_s for tp in (2, 8)}
        print(f" stack {stack} (per TP rank per step {p.efficiency.tp_rank_step_s * 1e3:.3f} ms)")
        for i, b in enumerate((1, 16)):
            s = tpot[2][i] / tpot[8][i]
            print(f"  batch {b:2d}: {tpot[2][i] * 1e3:6.2f} {tpot[8][i] * 1e3:6.2f}  model {s:.2f}x  measured "
                  f"{MEASURED[b]:.2f}x  error {s / MEASURED[b] - 1:+.0%}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
