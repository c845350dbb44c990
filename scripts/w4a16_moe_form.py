"""Weight-only INT4 (W4A16) routed experts on SM100-family chips: the dense BF16 rule against the measured kernels (kimiw4a16_41).

specs/w4a16_moe.py (shipped on, derived sets included, round 41) gives B200, B300, GB200 and GB300 (with ``W4A16_DERIVED`` also the sets derived from
them: Jalapeño, Vera Rubin) their own measured W4A16 MoE form (data/w4a16_moe_forms.toml; SGLang's trtllm-gen MXINT4
kernel by default) for Kimi K2.5's INT4 experts in place of the dense BF16 GEMM rule. This script prints:

- ``--form``: per system, the terms of both (peak fraction, half rows, HBM fraction, the effective TFLOP/s pf·P of the
  BF16 peak P, the compute / weight-stream time of one INT4 expert weight at a few rows per expert) and the
  ``moe.experts`` time of a Kimi K2.5 INT4 DEP8 decode step (8,192 context) at a few batches, off and on;
- ``--b200``: the one Blackwell chip with end-to-end W4A16 rows (aiconfigurator ``b200 vllm 0.15.1`` Kimi K2.5 INT4,
  vLLM's Marlin MoE priced by B200's own Marlin form, cost/moe_backend.KernelMoePricer) re-priced with the dense rule
  instead (the path every Blackwell set takes in sweeps today): signed errors by split and metric;
- ``--mode MODE --cli ARGS...`` (MODE off, gpu: the measured chips, derived: and the sets derived from them; ``--kernel``
  mxint4 or marlin): any
  ``jalapeno`` command with the switch so set (``--cli compare -m kimi-k2.5 --json``: the headline of docs/model.md
  §11.3; ``--cli validate --held-out --json -o X.csv``: which rows move).

Usage: PYTHONPATH=src python scripts/w4a16_moe_form.py [--form] [--b200] [--mode off|gpu|derived --cli ARGS...]
Figures: docs/model.md §11.3 "W4A16 experts on SM100-family chips".
"""

from __future__ import annotations

import argparse
import statistics

import jalapeno.specs.w4a16_moe as w4
from jalapeno.cli.common import resolve_precision
from jalapeno.cost.batch import Batch
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.specs.catalog import load_model

#: bytes per INT4 g32 weight element (4 bits + one 16-bit scale per 32 weights)
INT4_BYTES = 0.5625
ROWS = (1, 2, 4, 16, 64, 256)
BATCHES = (8, 64, 512, 4096)
SYSTEMS = ("b200", "b300", "gb200-nvl72", "gb300-nvl72", "jalapeno")


def set_mode(mode: str) -> None:
    """Switch specs/w4a16_moe.py: ``off``; ``gpu`` (the chips with W4A16 tables); ``derived`` (and derived sets)."""
    w4.W4A16_FORM_ON = mode in ("gpu", "derived")
    w4.W4A16_DERIVED = mode == "derived"


def terms(pricer, entry: str) -> tuple[float, float, float, list[float]]:
    """(pf, half rows, eta_m, compute/stream ratios at :data:`ROWS`) of ``pricer``'s ``moe`` entry ``entry``."""
    e, chip = pricer.efficiency, pricer.system.chip
    pf, half, em = e.moe_peak(entry), e.moe_half(entry), e.moe_hbm(entry)
    p, w = chip.peak("bf16"), chip.hbm_bandwidth_bytes_per_s
    return pf, half, em, [(2.0 * (m + half) / (p * pf)) / (INT4_BYTES / (w * em)) for m in ROWS]


def experts_us(pricer, model, prec, batch: int, dp: int = 8) -> tuple[float, str]:
    """moe.experts time (µs) and bound of a DEP``dp`` decode step of ``batch`` sequences at 8,192 context."""
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=1, dp=dp, ep=dp), model),
        prec,
        Batch.make(decode_seqs=batch, decode_ctx=8192),
    )
    i = list(sc.ops.name).index("moe.experts")
    t = sc.times
    return float(t.time_s[i, 0]) * 1e6, "compute" if t.compute_s[i, 0] >= t.memory_s[i, 0] else "hbm"


