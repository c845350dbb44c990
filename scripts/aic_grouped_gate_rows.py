"""How many experts aiconfigurator's TensorRT-LLM ``min_latency`` NVFP4 MoE rows really touched (issue 18, round 29).

aiconfigurator's TensorRT-LLM collector (``collector/trtllm/collect_moe.py`` @095f58a51, github.com/ai-dynamo/
aiconfigurator) adds a ``min_latency`` pass for NVFP4 on SM100 (B200, GB200; not SM103) for every shape of at most
256 experts, stored with ``kernel_source`` ``moe_torch_flow_min_latency``. That pass routes through TensorRT-LLM's
``DeepseekV3Gate(n_group=8, topk_group=4, moe_backend="TRTLLM").routing_method`` whatever the model; the gate's
``e_score_correction_bias`` is ``nn.Parameter(torch.empty(E, dtype=bfloat16))`` (tensorrt_llm/_torch/models/
modeling_deepseekv3.py) and the collector never loads it, so it holds whatever the allocator hands out. The
collector's ``balanced`` logits are softmax(one-hot sum) in BF16 (collector/helper.py ``balanced_logits``): at
E 256, k 8 the picked experts' logit is 0.0101 against 0.0037, a sigmoid gap of ~0.0016, and with stride
ceil(E/k) = E/8 each token's k picks sit one per group of E/8 experts, so every group scores the same and a
zero (or constant) bias leaves the group choice to the kernel's tie-break: the same 4 groups for every token,
at most half the experts.

This script settles it from the tables, without assuming anything about the bias: per system with such rows
and per (shape, EP) it prints the balanced rows' latency of both NVFP4 paths at saturation (T >= E/k tokens,
where the balanced routing reaches every expert of the rank) and the most experts a row can have streamed in
its measured time at the chip's HBM bandwidth (weights only: 3·h·I/tp elements per expert at NVFP4's 0.5 B +
one FP8 scale per 16 elements = 0.5625 B/elem; activations ignored, so the bound is generous). A bound below
the rank's expert count proves the row did not touch them all; it also prints :func:`grouped_gate_rank0`, the
measured rank's touched count under the zero-bias grouped gate with ties broken to the lowest index (an assumption), for
comparison. ``--refit`` also refits the FP4 MoE form with those rows read through the grouped gate
(:func:`refit`, an experiment). Nothing is written. docs/gap_aic_itl.md ("collect29") quotes its output.
Run: python scripts/aic_grouped_gate_rows.py [--system b200 gb200-nvl72] [--refit]
(needs the aiconfigurator-core package: pip install -e ".[calibrate]")
"""

from __future__ import annotations

import argparse
import math
import numpy as np

from jalapeno.fit.collector_routing import GATE_GROUPS, MIN_LATENCY_SOURCE, grouped_gate_picks, grouped_gate_rank0

#: NVFP4 weight bytes per element: 4-bit value plus one FP8 (E4M3) scale per 16 elements (NVIDIA's NVFP4 format)
NVFP4_B_PER_ELEM = 0.5 + 1.0 / 16.0
#: the collector's grouped gate and the two NVFP4 paths compared (the replica lives in fit/collector_routing.py,
#: which the calibration reads since round 35)
N_GROUP = GATE_GROUPS
MIN_LATENCY, CUTLASS = MIN_LATENCY_SOURCE, "moe_torch_flow_cutlass"


def grouped_gate_touched(num_tokens: int, num_experts: int, top_k: int) -> int:
    """Distinct experts of :func:`grouped_gate_picks`.

    >>> [grouped_gate_touched(t, 256, 8) for t in (4, 16, 32, 64)]
    [20, 66, 128, 128]
    """
    return int(np.unique(grouped_gate_picks(num_tokens, num_experts, top_k)).size)


