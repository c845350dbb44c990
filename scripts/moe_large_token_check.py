"""Routed experts at 1K-16K tokens per EP group: TensorRT-LLM's measured MoE layer against the fitted form (issue 18).

Question (helper moebig12): the attention-DP large-batch decode gap (MLPerf DeepSeek-R1, trtllm-bench,
docs/gap_disagg_overprediction.md) left the routed experts as the lead: aiconfigurator's B200 NVFP4
``moe_perf`` times DeepSeek-R1's experts at EP 8 at 303 us (3,072 tokens) and 547-553 us (6,144-8,192)
where the step prices ~170-240 us. Is the calibrated MoE form (fit/kernels.fit_moe) short there on every
Blackwell, and would a different form, fitted on the same declared split, close it?

Data: aiconfigurator-core's TRT-LLM 1.3.0rc20 ``moe_perf`` per system (fit/kernel_tables.load_table),
balanced routing; fit/kernels.moe_rows keeps the fastest kernel per configuration (CUTLASS or the
min-latency path, ``kernel_source``).

Prints, per system and compute format:

1. DeepSeek-R1's shape (hidden 7168, intermediate 2048, 256 experts, top-8, MoE TP 1) at EP 4/8/16 and
   2K-16K tokens of the EP group: each kernel path's measured latency, the fastest, and the calibrated form
   (the shipped ``moe[f]`` set, no floor, as serving prices it) with the routing/permute/finalize passes
   over the group's tokens (TensorRT-LLM's all-gather exchange: every rank holds the group's tokens) and
   over the rank's own tokens (an all-to-all exchange at attention DP 8: cost/ops.build_step_ops);
2. the form refitted two ways on the calibration's declared split (DeepSeek's shape held out,
   fit/kernels.MOE_HELD_OUT_SHAPE; one floor per format fitted jointly, not the shipped two-stage floor):
   ``max``, the shipped roofline (token passes inside max(compute, memory)), and ``serial``, the token
   passes priced after the grouped GEMMs (routing, permute and finalize run as kernels of their own:
   t = max(compute, weights + per-assignment bytes) + passes · T · h · 2 / (W · eta_m) + floor);
   median / p90 absolute error in sample, held out, held out at >= 2,048 tokens, and the DeepSeek EP 8 rows.

Prints; no prediction depends on it.

    python scripts/moe_large_token_check.py [SYSTEM:FMT ...]   (default: the Blackwell FP4 systems, B200 FP8, H200 FP8)
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
from jalapeno.fit.kernels import moe_model_s, moe_rows
from jalapeno.specs.catalog import load_efficiency, load_system

#: DeepSeek-R1's routed-expert shape (hidden, intermediate, experts, top-k)
SHAPE = (7168, 2048, 256, 8)
EPS = (4, 8, 16)
TOKENS = (2048, 3072, 4096, 6144, 8192, 12288, 16384)
#: attention-DP width of the all-to-all scan column (DEP8: each rank scans a 1/8 share of the group's tokens)
DP = 8
DEFAULT = ("b200:fp4", "gb200-nvl72:fp4", "b300:fp4", "gb300-nvl72:fp4", "b200:fp8", "h200:fp8")
FORMS = ("max", "serial")


def serial_scan_s(num_tokens, hidden, passes: float, bandwidth: float, hbm_fraction: float) -> np.ndarray:
    """Time (s) of ``passes`` BF16 passes over ``num_tokens`` token vectors of ``hidden`` elements at
    ``hbm_fraction`` of ``bandwidth`` (B/s): passes · T · h · 2 / (W · eta_m). Shapes: (n,) → (n,).

    >>> round(float(serial_scan_s(8192, 7168, 10.0, 8e12, 0.5)[0]) * 1e6, 1)  # 10 x 117.4 MB at 4 TB/s
    293.6
    """
    t = np.atleast_1d(np.asarray(num_tokens, dtype=float))
    return passes * t * np.asarray(hidden, dtype=float) * 2.0 / (bandwidth * hbm_fraction)


def form_s(system, r: pd.DataFrame, fmt: str, form: str, eta, m_half, eta_m, floor_s, passes) -> np.ndarray:
    """Modelled time (s) of the rows ``r`` under ``form`` (:data:`FORMS`), through the step's own pricer
    (fit/kernels.moe_model_s) for everything but the serial passes.

    Raises:
        ValueError: an unknown form (names the choices).
    """
    if form == "max":
        return moe_model_s(system, r, fmt, eta, m_half, eta_m, floor_s, passes)
    if form == "serial":
        base = moe_model_s(system, r, fmt, eta, m_half, eta_m, floor_s, 0.0)
        return base + serial_scan_s(
            r.num_tokens.to_numpy(float),
            r.hidden_size.to_numpy(float),
            passes,
            system.chip.hbm_bandwidth_bytes_per_s,
            eta_m,
        )
    raise ValueError(f"form {form!r}: use one of {', '.join(FORMS)}")


def fit_form(system, r: pd.DataFrame, fmt: str, form: str) -> tuple:
    """(eta, m_half, eta_m, floor_s, passes) of ``form`` by the calibration's robust least squares on log time."""
    from scipy.optimize import least_squares

    def sig(v):
        return 1 / (1 + math.exp(-v))

    def unpack(x):
        return sig(x[0]), math.exp(x[1]), sig(x[2]), math.exp(x[3]), math.exp(x[4])

    t = r.t.to_numpy()
    sol = least_squares(
        lambda x: np.log(form_s(system, r, fmt, form, *unpack(x)) / t),
        [0.0, math.log(64.0), 0.5, math.log(2e-5), 0.0],
        loss="soft_l1",
        f_scale=0.2,
        max_nfev=600,
    )
    return unpack(sol.x)


