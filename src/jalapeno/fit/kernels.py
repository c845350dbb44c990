"""Kernel fits: the efficiency parameters of one chip from its measured kernel tables.

Every prediction a fit compares with a measured kernel goes through the same pricer that prices
a step (cost/pricer.RooflinePricer on an op table built by cost/optable.OpBuilder and
cost/ops.add_routed_experts), so the fitted parameters mean exactly what the step cost uses; no
formula of the roofline or of the op accounting is written a second time. Forms and data:
fit/calibrate.py's module docstring and docs/model.md.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from jalapeno.cost.collectives import collective_time
from jalapeno.cost.ops import add_routed_experts
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import RooflinePricer
from jalapeno.errors import SpecError
from jalapeno.fit.collector_routing import collector_routing, gated_row, grouped_gate_rank0
from jalapeno.fit.kernel_tables import GEMM_DTYPES, MOE_DTYPES, gemm_key
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency, nest_params
from jalapeno.specs.hardware import System


def _sig(v: float) -> float:
    """Logistic map of an unconstrained fit variable onto a fraction in (0, 1)."""
    return 1 / (1 + math.exp(-v))


def _ape(pred, meas) -> dict:
    e = np.abs(np.asarray(pred) / np.asarray(meas) - 1)
    return {"median_ape": float(np.median(e)), "p90_ape": float(np.percentile(e, 90)), "n": int(e.size)}


# ---- GEMM -------------------------------------------------------------------------------------

def kernel_params(kind: str, fmt: str, **values) -> dict:
    """Efficiency parameters of one kernel group ``kind[fmt]`` (gemm | moe) as dotted keys
    (``gemm.fp8.peak_fraction``; specs/efficiency.nest_params gives the TOML form); any of
    peak_fraction, half_rows, hbm_fraction, token_passes, k_block_s."""
    return {f"{kind}.{fmt}.{k}": float(v) for k, v in values.items() if v is not None}


def fit_efficiency(overrides: dict) -> Efficiency:
    """The documented defaults with trial parameter values (scalars by name, kernel parameters as
    dotted ``kind.fmt.field`` keys). Not range-checked: an optimiser's trial points may stray past
    the sanity ceilings of ``Efficiency.with_overrides`` before converging."""
    eff = DEFAULT_EFFICIENCY
    scalars = {}
    for k, v in overrides.items():
        if "." in k:
            kind, fmt, name = k.split(".")
            eff = eff.with_kernel(kind, fmt, **{name: v})
        else:
            scalars[k] = v
    return dataclasses.replace(eff, **scalars)


def priced_s(system: System, table, overrides: dict) -> np.ndarray:
    """Time of the single op of ``table`` (an OpTable of one row, N points) on ``system`` under the
    documented defaults with ``overrides`` — through the same pricer that prices a step."""
    return RooflinePricer(system, fit_efficiency(overrides)).op_times(table).time_s[0]


def _single_op(n: int, kind: str, **work):
    """An op table of one BF16 op of ``kind`` over ``n`` points (``work``: flop / kv / act arrays)."""
    ob = OpBuilder(n)
    ob.op(kind, kind, "bf16", **work)
    return ob.build()[0]


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
    return priced_s(system, table, {**kernel_params("gemm", fmt, peak_fraction=eta_f, half_rows=m_half,
                                                    hbm_fraction=eta_m, k_block_s=k_block), "kernel_launch_s": t0})


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


def fit_gemm(df: pd.DataFrame, system: System, serial_k: tuple[str, ...] = (),
             fit_only_k: tuple[str, ...] = ()) -> tuple[dict, dict]:
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
        params.update(kernel_params("gemm", key, peak_fraction=eta, half_rows=mh, hbm_fraction=em,
                                    k_block_s=None if fo else kb))
        floors[key] = t0
        p = gemm_model_s(system, gemm_table(m_, n_, k_, fmt, wb, ab, key), key, eta, mh, em, t0, kb)
        preds.append(p)
        meas.append(t_)
        report["formats"][key] = {"dtype": dtype, **_ape(p, t_), "kernel_floor_s": t0,
                                  "memory_anchor_rows": int((m_ <= GEMM_MEMORY_ANCHOR_ROWS).sum()),
                                  "compute_anchor_rows": int(compute_anchor(m_, n_, k_).sum()),
                                  **({"fit_only_k_block_s": kb} if fo else {}),
                                  **_held_out_shapes(system, fmt, key, wb, ab, m_, n_, k_, t_, sk, fo)}
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


def _fit_gemm_rows(system: System, fmt: str, key: str, wb: float, ab: float, m_, n_, k_, t_,
                   serial_k: bool = False, fit_only_k: bool = False) -> tuple:
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

    sol = least_squares(resid, [0.5, math.log(100.0), math.log(5e-6)], loss="soft_l1", f_scale=0.2,
                        max_nfev=300)
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


def _held_out_shapes(system: System, fmt: str, key: str, wb: float, ab: float, m_, n_, k_, t_,
                     serial_k: bool = False, fit_only_k: bool = False) -> dict:
    """The entry refitted on half of its (n, k) shapes and judged on the other half
    (:func:`gemm_shape_held_out`): ``held_out_median_ape`` / ``_p90_ape`` / ``_n``. Reported only:
    the shipped parameters are fitted on every row."""
    ho = gemm_shape_held_out(n_, k_)
    if ho.all() or not ho.any():
        return {}
    eta, mh, em, t0, kb = _fit_gemm_rows(system, fmt, key, wb, ab, m_[~ho], n_[~ho], k_[~ho], t_[~ho], serial_k,
                                         fit_only_k)
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
        subset=["op_name", "num_gpus", "message_size"])
    df = df[df.num_gpus <= system.levels[0].chips]
    t = df.latency.to_numpy() * 1e-3
    byt = df.message_size.to_numpy() * 2.0
    pred = np.empty_like(t)
    for (op, g), idx in df.groupby(["op_name", "num_gpus"]).indices.items():
        pred[idx] = collective_time(_NCCL_OPS[op], int(g), byt[idx], system, eff, algorithms=_NCCL_ALGORITHMS).time_s
    big = byt >= 2**20  # the bandwidth regime; below it NCCL's own 10-16 us floor (not modelled) dominates
    return {}, {"rows": int(len(df)), **_ape(pred, t), "bias": float(np.median(pred / t - 1)),
                "median_ape_ge_1mib": _ape(pred[big], t[big])["median_ape"],
                "bias_ge_1mib": float(np.median(pred[big] / t[big] - 1))}


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
    return {"collective_launch_s": launch}, {"rows": int(len(d)), "groups": sorted(int(x) for x in d.num_gpus.unique()),
                                             "collective_launch_s": launch}


# ---- MoE layers ------------------------------------------------------------------------------------

#: MoE shape kept out of the MoE fit and used to judge it: DeepSeek-V3/R1's (hidden 7168, 256
#: experts, top-8, any tensor-parallel slice of its 2048 expert intermediate), the model most of
#: the validation points serve
MOE_HELD_OUT_SHAPE = (7168, 256, 8)
#: fraction of a format's rows on which the compute term must bind for its compute parameters to
#: be identified; below it only the HBM fraction is fitted and emitted (tables of few tokens)
MOE_COMPUTE_MIN_SHARE = 0.1


#: the columns that name one MoE configuration of a ``moe_perf`` table
MOE_KEYS = ["moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size",
            "moe_ep_size", "distribution"]


#: How a kernel table's routing touches experts (:func:`moe_rows`). ``balanced``: aiconfigurator's
#: collectors route by ``balanced_logits`` (collector/helper.py and the trtllm/sglang/vllm
#: collect_moe.py copies: stride s = ceil(E/k); token i takes experts (i + j·s) mod E, j < k, when
#: T >= s, else (i·s/T + j·s) mod E), so T tokens touch min(E, T·k) distinct experts (all of them once
#: T >= s) and a rank of E/ep experts min(E/ep, T·k/ep): every expert the load can reach, not the
#: uniform-random expectation E·(1 − (1 − k/E)^T) the serving op table takes (cost/moe.py) — at
#: DeepSeek's 256 experts, top-8, 32 tokens: 256 against 163. ``uniform``: that random expectation
#: (cost/moe.experts_touched_on_rank). ``collector``: each row read with the routing its collector
#: pass used — ``balanced`` for the plain top-k rows, the grouped gate (fit/collector_routing.
#: grouped_gate_rank0) for TensorRT-LLM's NVFP4 ``min_latency`` rows (fit/collector_routing.gated_row).
#: The NVIDIA calibration sets (fit/calibrate.py) and the table pricer read ``collector``
#: (:data:`CALIBRATION_TOUCHED_RULE`); AMD's aiter tables (fit/amd.py) ``uniform``; the engine-backend
#: fits (fit/moe_backends.fit_backend_kernels) ``balanced``.
MOE_TOUCHED_RULES = ("balanced", "uniform", "collector")
#: the rule the NVIDIA calibration sets, the ordering check and the table pricer read aiconfigurator's
#: ``moe_perf`` rows with (round 35: ``uniform`` before; docs/gap_aic_itl.md "round 35")
CALIBRATION_TOUCHED_RULE = "collector"


def moe_rows(df: pd.DataFrame, touched_rule: str = "uniform", dtypes: dict | None = None,
             distributions: tuple = ("balanced",)) -> pd.DataFrame:
    """Rows of a ``moe_perf`` table in a format we model and a routing of ``distributions``, one per configuration.

    The fastest kernel per configuration is kept (engines autotune the MoE backend), and each row
    gets the modelled quantities of the cost/ops.py expert op: the busiest rank's assignments
    (even routing, so no binomial tail), distinct experts touched (``touched_rule``,
    :data:`MOE_TOUCHED_RULES`), FLOPs, weight and activation bytes. ``dtypes``: table dtype →
    (compute format, weight B/elem, activation B/elem); default fit/kernel_tables.MOE_DTYPES.
    ``distributions``: the routings read (the table's ``distribution`` column; default the balanced rows,
    the only ones the fits use); a power-law row is read with the collector's power-law routing whatever
    ``touched_rule`` says: the measured (busiest) rank's expected assignments and distinct experts
    (fit/collector_routing.collector_routing; rows whose EP size does not divide the experts are dropped).

    >>> one = pd.DataFrame({"moe_dtype": ["fp8_block"], "num_tokens": [32], "hidden_size": [7168], "inter_size": [2048],
    ...                     "topk": [8], "num_experts": [256], "moe_tp_size": [1], "moe_ep_size": [1],
    ...                     "distribution": ["balanced"], "latency": [0.1]})
    >>> [round(float(moe_rows(one, rule).touched.iloc[0])) for rule in MOE_TOUCHED_RULES]
    [256, 163, 256]

    Raises:
        SpecError: an unknown ``touched_rule``.
    """
    from jalapeno.cost.moe import busiest_rank_assignments, experts_touched_on_rank

    if touched_rule not in MOE_TOUCHED_RULES:
        raise SpecError("moe_rows: touched_rule", f"unknown rule {touched_rule!r}",
                        f"use one of {', '.join(MOE_TOUCHED_RULES)}")
    keys, dt = MOE_KEYS, MOE_DTYPES if dtypes is None else dtypes
    d = df[df.distribution.isin(list(distributions)) & df.moe_dtype.isin(list(dt))
           & (df.num_experts >= df.moe_ep_size)]
    d = d[(d.distribution == "balanced") | (d.num_experts % d.moe_ep_size == 0)]
    if touched_rule == "collector":  # the fastest row per configuration, with the kernel path that ran it
        d = d.reset_index(drop=True)  # idxmin returns labels: a repeated label (a concatenated table) would pick many
        d = d.loc[d.groupby(keys).latency.idxmin()].reset_index(drop=True)
    else:
        d = d.groupby(keys, as_index=False).latency.min()
    load = np.array([float(busiest_rank_assignments(r.num_tokens, r.topk, r.moe_ep_size, 0.0))
                     for r in d.itertuples(index=False)])
    on_rank = np.array([float(math.ceil(r.num_experts / r.moe_ep_size)) for r in d.itertuples(index=False)])
    if touched_rule in ("balanced", "collector"):
        touched = np.minimum(on_rank, load)
    else:
        touched = np.array([float(experts_touched_on_rank(a, int(n), r.num_experts, r.topk, r.moe_ep_size))
                            for a, n, r in zip(load, on_rank, d.itertuples(index=False))])
    if touched_rule == "collector":
        srcs = d.kernel_source if "kernel_source" in d else [""] * len(d)
        for i in np.flatnonzero([gated_row(src, e) for src, e in zip(srcs, d.num_experts)]):
            r = d.iloc[i]
            load[i], touched[i] = grouped_gate_rank0(int(r.num_tokens), int(r.num_experts), int(r.topk),
                                                     int(r.moe_ep_size))
    for i in np.flatnonzero((d.distribution != "balanced").to_numpy()):
        r = d.iloc[i]
        load[i], touched[i] = collector_routing(int(r.num_tokens), int(r.num_experts), int(r.topk),
                                                int(r.moe_ep_size), str(r.distribution))
    wb = d.moe_dtype.map(lambda x: dt[x][1]).to_numpy(float)
    ab = d.moe_dtype.map(lambda x: dt[x][2]).to_numpy(float)
    return d.assign(fmt=d.moe_dtype.map(lambda x: dt[x][0]), t=d.latency * 1e-3, load=load,
                    touched=touched, inter=(d.inter_size / d.moe_tp_size).to_numpy(float), w_b=wb, a_b=ab,
                    token_bytes=d.num_tokens.to_numpy(float) * d.hidden_size.to_numpy(float) * 2.0,
                    held_out=[tuple(int(v) for v in x) == MOE_HELD_OUT_SHAPE for x in
                              zip(d.hidden_size, d.num_experts, d.topk)])


def moe_table(r: pd.DataFrame, fmt: str, passes: float = 0.0):
    """One routed-expert op per ``moe_rows`` row, accounted by cost/ops.add_routed_experts (the step's
    own expert op) with ``passes`` BF16 passes over the group's tokens."""
    ob = OpBuilder(len(r))
    h, inter = r.hidden_size.to_numpy(float), r.inter.to_numpy(float)
    add_routed_experts(ob, "moe", fmt, r.load.to_numpy(), r.touched.to_numpy(), h, inter, 3 * h * inter,
                       r.w_b.to_numpy(), r.a_b.to_numpy(), passes * r.token_bytes.to_numpy())
    return ob.build()[0]