def show_form() -> None:
    """Print the terms and the step's experts time per system, switch off and on (derived sets included)."""
    model = load_model("kimi-k2.5")
    prec = resolve_precision(model, "int4", None, None, False)
    print("system       mode  entry  pf     half   eta_m  pf*P TF/s  " + "  ".join(f"c/h@{m}" for m in ROWS))
    for name in SYSTEMS:
        for mode in ("off", "derived"):
            set_mode(mode)
            pr = load_pricer(name)
            entry = pr.efficiency.moe_entry("bf16", w4.w4a16_key("int4", pr.efficiency) or "bf16")
            pf, half, em, r = terms(pr, entry)
            print(
                f"{name:12s} {mode:5s} {entry:6s} {pf:.3f} {half:6.1f} {em:.3f} "
                f"{pf * pr.system.chip.peak('bf16') / 1e12:10.0f}  " + "  ".join(f"{x:5.2f}" for x in r)
            )
    print("\nKimi K2.5 INT4 decode, DEP8, context 8,192: moe.experts µs (bound), off -> on")
    for name in SYSTEMS:
        cells = []
        for b in BATCHES:
            got = []
            for mode in ("off", "derived"):
                set_mode(mode)
                got.append(experts_us(load_pricer(name), model, prec, b))
            cells.append(f"b{b}: {got[0][0]:7.0f} ({got[0][1][0]}) -> {got[1][0]:7.0f} ({got[1][1][0]})")
        print(f"  {name:12s} " + "; ".join(cells))
    set_mode("off")


def b200_rule_check() -> None:
    """B200's Kimi INT4 aiconfigurator rows with its own Marlin form (shipped) and with the dense BF16 rule."""
    import jalapeno.cost.pool_backends as cp  # with_pool_backends calls the with_moe_backend of its own module
    from jalapeno.fit.validation_run import run_validation

    def rows(res) -> dict:
        return {
            (r["id"], r["metric"]): r
            for r in res["rows"].to_dict("records")
            if r["model"] == "kimi-k2.5" and r["precision"] == "int4" and r.get("predicted") is not None
        }

    shipped = rows(run_validation(systems=("b200",)))
    keep = cp.with_moe_backend
    cp.with_moe_backend = lambda pricer, backend, model, layout: (
        pricer if backend == "marlin" else keep(pricer, backend, model, layout)
    )
    try:
        rule = rows(run_validation(systems=("b200",)))
    finally:
        cp.with_moe_backend = keep
    print("B200 Kimi K2.5 INT4 (aiconfigurator vllm 0.15.1): median signed / median |error| (%), n")
    print("split     metric          Marlin form (own, shipped)   dense BF16 rule")
    for split in ("fit", "held_out"):
        for metric in ("interactivity", "tpot_s", "ttft_s", "throughput_per_chip"):
            ks = [k for k, r in shipped.items() if r["split"] == split and r["metric"] == metric and k in rule]
            if not ks:
                continue
            a = [100 * shipped[k]["error"] for k in ks]
            b = [100 * rule[k]["error"] for k in ks]
            print(
                f"{split:9s} {metric:15s} {statistics.median(a):+6.1f} / {statistics.median(map(abs, a)):5.1f} "
                f"(n {len(ks)})       {statistics.median(b):+6.1f} / {statistics.median(map(abs, b)):5.1f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--form", action="store_true")
    ap.add_argument("--b200", action="store_true")
    ap.add_argument("--mode", choices=("off", "gpu", "derived"), default="off")
    ap.add_argument(
        "--kernel", choices=("mxint4", "marlin"), default="mxint4", help="the form --mode gives (W4A16_KERNEL)"
    )
    ap.add_argument("--cli", nargs=argparse.REMAINDER, help="a jalapeno command line, run with --mode's switch")
    a = ap.parse_args()
    if a.form:
        show_form()
    if a.b200:
        b200_rule_check()
    if a.cli:
        from jalapeno.cli.app import main as cli

        set_mode(a.mode)
        w4.W4A16_KERNEL = a.kernel
        cli(a.cli)


if __name__ == "__main__":
    main()
