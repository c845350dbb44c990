"""Which terms make a few-row routed-expert step compute-bound, per system (jalmoe40, round 40).

The routed experts (op kind ``moe``) are priced by the row-count rule of cost/roofline.py: compute time
F / (P · pf · m / (m + half)), i.e. the work of m + half rows per expert at pf of the format's peak P, beside
the weight stream bytes / (W · eta_m). Where an efficiency set gives the ``moe`` entry no peak_fraction or
half_rows (every set in the catalog), both come from its GEMM entry (specs/efficiency.Efficiency.moe_peak and
moe_half; FP8 experts read gemm[fp8_block]): dense-GEMM kernel fits, not grouped-GEMM ones. A derived chip
(Jalapeño: data/calibration/jalapeno.toml, ``derived_from = "gb300-nvl72"``) carries GB300's values.

For one weight element the rule costs 2 · (m + half) / (P · pf) of compute and b / (W · eta_m) of streaming
(b bytes per weight), so the experts stream weights (HBM-bound) below the ridge

    m* = b · P · pf / (2 · W · eta_m) − half        (rule)
    m0 = b · P · pf / (2 · W · eta_m)               (no row penalty: max(HBM, compute at full tiles))

rows per expert. This script prints, for each system and MoE compute format, the parameters and where they
come from, m* and m0, the compute/HBM time ratio of one expert at a few row counts, and ``jalapeno step``'s
moe.experts time at a given decode batch with the calibrated set and with ``moe[f].half_rows = 0`` (the
sensitivity ``compare``/``frontier`` take as ``--set NAME:efficiency.moe.<f>.half_rows=0``).

Usage: PYTHONPATH=src python scripts/moe_row_rule.py [--systems jalapeno,gb300-nvl72,gb200-nvl72,b200]
[--batch 64] [--model deepseek-r1]. Figures: docs/model.md §11 "The borrowed row-count rule on a derived chip".
"""

from __future__ import annotations

import argparse

from jalapeno.cost.pricer import load_pricer
from jalapeno.cli.common import resolve_precision
from jalapeno.cost.batch import Batch
from jalapeno.cost.step import step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.specs.catalog import load_model
from jalapeno.specs.kernel_lookup import MOE_GEMM_KEY

#: bytes per weight element of the experts each compute format streams in the headline runs: FP8 block-scaled
#: (1 B + one FP32 scale per 128x128 block, ~1.0), NVFP4/MXFP4 (4 bits + an 8-bit scale per 16: 0.5625),
#: INT4 W4A16 computed in BF16 (Kimi K2.5: 4 bits + a BF16 scale per 32: 0.5625)
WEIGHT_BYTES = {"fp8": 1.0, "fp4": 0.5625, "bf16": 0.5625}
ROWS = (1, 2, 4, 16, 64, 128)


def rule_terms(pricer, fmt: str) -> dict:
    """The MoE rule's terms of ``pricer``'s set in ``fmt`` and where each comes from (moe entry or GEMM fallback)."""
    e, chip = pricer.efficiency, pricer.system.chip
    own = e.moe.get(fmt)
    src_pf = "moe" if own is not None and own.peak_fraction is not None else f"gemm.{MOE_GEMM_KEY.get(fmt, fmt)}"
    src_h = "moe" if own is not None and own.half_rows is not None else f"gemm.{MOE_GEMM_KEY.get(fmt, fmt)}"
    pf, half, em = e.moe_peak(fmt), e.moe_half(fmt), e.moe_hbm(fmt)
    p, w, b = chip.peak(fmt), chip.hbm_bandwidth_bytes_per_s, WEIGHT_BYTES[fmt]
    m0 = b * p * pf / (2.0 * w * em)
    ratio = {m: (2.0 * (m + half) / (p * pf)) / (b / (w * em)) for m in ROWS}
    return {
        "pf": pf,
        "half": half,
        "eta_m": em,
        "src_pf": src_pf,
        "src_half": src_h,
        "P_tf": p / 1e12,
        "W_tb": w / 1e12,
        "m0": m0,
        "m_star": m0 - half,
        "ratio": ratio,
    }


def experts_us(pricer, model, prec, batch: int, dp: int) -> tuple[float, str]:
    """moe.experts time (µs) and its bound label of a DEP``dp`` decode step of ``batch`` sequences at 8,192 context."""
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=1, dp=dp, ep=dp), model),
        prec,
        Batch.make(decode_seqs=batch, decode_ctx=8192),
    )
    i = list(sc.ops.name).index("moe.experts")
    t = sc.times
    bound = "compute" if t.compute_s[i, 0] >= t.memory_s[i, 0] else "hbm"
    return float(t.time_s[i, 0]) * 1e6, bound


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default="jalapeno,gb300-nvl72,gb200-nvl72,b200")
    ap.add_argument("--model", default="deepseek-r1")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--dp", type=int, default=8)
    a = ap.parse_args()
    model = load_model(a.model)
    print(
        "system       fmt  pf     (from)        half   (from)        eta_m  P TF/s  W TB/s  m0 rows  m* rows  "
        + "  ".join(f"c/h@{m}" for m in ROWS)
    )
    for name in a.systems.split(","):
        pr = load_pricer(name)
        for fmt in ("fp8", "fp4", "bf16"):
            if fmt not in pr.system.chip.formats:
                continue
            r = rule_terms(pr, fmt)
            print(
                f"{name:12s} {fmt:4s} {r['pf']:.3f} {r['src_pf']:13s} {r['half']:6.1f} {r['src_half']:13s} "
                f"{r['eta_m']:.3f} {r['P_tf']:7.0f} {r['W_tb']:6.1f} {r['m0']:8.1f} {r['m_star']:8.1f}  "
                + "  ".join(f"{r['ratio'][m]:5.2f}" for m in ROWS)
            )
    print(f"\n{a.model} decode, DEP{a.dp}, batch {a.batch} (whole instance), context 8,192: moe.experts time, µs")
    for pname in ("fp8", "fp4"):
        for name in a.systems.split(","):
            pr = load_pricer(name)
            try:
                prec = resolve_precision(model, pname if pname != "fp8" else None, None, None, False)
            except Exception as exc:  # a chip without the format: say so, go on
                print(f"  {name:12s} {pname}: {exc}")
                continue
            f = prec.modules["routed_experts"].compute
            base, bb = experts_us(pr, model, prec, a.batch, a.dp)
            flat = pr.with_efficiency(pr.efficiency.with_kernel("moe", f, half_rows=0.0))
            h0, hb = experts_us(flat, model, prec, a.batch, a.dp)
            print(
                f"  {name:12s} precision {prec.name:5s} experts {f:4s}: calibrated {base:8.1f} ({bb}); "
                f"moe.{f}.half_rows=0 {h0:8.1f} ({hb}); ratio {base / h0:.2f}"
            )


if __name__ == "__main__":
    main()
