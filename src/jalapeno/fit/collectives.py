"""Link efficiency of collectives by algorithm and message size, fitted on published nccl-tests data.

Data: ``data/collectives/nccl_tests.csv`` (package data; one row per published point, each with
its source): NCCL collective latencies or bus bandwidths on 8-GPU NVLink nodes, and custom
all-reduce latencies. ``role`` splits them: ``fit`` rows (aiconfigurator-core's NCCL 2.27.3 table
of an 8x H100 node, 512 B - 512 MiB) calibrate; ``check`` rows (nccl-tests outputs and maintainer
figures from GitHub issues and a vendor blog: H100 at 1-16 GiB, H800, A100, an H20 curve, and
SGLang's custom all-reduce table) are never fitted and report the error.

Functional form (cost/collectives.py :func:`size_efficiency`), per algorithm family, with the
message size M in bytes (the per-rank buffer; cost/collectives.py conventions):
- NCCL ring / direct (all-gather, reduce-scatter, ring all-reduce): t = alpha_r + S / (B·eta_r(M)),
  S = (g-1)/g·M bytes on the wire per rank per pass, eta_r(M) = f_r / (1 + (h_r/M)^p_r);
- in-switch (NVLS) all-reduce: t = alpha_n + M / (B·eta_n(M)), eta_n(M) = f_n / (1 + (h_n/M)^p_n);
with B the per-direction link bandwidth and alpha_r/alpha_n NCCL's fixed latency (nuisance
parameters of the fit, not used by the model, whose latencies are per-hop ``latency_s`` and
``collective_launch_s``). Least squares on log time (scipy), rows of at least 1 MiB.
Bus bandwidth (nccl-tests, doc/PERFORMANCE.md): all-reduce M·2(g-1)/g / t; all-gather and
reduce-scatter M·(g-1)/g / t.

The MoE expert-parallel all-to-all, fitted on TensorRT-LLM's measured NVLink kernels, is fit/ep_all_to_all.py's.
"""

from __future__ import annotations

import dataclasses
from importlib import resources

import numpy as np
import pandas as pd

from jalapeno.cost.collectives import collective_time, size_efficiency
from jalapeno.fit.ep_all_to_all import (  # noqa: F401 (re-exported: split from here, round 53)
    A2A_FIT_EP,
    A2A_HELD_EP,
    A2A_KERNEL,
    ep_all_to_all_floor,
    ep_all_to_all_frame,
    fit_ep_all_to_all,
    judge_ep_all_to_all,
    model_ep_all_to_all,
)
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency
from jalapeno.specs.hardware import LinkLevel, System

#: the columns of data/collectives/nccl_tests.csv
COLUMNS = (
    "id",
    "system",
    "link_gb_per_s",
    "gpus",
    "collective",
    "algorithm",
    "message_bytes",
    "time_us",
    "busbw_gb_per_s",
    "role",
    "source",
)
#: the model's algorithms each kind of published row may be matched by (None: all)
_ALGORITHMS = {
    "ring": ("ring", "direct"),
    "custom": ("one_shot", "two_shot"),
    "nvls": ("in_switch",),
    "nccl_default_nvls": ("in_switch",),
}
_BUS_FACTOR = {
    "all_reduce": lambda g: 2 * (g - 1) / g,
    "all_gather": lambda g: (g - 1) / g,
    "reduce_scatter": lambda g: (g - 1) / g,
}


def load_nccl_tests() -> pd.DataFrame:
    """The shipped published collective points, with ``busbw`` (B/s) and ``time_s`` both filled.

    Returns:
        DataFrame with the :data:`COLUMNS` plus ``link_bytes_per_s``, ``time_s``, ``busbw``.
    """
    with resources.as_file(resources.files("jalapeno") / "data" / "collectives" / "nccl_tests.csv") as p:
        df = pd.read_csv(p)
    df["link_bytes_per_s"] = df.link_gb_per_s * 1e9
    fac = np.array([_BUS_FACTOR[c](g) for c, g in zip(df.collective, df.gpus)])
    t = df.time_us * 1e-6
    bw = df.busbw_gb_per_s * 1e9
    df["time_s"] = np.where(t.notna(), t, df.message_bytes * fac / bw)
    df["busbw"] = np.where(bw.notna(), bw, df.message_bytes * fac / t)
    return df


