"""Small-batch tensor-parallel scaling: QwQ-32B (BF16) on A100 80GB SXM, static batch, 1 input /
200 output tokens, TP2 → TP8 decode speed-up at batch 1 and 16.

Published measurement (held out; never fitted): speed-up 1.74x at batch 1 and 1.44x at batch 16
(issue 18, part 4). Run: python benchmarks/bench_tp_scaling.py [SYSTEM_TOML MODEL_JSON]
Prints, per serving-stack profile (the default one, and the vLLM, TRT-LLM and SGLang profiles
whose per-TP-rank step cost ``tp_rank_step_s`` is fitted on other end-to-end data), the TPOT at TP2
and TP8, the speed-up and its error against the measurement. Then (with the ``[calibrate]`` extra)
the kernel-level decomposition of fit/tp_scaling.py: each op group per step from vLLM 0.14.0's own
A100 kernel tables beside the model's (vLLM profile), the speed-up the tables allow, and the
non-kernel time TP8 would need to match the measurement. Last, a second held-out check on a
graph-captured engine: Qwen3-32B (BF16) on H100 with vLLM 0.12.0, aiconfigurator's end-to-end rows
at TP2/TP4/TP8 (fit/tp_scaling.tp_sweep_rows; no fit reads them), measured against model speed-up.
"""

from __future__ import annotations

import sys

import numpy as np

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload

MEASURED = {1: 1.74, 16: 1.44}
STACKS = ("default", "vllm", "trtllm", "sglang")
#: KV length over the 200 decode steps after a 1-token prompt
CTX = np.arange(1.0, 201.0)


def main(system: str = "a100-sxm", model: str = "qwq-32b") -> None:
    m = load_model(model)
    wl = Workload("1/200", 1, 200, 1.0)
    print(f"{system} / {model}: TPOT ms (TP2, TP8), speed-up model vs measured")
    for stack in STACKS:
        p = load_pricer(system, stack=stack)
        tpot = {
            tp: serve_at_concurrency(
                m, p, Deployment(get_precision("bf16"), Pool(Layout(tp=tp))), wl, [1.0, 16.0]
            ).tpot_s
            for tp in (2, 8)
        }
        print(f" stack {stack} (per TP rank per step {p.efficiency.tp_rank_step_s * 1e3:.3f} ms)")
        for i, b in enumerate((1, 16)):
            s = tpot[2][i] / tpot[8][i]
            print(
                f"  batch {b:2d}: {tpot[2][i] * 1e3:6.2f} {tpot[8][i] * 1e3:6.2f}  model {s:.2f}x  measured "
                f"{MEASURED[b]:.2f}x  error {s / MEASURED[b] - 1:+.0%}"
            )
    decomposition(m, system)
    h100_sweep()


def h100_sweep() -> None:
    """Qwen3-32B on H100, vLLM 0.12.0: TP2 -> TP8 speed-up per workload and concurrency."""
    from jalapeno.errors import SpecError
    from jalapeno.fit.tp_scaling import tp_sweep_predictions, tp_sweep_rows

    try:
        rows = tp_sweep_rows()
    except SpecError as e:
        print(f"(H100 sweep skipped: {e})")
        return
    d = tp_sweep_predictions(load_model("qwen3-32b"), load_pricer("h100", stack="vllm"), rows)
    t = d.pivot_table(index=["isl", "osl", "concurrency"], columns="tp", values=["tpot_s", "pred_tpot_s"])
    print(
        "\nh100 / qwen3-32b (BF16), vLLM 0.12.0 (aiconfigurator rows, held out): TP2 -> TP8 speed-up, "
        "TPOT error TP2 / TP8"
    )
    errs = []
    for (isl, osl, c), r in t.iterrows():
        ms, ps = r["tpot_s"][2] / r["tpot_s"][8], r["pred_tpot_s"][2] / r["pred_tpot_s"][8]
        errs.append(ps / ms - 1)
        print(
            f"  {isl:4d}/{osl:<4d} c{int(c):<3d}  measured {ms:.2f}x  model {ps:.2f}x  error {ps / ms - 1:+.0%}   "
            f"TPOT {r['pred_tpot_s'][2] / r['tpot_s'][2] - 1:+.0%} / {r['pred_tpot_s'][8] / r['tpot_s'][8] - 1:+.0%}"
        )
    e = np.array(errs)
    print(
        f"  speed-up error: median {np.median(e):+.1%}, median |error| {np.median(np.abs(e)):.1%} over {e.size} points"
    )


def decomposition(m, system: str) -> None:
    """Per op group and step: the engine's measured kernels against the model (vLLM profile)."""
    from jalapeno.errors import SpecError
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS
    from jalapeno.fit.tp_scaling import GROUPS, load_engine_kernels, tp_decomposition

    try:
        k = load_engine_kernels(AIC_SYSTEM_DIRS.get(system, system.replace("-", "_")), "vllm")
    except SpecError as e:
        print(f"(kernel decomposition skipped: {e})")
        return
    d = tp_decomposition(m, load_pricer(system, stack="vllm"), k, CTX)
    print(
        f"\nkernel decomposition, ms per step: measured kernels ({k.label}; standalone launches, an upper"
        "\nbound under CUDA graphs) | model (vllm profile)"
    )
    for b in (1, 16):
        tab, mod = {tp: d[b, tp]["kernels"] for tp in (2, 8)}, {tp: d[b, tp]["model"] for tp in (2, 8)}
        print(f" batch {b:2d}        TP2 kernels  model   TP8 kernels  model")
        for g in GROUPS:
            print(
                f"  {g:<12} {tab[2][g] * 1e3:9.2f} {mod[2][g] * 1e3:7.2f} {tab[8][g] * 1e3:11.2f} {mod[8][g] * 1e3:7.2f}"
            )
        print(f"  {'other (model)':<12} {'':9} {mod[2]['other'] * 1e3:7.2f} {'':11} {mod[8]['other'] * 1e3:7.2f}")
        step = {tp: sum(tab[tp].values()) + mod[tp]["other"] for tp in (2, 8)}
        mstep = {tp: sum(mod[tp].values()) for tp in (2, 8)}
        need = step[2] / MEASURED[b] - step[8]
        print(
            f"  step         {step[2] * 1e3:9.2f} {mstep[2] * 1e3:7.2f} {step[8] * 1e3:11.2f} {mstep[8] * 1e3:7.2f}"
            f"   speed-up kernels {sum(tab[2].values()) / sum(tab[8].values()):.2f}x, kernels + model's other "
            f"{step[2] / step[8]:.2f}x, model {mstep[2] / mstep[8]:.2f}x, measured {MEASURED[b]:.2f}x"
        )
        print(f"  TP8 needs {need * 1e3:+.2f} ms per step beyond them ({need / m.num_layers * 1e6:+.0f} us per layer)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
