"""The MoE expert-parallel all-to-all's efficiency, fitted on TensorRT-LLM's measured NVLink kernels.

aiconfigurator-core's ``trtllm_alltoall_perf`` table (fit/kernel_tables.load_a2a_table) times TensorRT-LLM's
NVLink one-sided MoE all-to-all's dispatch and combine per EP size and tokens a rank. The model prices one
layer's dispatch + combine as two all-to-all collectives (cost/collectives.collective_time) of the message sizes
cost/ops.py gives a decode row; :func:`fit_ep_all_to_all` fits ``all_to_all_fraction`` and
``all_to_all_latency_s`` by least squares on log time on a declared split of EP sizes (:data:`A2A_FIT_EP`, held
out :data:`A2A_HELD_EP`), :func:`judge_ep_all_to_all` reports a shipped set beside that fit (fit/calibrate.py,
docs/collectives.md), and :func:`ep_all_to_all_floor` reads the kernel's measured per-call floor
(cost/a2a_floor.py). The NCCL link-efficiency ramps are fit/collectives.py's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jalapeno.cost.collectives import collective_time
from jalapeno.cost.expert_ops import dispatch_bytes_per_elem, dispatch_copies
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import System


#: aiconfigurator-core's ``trtllm_alltoall_perf`` rows the fit reads: TensorRT-LLM's NVLink
#: one-sided MoE all-to-all (``NVLinkOneSided``, the path TensorRT-LLM's CuTe-DSL and CUTLASS MoE
#: backends take with attention DP), NVFP4 dispatch, DeepSeek-V3/R1's shape (hidden 7168, top-8,
#: 256 experts), balanced routing; one layer = ``alltoall_dispatch`` + ``alltoall_combine``.
A2A_KERNEL = "NVLinkOneSided"
#: The rows' model shape: DeepSeek-V3/R1 (hidden 7168, top-8 of 256 experts).
A2A_HIDDEN, A2A_TOP_K, A2A_EXPERTS = 7168, 8, 256
#: Declared split: fit on EP 8 and 32, EP 16 held out. EP 2 and 4 are outside the model's
#: form and only reported: the model sends top_k copies of a decode token (DeepEP's low-latency
#: layout, cost/expert_ops.dispatch_copies), (g-1)/g of them off-rank, while the one-sided kernel sends a
#: token once per destination rank — 1 off-rank copy at EP2 against the model's 4, 4.6 against 7
#: at EP8, 6.9 against 7.75 at EP32 — so the fitted fraction is an effective one for EP >= 8.
A2A_FIT_EP = (8, 32)
A2A_HELD_EP = (16,)


def _a2a_latency(table: pd.DataFrame) -> pd.DataFrame:
    """``trtllm_alltoall_perf``'s :data:`A2A_KERNEL` NVFP4 rows at DeepSeek's shape, the fastest latency (ms) per
    (EP size, tokens per rank), one column per op (``alltoall_dispatch``, ``alltoall_combine``, ...)."""
    t = table[
        (table.kernel_source == A2A_KERNEL)
        & (table.moe_dtype == "nvfp4")
        & (table.hidden_size == A2A_HIDDEN)
        & (table.topk == A2A_TOP_K)
        & (table.num_experts == A2A_EXPERTS)
    ]
    return t.groupby(["moe_ep_size", "num_tokens", "op_name"]).latency.min().unstack("op_name")


def ep_all_to_all_frame(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (EP size, tokens per rank) of ``trtllm_alltoall_perf`` (latency ms): the
    measured time of one MoE layer's dispatch + combine (s) on the :data:`A2A_KERNEL` path, and
    the model's per-rank message sizes for it (cost/ops.py: top_k copies of each decode row,
    1 B/element dispatch for FP4 experts, 2 B/element combine)."""
    p = _a2a_latency(table)
    p = p.dropna(subset=["alltoall_dispatch", "alltoall_combine"]).reset_index()
    tokens, ep = p.num_tokens.to_numpy(float), p.moe_ep_size.to_numpy(int)
    vec = dispatch_copies(tokens, 0.0, A2A_TOP_K, ep) * A2A_HIDDEN  # decode rows: top_k copies each
    return pd.DataFrame(
        {
            "ep": ep,
            "tokens": tokens,
            "dispatch_bytes": vec * dispatch_bytes_per_elem("fp4"),
            "combine_bytes": vec * 2.0,
            "time_s": (p.alltoall_dispatch + p.alltoall_combine).to_numpy() * 1e-3,
        }
    )