#: smallest message a fit row may have: below it NCCL's fixed latency (10-16 us on these nodes)
#: dominates and the bandwidth ramp is not identifiable (the model prices that regime with its
#: per-hop ``latency_s`` and ``collective_launch_s``)
FIT_MIN_BYTES = 2**20


def _family_time(params: np.ndarray, df: pd.DataFrame) -> np.ndarray:
    f_r, h_r, p_r, f_n, h_n, p_n, a_r, a_n = params
    m = df.message_bytes.to_numpy(dtype=float)
    g = df.gpus.to_numpy(dtype=float)
    b = df.link_bytes_per_s.to_numpy(dtype=float)
    nvls = (df.algorithm.str.contains("nvls")).to_numpy()
    passes = np.where(df.collective.to_numpy() == "all_reduce", 2.0, 1.0)  # a ring all-reduce: RS + AG
    ring = a_r + passes * (g - 1) / g * m / (b * size_efficiency(m, f_r, h_r, p_r))
    inswitch = a_n + m / (b * size_efficiency(m, f_n, h_n, p_n))
    return np.where(nvls, inswitch, ring)


def fit_link_efficiency(df: pd.DataFrame | None = None) -> tuple[dict, dict]:
    """Fit the ring and in-switch ramps (fraction, half size, shape each) on the ``fit`` rows of
    at least :data:`FIT_MIN_BYTES`, with NCCL's fixed latency per family as a nuisance parameter.

    Returns:
        (parameters for :class:`Efficiency`: link_fraction, link_half_bytes, link_shape,
        in_switch_fraction, in_switch_half_bytes, in_switch_shape; report: rows, median/p90 |%|
        error on the fit rows, the nuisance latencies alpha_ring_s / alpha_nvls_s).
    """
    from scipy.optimize import least_squares

    df = load_nccl_tests() if df is None else df
    fit = df[
        (df.role == "fit") & df.algorithm.isin(["ring", "nccl_default_nvls"]) & (df.message_bytes >= FIT_MIN_BYTES)
    ]
    t = fit.time_s.to_numpy()
    x0 = np.array([0.8, 4e6, 0.5, 0.6, 4e6, 0.5, 10e-6, 15e-6])
    lo = np.array([0.05, 1e3, 0.1, 0.05, 1e3, 0.1, 0.0, 0.0])
    hi = np.array([1.0, 1e10, 3.0, 1.0, 1e10, 3.0, 100e-6, 100e-6])
    res = least_squares(
        lambda x: np.log(_family_time(x, fit) / t),
        x0,
        bounds=(lo, hi),
        x_scale=np.array([0.1, 1e6, 0.1, 0.1, 1e6, 0.1, 1e-5, 1e-5]),
    )
    f_r, h_r, p_r, f_n, h_n, p_n, a_r, a_n = (float(v) for v in res.x)
    err = _family_time(res.x, fit) / t - 1
    params = {"link_fraction": f_r, "link_half_bytes": h_r, "link_shape": p_r}
    if fit.algorithm.str.contains("nvls").any():  # else the in-switch ramp is not identified (no NVLS rows)
        params.update({"in_switch_fraction": f_n, "in_switch_half_bytes": h_n, "in_switch_shape": p_n})
    return params, {
        "rows": len(fit),
        "median_ape": float(np.median(np.abs(err))),
        "p90_ape": float(np.percentile(np.abs(err), 90)),
        "alpha_ring_s": a_r,
        "alpha_nvls_s": a_n,
    }


