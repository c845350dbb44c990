"""Kernel fits: the efficiency parameters of one chip from its measured kernel tables (GEMM and collectives here;
the MoE fit in fit/moe_kernels.py and the pricing they share in fit/kernel_model.py, split from here in round 49
for the module budget and re-exported, so ``from jalapeno.fit.kernels import fit_moe`` keeps working).

Every prediction a fit compares with a measured kernel goes through the same pricer that prices
a step (cost/pricer.RooflinePricer on an op table built by cost/optable.OpBuilder and
cost/expert_ops.add_routed_experts), so the fitted parameters mean exactly what the step cost uses; no
formula of the roofline or of the op accounting is written a second time. Forms and data:
fit/calibrate.py's module docstring and docs/model.md.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from jalapeno.cost.collectives import collective_time
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import RooflinePricer
from jalapeno.fit.kernel_model import (  # noqa: F401  (re-exported: split from here, round 49)
    _ape,
    _sig,
    _single_op,
    fit_efficiency,
    kernel_params,
    priced_s,
)
from jalapeno.fit.kernel_tables import GEMM_DTYPES, gemm_key
from jalapeno.fit.moe_kernels import (  # noqa: F401  (the MoE fit, re-exported: split from here, round 49)
    CALIBRATION_TOUCHED_RULE,
    MOE_COMPUTE_MIN_SHARE,
    MOE_HELD_OUT_SHAPE,
    MOE_KEYS,
    MOE_SPLITS,
    MOE_TOUCHED_RULES,
    fit_moe,
    moe_model_s,
    moe_rows,
    moe_table,
    moe_times,
)
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency, nest_params
from jalapeno.specs.hardware import System


# ---- GEMM -------------------------------------------------------------------------------------


def gemm_table(m, n, k, fmt: str, w_b: float, a_b: float, key: str = ""):
    """One GEMM op per kernel-table row ([m, k] x [k, n]), accounted as the step's op table does;
    ``key``: its GEMM efficiency entry when finer than ``fmt`` (``fp8_block``)."""
    ob = OpBuilder(len(m))
    ob.gemm("gemm", fmt, m, k, n, w_b, a_b, key=key)
    return ob.build()[0]


def gemm_model_s(system: System, table, fmt: str, eta_f, m_half, eta_m, t0, k_block=None) -> np.ndarray:
    """Modelled time (s) of the GEMMs of ``table``: the roofline pricer with these parameters (of
    the entry ``fmt``: a compute format or GEMM kernel key), a per-kernel cost ``t0`` and, when
    given, the serial time ``k_block`` per 128 of k (KernelEfficiency.k_block_s)."""
    return priced_s(
        system,
        table,
        {
            **kernel_params("gemm", fmt, peak_fraction=eta_f, half_rows=m_half, hbm_fraction=eta_m, k_block_s=k_block),
            "kernel_launch_s": t0,
        },
    )


#: rows at most this many (m) are the memory-bound anchor of the GEMM fit: the HBM fraction and
#: the kernel floor are identified on them first (weights streamed, compute negligible)
GEMM_MEMORY_ANCHOR_ROWS = 16
#: GEMM rows whose m, n and k are all at least this large are the compute-bound anchor of the GEMM
#: fit: the compute asymptote eta_f is identified on them (:func:`_fit_gemm_rows`). At 4,096 x 4,096 a
#: 128 x 256 output tile gives 512 tiles, about four full waves on a 132-148 SM GPU (tail under 3%),
#: the floor t0 is under 2% of the time and the HBM time under 10% of the compute time; the prefill
#: projections of a dense 70B model (m = ISL tokens, n and k 8,192-57,344) are of this kind
GEMM_COMPUTE_ANCHOR_DIM = 4096
#: GEMM entries whose compute asymptote is anchored: every entry but the block-scaled FP8 one (see
#: :func:`fit_gemm`)
COMPUTE_ANCHOR_KEYS = ("bf16", "fp8", "fp4")
#: fewer anchor rows than this (a table without large shapes): eta_f stays the every-row fit's
COMPUTE_ANCHOR_MIN_ROWS = 4


def compute_anchor(m_, n_, k_) -> np.ndarray:
    """The rows of a GEMM table that anchor its compute asymptote: m, n and k all at least
    :data:`GEMM_COMPUTE_ANCHOR_DIM`.

    >>> compute_anchor(np.array([4096., 8192., 64.]), np.array([8192., 4096., 8192.]), np.array([4096.] * 3)).tolist()
    [True, True, False]
    """
    d = GEMM_COMPUTE_ANCHOR_DIM
    return (np.asarray(m_) >= d) & (np.asarray(n_) >= d) & (np.asarray(k_) >= d)


#: GEMM entries whose serial k loop (KernelEfficiency.k_block_s) the TensorRT-LLM calibration fits:
#: the block-scaled FP8 kernels, whose few-row times rise with k at any n (specs/kernel_efficiency.py)
SERIAL_K_KEYS = ("fp8_block",)
#: GEMM entries whose table fit carries the serial k loop only so that it does not bias the other
#: parameters, and which ship no ``k_block_s``: TensorRT-LLM 1.3.0rc20's ``nvfp4`` rows at m 8-16 rise
#: ~0.26 µs per 128 of k at any n up to 16,384 (n = 128, k = 8,192: 21 µs; k = 65,536: 126 µs), so a fit
#: without the term prices those few-tile rows with a low HBM fraction (B200 0.41) that then slows every
#: weight-streaming FP4 GEMM. The served kernels lack that loop: with it, Llama-3.3-70B NVFP4 at TP8 on
#: B200 would take ~1.3x the measured TPOT (aiconfigurator rows, scripts/aic_gptoss_fixed_costs.py, table 1;
#: TensorRT-LLM autotunes its NVFP4 GEMM tactic per m in serving), so only the streaming fraction is kept.
SERIAL_K_FIT_ONLY_KEYS = ("fp4",)


def fit_gemm(
    df: pd.DataFrame, system: System, serial_k: tuple[str, ...] = (), fit_only_k: tuple[str, ...] = ()
) -> tuple[dict, dict]:
    """(parameters, fit report) from a GEMM table: one (eta_f, m_half_f, eta_m_f) per format.

    Three stages, each asymptote identified where it binds: (1) eta_m_f and the floor t0 on the
    memory-bound rows (m <= GEMM_MEMORY_ANCHOR_ROWS), with the compute term at its least (eta 0.5,
    m_half 16: below 1% of those rows' time); (2) eta_f, m_half_f and t0 on every row (m >= 8)
    with eta_m_f held; (3) eta_f alone on the compute anchor (:func:`compute_anchor`: m, n, k >=
    GEMM_COMPUTE_ANCHOR_DIM) with m_half_f and t0 held, for the entries in COMPUTE_ANCHOR_KEYS
    where the table has at least COMPUTE_ANCHOR_MIN_ROWS of them. ``fp8_block`` is not anchored: its
    anchored asymptote speeds DeepSeek-R1's prefill, whose InferenceX TTFT a cost missing elsewhere
    already leaves under-predicted, past the fidelity guard (docs/model.md §11.1). The form's ramp is in m only while the tables' efficiency also
    rises with n and k, so stage 2's eta_f is a compromise with the mid-size shapes, 8-30% below what
    the large GEMMs reach (aiconfigurator-core 0.12.0 H200 per-tensor FP8 at m = 8,192 on the
    Llama-3.3-70B projections: 0.63-0.71 of peak where stage 2 gives 0.555); a long prompt's prefill
    runs those (docs/model.md §11.1). A joint four-parameter fit let the many floor-dominated small shapes pull
    eta_m_f far below the bandwidth the large weight-streaming rows reach (B300 NVFP4: 0.30 where
    its m <= 16 rows stream at 0.74 of HBM, the same as B200's), modelling B300 FP4 slower than
    B200 FP4 (docs/validation.md, "FP4 on Blackwell Ultra").

    The intercept t0 is each format's standalone-kernel floor; it is reported, not used as
    ``kernel_launch_s`` (microbenchmarks time single launches, which CUDA graphs in serving hide).
    An entry named in ``serial_k`` (:data:`SERIAL_K_KEYS` for TensorRT-LLM's tables) also fits its
    serial k loop ``k_block_s`` in stage (1), beside eta_m_f and t0 (held in stage 2): unlike t0 it
    is kernel execution time, which CUDA graphs do not hide, so it is used in serving. An entry named
    in ``fit_only_k`` (:data:`SERIAL_K_FIT_ONLY_KEYS`) fits the same term in stage (1) and holds it in
    stage (2), so that the few-tile rows it explains do not pull eta_m_f or m_half_f, but does not
    ship it: stage (3) refits eta_f without it (the form served), the report keeps it
    (``fit_only_k_block_s``) and its table errors are those of the fit with the term.
    """
    chip = system.chip
    df = df[df.gemm_dtype.isin(list(GEMM_DTYPES)) & (df.m >= 8)].copy()
    df["t"] = df.latency * 1e-3
    params, report, floors = {}, {"rows": 0, "formats": {}}, {}
    preds, meas = [], []
    for dtype, d in df.groupby("gemm_dtype"):
        fmt, wb, ab = GEMM_DTYPES[dtype]
        if fmt not in chip.peak_flop_per_s:
            continue
        key = gemm_key(dtype)
        m_, n_, k_, t_ = (d[c].to_numpy(dtype=float) for c in ("m", "n", "k", "t"))
        fo = key in fit_only_k
        sk = key in serial_k or fo
        eta, mh, em, t0, kb = _fit_gemm_rows(system, fmt, key, wb, ab, m_, n_, k_, t_, sk, fo)
        params.update(
            kernel_params("gemm", key, peak_fraction=eta, half_rows=mh, hbm_fraction=em, k_block_s=None if fo else kb)
        )
        floors[key] = t0
        p = gemm_model_s(system, gemm_table(m_, n_, k_, fmt, wb, ab, key), key, eta, mh, em, t0, kb)
        preds.append(p)
        meas.append(t_)
        report["formats"][key] = {
            "dtype": dtype,
            **_ape(p, t_),
            "kernel_floor_s": t0,
            "memory_anchor_rows": int((m_ <= GEMM_MEMORY_ANCHOR_ROWS).sum()),
            "compute_anchor_rows": int(compute_anchor(m_, n_, k_).sum()),
            **({"fit_only_k_block_s": kb} if fo else {}),
            **_held_out_shapes(system, fmt, key, wb, ab, m_, n_, k_, t_, sk, fo),
        }
    allp, allm = np.concatenate(preds), np.concatenate(meas)
    report.update({"rows": int(allm.size), **_ape(allp, allm)})
    return nest_params(params), report


#: GEMM dtypes whose fitted floor is reported but not among the floors a set's fixed per-kernel
#: costs are taken from (:func:`gemm_floors`): the per-tensor FP8 kernels, fitted apart from the
#: block-scale ones since issue 18 item 7, so that the split moves no attention fit (calibrate.py)
#: and no AMD launch cost (fit/amd.py): those read one floor per compute format as before
FLOOR_EXCLUDED_DTYPES = ("fp8",)


def gemm_floors(report: dict) -> list[float]:
    """The fitted standalone floors (s) of a GEMM fit report (:func:`fit_gemm`) that fixed costs are
    read from: one per compute format (:data:`FLOOR_EXCLUDED_DTYPES` left out)."""
    return [f["kernel_floor_s"] for f in report["formats"].values() if f["dtype"] not in FLOOR_EXCLUDED_DTYPES]


def _fit_gemm_rows(
    system: System,
    fmt: str,
    key: str,
    wb: float,
    ab: float,
    m_,
    n_,
    k_,
    t_,
    serial_k: bool = False,
    fit_only_k: bool = False,
) -> tuple:
    """(eta_f, m_half_f, eta_m_f, t0_f, k_block_s or None) of one GEMM entry ``key`` on its rows
    (:func:`fit_gemm`'s three stages; ``serial_k``: fit k_block_s with the memory-bound anchor and
    hold it in stage 2; ``fit_only_k`` with it: stage 3 fits eta_f without the loop, as served; the
    k_block_s returned is the fitted one either way)."""
    from scipy.optimize import least_squares

    tab = gemm_table(m_, n_, k_, fmt, wb, ab, key)
    mem = m_ <= GEMM_MEMORY_ANCHOR_ROWS
    tab_m = gemm_table(m_[mem], n_[mem], k_[mem], fmt, wb, ab, key)

    def resid_mem(x):
        kb = math.exp(x[2]) if serial_k else None
        return np.log(gemm_model_s(system, tab_m, key, 0.5, 16.0, _sig(x[0]), math.exp(x[1]), kb) / t_[mem])

    x0 = [1.0, math.log(5e-6)] + ([math.log(1e-7)] if serial_k else [])
    s1 = least_squares(resid_mem, x0, loss="soft_l1", f_scale=0.2, max_nfev=300)
    em = _sig(s1.x[0])
    kb = math.exp(s1.x[2]) if serial_k else None

    def resid(x):
        return np.log(gemm_model_s(system, tab, key, _sig(x[0]), math.exp(x[1]), em, math.exp(x[2]), kb) / t_)

    sol = least_squares(resid, [0.5, math.log(100.0), math.log(5e-6)], loss="soft_l1", f_scale=0.2, max_nfev=300)
    eta, mh, t0 = _sig(sol.x[0]), math.exp(sol.x[1]), math.exp(sol.x[2])
    big = compute_anchor(m_, n_, k_)
    if key in COMPUTE_ANCHOR_KEYS and big.sum() >= COMPUTE_ANCHOR_MIN_ROWS:
        # the compute asymptote where it binds (as eta_m on the memory anchor): eta_f refitted on
        # the large rows, m_half and t0 held at the every-row fit's
        tab_b = gemm_table(m_[big], n_[big], k_[big], fmt, wb, ab, key)
        kb_served = None if fit_only_k else kb

        def resid_big(x):
            return np.log(gemm_model_s(system, tab_b, key, _sig(x[0]), max(mh, 16.0), em, t0, kb_served) / t_[big])

        eta = _sig(least_squares(resid_big, [0.5], loss="soft_l1", f_scale=0.2, max_nfev=300).x[0])
    # a half-rows far below one tensor-core tile is a degenerate fit (memory time hides the
    # compute term at few rows); keep it at 16 rows or more
    return eta, max(mh, 16.0), em, t0, kb


def gemm_shape_held_out(n_, k_) -> np.ndarray:
    """The GEMM rows the held-out check leaves out: every other (n, k) shape in sorted order, so
    whole shapes (every token count of them) are judged by a fit that never saw them.

    >>> gemm_shape_held_out(np.array([8., 8., 16., 32.]), np.array([4., 4., 4., 4.])).tolist()
    [False, False, True, False]
    """
    shapes = sorted(set(zip(n_.tolist(), k_.tolist())))
    out = {s: i % 2 == 1 for i, s in enumerate(shapes)}
    return np.array([out[s] for s in zip(n_.tolist(), k_.tolist())], dtype=bool)


def _held_out_shapes(
    system: System,
    fmt: str,
    key: str,
    wb: float,
    ab: float,
    m_,
    n_,
    k_,
    t_,
    serial_k: bool = False,
    fit_only_k: bool = False,
) -> dict:
    """The entry refitted on half of its (n, k) shapes and judged on the other half
    (:func:`gemm_shape_held_out`): ``held_out_median_ape`` / ``_p90_ape`` / ``_n``. Reported only:
    the shipped parameters are fitted on every row."""
    ho = gemm_shape_held_out(n_, k_)
    if ho.all() or not ho.any():
        return {}
    eta, mh, em, t0, kb = _fit_gemm_rows(
        system, fmt, key, wb, ab, m_[~ho], n_[~ho], k_[~ho], t_[~ho], serial_k, fit_only_k
    )
    p = gemm_model_s(system, gemm_table(m_[ho], n_[ho], k_[ho], fmt, wb, ab, key), key, eta, mh, em, t0, kb)
    return {f"held_out_{k}": v for k, v in _ape(p, t_[ho]).items()}


# ---- collectives -------------------------------------------------------------------------------

_NCCL_OPS = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter"}
#: the model's algorithms NCCL itself runs on one node (not the engines' one-/two-shot kernels)
_NCCL_ALGORITHMS = ("ring", "direct", "in_switch", "tree")


def fit_nccl(df: pd.DataFrame, system: System, eff: Efficiency | None = None) -> tuple[dict, dict]:
    """Judge the collective model on one node's NCCL table (all-reduce, all-gather,
    reduce-scatter; half precision; groups within the node); fits nothing.

    The link-efficiency ramps are a property of NCCL on NVLink, fitted once on published
    nccl-tests data (fit/collectives.py), so every system's own table is held out from them.

    Returns:
        ({}, report: rows, median/p90 absolute % error, median signed error ``bias``).
    """
    eff = DEFAULT_EFFICIENCY if eff is None else eff
    df = df[df.op_name.isin(list(_NCCL_OPS)) & (df.nccl_dtype == "half")].drop_duplicates(
        subset=["op_name", "num_gpus", "message_size"]
    )
    df = df[df.num_gpus <= system.levels[0].chips]
    t = df.latency.to_numpy() * 1e-3
    byt = df.message_size.to_numpy() * 2.0
    pred = np.empty_like(t)
    for (op, g), idx in df.groupby(["op_name", "num_gpus"]).indices.items():
        pred[idx] = collective_time(_NCCL_OPS[op], int(g), byt[idx], system, eff, algorithms=_NCCL_ALGORITHMS).time_s
    big = byt >= 2**20  # the bandwidth regime; below it NCCL's own 10-16 us floor (not modelled) dominates
    return {}, {
        "rows": int(len(df)),
        **_ape(pred, t),
        "bias": float(np.median(pred / t - 1)),
        "median_ape_ge_1mib": _ape(pred[big], t[big])["median_ape"],
        "bias_ge_1mib": float(np.median(pred[big] / t[big] - 1)),
    }


def fit_custom_allreduce_launch(df: pd.DataFrame, system: System, eff: Efficiency) -> tuple[dict, dict]:
    """``collective_launch_s`` from the custom all-reduce kernels serving engines use for TP
    all-reduce (TRT-LLM/SGLang, CUDA-graph friendly): the median over group sizes of the smallest
    small-message (<= 64 KiB) latency minus the modelled link part (launch set to 0)."""
    d = df[(df.message_size <= 65536) & (df.num_gpus <= system.levels[0].chips)]
    if d.empty:
        return {}, {"rows": 0}
    zero = RooflinePricer(system, dataclasses.replace(eff, collective_launch_s=0.0))
    floors = []
    for g, rows in d.groupby("num_gpus"):
        best = rows.loc[rows.latency.idxmin()]
        link = float(zero.collective("all_reduce", int(g), np.array([best.message_size * 2.0])).time_s[0])
        floors.append(max(best.latency * 1e-3 - link, 0.0))
    launch = float(np.median(floors))
    return {"collective_launch_s": launch}, {
        "rows": int(len(d)),
        "groups": sorted(int(x) for x in d.num_gpus.unique()),
        "collective_launch_s": launch,
    }
