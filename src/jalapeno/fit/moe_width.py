"""The routed experts' width term fitted on aiconfigurator's ``moe_perf`` tables (cost/moe_width.py).

At MoE TP k every rank runs each expert k times narrower (intermediate width w = I/k) over the same
tokens. In the compute regime (>= :data:`MIN_TOKENS` tokens, tokens per expert in the hundreds) a
table's row at (MoE TP k, EP 1) and the row at (MoE TP 1, EP k) of the same kernel, shape and token
count carry the same FLOPs and bytes per rank; only the width differs (I/k against I). Their latency
ratio is fitted, per kernel path, to 1 + (g(I/k) − g(I))·m/(m + m_half) with g(w) = (c/w)^p (a fixed
cost per output tile of a K loop that is w long for the down projection and 2w wide for gate/up,
against the MACs that scale with w; added beside the form's row penalty m_half/m, m rows per expert). Split: every shape but DeepSeek's (fit/kernels.MOE_HELD_OUT_SHAPE) fitted,
DeepSeek's held out and reported. Nothing here runs at prediction time.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from jalapeno.fit.kernels import MOE_HELD_OUT_SHAPE

#: the compute regime: rows at or above this many tokens (per expert at the table's shapes: 4096·k/E,
#: 128 at DeepSeek's 256 experts top-8, above every fitted half_rows)
MIN_TOKENS = 4096
#: compute format -> (kernel_source, moe_dtype) candidates of a TensorRT-LLM table read for it, the
#: first the table has: FP8 block scale by DeepGEMM (Blackwell) else CUTLASS (Hopper); NVFP4 and BF16
#: by the CUTLASS grouped GEMMs
PATHS = {
    "bf16": (("moe_torch_flow_cutlass", "bfloat16"),),
    "fp8": (("deepgemm", "fp8_block"), ("moe_torch_flow_cutlass", "fp8_block")),
    "fp4": (("moe_torch_flow_cutlass", "nvfp4"),),
}
_SHAPE = ["hidden_size", "inter_size", "num_experts", "topk", "num_tokens"]


def width_pairs(df: pd.DataFrame, source: str, dtype: str) -> pd.DataFrame:
    """(MoE TP k, EP 1) rows of one kernel path paired with the (MoE TP 1, EP k) rows of the same
    shape and token count: columns of ``df`` plus ``k``, ``w`` (= inter_size/k), ``r`` (latency ratio
    TP/EP), ``m`` (rows per expert, balanced routing), ``held_out`` (DeepSeek's shape). Fastest of repeated rows; balanced routing only."""
    d = df[
        (df.kernel_source == source)
        & (df.moe_dtype == dtype)
        & (df.distribution == "balanced")
        & (df.num_tokens >= MIN_TOKENS)
    ]
    d = d.groupby(_SHAPE + ["moe_tp_size", "moe_ep_size"], as_index=False).latency.min()
    tp = d[(d.moe_ep_size == 1) & (d.moe_tp_size > 1)].rename(columns={"moe_tp_size": "k", "latency": "l_tp"})
    ep = d[d.moe_tp_size == 1].rename(columns={"moe_ep_size": "k", "latency": "l_ep"})
    m = tp.drop(columns="moe_ep_size").merge(ep.drop(columns="moe_tp_size"), on=_SHAPE + ["k"])
    return m.assign(
        w=m.inter_size / m.k,
        r=m.l_tp / m.l_ep,
        m=m.num_tokens * m.topk / m.num_experts,
        held_out=[(h, e, t) == MOE_HELD_OUT_SHAPE for h, e, t in zip(m.hidden_size, m.num_experts, m.topk)],
    )


def ratio(w, full, rows, half: float, c: float, p: float) -> np.ndarray:
    """Modelled TP/EP latency ratio at per-rank width ``w`` (full width ``full``) and ``rows`` rows
    per expert: 1 + ((c/w)^p − (c/full)^p)·m/(m + half) (cost/moe_width.width_factor)."""
    from jalapeno.cost.moe_width import width_factor

    w = np.asarray(w, dtype=float)
    return width_factor(w, np.asarray(full, dtype=float) / w, rows, half, c, p)


def fit_width(pairs: pd.DataFrame, half: float) -> tuple[float, float, dict]:
    """(c, p, report) by robust least squares on log ratio over the non-held-out pairs (``half``: the
    system's calibrated moe[fmt].half_rows, the form's row penalty the term is added beside); the report
    gives rows and median / p90 absolute relative error on the fitted and on the held-out pairs.

    Raises:
        ValueError: fewer than 10 fitted pairs (names the count).
    """
    from scipy.optimize import least_squares

    tr, ho = pairs[~pairs.held_out], pairs[pairs.held_out]
    if len(tr) < 10:
        raise ValueError(f"pairs: {len(tr)} fitted (TP k, EP 1)/(TP 1, EP k) pairs; need >= 10 from a moe_perf table")
    sol = least_squares(
        lambda x: np.log(ratio(tr.w, tr.inter_size, tr.m, half, math.exp(x[0]), x[1]) / tr.r),
        [math.log(300.0), 1.0],
        loss="soft_l1",
        f_scale=0.2,
    )
    c, p = math.exp(sol.x[0]), float(sol.x[1])

    def err(t):
        e = np.abs(ratio(t.w, t.inter_size, t.m, half, c, p) / t.r - 1.0)
        return {
            "rows": int(len(t)),
            "median_ape": float(np.median(e)) if len(t) else None,
            "p90_ape": float(np.percentile(e, 90)) if len(t) else None,
        }

    return c, p, {"fit": err(tr), "held_out_deepseek_shape": err(ho)}