def moe_times(system: System, r: pd.DataFrame, fmt: str, eta_f, m_half, eta_m, floor_s, passes=0.0):
    """Modelled routed-expert block times (OpTimes, one row) through the roofline pricer."""
    eff = fit_efficiency({**kernel_params("moe", fmt, peak_fraction=eta_f, half_rows=m_half, hbm_fraction=eta_m),
                          "moe_floor_s": floor_s})
    return RooflinePricer(system, eff).op_times(moe_table(r, fmt, passes))


def moe_model_s(system: System, r: pd.DataFrame, fmt: str, eta_f, m_half, eta_m, floor_s, passes=0.0) -> np.ndarray:
    """Modelled routed-expert block time (s) of every row of ``r``."""
    return moe_times(system, r, fmt, eta_f, m_half, eta_m, floor_s, passes).time_s[0]


#: the declared held-out splits of :func:`fit_moe`: ``shape`` keeps DeepSeek's shape
#: (:data:`MOE_HELD_OUT_SHAPE`) out of the fit; ``tokens`` fits every shape on the token counts that
#: are even powers of two (16, 64, 256, 1024) and holds out the odd ones (32, 128, 512)
MOE_SPLITS = {"shape": "held_out_deepseek_shape", "tokens": "held_out_tokens"}