def model_ep_all_to_all(frame: pd.DataFrame, system: System, eff: Efficiency) -> np.ndarray:
    """The model's dispatch + combine time (s) for every row of :func:`ep_all_to_all_frame`."""
    out = np.empty(len(frame))
    for ep, idx in frame.groupby("ep").indices.items():
        r = frame.iloc[idx]
        out[idx] = (
            collective_time("all_to_all", int(ep), r.dispatch_bytes.to_numpy(), system, eff).time_s
            + collective_time("all_to_all", int(ep), r.combine_bytes.to_numpy(), system, eff).time_s
        )
    return out


def _ep_errors(frame: pd.DataFrame, err: np.ndarray, split: bool = True) -> dict:
    """Per EP size: rows, median |%| and median signed error (and with ``split`` the role of the
    size in the fit's split)."""
    out = {}
    for ep in sorted(set(frame.ep)):
        m = (frame.ep == ep).to_numpy()
        role = "fit" if ep in A2A_FIT_EP else "held_out" if ep in A2A_HELD_EP else "outside_form"
        out[f"ep{ep}"] = {
            **({"role": role} if split else {}),
            "rows": int(m.sum()),
            "median_ape": float(np.median(np.abs(err[m]))),
            "bias": float(np.median(err[m])),
        }
    return out


def fit_ep_all_to_all(
    table: pd.DataFrame, system: System, eff: Efficiency, fix_fraction: bool = False
) -> tuple[dict, dict]:
    """Fit ``all_to_all_fraction`` and ``all_to_all_latency_s`` on TensorRT-LLM's measured NVLink
    MoE all-to-all (least squares on log time of the model's own dispatch + combine on ``system``,
    ``eff`` for everything else) at EP :data:`A2A_FIT_EP`; report on :data:`A2A_HELD_EP`.

    Args:
        table: aiconfigurator's ``trtllm_alltoall_perf`` (latency in ms).
        system: the system the table was measured on (its scale-up level prices the rows).
        eff: the efficiency set whose other fields (hop latency aside: ``collective_launch_s``)
            stay fixed.
        fix_fraction: keep ``eff.all_to_all_fraction`` and fit the per-call latency alone (the
            latency the shipped set takes: calibrate.py).

    Returns:
        (the two parameters; report: kernel, rows, median/p90 |%| error on the fit rows, and per
        EP size ``ep<g>`` = role (fit / held_out / outside_form), rows, median |%| and signed error).

    Raises:
        SpecError: the table has no row of the fitted EP sizes.
    """
    from scipy.optimize import least_squares

    from jalapeno.errors import SpecError

    frame = ep_all_to_all_frame(table)
    fit = frame[frame.ep.isin(A2A_FIT_EP)].reset_index(drop=True)
    if fit.empty:
        raise SpecError(
            "trtllm_alltoall_perf",
            f"no {A2A_KERNEL} NVFP4 rows at EP {A2A_FIT_EP}",
            "check the aiconfigurator-core package version",
        )

    def at(x):
        frac = eff.all_to_all_fraction if fix_fraction else float(x[0])
        return eff.with_overrides({"all_to_all_fraction": frac, "all_to_all_latency_s": float(x[-1])})

    x0, lo, hi, scale = [0.6, 10e-6], [0.05, 0.0], [1.0, 200e-6], [0.1, 1e-5]
    if fix_fraction:
        x0, lo, hi, scale = x0[1:], lo[1:], hi[1:], scale[1:]
    res = least_squares(
        lambda x: np.log(model_ep_all_to_all(fit, system, at(x)) / fit.time_s.to_numpy()),
        np.array(x0),
        bounds=(np.array(lo), np.array(hi)),
        x_scale=np.array(scale),
    )
    best = at(res.x)
    params = {"all_to_all_fraction": best.all_to_all_fraction, "all_to_all_latency_s": best.all_to_all_latency_s}
    err = model_ep_all_to_all(frame, system, best) / frame.time_s.to_numpy() - 1
    on_fit = frame.ep.isin(A2A_FIT_EP).to_numpy()
    return params, {
        "kernel": A2A_KERNEL,
        "rows": int(on_fit.sum()),
        "median_ape": float(np.median(np.abs(err[on_fit]))),
        "p90_ape": float(np.percentile(np.abs(err[on_fit]), 90)),
        **_ep_errors(frame, err),
    }


