"""A measured MoE curve of aiconfigurator's kernel tables against the calibrated routed-expert form (issue 18).

For one system, compute format and routed-expert shape (default DeepSeek-R1: hidden 7168, intermediate
2048, 256 experts, top-8) at one MoE TP / EP size, prints per token count T of the table's balanced
rows: the measured per-layer latency (fastest kernel per configuration, fit/kernels.moe_rows), the
experts a rank reads under the collector's routing (``balanced``: min(E/ep, T·k/ep), exact for the
TensorRT-LLM collector's plain top-k) and under uniform random routing (the serving op table's
E·(1 − (1 − k/E)^T)), the HBM fraction the measurement implies at the balanced count (weight bytes
only), and the calibrated form (fit/kernels.moe_model_s with the system's calibrated ``moe[fmt]``,
GEMM values where the set has no MoE compute entry; no per-layer floor, as on NVIDIA) at both counts.
docs/model.md §8.6 quotes its H200 and B200 fp8 rows.
Run: python scripts/moe_table_vs_form.py SYSTEM FMT [--tp 8] [--ep 1] [--backend trtllm] [--max-tokens 512]
(needs the aiconfigurator-core package: pip install -e ".[calibrate]")
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
from jalapeno.fit.kernels import moe_model_s, moe_rows
from jalapeno.specs.catalog import load_efficiency, load_system


def shape_rows(
    df: pd.DataFrame, fmt: str, tp: int, ep: int, hidden: int, inter: int, experts: int, topk: int, max_tokens: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(balanced-rule rows, uniform-rule rows) of one shape and layout, same index, ascending tokens.

    Raises:
        ValueError: no balanced row of that shape, format and layout in the table (names the key).
    """
    sel = []
    for rule in ("balanced", "uniform"):
        d = moe_rows(df, rule)
        d = d[
            (d.fmt == fmt)
            & (d.hidden_size == hidden)
            & (d.inter_size == inter)
            & (d.num_experts == experts)
            & (d.topk == topk)
            & (d.moe_tp_size == tp)
            & (d.moe_ep_size == ep)
            & (d.num_tokens <= max_tokens)
        ]
        sel.append(d.sort_values("num_tokens"))
    if sel[0].empty:
        raise ValueError(
            f"no balanced {fmt} rows at hidden {hidden}, inter {inter}, {experts} experts, top-{topk}, "
            f"moe_tp {tp}, moe_ep {ep}: check the format, shape and layout against the table"
        )
    return sel[0], sel[1]


def implied_hbm_fraction(r: pd.DataFrame, bandwidth: float) -> np.ndarray:
    """Weight bytes the rows read (touched · 3 · h · i · b_w) over their measured time, as a share of
    ``bandwidth`` (B/s). Shapes: (n,) per row."""
    w = (
        r.touched.to_numpy(float)
        * 3.0
        * r.hidden_size.to_numpy(float)
        * r.inter.to_numpy(float)
        * r.w_b.to_numpy(float)
    )
    return w / r.t.to_numpy(float) / bandwidth


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("system")
    ap.add_argument("fmt", help="compute format of the table rows: fp8, fp4, bf16")
    ap.add_argument("--tp", type=int, default=8)
    ap.add_argument("--ep", type=int, default=1)
    ap.add_argument("--backend", default="trtllm")
    ap.add_argument("--hidden", type=int, default=7168)
    ap.add_argument("--inter", type=int, default=2048)
    ap.add_argument("--experts", type=int, default=256)
    ap.add_argument("--topk", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=512)
    a = ap.parse_args()
    system = load_system(a.system)
    df, version = load_table(AIC_SYSTEM_DIRS[a.system], "moe", "moe_perf", a.backend)
    bal, uni = shape_rows(df, a.fmt, a.tp, a.ep, a.hidden, a.inter, a.experts, a.topk, a.max_tokens)
    eff = load_efficiency(a.system)
    p = (eff.moe_peak(a.fmt), eff.moe_half(a.fmt), eff.moe_hbm(a.fmt), None, eff.moe_passes(a.fmt))
    t_bal = moe_model_s(system, bal, a.fmt, *p)
    t_uni = moe_model_s(system, uni, a.fmt, *p)
    eta = implied_hbm_fraction(bal, system.chip.hbm_bandwidth_bytes_per_s)
    print(
        f"{a.system} {a.backend} {version} moe_perf, {a.fmt}, hidden {a.hidden}, inter {a.inter}, {a.experts} experts, "
        f"top-{a.topk}, moe_tp {a.tp}, moe_ep {a.ep}; calibrated moe[{a.fmt}]: peak {p[0]:.3f}, half_rows {p[1]:.1f}, "
        f"hbm {p[2]:.3f}, token_passes {p[4]:.2f}"
    )
    print(
        "| T | measured us | experts read (balanced / uniform) | implied HBM fraction | form us (balanced) | "
        "form us (uniform, as served) |"
    )
    print("|---|---|---|---|---|---|")
    for i in range(len(bal)):
        print(
            f"| {int(bal.num_tokens.iloc[i])} | {bal.t.iloc[i] * 1e6:.1f} | {bal.touched.iloc[i]:.0f} / "
            f"{uni.touched.iloc[i]:.1f} | {eta[i]:.2f} | {t_bal[i] * 1e6:.1f} | {t_uni[i] * 1e6:.1f} |"
        )


if __name__ == "__main__":
    main()