def _ape(pred, meas) -> str:
    e = np.abs(np.asarray(pred) / np.asarray(meas) - 1)
    return f"{np.median(e) * 100:.1f} / {np.percentile(e, 90) * 100:.1f}%" if e.size else "-"


def deepseek(d: pd.DataFrame) -> pd.Series:
    """Rows of DeepSeek-R1's shape at MoE TP 1."""
    h, i, e, k = SHAPE
    return (d.hidden_size == h) & (d.inter_size == i) & (d.num_experts == e) & (d.topk == k) & (d.moe_tp_size == 1)


def table_part(system_name: str, fmt: str, df: pd.DataFrame, d: pd.DataFrame) -> None:
    """Part 1: measured per kernel path and the calibrated form at DeepSeek's shape (us per layer)."""
    system, eff = load_system(system_name), load_efficiency(system_name)
    p = (eff.moe_peak(fmt), eff.moe_half(fmt), eff.moe_hbm(fmt), None)
    h, i, e, k = SHAPE
    raw = df[
        (df.distribution == "balanced")
        & (df.hidden_size == h)
        & (df.inter_size == i)
        & (df.num_experts == e)
        & (df.topk == k)
        & (df.moe_tp_size == 1)
    ]
    print(f"| EP | T | per kernel path us | fastest us | form, group scan us | form, rank scan (DP {DP}) us |")
    print("|---|---|---|---|---|---|")
    for ep in EPS:
        r = d[deepseek(d) & (d.moe_ep_size == ep) & d.num_tokens.isin(TOKENS)].sort_values("num_tokens")
        if r.empty:
            continue
        group = moe_model_s(system, r, fmt, *p, eff.moe_passes(fmt))
        rank = moe_model_s(system, r, fmt, *p, eff.moe_passes(fmt) / DP)
        for j, row in enumerate(r.itertuples(index=False)):
            paths = raw[(raw.moe_ep_size == ep) & (raw.num_tokens == row.num_tokens) & (raw.moe_dtype == row.moe_dtype)]
            per = ", ".join(
                f"{s.replace('moe_torch_flow_', '')} {lat * 1e3:.0f}"
                for s, lat in paths.groupby("kernel_source").latency.min().items()
            )
            print(
                f"| {ep} | {int(row.num_tokens)} | {per} | {row.t * 1e6:.0f} | {group[j] * 1e6:.0f} | {rank[j] * 1e6:.0f} |"
            )


def form_part(system_name: str, fmt: str, d: pd.DataFrame) -> None:
    """Part 2: the two forms refitted on the declared split."""
    system = load_system(system_name)
    tr, ho = d[~d.held_out], d[d.held_out]
    big = ho[ho.num_tokens >= 2048]
    ds8 = d[deepseek(d) & (d.moe_ep_size == 8) & d.num_tokens.isin(TOKENS)].sort_values("num_tokens")
    print(
        "| form | eta / m_half / eta_m / floor us / passes | fit | held out | held out, T >= 2048 | "
        "DeepSeek EP 8: T model/measured us |"
    )
    print("|---|---|---|---|---|---|")
    for form in FORMS:
        x = fit_form(system, tr, fmt, form)
        f = lambda r: form_s(system, r, fmt, form, *x)  # noqa: E731
        rows = " ".join(f"{int(a)}: {b * 1e6:.0f}/{c * 1e6:.0f}" for a, b, c in zip(ds8.num_tokens, f(ds8), ds8.t))
        print(
            f"| {form} | {x[0]:.3f} / {x[1]:.0f} / {x[2]:.3f} / {x[3] * 1e6:.1f} / {x[4]:.2f} | {_ape(f(tr), tr.t)} "
            f"| {_ape(f(ho), ho.t)} | {_ape(f(big), big.t)} | {rows} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", default=list(DEFAULT), help="SYSTEM:FMT (fmt: fp4, fp8)")
    ap.add_argument("--no-refit", action="store_true", help="print part 1 only")
    a = ap.parse_args()
    for case in a.cases:
        system_name, fmt = case.split(":")
        df, version = load_table(AIC_SYSTEM_DIRS[system_name], "moe", "moe_perf")
        d = moe_rows(df)
        d = d[d.fmt == fmt]
        print(f"\n## {system_name} {fmt} (TRT-LLM {version} moe_perf, {len(d)} balanced rows)\n")
        table_part(system_name, fmt, df, d)
        if not a.no_refit:
            print()
            form_part(system_name, fmt, d)


if __name__ == "__main__":
    main()