def judge_ep_all_to_all(table: pd.DataFrame, system: System, eff: Efficiency) -> dict:
    """``eff``'s all-to-all judged on TensorRT-LLM's measured NVLink MoE all-to-all, beside the
    kernel-level fit (:func:`fit_ep_all_to_all`) it would take.

    Returns:
        {"shipped": per EP size the error of ``eff`` (as :func:`fit_ep_all_to_all`'s ``ep<g>``),
        "fit": the fitted ``all_to_all_fraction`` / ``all_to_all_latency_s`` and its report,
        "latency_fit": the latency fitted at ``eff``'s fraction (``fix_fraction``) and its report}.
    """
    frame = ep_all_to_all_frame(table)
    err = model_ep_all_to_all(frame, system, eff) / frame.time_s.to_numpy() - 1
    params, rep = fit_ep_all_to_all(table, system, eff)
    p_lat, r_lat = fit_ep_all_to_all(table, system, eff, fix_fraction=True)
    return {
        "shipped": {
            "all_to_all_fraction": eff.all_to_all_fraction,
            "all_to_all_latency_s": eff.all_to_all_latency_s,
            **_ep_errors(frame, err, split=False),
        },
        "fit": {**params, **rep},
        "latency_fit": {**p_lat, **r_lat},
    }


def ep_all_to_all_floor(table: pd.DataFrame) -> pd.DataFrame:
    """The measured per-call floor of TensorRT-LLM's NVLink one-sided MoE all-to-all, per EP size
    (cost/a2a_floor.py): at the table's smallest token count a rank (1) the kernel's time is its
    synchronisation, not its bytes; one call = the mean of ``alltoall_dispatch`` and
    ``alltoall_combine`` there (the model prices dispatch and combine as two calls of one form).

    Args:
        table: aiconfigurator's ``trtllm_alltoall_perf`` (latency in ms), the rows of
            :func:`ep_all_to_all_frame` (:data:`A2A_KERNEL`, NVFP4, DeepSeek's shape).

    Returns:
        DataFrame (ep, tokens, floor_s) sorted by EP size, one row per EP size.

    Raises:
        SpecError: the table has none of those rows.
    """
    from jalapeno.errors import SpecError

    p = _a2a_latency(table)
    if not {"alltoall_dispatch", "alltoall_combine"} <= set(p.columns):
        raise SpecError(
            "trtllm_alltoall_perf",
            f"no {A2A_KERNEL} NVFP4 dispatch and combine rows",
            "check the aiconfigurator-core package version",
        )
    p = p.dropna(subset=["alltoall_dispatch", "alltoall_combine"]).reset_index()
    first = p.loc[p.groupby("moe_ep_size").num_tokens.idxmin()].sort_values("moe_ep_size")
    return pd.DataFrame(
        {
            "ep": first.moe_ep_size.to_numpy(int),
            "tokens": first.num_tokens.to_numpy(float),
            "floor_s": ((first.alltoall_dispatch + first.alltoall_combine) / 2 * 1e-3).to_numpy(),
        }
    )
