"""Calibration of the step cost's efficiency parameters on measured kernels (``jalapeno calibrate``).

Data: the per-kernel latency tables that the ``aiconfigurator-core`` package (Apache-2.0, NVIDIA)
ships, read through the installed package (``pip install -e ".[calibrate]"``); none of its code is
used. Functional forms (the same ones the step cost uses, cost/roofline.py):

- GEMM, per compute format f (bf16, per-tensor fp8, nvfp4) and per GEMM kernel key (block-scaled
  ``fp8_block``: TensorRT-LLM's ``gemm_perf`` times both FP8 kernels; specs/kernel_efficiency.GEMM_KEYS);
  each entry's report also gives a held-out error (refitted on every other (n, k) shape, judged on
  the rest: fit/kernels.gemm_shape_held_out):
  t = max(2mnk / (F_f · eta_f · m/(m + m_half_f)), bytes / (W · eta_m_f)) + t0_f, by robust
  nonlinear least squares (scipy, soft-L1 loss) on log(predicted/measured): eta_m_f on the
  memory-bound rows (m <= 16) first, then eta_f, m_half_f, t0_f over every row with m >= 8, then eta_f
  alone on the compute anchor (m, n, k >= 4096: fit/kernels.compute_anchor). t0_f is reported as the kernel floor, not used as the serving
  launch cost (microbenchmarks time single launches; CUDA graphs hide most of that).
- Attention: prefill (GQA kernels, isl >= 2048) eta_attn = median of flops/((t − t0)·F_bf16),
  flops = 4·b·heads·head_dim·isl²/2 (causal); decode (KV length >= 1024) t = KV bytes/(W·eta_m)
  + c by linear least squares, eta_m → ``hbm_fraction`` (KV and other non-GEMM HBM traffic).
- NCCL all-reduce / all-gather / reduce-scatter on one node: the ring and in-switch (NVLS) ramps
  per NVLink generation (A100: 3; H100/H200: 4; B200/B300/GB200/GB300: 5), fitted on all the
  generation's tables with a declared split (fit/collectives.fit_generation: all-gather and
  all-reduce at even powers of two >= 1 MiB fit, reduce-scatter and the odd powers are held out;
  the largest group of each table); every system's set carries its generation's ramp and its
  report the held-out error on its own table (``report.nccl``). collective_launch_s
  is the floor of the custom all-reduce kernels (the ones engines use for TP all-reduce), small
  messages only.
- ``all_to_all_fraction`` (all-to-all and send/recv on scale-up links) is carried over from the
  shipped set: the per-system value of the former constant-fraction NCCL fit (0.45-0.60).
  ``all_to_all_latency_s`` (the MoE dispatch/combine kernel's fixed time per call) is fitted where
  aiconfigurator ships TensorRT-LLM's measured NVLink MoE all-to-all (``trtllm_alltoall_perf``,
  GB200 only in 0.12.0): at the carried fraction, on the table's declared split (EP 8 and 32 fit,
  EP 16 held out; fit/ep_all_to_all.fit_ep_all_to_all with ``fix_fraction``): 15.0 us on GB200;
  on GB300, which shares GB200's NVLink 5 fabric, on GB200's table priced on GB300
  (fit/kernel_tables.A2A_FABRIC_SIBLING: the all-to-all kernels aiconfigurator times on both run at
  the same speed); elsewhere it is not set (the documented default, 0; not carried over from the shipped set, so
  a refit without the sibling's tables keeps none of them: fit/loso.py). The report also gives the joint kernel-level fit (fraction
  0.85, 19 us per call; fit/ep_all_to_all.judge_ep_all_to_all) — its fraction is not applied: it
  moves GB200's disaggregated throughput error from 9% to 16% median (fidelity guard), i.e. the
  carried 0.45 stands in for costs the model misses elsewhere (docs/gap_gb200_fp4_8k1k.md,
  Updates 4 and 10).
- Custom all-reduce kernels (TRT-LLM ``custom_allreduce_perf``, TP 2/4/8, every size): the
  one-/two-shot ramp ``custom_ar_fraction``, ``custom_ar_half_bytes``, ``custom_ar_shape``
  (fit/collectives.fit_custom_allreduce), per system — Blackwell's kernels reach a smaller share
  of NVLink 5 than Hopper's of NVLink 4 (docs/collectives.md).
- MoE layers (routed-expert block, ``moe_perf``, balanced routing, fastest kernel per row): the
  GEMM form with its own (eta_f, m_half_f, eta_m_f) per format, one fixed floor per layer and
  ``moe[f].token_passes`` (BF16 passes over the EP group's token vectors, identified where the
  table spans several EP sizes), on the cost/ops.py quantities; DeepSeek-V3/R1's shape is held
  out of the fit and judged. A kernel path missing from a Blackwell Ultra table and present in
  its Blackwell sibling's is imputed first (fit/kernel_tables.fill_missing_kernel_paths).
- MLA attention kernels (TRT-LLM ``generation_mla_perf`` / ``context_mla_perf``):
  ``mla_decode[f]`` (peak and HBM fraction) and ``mla_prefill[f]`` (peak fraction) per compute
  format, each row priced as the step's own MLA op, the largest context held out
  (fit/mla_kernels.py).
Every fit reports its median and p90 absolute % error; fit/ordering.py then flags a newer chip
whose fit comes out slower than its predecessor's on the same shapes. The result is
a named parameter set with provenance (package version, tables, row counts, fit errors), written
to ``src/jalapeno/data/calibration/<system>.toml``; systems without tables (Jalapeño, Vera Rubin,
AMD) get the nearest measured family's set with a low/high band set by the leave-one-system-out
end-to-end error (:func:`derived_set`, fit/loso.py).
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.fit.collectives import (
    NVLINK_GENERATION,
    custom_allreduce_frame,
    fit_custom_allreduce,
    fit_generation,
    generation_frames,
)
from jalapeno.fit.ep_all_to_all import fit_ep_all_to_all, judge_ep_all_to_all
from jalapeno.fit.kernel_tables import (
    AIC_SYSTEM_DIRS,
    BACKEND,
    KERNEL_PATH_SIBLING,
    _root,
    fill_missing_kernel_paths,
    load_a2a_table,
    load_nccl_table,
    load_table,
    package_version,
)
from jalapeno.fit.attention_kernels import fit_attention
from jalapeno.fit.kernels import (
    CALIBRATION_TOUCHED_RULE,
    MOE_KEYS,
    SERIAL_K_FIT_ONLY_KEYS,
    SERIAL_K_KEYS,
    fit_custom_allreduce_launch,
    fit_gemm,
    fit_moe,
    fit_nccl,
    gemm_floors,
)
from jalapeno.fit.mla_kernels import MLA_TABLES, fit_mla
from jalapeno.fit.ordering import PREDECESSOR, ordering_check
from jalapeno.specs.calibration import load_calibration
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, flatten_params, nest_params
from jalapeno.specs.hardware import System

# ---- driver ------------------------------------------------------------------------------------


def calibrate_system(system: System, withheld: frozenset = frozenset()) -> dict:
    """Fit one system's parameters on its kernel tables; returns the parameter set + provenance.

    ``withheld``: aiconfigurator system folders none of whose tables may be read (the
    leave-one-system-out refit of a donor, fit/loso.py): every rule that fills this system's fit from
    another system's tables (its NVLink generation's NCCL tables, the kernel paths of
    KERNEL_PATH_SIBLING, the all-to-all of A2A_FABRIC_SIBLING) skips them, and the provenance lists them.

    Raises:
        SpecError: the system has no kernel tables, or its own are withheld, or the package is missing.
    """
    sdir = AIC_SYSTEM_DIRS.get(system.name)
    if sdir is None:
        raise SpecError(
            "system",
            f"no measured kernel tables for {system.name}",
            f"calibrate one of {', '.join(AIC_SYSTEM_DIRS)}; others use derived_set()",
        )
    if sdir in withheld:
        raise SpecError(
            "withheld", f"{system.name}'s own tables ({sdir}) are withheld", "withhold other systems' tables only"
        )
    gemm, v_gemm = load_table(sdir, "gemm", "gemm_perf")
    p_gemm, r_gemm = fit_gemm(gemm, system, SERIAL_K_KEYS, SERIAL_K_FIT_ONLY_KEYS)
    ctx, v_att = load_table(sdir, "attention", "context_attention_perf")
    gen, _ = load_table(sdir, "attention", "generation_attention_perf")
    t0 = float(np.median(gemm_floors(r_gemm)))
    p_att, r_att = fit_attention(ctx, gen, system, t0)
    nccl, v_nccl = load_nccl_table(sdir)
    params = {**p_gemm, **p_att}
    r_link = None
    if system.name in NVLINK_GENERATION:  # the NCCL ramps of this system's NVLink generation
        p_link, r_link = fit_generation(generation_frames(NVLINK_GENERATION[system.name], withheld))
        params.update(p_link)
    reports = {"gemm": r_gemm, "attention": r_att}
    if nccl is not None:
        _, r_nccl = fit_nccl(nccl, system, DEFAULT_EFFICIENCY.with_overrides(params))  # judged, not fitted
        reports["nccl"] = {**r_nccl, "nccl_folder": v_nccl}
    if r_link is not None:
        held = r_link.pop("held_out")
        reports.setdefault("nccl", {}).update(
            {
                "nvlink_generation": NVLINK_GENERATION[system.name],
                **{f"ramp_{k}": v for k, v in r_link.items()},
                **{f"held_out_{k}": v for k, v in held.get(system.name, {}).items()},
            }
        )
    try:  # the launch cost serving sees comes from the custom all-reduce kernels, not NCCL's
        car, _ = load_table(sdir, "comm", "custom_allreduce_perf")
        p_ramp, r_ramp = fit_custom_allreduce(custom_allreduce_frame(car, system))
        params.update(p_ramp)
        p_car, reports["custom_allreduce"] = fit_custom_allreduce_launch(
            car, system, DEFAULT_EFFICIENCY.with_overrides(params)
        )
        params.update(p_car)
        reports["custom_allreduce"].update({f"ramp_{k}": v for k, v in r_ramp.items()})
    except SpecError:
        reports["custom_allreduce"] = {"rows": 0}
    prev = (load_calibration(system.name) or {}).get("parameters", {})  # all-to-all fraction: carried over
    params.update({k: prev[k] for k in ("all_to_all_fraction",) if k in prev})
    try:  # where TensorRT-LLM's measured NVLink all-to-all exists (its own, else its fabric sibling's):
        a2a, v_a2a = load_a2a_table(
            sdir, withheld
        )  # the per-call latency at the carried fraction is shipped, the rest judged
        p_lat, _ = fit_ep_all_to_all(a2a, system, DEFAULT_EFFICIENCY.with_overrides(params), fix_fraction=True)
        params["all_to_all_latency_s"] = p_lat["all_to_all_latency_s"]
        reports["all_to_all"] = {
            "version": v_a2a,
            **judge_ep_all_to_all(a2a, system, DEFAULT_EFFICIENCY.with_overrides(params)),
        }
    except SpecError:
        pass
    try:
        moe, v_moe = load_table(sdir, "moe", "moe_perf")
        filled = {}
        if KERNEL_PATH_SIBLING.get(sdir, sdir) not in (
            sdir,
            *withheld,
        ):  # kernel paths its table lacks, from its predecessor's
            sib, _ = load_table(KERNEL_PATH_SIBLING[sdir], "moe", "moe_perf")
            moe, filled = fill_missing_kernel_paths(moe, sib, MOE_KEYS, "moe_dtype", KERNEL_PATH_SIBLING[sdir])
        p_moe, reports["moe"] = fit_moe(moe, system, touched_rule=CALIBRATION_TOUCHED_RULE)
        if filled:
            reports["moe"]["imputed_kernel_paths"] = filled
        params.update(p_moe)
    except SpecError:
        reports["moe"], v_moe = {"rows": 0}, None
    try:
        mla = {ph: load_table(sdir, "mla", name) for ph, (_, name) in MLA_TABLES.items()}
        p_mla, reports["mla"] = fit_mla({ph: t for ph, (t, _) in mla.items()}, system)
        params.update(p_mla)
        v_mla = mla["decode"][1]
    except SpecError:
        reports["mla"], v_mla = {"rows": 0}, None
    prov = {
        "package": f"aiconfigurator-core {package_version()}",
        "backend": BACKEND,
        "gemm_version": v_gemm,
        "attention_version": v_att,
        "system_dir": sdir,
        **({"moe_version": v_moe} if v_moe else {}),
        **({"mla_version": v_mla} if v_mla else {}),
        **({"withheld_tables": sorted(withheld)} if withheld else {}),
    }
    return {"system": system.name, "parameters": params, "report": reports, "provenance": prov}


#: Systems without kernel tables: the measured family whose parameters they borrow (mid), and
#: the calibrated systems of that family (kept in the provenance; the band comes from the
#: leave-one-system-out error, fit/loso.py).
DERIVED_FROM = {
    "jalapeno": ("gb300-nvl72", ("h200", "b200", "gb200-nvl72", "gb300-nvl72")),
    "vera-rubin-nvl72": ("gb300-nvl72", ("b200", "gb200-nvl72", "gb300-nvl72")),
    "mi300x": ("h200", ("h100", "h200")),
    "mi325x": ("h200", ("h100", "h200")),
    "mi355x": ("b200", ("h200", "b200")),
}

#: Parameters where a larger value is more favourable (the rest: smaller is); kernel fields
#: (``gemm.fp8.peak_fraction``) by their last name, any op kind and format.
_HIGHER_IS_BETTER = (
    "hbm_fraction",
    "attention_peak_fraction",
    "link_fraction",
    "in_switch_fraction",
    "custom_ar_fraction",
    "all_to_all_fraction",
)
_HIGHER_IS_BETTER_KERNEL = ("peak_fraction", "hbm_fraction")


def _higher_is_better(key: str) -> bool:
    """For a parameter name, or a dotted kernel field (flatten_params)."""
    return key.rsplit(".", 1)[-1] in _HIGHER_IS_BETTER_KERNEL if "." in key else key in _HIGHER_IS_BETTER


def band_values(mid: dict, error: float) -> tuple[dict, dict]:
    """(low, high) of flat parameters ``mid`` for an end-to-end error ``error`` (a fraction):
    every favourable-when-higher parameter divided (low) or multiplied (high, capped at 1) by
    1 + error, every other one (times, half rows and half sizes, passes) multiplied (low) or
    divided (high), a ramp's shape exponent kept — so each roofline and collective term, and the
    step time, moves by about that factor."""
    f = 1.0 + error
    low, high = {}, {}
    for k, v in mid.items():
        if k.endswith("_shape"):  # a ramp's exponent sets its curvature, not its speed: kept
            low[k] = high[k] = v
        elif _higher_is_better(k):
            low[k], high[k] = v / f, min(v * f, 1.0)
        else:
            low[k], high[k] = v * f, v / f
    return low, high


def derived_set(name: str, calibrated: dict[str, dict], band_error: float | None = None) -> dict:
    """Parameters of an unmeasured system: its nearest family's set (mid) and a low/high band.

    A chip without kernel tables of any kind (fit/moe_transfer.POOLED_MOE_SYSTEMS) takes, for its routed
    experts' HBM fraction, the median over the measured systems (fit/moe_transfer.MOE_POOL, each must be in
    ``calibrated``) and their formats, not its family's value (fit/moe_transfer.py).

    The band is the leave-one-system-out end-to-end error (``band_error``; default the shipped
    fit/loso.load_loso()["band_error"]): what borrowing a measured chip's set costs on chips whose
    measurements were left out (:func:`band_values`), not the spread of the fitted values.

    Raises:
        SpecError: no shipped LOSO result and no ``band_error`` given; a pooled system missing from ``calibrated``.
    """
    from jalapeno.fit.loso import load_loso
    from jalapeno.fit.moe_transfer import MOE_POOL, POOLED_MOE_SYSTEMS, with_pooled_moe

    mid_name, span = DERIVED_FROM[name]
    err = load_loso()["band_error"] if band_error is None else band_error
    params = calibrated[mid_name]["parameters"]
    if name in POOLED_MOE_SYSTEMS:  # no MoE tables: the measured chips' pooled routed-expert HBM fraction
        missing = [n for n in MOE_POOL if n not in calibrated]
        if missing:
            raise SpecError(
                "calibrated",
                f"{name}'s MoE HBM fraction pools {', '.join(MOE_POOL)}; missing {', '.join(missing)}",
                "pass every fit/moe_transfer.MOE_POOL system's set",
            )
        params = with_pooled_moe(params, {n: calibrated[n]["parameters"] for n in MOE_POOL})
    mid = flatten_params(params)  # one level: gemm.fp8.peak_fraction
    low, high = band_values(mid, err)
    pooled = {"moe_hbm_pooled_over": list(MOE_POOL)} if name in POOLED_MOE_SYSTEMS else {}
    return {
        "system": name,
        "parameters": nest_params(mid),
        "low": nest_params(low),
        "high": nest_params(high),
        "provenance": {
            "derived_from": mid_name,
            "range_over": list(span),
            "band_error": float(err),
            "band": "leave-one-system-out end-to-end error (data/validation/loso_error.toml)",
            **pooled,
        },
    }


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return format(float(v), ".8g").replace("inf", "inf")
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_toml(cal: dict, kind: str) -> str:
    """A calibration set as TOML (scalars, then tables; nested report tables dotted)."""
    lines = [
        "# Generated by `jalapeno calibrate` (fit/calibrate.py); do not edit by hand.",
        f'system = "{cal["system"]}"',
        f'kind = "{kind}"',
    ]

    def table(name: str, d: dict) -> None:
        flat = {k: v for k, v in d.items() if not isinstance(v, dict)}
        if flat:
            lines.append(f"\n[{name}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in flat.items())
        for k, v in d.items():
            if isinstance(v, dict):
                table(f"{name}.{k}", v)

    for key in ("provenance", "parameters", "low", "high", "report"):
        if cal.get(key):
            table(key, cal[key])
    return "\n".join(lines) + "\n"


def calibrate_catalog(names: list[str] | None = None, out_dir=None, on_progress=None) -> dict[str, dict]:
    """Calibrate the measured systems, derive the others, and write their TOML files.

    Args:
        names: systems to (re)write (default: every shipped system).
        out_dir: where to write (default: the package's data/calibration folder).

    Returns:
        name → calibration set written, plus ``"_ordering_flags"``: the fit/ordering.ordering_check
        rows where a newer chip's fit is slower than its predecessor's (empty when plausible).

    Raises:
        SpecError: ``out_dir`` is a file or cannot be created.
    """
    from pathlib import Path

    from jalapeno.fit.amd import AITER_CU, MOE_DONOR_SPLIT, MOE_FROM, TABLES, amd_overlay, fit_amd, read_table
    from jalapeno.fit.moe_transfer import MOE_POOL, POOLED_MOE_SYSTEMS
    from jalapeno.specs.catalog import list_systems
    from jalapeno.specs.catalog import load_system as _load
    from jalapeno.specs.hardware import at_calibration_clock

    def load_system(n: str) -> System:  # the tables are the calibration clock's times (Chip.dense_clock_ratio)
        return at_calibration_clock(_load(n))

    out = Path(out_dir) if out_dir else Path(str(resources.files("jalapeno") / "data" / "calibration"))
    blocking = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise SpecError("--out-dir", f"{blocking} is a file, not a directory", "give a directory path")
    _root()  # fail before writing anything when a package is missing
    names = names or list_systems()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(
            "--out-dir",
            f"cannot create directory {out}: {e.strerror or e}",
            "give a writable directory path (not a file)",
        ) from None
    needed = set(n for n in names if n in AIC_SYSTEM_DIRS)
    # each successor's predecessor too, so that the ordering check sees both fits
    needed |= {PREDECESSOR[n] for n in list(needed) if n in PREDECESSOR}
    for n in names:
        if n in DERIVED_FROM:
            mid, span = DERIVED_FROM[n]
            needed |= {mid, *span, *(MOE_POOL if n in POOLED_MOE_SYSTEMS else ())}
    measured = {}
    for i, n in enumerate(sorted(needed)):
        if on_progress:
            on_progress(n, i, len(needed))
        measured[n] = calibrate_system(load_system(n))
    order = ordering_check({n: load_system(n) for n in measured}, {n: c["parameters"] for n, c in measured.items()})
    for n, cal in measured.items():  # each successor's comparisons go into its report
        for r in (r for r in order if r["newer"] == n):  # median time ratio newer/older per group, regime
            grp = cal["report"].setdefault("ordering", {}).setdefault(f"vs_{r['older']}", {})
            grp.setdefault(r["group"].replace(".", "_"), {})[r["regime"].split()[0]] = r["median_ratio"]
    amd = sorted(n for n in names if n in AITER_CU)
    tables = {t: read_table(t) for t in TABLES} if amd else {}
    partial: dict[str, dict] = {}
    # a chip without fused-MoE rows borrows its donor's MoE fit (fit/amd.MOE_DONOR_SPLIT), fitted once per donor
    donors = {
        d: fit_amd(load_system(d), tables, MOE_DONOR_SPLIT)[0] for d in {MOE_FROM[n] for n in amd if n in MOE_FROM}
    }
    for n in amd:
        partial[n] = amd_overlay(n, load_system(n), derived_set(n, measured), donors.get(MOE_FROM.get(n)), tables)
    written = {"_ordering_flags": [r for r in order if r["flagged"]]}
    for n in names:
        if n in partial:
            cal, kind = partial[n], "partial"
        elif n in measured:
            cal, kind = measured[n], "measured"
        elif n in DERIVED_FROM:
            cal, kind = derived_set(n, measured), "derived"
        else:
            continue
        try:
            (out / f"{n}.toml").write_text(to_toml(cal, kind))
        except OSError as e:
            raise SpecError(
                "--out-dir", f"cannot write {out / f'{n}.toml'}: {e.strerror or e}", "give a writable directory"
            ) from None
        written[n] = cal
    return written
