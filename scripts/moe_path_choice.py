"""Which kernel path the ``collector`` reading keeps per MoE configuration, and would per-expert speed choose another (issue 18).

Round 35 (fit/kernels.moe_rows, rule ``collector``) keeps the fastest ``moe_perf`` row of each configuration and
reads it with the routing its collector pass used: TensorRT-LLM's NVFP4 ``min_latency`` rows through the grouped
gate (fit/collector_routing.grouped_gate_rank0), the other paths with ``balanced``. The two routings touch
different numbers of experts on the timed rank (the gate at most 128 of 256 at EP 1, balanced all 256 once
T·k >= E), so the raw latency compares unequal work: a path could be kept because it was timed on fewer experts,
not because it is faster per expert. For each system with ``min_latency`` rows (B200, GB200; B300, GB300 with
them imputed from their predecessors, fit/kernel_tables.fill_missing_kernel_paths) this script counts the
configurations that have both kinds of path, those where the gated path is the fastest row, and, of those, the
ones where it is slower per unit of work by one measure (``possible``: latency per expert touched on the timed rank,
the weight-streaming measure, or per assignment on it, the compute measure) and by both (``certain``: slower under any
mix of the two terms, t = a·assignments + b·experts + c with a, b >= 0, so a per-expert choice would take the other
path whatever the fit); and the other way, the configurations where the gated path is slower raw but faster by both
measures (``dropped_certain``: the gate puts more than T·k/ep assignments on the timed rank at EP > 1). Nothing is written; docs/gap_aic_itl.md ("round 35", "the path kept") quotes its output.

Run: python scripts/moe_path_choice.py [--systems b200,gb200-nvl72]   (seconds; needs the [calibrate] extra,
aiconfigurator-core)
"""

from __future__ import annotations

import argparse

#: systems whose tables carry (or are given) TensorRT-LLM's min_latency MoE rows
SYSTEMS = ("b200", "gb200-nvl72", "b300", "gb300-nvl72")


def path_choice(system_name: str) -> dict:
    """Counts for one system: configurations with both a gated and another path (``both``), where the gated one
    is the fastest row (``gated_fastest``), and of those where it is slower per unit of work by one measure
    (``possible``) or by both (``certain``): per expert touched and per assignment on the timed rank; and where the
    gated path is slower raw yet faster by both measures (``dropped_certain``: timed on more work, at EP > 1 the gate
    loads the timed rank above T·k/ep)."""
    import numpy as np

    from jalapeno.fit.collector_routing import gated_row, grouped_gate_rank0
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, KERNEL_PATH_SIBLING, fill_missing_kernel_paths, load_table
    from jalapeno.fit.kernels import MOE_KEYS

    sdir = AIC_SYSTEM_DIRS[system_name]
    moe, _ = load_table(sdir, "moe", "moe_perf")
    if KERNEL_PATH_SIBLING.get(sdir, sdir) != sdir:
        sib, _ = load_table(KERNEL_PATH_SIBLING[sdir], "moe", "moe_perf")
        moe, _ = fill_missing_kernel_paths(moe, sib, MOE_KEYS, "moe_dtype", KERNEL_PATH_SIBLING[sdir])
    d = moe[moe.distribution == "balanced"].groupby([*MOE_KEYS, "kernel_source"], as_index=False).latency.min()
    gated = np.array([gated_row(s, e) for s, e in zip(d.kernel_source, d.num_experts)], dtype=bool)
    j = d[gated].merge(
        d[~gated].groupby(MOE_KEYS, as_index=False).latency.min(), on=MOE_KEYS, suffixes=("_gated", "_other")
    )
    if j.empty:
        return {"system": system_name, "both": 0, "gated_fastest": 0, "possible": 0, "certain": 0, "dropped_certain": 0}
    work = np.array(
        [
            grouped_gate_rank0(int(r.num_tokens), int(r.num_experts), int(r.topk), int(r.moe_ep_size))
            for r in j.itertuples(index=False)
        ]
    )
    load_other = (j.num_tokens * j.topk / j.moe_ep_size).to_numpy(float)
    experts_other = np.minimum(np.ceil(j.num_experts / j.moe_ep_size).to_numpy(float), load_other)
    raw = (j.latency_gated / j.latency_other).to_numpy(float)
    by_load, by_experts = raw > work[:, 0] / load_other, raw > work[:, 1] / experts_other
    fastest = raw < 1.0
    return {
        "system": system_name,
        "both": int(len(j)),
        "gated_fastest": int(fastest.sum()),
        "possible": int((fastest & (by_load | by_experts)).sum()),
        "certain": int((fastest & by_load & by_experts).sum()),
        "dropped_certain": int((~fastest & ~by_load & ~by_experts & (raw > 1.0)).sum()),
    }


def main() -> None:
    import pandas as pd

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated system names")
    names = [s for s in ap.parse_args().systems.split(",") if s]
    unknown = sorted(set(names) - set(SYSTEMS))
    if unknown:
        raise SystemExit(
            f"--systems: no min_latency MoE rows for {', '.join(unknown)}; use some of {', '.join(SYSTEMS)}"
        )
    print(
        "Configurations with a gated (min_latency) and another path; the gated one fastest; of those, slower per unit "
        "of work by one measure (per expert or per assignment on the timed rank: possible) and by both (certain); "
        "slower raw but faster by both (dropped_certain):"
    )
    print(pd.DataFrame([path_choice(n) for n in names]).to_string(index=False))


if __name__ == "__main__":
    main()
