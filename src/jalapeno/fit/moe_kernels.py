"""MoE kernel fits: the MoE efficiency parameters of one chip from its measured ``moe_perf`` table.

A table row (one MoE layer at a token count, routing, TP/EP slice) becomes the op the step's op table builds
for it (cost/expert_ops.add_routed_experts, with the experts the collector's routing touches: :data:`MOE_TOUCHED_RULES`)
and is priced by the step pricer (fit/kernel_model.py), so the fitted parameters mean what the step cost uses.
Forms and data: fit/calibrate.py's module docstring and docs/model.md. Split from fit/kernels.py in round 49
(module line budget: the GEMM and collective fits stay there); fit/kernels.py re-exports these names.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from jalapeno.cost.expert_ops import add_routed_experts
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import RooflinePricer
from jalapeno.errors import SpecError
from jalapeno.fit.collector_routing import collector_routing, gated_row, grouped_gate_rank0
from jalapeno.fit.kernel_model import _ape, _sig, fit_efficiency, kernel_params
from jalapeno.fit.kernel_tables import MOE_DTYPES
from jalapeno.specs.efficiency import nest_params
from jalapeno.specs.hardware import System


# ---- MoE layers ------------------------------------------------------------------------------------

#: MoE shape kept out of the MoE fit and used to judge it: DeepSeek-V3/R1's (hidden 7168, 256
#: experts, top-8, any tensor-parallel slice of its 2048 expert intermediate), the model most of
#: the validation points serve
MOE_HELD_OUT_SHAPE = (7168, 256, 8)
#: fraction of a format's rows on which the compute term must bind for its compute parameters to
#: be identified; below it only the HBM fraction is fitted and emitted (tables of few tokens)
MOE_COMPUTE_MIN_SHARE = 0.1


#: the columns that name one MoE configuration of a ``moe_perf`` table
MOE_KEYS = [
    "moe_dtype",
    "num_tokens",
    "hidden_size",
    "inter_size",
    "topk",
    "num_experts",
    "moe_tp_size",
    "moe_ep_size",
    "distribution",
]


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


def moe_rows(
    df: pd.DataFrame, touched_rule: str = "uniform", dtypes: dict | None = None, distributions: tuple = ("balanced",)
) -> pd.DataFrame:
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
        raise SpecError(
            "moe_rows: touched_rule", f"unknown rule {touched_rule!r}", f"use one of {', '.join(MOE_TOUCHED_RULES)}"
        )
    keys, dt = MOE_KEYS, MOE_DTYPES if dtypes is None else dtypes
    d = df[df.distribution.isin(list(distributions)) & df.moe_dtype.isin(list(dt)) & (df.num_experts >= df.moe_ep_size)]
    d = d[(d.distribution == "balanced") | (d.num_experts % d.moe_ep_size == 0)]
    if touched_rule == "collector":  # the fastest row per configuration, with the kernel path that ran it
        d = d.reset_index(drop=True)  # idxmin returns labels: a repeated label (a concatenated table) would pick many
        d = d.loc[d.groupby(keys).latency.idxmin()].reset_index(drop=True)
    else:
        d = d.groupby(keys, as_index=False).latency.min()
    load = np.array(
        [float(busiest_rank_assignments(r.num_tokens, r.topk, r.moe_ep_size, 0.0)) for r in d.itertuples(index=False)]
    )
    on_rank = np.array([float(math.ceil(r.num_experts / r.moe_ep_size)) for r in d.itertuples(index=False)])
    if touched_rule in ("balanced", "collector"):
        touched = np.minimum(on_rank, load)
    else:
        touched = np.array(
            [
                float(experts_touched_on_rank(a, int(n), r.num_experts, r.topk, r.moe_ep_size))
                for a, n, r in zip(load, on_rank, d.itertuples(index=False))
            ]
        )
    if touched_rule == "collector":
        srcs = d.kernel_source if "kernel_source" in d else [""] * len(d)
        for i in np.flatnonzero([gated_row(src, e) for src, e in zip(srcs, d.num_experts)]):
            r = d.iloc[i]
            load[i], touched[i] = grouped_gate_rank0(
                int(r.num_tokens), int(r.num_experts), int(r.topk), int(r.moe_ep_size)
            )
    for i in np.flatnonzero((d.distribution != "balanced").to_numpy()):
        r = d.iloc[i]
        load[i], touched[i] = collector_routing(
            int(r.num_tokens), int(r.num_experts), int(r.topk), int(r.moe_ep_size), str(r.distribution)
        )
    wb = d.moe_dtype.map(lambda x: dt[x][1]).to_numpy(float)
    ab = d.moe_dtype.map(lambda x: dt[x][2]).to_numpy(float)
    return d.assign(
        fmt=d.moe_dtype.map(lambda x: dt[x][0]),
        t=d.latency * 1e-3,
        load=load,
        touched=touched,
        inter=(d.inter_size / d.moe_tp_size).to_numpy(float),
        w_b=wb,
        a_b=ab,
        token_bytes=d.num_tokens.to_numpy(float) * d.hidden_size.to_numpy(float) * 2.0,
        held_out=[tuple(int(v) for v in x) == MOE_HELD_OUT_SHAPE for x in zip(d.hidden_size, d.num_experts, d.topk)],
    )


def moe_table(r: pd.DataFrame, fmt: str, passes: float = 0.0):
    """One routed-expert op per ``moe_rows`` row, accounted by cost/expert_ops.add_routed_experts (the step's
    own expert op) with ``passes`` BF16 passes over the group's tokens."""
    ob = OpBuilder(len(r))
    h, inter = r.hidden_size.to_numpy(float), r.inter.to_numpy(float)
    add_routed_experts(
        ob,
        "moe",
        fmt,
        r.load.to_numpy(),
        r.touched.to_numpy(),
        h,
        inter,
        3 * h * inter,
        r.w_b.to_numpy(),
        r.a_b.to_numpy(),
        passes * r.token_bytes.to_numpy(),
    )
    return ob.build()[0]


