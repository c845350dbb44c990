"""GB200/GB300 SGLang DEP decode: can one expert-routing skew, set by what physically sets it, price the DEP32
rows without breaking DEP8 and InferenceX? (docs/gap_aic_itl.md, "round 27, gbitl27"). Nothing here is shipped.

Part 1, the sampling skew the model already prices. A decode step routes B = b·dp tokens (one per decoding
sequence), k = 8 picks each, over E = 256 experts, E/ep per rank. With uniform routing the busiest of ep ranks
carries A/ep + sqrt(A/ep·(1 − 1/ep))·sqrt(2 ln ep) of the A = B·k assignments (cost/moe.busiest_rank_assignments,
``Efficiency.moe_load_skew`` = 1 on every shipped set; cost/ops.py prices the routed experts and the DeepEP receive
at that load). Printed: its excess over the mean rank (relative, and in assignments per step) and its derivative
in assignments per added sequence per rank. Heterogeneous per-sequence routing preferences cannot add to it: in a
decode step each sequence sends one token, so a rank's count is a sum of independent Bernoulli picks whose
variance Σ p_i(1 − p_i) is at most the binomial N·p̄(1 − p̄) at the same mean (p̄ the picks' mean probability); only
a popularity shared by the step's sequences (p̄ itself uneven over the ranks) adds load, and that load grows as B.

Part 2, a shared popularity as a what-if. The generated tokens route with lognormal popularity σ (specs/routing.py,
``decode_routing_sigma``; the prompt uniform, as ``--routing generated`` but at σ of a grid, 1.03 being NVIDIA's
measured natural-text figure); every row of the target groups and of the held-out checks is re-predicted through
fit/validate.predict_points (the validate path, no stack refit). Printed per group: interactivity median |error|
and median signed error (predicted / measured − 1, positive = model too fast) at each σ.

Part 2 with ``--every-engine``: the same σ grid on every DeepSeek-R1 row (TensorRT-LLM, vLLM too), grouped by
source and system.

Usage: python scripts/gb_sglang_routing_skew.py [--every-engine]   (about 10 s; with --every-engine about 1 min)
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

#: σ grid of Part 2 (0 = the shipped uniform routing; 1.03 = specs/routing.MEASURED_ROUTING_SIGMA)
SIGMAS = (0.0, 0.25, 0.5, 0.75, 1.03)
#: DeepSeek-R1's routing (config.json): experts, picks per token
EXPERTS, TOP_K = 256, 8


def sampling_tail(b_per_rank: float, dp: int, ep: int) -> tuple[float, float, float]:
    """(busiest / mean rank load, excess assignments per step, d(busiest)/d(b) per sequence per rank) of a decode
    step with b sequences per attention rank, dp ranks, EP ep, uniform routing (cost/moe.busiest_rank_assignments).

    >>> r, x, d = sampling_tail(32, 32, 32)  # mean 8·32 = 256; tail sqrt(256·31/32)·sqrt(2 ln 32) = 41.46
    >>> round(r, 3), round(x, 1), round(d, 2)
    (1.162, 41.5, 8.65)
    """
    from jalapeno.cost.moe import busiest_rank_assignments

    def load(b):
        return float(busiest_rank_assignments(b * dp, TOP_K, ep))

    mean = b_per_rank * dp * TOP_K / ep
    return load(b_per_rank) / mean, load(b_per_rank) - mean, (load(b_per_rank + 0.5) - load(b_per_rank - 0.5))


def part1() -> None:
    print("Part 1: the busiest EP rank's sampling tail at uniform routing (what the model prices)")
    print("  pool   b/rank  busiest/mean  excess (assignments)  d busiest / d b (mean: 8 per seq)")
    for dp, ep, bs in ((32, 32, (4, 15, 30, 60, 115, 164)), (8, 8, (480, 880))):
        for b in bs:
            r, x, d = sampling_tail(b, dp, ep)
            print(f"  DEP{dp:<3d} {b:6d}  {r:12.3f}  {x:20.1f}  {d:10.2f}")


def selected(points, every_engine: bool = False) -> list:
    """The rows of Part 2: DeepSeek-R1 under SGLang (``every_engine``: under every engine), every system."""
    return [p for p in points if p.model == "deepseek-r1" and (every_engine or "sglang" in p.framework.lower())]


def predict_at(points, sigma: float) -> pd.DataFrame:
    """Interactivity rows of ``points`` predicted with generated tokens at routing σ (monkeypatches the catalog's
    model loader for the call; restores it)."""
    import jalapeno.specs.catalog as catalog
    from jalapeno.fit.validate import predict_points

    orig = catalog.load_model

    def skewed(name, *a, **k):
        m = orig(name, *a, **k)
        if m.moe is None or sigma == 0:
            return m
        return dataclasses.replace(m, moe=dataclasses.replace(m.moe, decode_routing_sigma=sigma))

    catalog.load_model = skewed
    try:
        df = predict_points(points)
    finally:
        catalog.load_model = orig
    return df[df.metric == "interactivity"]


def group_key(r) -> str:
    pool = r.deployment.split("D ", 1)[-1].split(" [")[0] if r["mode"] == "disagg" else r.deployment
    pool = "DEP" + pool.split("DP")[1].split()[0] if "EP" in pool and "DP1 " not in pool and "DP" in pool else pool
    return f"{r.source[:3]} {r.system[:6]} {r.stack.split('@')[-1][:12]:12s} {r.precision} {r['mode'][:3]} {pool[:34]}"


def part2(every_engine: bool = False) -> None:
    from jalapeno.fit.validate import load_aiconfigurator
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    pts = selected(load_aiconfigurator()[0], every_engine) + selected(load_inferencex(DEFAULT_POINTS)[0], every_engine)
    cols = {}
    for s in SIGMAS:
        df = predict_at(pts, s).dropna(subset=["error"]).copy()
        df["g"] = (
            [f"{r.source[:3]} {r.system} (every DeepSeek-R1 row)" for _, r in df.iterrows()]
            if every_engine
            else [group_key(r) for _, r in df.iterrows()]
        )
        cols[s] = df.groupby("g").error.agg(n="size", med=lambda e: e.abs().median(), bias="median")
    print("\nPart 2: interactivity median |error| / median error (%) by group, generated tokens at routing sigma")
    print(f"  {'group':72s} {'n':>3s} " + " ".join(f"{'s=' + str(s):>13s}" for s in SIGMAS))
    for g in cols[0.0].index:
        cells = " ".join(
            f"{100 * cols[s].med.get(g, np.nan):5.1f}/{100 * cols[s].bias.get(g, np.nan):+6.1f}" for s in SIGMAS
        )
        print(f"  {g:72s} {int(cols[0.0].n[g]):3d} {cells}")


def main() -> None:
    import sys

    part1()
    part2("--every-engine" in sys.argv[1:])


if __name__ == "__main__":
    main()
