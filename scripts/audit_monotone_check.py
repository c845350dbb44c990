#!/usr/bin/env python3
"""Is a frontier metric read at a per-user speed monotone in a fixed cost? Jalapeño on Kimi K2.5 8K/1K, tok/s/kW at 50.

docs/audit.md §3 ("Assumptions and limits") assumes each metric is monotone in each parameter; this
prints ``tok_s_per_kw@50`` (all-in power) of full sweeps (analysis/claims.ClaimContext.full, the sweep
``compare`` and ``audit`` run) with ``efficiency.kernel_launch_s`` from 4 µs (the catalog's GPU-like
stack) down to 0.32 µs (the compiled-stack anchor, data/stacks.toml), first with the sweep's own
disaggregated worker pairs (analysis/sweep.balanced_workers: per decode batch, the fewest prefill
workers that keep up with 1, 2 or 4 decode workers, and one more), then with the fixed grid the sweep
used before (prefill workers 1, 2, 3, 4, 6, 8, 12, 16 x decode workers 1, 2, 4 at every batch), and
names the deployment either side of 50 tok/s/user. Nothing is fitted or written; the figures are in
docs/audit.md.

Run:
    python scripts/audit_monotone_check.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402

import jalapeno as jp  # noqa: E402
from jalapeno.analysis import sweep as sweep_mod  # noqa: E402
from jalapeno.analysis.claims import ClaimContext, parse_claim  # noqa: E402
from jalapeno.analysis.frontier import frontier_indices  # noqa: E402
from jalapeno.analysis.sweep import SweepOptions  # noqa: E402
from jalapeno.analysis.uncertain import apply  # noqa: E402

#: per-kernel launch costs, s: the catalog's Jalapeño value (GPU-like), steps between, the compiled anchor
LAUNCH_S = (4e-6, 2e-6, 1e-6, 5e-7, 3.2e-7)
AT = 50.0  # tok/s/user
#: the fixed prefill-worker grid of the sweep before round 28 (paired with every DECODE_WORKERS count)
OLD_PREFILL_GRID = (1, 2, 3, 4, 6, 8, 12, 16)


def grid_workers(pre, dec, wl, batch_index, mtp, max_chips):
    """The old fixed grid in :func:`analysis.sweep.balanced_workers`' form: every (x, y) of
    OLD_PREFILL_GRID x DECODE_WORKERS at every batch of ``batch_index`` (saturated points included)."""
    x, y, b = np.meshgrid(np.array(OLD_PREFILL_GRID), np.array(sweep_mod.DECODE_WORKERS), batch_index, indexing="ij")
    x, y, b = x.ravel(), y.ravel(), b.ravel()
    fit = x * pre.layout.chips + y * dec.layout.chips <= max_chips
    return x[fit], y[fit], b[fit]


def neighbours(points, deps, at: float) -> str:
    """The frontier points either side of ``at`` tok/s/user: speed, tok/s/chip and deployment."""
    ok = np.flatnonzero(points.feasible & (points.throughput_per_chip > 0) & np.isfinite(points.interactivity))
    fi = ok[frontier_indices(points.interactivity[ok], points.throughput_per_chip[ok])]
    j = int(np.searchsorted(points.interactivity[fi], at))
    return "; ".join(
        f"{points.interactivity[i]:.1f} tok/s/user {points.throughput_per_chip[i]:,.0f} tok/s/chip {deps[int(i)].label}"
        for i in fi[max(0, j - 1) : j + 1]
    )


def main() -> None:
    m, wl, prec = jp.load_model("kimi-k2.5"), jp.get_workload("8k1k"), jp.get_precision("int4")
    ctx = ClaimContext(m, wl, prec, SweepOptions(), "all-in")
    claim = parse_claim(f"tok_s_per_kw@{AT:g}=1")
    base = jp.load_pricer("jalapeno")
    own = sweep_mod.balanced_workers
    try:
        for name, pairs in (("balanced (the sweep's own)", own), ("fixed grid (before)", grid_workers)):
            sweep_mod.balanced_workers = pairs
            print(f"{name}: decode workers {', '.join(map(str, sweep_mod.DECODE_WORKERS))}")
            for launch in LAUNCH_S:
                pricer, _ = apply(base, {"efficiency.kernel_launch_s": launch})
                value, (points, deps) = ctx.full(pricer, claim)
                print(f"  kernel_launch_s {launch:g}: tok_s_per_kw@{AT:g} {value:,.0f} tok/s/kW (all-in)")
                print(f"    around {AT:g}: {neighbours(points, deps, AT)}")
    finally:
        sweep_mod.balanced_workers = own


if __name__ == "__main__":
    main()