def _custom_time(params: np.ndarray, df: pd.DataFrame) -> np.ndarray:
    f, h, p, a = params
    m = df.message_bytes.to_numpy(dtype=float)
    g = df.gpus.to_numpy(dtype=float)
    bw = df.link_bytes_per_s.to_numpy(dtype=float) * size_efficiency(m, f, h, p)
    return np.minimum(a + (g - 1) * m / bw, 2 * a + 2 * (g - 1) / g * m / bw)


def fit_custom_allreduce(df: pd.DataFrame | None = None) -> tuple[dict, dict]:
    """Fit the ramp of the engines' custom one-shot / two-shot all-reduce kernels on the ``fit``
    rows of algorithm ``custom`` (TensorRT-LLM's kernels on an H100 node, TP 2/4/8, 256 B - 1 GiB):
    t = min(a + (g-1)·M / (B·eta_c(M)), 2a + 2(g-1)/g·M / (B·eta_c(M))), every size (the
    latency a is part of the fit: these kernels are the ones serving engines run in decode).

    Returns:
        (custom_ar_fraction, custom_ar_half_bytes, custom_ar_shape; report with the fitted
        latency ``alpha_s`` — compare with the model's per-hop latency + ``collective_launch_s``).
    """
    from scipy.optimize import least_squares

    df = load_nccl_tests() if df is None else df
    fit = df[(df.role == "fit") & (df.algorithm == "custom")]
    t = fit.time_s.to_numpy()
    res = least_squares(
        lambda x: np.log(_custom_time(x, fit) / t),
        np.array([0.8, 1e6, 0.7, 3e-6]),
        bounds=(np.array([0.05, 1e2, 0.1, 0.0]), np.array([1.0, 1e10, 3.0, 1e-4])),
        x_scale=np.array([0.1, 1e6, 0.1, 1e-6]),
    )
    f, h, p, a = (float(v) for v in res.x)
    err = _custom_time(res.x, fit) / t - 1
    return (
        {"custom_ar_fraction": f, "custom_ar_half_bytes": h, "custom_ar_shape": p},
        {
            "rows": len(fit),
            "median_ape": float(np.median(np.abs(err))),
            "p90_ape": float(np.percentile(np.abs(err), 90)),
            "alpha_s": a,
        },
    )


def custom_allreduce_frame(table: pd.DataFrame, system: System) -> pd.DataFrame:
    """aiconfigurator's ``custom_allreduce_perf`` table (latency ms, message in bf16 elements) in
    this module's row schema, on ``system``'s innermost link."""
    t = table.drop_duplicates(subset=["num_gpus", "message_size"])
    return pd.DataFrame(
        {
            "message_bytes": t.message_size.to_numpy() * 2.0,
            "gpus": t.num_gpus.to_numpy(),
            "time_s": t.latency.to_numpy() * 1e-3,
            "role": "fit",
            "algorithm": "custom",
            "link_bytes_per_s": system.levels[0].bandwidth_bytes_per_s,
        }
    )


def node_system(link_bytes_per_s: float, nvls: bool, gpus: int = 8, latency_s: float = 1e-6) -> System:
    """A one-level switched node of ``gpus`` chips (for pricing a published point on its own link).

    The per-hop latency is the catalog's NVSwitch assumption (1 us, data/systems/h100.toml).
    """
    from jalapeno.specs.catalog import load_system

    base = load_system("h100")
    node = dataclasses.replace(
        base.levels[0],
        chips=gpus,
        bandwidth_bytes_per_s=link_bytes_per_s,
        in_network_reduction=nvls,
        latency_s=latency_s,
    )
    return dataclasses.replace(base, name=f"node-{link_bytes_per_s / 1e9:.0f}GBps", levels=(node,))


