"""Build the table-lookup pricer (cost/table_pricer.py) of a chip from its measured kernel tables.

Reads the same aiconfigurator-core tables as calibration (fit/kernel_tables.py; needs the
``[calibrate]`` extra): every GEMM row (``gemm_perf``, formats of GEMM_DTYPES, m >= 1) and every
balanced-routing MoE configuration (``moe_perf``, fastest kernel per configuration, a missing
Blackwell Ultra path imputed as in calibration) is built as the step's own op (fit/kernels
``gemm_table`` / ``moe_table``), priced by the chip's calibrated roofline pricer, and its
log(serving time / roofline) gridded into a KernelSurface per (op kind, format). Serving time is
the measured latency with the standalone-kernel floor its calibration fitted replaced by the
roofline's launch cost (``serving_time``): the tables time single launches, which CUDA graphs in
serving hide; the raw latencies over-predicted the end-to-end TPOT by a median +12%.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from jalapeno.cost.pricer import RooflinePricer
from jalapeno.cost.table_pricer import KernelSurface, TablePricer
from jalapeno.errors import SpecError, choice_hint
from jalapeno.fit.kernel_tables import (
    AIC_SYSTEM_DIRS,
    GEMM_DTYPES,
    gemm_key,
    KERNEL_PATH_SIBLING,
    fill_missing_kernel_paths,
    load_table,
    package_version,
)
from jalapeno.fit.kernels import CALIBRATION_TOUCHED_RULE, MOE_KEYS, gemm_table, moe_rows, moe_table
from jalapeno.specs.efficiency import Efficiency

#: the pricer names ``--pricer`` accepts; ``auto``: per system, the one with the lower end-to-end
#: error in the shipped data/validation/loso_error.toml (``preferred_pricer``), roofline without tables
PRICERS = ("roofline", "table", "auto")


def standalone_floors(system_name: str) -> dict:
    """(op kind, format) → the standalone-kernel floor (s) its calibration fitted: the per-launch
    cost a single-kernel benchmark pays and CUDA graphs in serving hide (GEMM: ``kernel_floor_s``
    per format; MoE: one per layer), from the shipped calibration report."""
    from jalapeno.specs.calibration import load_calibration

    rep = (load_calibration(system_name) or {}).get("report", {})
    out = {("gemm", f): r["kernel_floor_s"] for f, r in rep.get("gemm", {}).get("formats", {}).items()}
    if "kernel_floor_s" in rep.get("moe", {}):
        out.update({("moe", f): rep["moe"]["kernel_floor_s"] for f in rep["moe"].get("formats", {})})
    return out


def serving_time(t_meas: np.ndarray, floor_s: float, times) -> np.ndarray:
    """A measured standalone kernel time as serving sees it: the standalone floor replaced by the
    roofline's own per-kernel cost (``times.overhead_s``, the engine's launch cost), never below
    a tenth of the measurement."""
    return np.maximum(t_meas - floor_s + times.overhead_s[0], 0.1 * t_meas)


def _coords(table) -> tuple[np.ndarray, np.ndarray]:
    k = table.kernels[0]
    return table.flop[0] / k, table.weight_bytes[0] / k


def kernel_rows(system_name: str, efficiency: Efficiency) -> tuple[dict, str]:
    """Per (op kind, format): (op table of the measured rows, measured seconds, shape id per row)
    of a system's kernel tables, and the source string; the shape id (a uint64 hash) names the
    row's shape without its token count (GEMM n, k; MoE hidden, intermediate, experts, top-k, TP, EP).

    Raises:
        SpecError: the system has no kernel tables, or the package is missing.
    """
    from jalapeno.specs.catalog import load_system

    sdir = AIC_SYSTEM_DIRS.get(system_name)
    if sdir is None:
        raise SpecError(
            "--pricer",
            f"no measured kernel tables for {system_name}",
            f"use --pricer roofline, or a system with tables: {', '.join(AIC_SYSTEM_DIRS)}",
        )
    system = load_system(system_name)
    out = {}
    gemm, v_gemm = load_table(sdir, "gemm", "gemm_perf")
    gemm = gemm[gemm.gemm_dtype.isin(list(GEMM_DTYPES))]
    for dtype, d in gemm.groupby("gemm_dtype"):
        fmt, wb, ab = GEMM_DTYPES[dtype]
        if fmt not in system.chip.peak_flop_per_s:
            continue
        key = gemm_key(dtype)  # per-tensor fp8 and block-scaled fp8_block: separate surfaces
        d = d.groupby(["m", "n", "k"], as_index=False).latency.min()
        m, n, k = (d[c].to_numpy(float) for c in ("m", "n", "k"))
        out[("gemm", key)] = (
            gemm_table(m, n, k, fmt, wb, ab, key),
            d.latency.to_numpy() * 1e-3,
            pd.util.hash_pandas_object(d[["n", "k"]], index=False).to_numpy(),
        )
    src = [f"aiconfigurator-core {package_version()}", f"gemm {v_gemm}"]
    try:
        moe, v_moe = load_table(sdir, "moe", "moe_perf")
    except SpecError:
        moe = None
    if moe is not None:
        if sdir in KERNEL_PATH_SIBLING:
            sib, _ = load_table(KERNEL_PATH_SIBLING[sdir], "moe", "moe_perf")
            moe, _ = fill_missing_kernel_paths(moe, sib, MOE_KEYS, "moe_dtype", KERNEL_PATH_SIBLING[sdir])
        rows = moe_rows(moe, CALIBRATION_TOUCHED_RULE)
        for fmt, r in rows[rows.fmt.isin(list(system.chip.peak_flop_per_s))].groupby("fmt"):
            shape = r[["hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size", "moe_ep_size"]]
            out[("moe", fmt)] = (
                moe_table(r, fmt, efficiency.moe_passes(fmt)),
                r.t.to_numpy(),
                pd.util.hash_pandas_object(shape, index=False).to_numpy(),
            )
        src.append(f"moe {v_moe}")
    return out, "; ".join(src)


def build_surfaces(system_name: str, efficiency: Efficiency) -> tuple[dict, str]:
    """(surfaces, source) of a system with kernel tables, against ``efficiency``'s roofline.

    Raises:
        SpecError: the system has no kernel tables, or the package is missing.
    """
    from jalapeno.specs.catalog import load_system

    rows, src = kernel_rows(system_name, efficiency)
    pricer = RooflinePricer(load_system(system_name), efficiency)
    floors = standalone_floors(system_name)
    surfaces = {}
    for key, (table, t, _) in rows.items():
        times = pricer.op_times(table)
        t_serv = serving_time(t, floors.get(key, 0.0), times)
        surfaces[key] = KernelSurface.from_points(*_coords(table), np.log(t_serv / times.time_s[0]))
    return surfaces, src + "; standalone floors replaced by the launch cost"


@lru_cache(maxsize=16)
def _cached(system_name: str, which: str) -> tuple[dict, str]:
    from jalapeno.specs.catalog import load_efficiency

    return build_surfaces(system_name, load_efficiency(system_name, which))


def load_table_pricer(system: str, efficiency: str = "calibrated", overrides: tuple = (), stack=None) -> TablePricer:
    """The table-lookup pricer of a catalog system with kernel tables.

    The surfaces are built once per process against the system's calibrated roofline; the
    returned pricer's roofline uses ``efficiency``, ``overrides`` and the software ``stack`` as
    cost/pricer.load_pricer does (a band or a calibration directory scales the lookup by its ratio
    to the calibrated set).

    Whose tables: the catalog system the file descends from (specs/catalog.measured_system: the catalog file, a
    variant's base chain, an unedited copy), never a bare name match: a user file named "h200" with other specs is
    refused, naming what differs (break49).

    Raises:
        SpecError: no kernel tables for the system (or a file that reuses a catalog name with other specs), or the
            ``[calibrate]`` extra is missing.
        UnknownNameError: unknown system or efficiency set.
    """
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import hardware_changes, list_systems, load_system, measured_system

    sys_ = load_system(system, tuple(overrides))
    name = measured_system(sys_) or sys_.name
    if name in AIC_SYSTEM_DIRS and measured_system(sys_) is None:  # a new chip's file named like a catalog system
        diff = hardware_changes(sys_, name)
        raise SpecError(
            "--pricer",
            f"{system} names itself {name!r} but is not the catalog {name}: its "
            f"{', '.join(diff[:3])}{' and more' if len(diff) > 3 else ''} differ{'s' if len(diff) == 1 else ''} and it "
            f"has no base, so "
            f"{name}'s measured kernel tables are not its own",
            "use --pricer roofline, or write "
            f'base = "{name}" with only the keys that differ (then {name}\'s tables price it as '
            "corrections over its own roofline, docs/catalog.md), or give the file its own name",
        )
    if name not in AIC_SYSTEM_DIRS:  # a system file's own name is no catalog system: said as such, not 'unknown system'
        shown = name if name in list_systems() or name == sys_.name else f"{sys_.name} (a variant of {name})"
        raise SpecError(
            "--pricer",
            f"no measured kernel tables for {shown}" + ("" if shown == system else f" ({system})"),
            f"use --pricer roofline, or a system with tables: {', '.join(AIC_SYSTEM_DIRS)}",
        )
    surfaces, src = _cached(name, "calibrated")
    rp = load_pricer(system, efficiency, tuple(overrides), stack)
    return TablePricer(rp.system, rp.efficiency, surfaces, src)


def resolve_pricer(system_name: str, pricer: str) -> str:
    """``roofline`` or ``table`` for ``pricer`` on a system (``auto`` resolved; see PRICERS).

    Raises:
        SpecError: an unknown pricer name.
    """
    if pricer not in PRICERS:
        raise SpecError(
            "--pricer", f"unknown pricer {pricer!r}{choice_hint(pricer, PRICERS)}", f"use one of {', '.join(PRICERS)}"
        )
    if pricer != "auto":
        return pricer
    from jalapeno.fit.loso import load_loso

    return load_loso()["systems"].get(system_name, {}).get("preferred_pricer", "roofline")


def load_any_pricer(
    system: str, efficiency: str = "calibrated", overrides: tuple = (), pricer: str = "roofline", stack=None
):
    """The ``roofline`` (every system), ``table`` (systems with kernel tables) or ``auto`` pricer,
    with the software ``stack`` (cost/pricer.load_pricer).

    Raises:
        SpecError: an unknown pricer name, or ``table`` for a system without tables.
    """
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_system

    if pricer == "auto":  # the LOSO choice of the catalog system the file descends from; none: the roofline
        from jalapeno.specs.catalog import measured_system

        pricer = resolve_pricer(measured_system(load_system(system, tuple(overrides))) or "", pricer)
    if pricer == "roofline":
        return load_pricer(system, efficiency, tuple(overrides), stack)
    if pricer == "table":
        return load_table_pricer(system, efficiency, overrides, stack)
    raise SpecError(
        "--pricer", f"unknown pricer {pricer!r}{choice_hint(pricer, PRICERS)}", f"use one of {', '.join(PRICERS)}"
    )


def _ape(pred, meas) -> dict:
    e = np.abs(np.asarray(pred) / np.asarray(meas) - 1)
    return {"median_ape": float(np.median(e)), "p90_ape": float(np.percentile(e, 90)), "n": int(e.size)}


def kernel_errors(system_name: str) -> list[dict]:
    """Kernel error of both pricers per (op kind, format) on a system's measured rows.

    Both are judged against serving time (``serving_time``: the measured latency with its
    standalone floor replaced by the launch cost, which is what both pricers price). The table
    pricer is judged out of sample: the shapes (rows without their token count) are split in two
    halves by a fixed hash, each half priced by the surface built on the other. The roofline
    pricer is judged on every row with the calibrated parameters (fitted on all rows).

    Returns:
        One dict per group: system, kind, fmt, rows, ``table`` and ``roofline`` ({median_ape,
        p90_ape, n}).
    """
    from jalapeno.specs.catalog import load_efficiency, load_system

    eff = load_efficiency(system_name, "calibrated")
    pricer = RooflinePricer(load_system(system_name), eff)
    rows, _ = kernel_rows(system_name, eff)
    floors = standalone_floors(system_name)
    out = []
    for (kind, fmt), (table, t_meas, shape) in rows.items():
        times = pricer.op_times(table)
        roof = times.time_s[0]
        t = serving_time(t_meas, floors.get((kind, fmt), 0.0), times)
        fx, fy = _coords(table)
        lr = np.log(t / roof)
        half = shape % 2 == 0
        pred = np.empty_like(t)
        for part in (half, ~half):
            if part.all() or not part.any():
                pred[:] = np.nan
                break
            surf = KernelSurface.from_points(fx[~part], fy[~part], lr[~part])
            pred[part] = roof[part] * np.exp(surf.log_ratio(fx[part], fy[part]))
        ok = np.isfinite(pred)
        out.append(
            {
                "system": system_name,
                "kind": kind,
                "fmt": fmt,
                "rows": int(t.size),
                "table": _ape(pred[ok], t[ok]) if ok.any() else None,
                "roofline": _ape(roof, t),
            }
        )
    return out
