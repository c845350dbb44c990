"""Does a run's TPOT grow as fast as reading the experts uniform routing adds? A model-free check (issue 18).

docs/gap_aic_itl.md (Kimi section) and docs/model.md §12 leave one lead for the Kimi K2.5 NVFP4 TPOT excess and
the DeepSeek-family mid-load hump: the routed experts a decode step touches. This script tests the uniform-routing
assumption (cost/moe.py) against the measured rows alone, without the cost model. For every run (source, system,
model, release, precision, mode, deployment, ISL/OSL) with decode rows at two or more loads, between its lowest
and highest decode batch B_lo < B_hi (decoding requests per decode instance, by Little's law on the measured TTFT
and TPOT: fit/aic_bounds._decoding_batch, as rules D and E count them):

    ΔT   = TPOT(B_hi) − TPOT(B_lo)                                            measured, s
    ΔF_σ = [X · (f_σ(B_hi) − f_σ(B_lo)) + (B_hi − B_lo) · KV] / (n · BW)       s

X: the routed-expert bytes of every MoE layer once (the checkpoint's format, fit/aic_bounds.decode_floor's
sum); f_σ: the fraction of a layer's experts B tokens touch (cost/moe.touched_fraction; σ = 0 uniform top-k,
σ = 1.03 the natural-text popularity measured on DeepSeek-R1, specs/routing.py); KV: one sequence's cache at
the shortest prompt of the run's length range (INFERENCEX_RANGE_RATIO · ISL); n · BW: the instance's chips at
datasheet HBM bandwidth. ΔF_σ is the time the extra expert and KV reads take when every chip streams at its
peak, the least a step of B_hi can add over one of B_lo if it reads them: ratio_σ = ΔT / ΔF_σ.

Reading it. A difference of floors is not a floor of differences: a B_lo step whose expert kernels wait on their
latency rather than on HBM can absorb part of the extra reads, so a ratio below 1 is evidence against the
routing, not a proof; a ratio well below 1 (the run added less time than streaming the extra experts at full
peak would take) cannot be met by a kernel that reads them. The roofline's side of the same test: it streams routed
experts at η = the system's calibrated ``moe[fmt]`` HBM fraction (specs/efficiency.py; fmt the experts' compute
format), so under uniform routing its ΔT is at least ΔF_0 / η; a run whose ratio_0 is below 1/η grows more
slowly than the model can, whatever its fixed costs (column ``below 1/η``). Runs with MTP are left out (a step
emits more than one token), as are dense models and rows without TTFT.

Nothing is fitted or written; the cost model is not consulted. Reads the shipped InferenceX points and
aiconfigurator-core's silicon_sample.csv (pip install -e ".[calibrate]").
Run: python scripts/decode_slope_check.py [--model NAME ...] [--min-span B]   (about 20 s)
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

from jalapeno.cost.moe import touched_fraction
from jalapeno.specs.routing import MEASURED_ROUTING_SIGMA


def expert_read_growth(
    expert_bytes: float,
    kv_bytes_per_seq: float,
    batch_lo: float,
    batch_hi: float,
    num_experts: int,
    top_k: int,
    chips: int,
    hbm_bytes_per_s: float,
    sigma: float = 0.0,
) -> float:
    """ΔF_σ of the module docstring, s: the extra expert and KV reads of a step of ``batch_hi`` decoding
    sequences over one of ``batch_lo``, streamed by ``chips`` chips at ``hbm_bytes_per_s`` each.

    >>> round(expert_read_growth(8e9, 1e6, 1, 2, 4, 2, 2, 1e12) * 1e3, 6)  # E 4, k 2: f = 0.5 -> 0.75
    1.0005
    """
    f_lo, f_hi = (float(touched_fraction(b, num_experts, top_k, sigma)) for b in (batch_lo, batch_hi))
    extra = expert_bytes * (f_hi - f_lo) + (batch_hi - batch_lo) * kv_bytes_per_seq
    return extra / (chips * hbm_bytes_per_s)


def run_key(p) -> tuple:
    """The rows of one run: source, system, model, release, precision, mode, decode layout and instances, lengths."""
    d = p.deployment
    return (
        p.source,
        p.system,
        p.model,
        p.framework,
        p.precision,
        p.mode,
        str(d.decode.layout),
        int(getattr(d.decode, "workers", 1) or 1),
        p.isl,
        p.osl,
    )


def _rows(models: tuple[str, ...]):
    """(point, batch, expert bytes, KV bytes per sequence, chips, chip, model, η) of every matched non-MTP MoE
    decode row (η: the system's calibrated routed-expert HBM fraction at the experts' compute format)."""
    from jalapeno.deploy.layout import Layout
    from jalapeno.deploy.memory_fit import (
        ROUTER_BYTES,
        kv_bytes_per_seq_per_chip,
        weight_bytes_per_chip,
        weight_elems_per_chip,
    )
    from jalapeno.fit.aic_bounds import _catalogued, _decoding_batch, _floor_catalog
    from jalapeno.fit.validate import load_aiconfigurator
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS
    from jalapeno.specs.catalog import load_efficiency
    from jalapeno.specs.workload import INFERENCEX_RANGE_RATIO

    pts = load_inferencex(DEFAULT_POINTS)[0] + load_aiconfigurator()[0]
    one = Layout(tp=1, dp=1, ep=1)
    out = []
    for p in pts:
        if p.mapping != "matched" or (models and p.model not in models):
            continue
        got = _catalogued(p, _floor_catalog)
        if got is None or got[0].moe is None or getattr(p.deployment, "mtp", None) is not None:
            continue
        model, chip, pool, inst = got
        prec = p.deployment.precision
        elems = weight_elems_per_chip(model, one)
        total = weight_bytes_per_chip(model, one, prec)
        experts = total - sum(
            n * (ROUTER_BYTES if k == "router" else prec.weight_bytes(k))
            for k, n in elems.items()
            if k != "routed_experts"
        )
        kv = float(kv_bytes_per_seq_per_chip(model, one, prec, INFERENCEX_RANGE_RATIO * p.isl))
        eta = load_efficiency(p.system).moe_hbm(prec.modules["routed_experts"].compute)
        out.append((p, _decoding_batch(p, inst), experts, kv, pool.layout.chips, chip, model, eta))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", nargs="*", default=[], help="catalog models (default: every MoE model with rows)")
    ap.add_argument("--min-span", type=float, default=2.0, help="least B_hi / B_lo of a run shown (default 2)")
    a = ap.parse_args()
    runs = defaultdict(list)
    for r in _rows(tuple(a.model)):
        runs[run_key(r[0])].append(r)
    print(f"σ = 0 (uniform) and σ = {MEASURED_ROUTING_SIGMA} (natural text, specs/routing.py); ms per step")
    print(
        "| source | system | model | release | mode | decode layout ×inst | ISL/OSL | B_lo → B_hi | ΔT | "
        "ΔF uniform | ratio uniform | 1/η | below 1/η | ΔF σ | ratio σ |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary = defaultdict(list)
    for key in sorted(runs):
        rows = sorted(runs[key], key=lambda r: r[1])
        lo, hi = rows[0], rows[-1]
        if hi[1] < a.min_span * lo[1]:
            continue
        p, _, x, kv, n, chip, model, eta = hi
        dt = hi[0].measured["tpot_s"] - lo[0].measured["tpot_s"]
        f0, fs = (
            expert_read_growth(
                x, kv, lo[1], hi[1], model.moe.num_experts, model.moe.top_k, n, chip.hbm_bandwidth_bytes_per_s, s
            )
            for s in (0.0, MEASURED_ROUTING_SIGMA)
        )
        r0, rs = dt / f0, dt / fs
        summary[(p.model, p.framework.split()[0], p.system)].append((r0, r0 < 1 / eta))
        src, system, mdl, fw, _, mode, lay, inst, isl, osl = key
        print(
            f"| {src} | {system} | {mdl} | {fw} | {mode} | {lay} ×{inst} | {isl}/{osl} | {lo[1]:.1f} → {hi[1]:.1f} | "
            f"{dt * 1e3:.2f} | {f0 * 1e3:.2f} | {r0:.2f} | {1 / eta:.2f} | {'yes' if r0 < 1 / eta else ''} | "
            f"{fs * 1e3:.2f} | {rs:.2f} |"
        )
    print("\nratio uniform per (model, engine, system): median, min, runs below 1/η of runs")
    for k in sorted(summary):
        v = [r for r, _ in summary[k]]
        below = sum(b for _, b in summary[k])
        print(f"  {k[0]:16s} {k[1]:12s} {k[2]:12s} {np.median(v):5.2f} {min(v):5.2f}  {below} of {len(v)}")


if __name__ == "__main__":
    main()