def model_busbw(df: pd.DataFrame, eff: Efficiency = DEFAULT_EFFICIENCY) -> pd.DataFrame:
    """The model's time and bus bandwidth for every row, on a node with the row's own link.

    ``ring`` rows are priced without in-switch reduction (NCCL_ALGO=RING or a switch without
    NVLS) and with the model's NCCL algorithms only (ring / direct), ``nvls`` rows with it,
    ``custom`` rows (engines' custom all-reduce) as the one-shot / two-shot kernels.

    Returns:
        ``df`` with ``model_time_s``, ``model_busbw``, ``model_algorithm``, ``error`` (busbw
        model/published − 1).
    """
    out = df.copy()
    t = np.empty(len(df))
    alg = np.empty(len(df), dtype=object)
    for i, r in enumerate(df.itertuples(index=False)):
        system = node_system(r.link_bytes_per_s, "nvls" in r.algorithm, int(r.gpus))
        res = collective_time(
            r.collective,
            int(r.gpus),
            np.array([float(r.message_bytes)]),
            system,
            eff,
            algorithms=_ALGORITHMS.get(r.algorithm),
        )
        t[i], alg[i] = float(res.time_s[0]), str(res.algorithm[0])
    fac = np.array([_BUS_FACTOR[c](g) for c, g in zip(df.collective, df.gpus)])
    out["model_time_s"] = t
    out["model_busbw"] = df.message_bytes.to_numpy() * fac / t
    out["model_algorithm"] = alg
    out["error"] = out.model_busbw / out.busbw - 1
    return out


def level_efficiency(level: LinkLevel, eff: Efficiency, m: np.ndarray) -> np.ndarray:
    """The NCCL fraction of ``level``'s link reached at message sizes ``m`` (scale-up levels)."""
    if level.scope != "scale_up":
        return np.full(np.shape(m), eff.scale_out_link_fraction)
    return size_efficiency(m, eff.link_fraction, eff.link_half_bytes, eff.link_shape)


# ---- per NVLink generation, on aiconfigurator's NCCL tables ------------------------------------------

#: NVLink generation of each calibrated NVIDIA system's scale-up fabric (NVIDIA datasheets:
#: H100/H200 NVLink 4, B200/B300/GB200/GB300 NVLink 5). Systems of one generation share one NCCL
#: ramp, fitted on the generation's aiconfigurator NCCL tables (:func:`fit_generation`). Vera
#: Rubin (NVLink 6) and Jalapeño have no tables: their sets borrow GB300's, i.e. the NVLink 5
#: curve (named assumption, docs/model.md §5). A100 (NVLink 3) has no calibrated set: it is
#: priced with the shipped defaults, i.e. H100's NVLink 4 curve (named assumption).
NVLINK_GENERATION = {"h100": 4, "h200": 4, "b200": 5, "b300": 5, "gb200-nvl72": 5, "gb300-nvl72": 5}
#: Declared split of a generation's tables: ramps are fitted on these ops at message sizes of
#: an even power of two (1 MiB, 4 MiB, ..., 256 MiB); reduce_scatter, and every op at the odd
#: powers (2 MiB, 8 MiB, ... 512 MiB), are held out and reported per system.
GENERATION_FIT_OPS = ("all_gather", "all_reduce")


def aic_nccl_frame(table: pd.DataFrame, system: System) -> pd.DataFrame:
    """aiconfigurator's ``nccl_perf`` table (latency ms, message in half-precision elements) in
    this module's row schema, on ``system``'s innermost link.

    All-reduce rows are labelled ``nccl_default_nvls`` where the switch reduces (NVLink 4 and
    later: NCCL's default picks NVLS there, as in the H100 fit rows), ``ring`` otherwise;
    all-gather and reduce-scatter ``ring``. Every group the table has inside the innermost level
    (2, 4, 8 GPUs on HGX; 2, 4 on the GB200/GB300 tables).
    """
    lv = system.levels[0]
    t = table[table.op_name.isin(list(_BUS_FACTOR)) & (table.nccl_dtype == "half") & (table.num_gpus <= lv.chips)]
    t = t.drop_duplicates(subset=["op_name", "num_gpus", "message_size"])
    nvls = "nccl_default_nvls" if lv.in_network_reduction else "ring"
    alg = np.where(t.op_name.to_numpy() == "all_reduce", nvls, "ring")
    return pd.DataFrame(
        {
            "system": system.name,
            "collective": t.op_name.to_numpy(),
            "algorithm": alg,
            "message_bytes": t.message_size.to_numpy() * 2.0,
            "gpus": t.num_gpus.to_numpy(),
            "time_s": t.latency.to_numpy() * 1e-3,
            "link_bytes_per_s": lv.bandwidth_bytes_per_s,
        }
    )