def moe_times(system: System, r: pd.DataFrame, fmt: str, eta_f, m_half, eta_m, floor_s, passes=0.0):
    """Modelled routed-expert block times (OpTimes, one row) through the roofline pricer."""
    eff = fit_efficiency(
        {**kernel_params("moe", fmt, peak_fraction=eta_f, half_rows=m_half, hbm_fraction=eta_m), "moe_floor_s": floor_s}
    )
    return RooflinePricer(system, eff).op_times(moe_table(r, fmt, passes))


def moe_model_s(system: System, r: pd.DataFrame, fmt: str, eta_f, m_half, eta_m, floor_s, passes=0.0) -> np.ndarray:
    """Modelled routed-expert block time (s) of every row of ``r``."""
    return moe_times(system, r, fmt, eta_f, m_half, eta_m, floor_s, passes).time_s[0]


#: the declared held-out splits of :func:`fit_moe`: ``shape`` keeps DeepSeek's shape
#: (:data:`MOE_HELD_OUT_SHAPE`) out of the fit; ``tokens`` fits every shape on the token counts that
#: are even powers of two (16, 64, 256, 1024) and holds out the odd ones (32, 128, 512)
MOE_SPLITS = {"shape": "held_out_deepseek_shape", "tokens": "held_out_tokens"}


def fit_moe(
    df: pd.DataFrame, system: System, split: str = "shape", touched_rule: str = "uniform", dtypes: dict | None = None
) -> tuple[dict, dict]:
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
            return np.log(
                moe_model_s(system, r, fmt, _sig(x[0]), math.exp(x[1]), _sig(x[2]), fl, math.exp(x[4]) if scan else 0.0)
                / r.t.to_numpy()
            )

        sol = least_squares(
            resid, [0.0, math.log(64.0), 0.5, math.log(2e-5), 0.0], loss="soft_l1", f_scale=0.2, max_nfev=600
        )
        return (
            _sig(sol.x[0]),
            max(math.exp(sol.x[1]), 1.0),
            _sig(sol.x[2]),
            math.exp(sol.x[3]),
            math.exp(sol.x[4]) if scan else 0.0,
        )

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