def fit_moe(df: pd.DataFrame, system: System, split: str = "shape", touched_rule: str = "uniform",
            dtypes: dict | None = None) -> tuple[dict, dict]:
    """(parameters, report) from a ``moe_perf`` table, part of it held out (``split``).

    Per compute format: (eta_f, m_half_f, eta_m_f, floor, passes) by robust least squares on log
    time; then one floor (the median over formats, reported as ``kernel_floor_s``) and the
    per-format parameters refitted with it. ``moe[f].token_passes`` is fitted only when the table
    spans several EP sizes (else it is confounded with the per-assignment traffic). The report
    gives the fit error and the error on the held-out rows (:data:`MOE_SPLITS`).

    Args:
        split: ``shape`` (DeepSeek's shape held out: tables of many shapes, aiconfigurator's) or
            ``tokens`` (every shape fitted, alternate token counts held out: tables of a few
            shapes where DeepSeek's is the one served, AMD's aiter ``tuned_fmoe``; fit/amd.py).
        touched_rule, dtypes: as :func:`moe_rows` (how the table's routing touches experts; its dtypes).

    Raises:
        SpecError: an unknown ``split`` or ``touched_rule``.
    """
    from scipy.optimize import least_squares

    if split not in MOE_SPLITS:
        raise SpecError("fit_moe: split", f"unknown split {split!r}", f"use one of {', '.join(MOE_SPLITS)}")
    chip = system.chip
    d = moe_rows(df, touched_rule, dtypes)
    d = d[d.fmt.isin(list(chip.peak_flop_per_s))]
    if d.empty:
        return {}, {"rows": 0}
    if split == "tokens":
        d = d.assign(held_out=np.round(np.log2(d.num_tokens.to_numpy(float))).astype(int) % 2 == 1)

    def fit(r, floor=None, scan=True):
        fmt = r.fmt.iloc[0]

        def resid(x):
            fl = math.exp(x[3]) if floor is None else floor
            return np.log(moe_model_s(system, r, fmt, _sig(x[0]), math.exp(x[1]), _sig(x[2]), fl,
                                      math.exp(x[4]) if scan else 0.0) / r.t.to_numpy())
        sol = least_squares(resid, [0.0, math.log(64.0), 0.5, math.log(2e-5), 0.0], loss="soft_l1", f_scale=0.2,
                            max_nfev=600)
        return (_sig(sol.x[0]), max(math.exp(sol.x[1]), 1.0), _sig(sol.x[2]), math.exp(sol.x[3]),
                math.exp(sol.x[4]) if scan else 0.0)

    train = d[~d.held_out]
    # the token passes are identified only against expert-parallel spread (more ranks, same tokens)
    scan = train.moe_ep_size.nunique() > 1
    floor = float(np.median([fit(r, scan=scan)[3] for _, r in train.groupby("fmt")]))
    params, report = {}, {"rows": int(len(train)), "kernel_floor_s": floor, "formats": {}}
    for fmt, r in train.groupby("fmt"):
        eta, mh, em, _, passes = fit(r, floor, scan)
        times = moe_times(system, r, fmt, eta, mh, em, floor, passes)
        share = float(np.mean(times.compute_s[0] > times.memory_s[0]))
        params.update(kernel_params("moe", fmt, hbm_fraction=em, token_passes=passes if scan else None))
        if share >= MOE_COMPUTE_MIN_SHARE:
            params.update(kernel_params("moe", fmt, peak_fraction=eta, half_rows=mh))
        rep = {"fit": _ape(times.time_s[0], r.t), "compute_bound_share": share}
        ho = d[d.held_out & (d.fmt == fmt)]
        if len(ho):
            rep[MOE_SPLITS[split]] = _ape(moe_model_s(system, ho, fmt, eta, mh, em, floor, passes), ho.t)
        report["formats"][fmt] = rep
    return nest_params(params), report