def generation_split(frame: pd.DataFrame) -> pd.Series:
    """True for the fit rows of :data:`GENERATION_FIT_OPS` at an even power of two >= 1 MiB."""
    m = frame.message_bytes.to_numpy(dtype=float)
    exp = np.round(np.log2(np.maximum(m, 1.0)))
    even = (np.abs(np.log2(np.maximum(m, 1.0)) - exp) < 1e-9) & (exp % 2 == 0)
    return pd.Series(
        frame.collective.isin(GENERATION_FIT_OPS).to_numpy() & even & (m >= FIT_MIN_BYTES), index=frame.index
    )


def fit_generation(frames: dict[str, pd.DataFrame]) -> tuple[dict, dict]:
    """Fit one NVLink generation's NCCL ring and in-switch ramps on its systems' tables.

    Args:
        frames: system name -> :func:`aic_nccl_frame` of that system's table (one generation).

    Returns:
        (the six ramp parameters, as :func:`fit_link_efficiency`; report: ``systems``, fit rows
        and their median/p90 error, and per system the held-out rows (>= 1 MiB, not fitted):
        ``held_out.<system>`` = rows, median absolute and median signed error of the time).
    """
    df = pd.concat(list(frames.values()), ignore_index=True)
    split = generation_split(df)
    fit = df[split].assign(role="fit")
    params, rep = fit_link_efficiency(fit)
    rep = {
        "systems": sorted(frames),
        "split": "fit: all_gather + all_reduce at even powers of two >= 1 MiB; held out: reduce_scatter and odd powers",
        **rep,
    }
    held = df[~split & (df.message_bytes >= FIT_MIN_BYTES)]
    alpha = np.array(
        [
            params.get(k, getattr(DEFAULT_EFFICIENCY, k))
            for k in (
                "link_fraction",
                "link_half_bytes",
                "link_shape",
                "in_switch_fraction",
                "in_switch_half_bytes",
                "in_switch_shape",
            )
        ]
        + [rep["alpha_ring_s"], rep["alpha_nvls_s"]]
    )
    err = _family_time(alpha, held) / held.time_s.to_numpy() - 1
    rep["held_out"] = {
        s: {
            "rows": int(np.sum(idx)),
            "median_ape": float(np.median(np.abs(err[idx]))),
            "bias": float(np.median(err[idx])),
        }
        for s in sorted(frames)
        if np.any(idx := (held.system == s).to_numpy())
    }
    return params, rep


def generation_frames(generation: int, withheld: frozenset = frozenset()) -> dict[str, pd.DataFrame]:
    """:func:`aic_nccl_frame` of every catalog system of one NVLink generation that has an
    aiconfigurator NCCL table (needs the ``[calibrate]`` extra), less the systems whose aiconfigurator
    folder is in ``withheld`` (a leave-one-system-out refit, fit/loso.py)."""
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_nccl_table
    from jalapeno.specs.catalog import load_system

    out = {}
    for name, gen in NVLINK_GENERATION.items():
        if gen != generation or name not in AIC_SYSTEM_DIRS or AIC_SYSTEM_DIRS[name] in withheld:
            continue
        table, _ = load_nccl_table(AIC_SYSTEM_DIRS[name])
        if table is not None:
            out[name] = aic_nccl_frame(table, load_system(name))
    return out