def refit(name: str) -> None:
    """Print the FP4 MoE fit (fit/kernels.fit_moe on the system's NVFP4 rows only) with the ``uniform`` reading (the
    calibration's until round 35, which reads ``collector``: fit/kernels.CALIBRATION_TOUCHED_RULE) and
    with the ``min_latency`` rows read with :func:`grouped_gate_rank0` (E divisible by 8 and >= 16; others as
    now); the fastest path per configuration kept in both. An experiment: nothing is written."""
    import pandas as pd

    import jalapeno.fit.kernels as kern
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
    from jalapeno.specs.catalog import load_system

    orig = kern.moe_rows

    def gated(df, touched_rule="uniform", dtypes=None, distributions=("balanced",)):
        ml = df.kernel_source == MIN_LATENCY
        a, b = orig(df[~ml], touched_rule, dtypes, distributions), orig(df[ml], touched_rule, dtypes, distributions)
        lt = [
            grouped_gate_rank0(int(r.num_tokens), int(r.num_experts), int(r.topk), int(r.moe_ep_size))
            if r.num_experts % N_GROUP == 0 and r.num_experts >= 2 * N_GROUP
            else (r.load, r.touched)
            for r in b.itertuples()
        ]
        b = b.assign(load=[x[0] for x in lt], touched=[x[1] for x in lt])
        d = pd.concat([a, b], ignore_index=True).sort_values("latency", kind="stable")
        return d.drop_duplicates(list(kern.MOE_KEYS), keep="first").reset_index(drop=True)

    s = load_system(name)
    df, _ = load_table(AIC_SYSTEM_DIRS[name], "moe", "moe_perf")
    df = df[df.moe_dtype == "nvfp4"]
    try:
        for tag, fn in (("as now", orig), ("grouped gate", gated)):
            kern.moe_rows = fn
            p, r = kern.fit_moe(df, s)
            errs = {
                k: f"median {v['median_ape']:.1%} p90 {v['p90_ape']:.1%}"
                for k, v in r["formats"]["fp4"].items()
                if isinstance(v, dict) and "median_ape" in v
            }
            print(f"  fit {tag:12s}: hbm_fraction {p['moe']['fp4']['hbm_fraction']:.3f}  {errs}")
    finally:
        kern.moe_rows = orig


def hbm_bound_experts(latency_s: float, hbm_bytes_per_s: float, hidden: int, inter_per_rank: float) -> float:
    """Most experts whose NVFP4 weights (3·h·I elements each) stream from HBM in ``latency_s`` at peak bandwidth.

    >>> round(hbm_bound_experts(0.488e-3, 8e12, 7168, 2048), 1)
    157.6
    """
    return latency_s * hbm_bytes_per_s / (3.0 * hidden * inter_per_rank * NVFP4_B_PER_ELEM)


def main() -> None:
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
    from jalapeno.specs.catalog import load_system

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", nargs="+", default=["b200", "gb200-nvl72"])
    ap.add_argument("--refit", action="store_true", help="also run :func:`refit` per system")
    a = ap.parse_args()
    for name in a.system:
        bw = load_system(name).chip.hbm_bandwidth_bytes_per_s
        df, ver = load_table(AIC_SYSTEM_DIRS[name], "moe", "moe_perf")
        d = df[
            (df.moe_dtype == "nvfp4")
            & (df.distribution == "balanced")
            & (df.moe_tp_size == 1)
            & df.kernel_source.isin([MIN_LATENCY, CUTLASS])
        ]
        if not (d.kernel_source == MIN_LATENCY).any():
            print(f"{name} ({ver}): no {MIN_LATENCY} rows")
            continue
        print(f"{name} (trtllm {ver}, HBM {bw / 1e12:.1f} TB/s): balanced NVFP4 rows at T >= E/k, MoE TP 1")
        print("  hidden inter   E  k  EP  T    min_lat_us  cutlass_us  ratio  experts/rank  hbm_bound  gate_rank0")
        keys = ["hidden_size", "inter_size", "num_experts", "topk", "moe_ep_size"]
        for (h, i, e, k, ep), g in d.groupby(keys):
            p = g.pivot_table(index="num_tokens", columns="kernel_source", values="latency", aggfunc="min").dropna()
            sat = [t for t in p.index if t >= math.ceil(e / k) and t <= 4 * math.ceil(e / k)]
            if MIN_LATENCY not in p or CUTLASS not in p or not sat or e % ep:
                continue
            t = sat[min(1, len(sat) - 1)]
            ml, cu = float(p.loc[t, MIN_LATENCY]), float(p.loc[t, CUTLASS])
            gg_rank = f"{grouped_gate_rank0(int(t), int(e), int(k), int(ep))[1]:.0f}" if e % N_GROUP == 0 else "-"
            print(
                f"  {h:6d} {i:5d} {e:3d} {k:2d} {ep:3d} {t:4d}  {ml * 1e3:10.0f}  {cu * 1e3:10.0f}  {ml / cu:5.2f}"
                f"  {e // ep:12d}  {hbm_bound_experts(ml * 1e-3, bw, h, i):9.1f}  {gg_rank}"
            )
        if a.refit:
            refit(name)


if __name__ == "__main__":
    main()
