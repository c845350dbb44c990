"""The disaggregated aiconfigurator TTFT at light load split by engine, ISL and precision: the burst share each row
asks for beside aiconfigurator's own one-wave-in-N derivation, and the prompt-length increment of the unloaded floor
(issue 18, round 40, aicgb40; diagnosis, nothing fitted or shipped).

Every unflagged disaggregated aiconfigurator row of a validate table (every system, fit and held out) is priced as
validation prices it (scripts/aic_gb_ttft_terms39.table / priced / share_rows: the steady TTFT with no idle-start
burst, and ``late``, the TTFT with every counted request in the burst minus the steady one). Three tables:

1. ``w* = (measured − steady) / late`` (serve/queueing.idle_start is linear in the share) by engine × ISL × band,
   over the rows whose wave is material (``late`` ≥ :data:`LATE_MIN_S`; below it w* is a floor residual divided by a
   small number, not a wave), beside the shipped share and 1/R, R = serve/queueing.REQUESTS_PER_USER (10). 1/R is
   also aiconfigurator's own derivation of its 1.8 TTFT factor (ai-dynamo/aiconfigurator
   ``src/aiconfigurator/sdk/inference_session.py`` @095f58a, ``_find_best_result_under_constraints``: "N x
   concurrency requests ... formula = (lc*(lc+1)/2 + lc*(N-1))/lc/N ... N=10": the first of N rounds waits for the
   local concurrency's queue, the other N − 1 wait one service each).
2. ``--rows``: each TensorRT-LLM 8k row of GB200/GB300 priced at the steady queue alone, at the share 1/R and at the
   shipped share (error = model / measured − 1).
3. The floors: per deployment (system, engine, config, ISL) the lowest-load row at C ≤ :data:`FLOOR_C_MAX`,
   unless queued (measured > :data:`FLOOR_QUEUED_MAX` × the model's unloaded TTFT), measured − model (ms) by engine
   × precision × ISL, and the 1k → 8k increment of the floor (the 8k floor minus the 1k floor, measured and model)
   over pairs with the same system, engine, model, precision and prefill pool.

Usage: python scripts/aic_ttft_share_isl40.py VALIDATE_ALL.csv [--rows]
(VALIDATE_ALL.csv from ``jalapeno validate --json -o FILE`` without ``--held-out``; about 30 s)
"""

from __future__ import annotations

import argparse
import re

import numpy as np
import pandas as pd

#: a wave whose lateness (TTFT at share 1 − steady TTFT) is under this many seconds asks a share that is mostly the
#: row's floor residual over a small denominator (round 39: "a share above 1 is the unloaded floor showing through a
#: small late"); 50 ms is the size of the largest 1k floor residuals of round 39 (10-180 ms), a named assumption
LATE_MIN_S = 0.05
#: the largest concurrency whose row stands for a deployment's unloaded floor (the model's wait there is ≤ 0.03 s at
#: 1k and 0.05-0.16 s at 8k on the GB rows, round 39); a named assumption
FLOOR_C_MAX = 16
#: a floor row whose measured TTFT is more than this many times the model's unloaded TTFT is queued (round 25's
#: decode-slot rows: cfg423 1k/8k at C 7 measures 25 s over a 0.14 s unloaded floor), not a floor; a named assumption
FLOOR_QUEUED_MAX = 3.0


def w_star(measured, steady, late, late_min: float = LATE_MIN_S) -> np.ndarray:
    """The share w a row asks for, (measured − steady) / late (idle_start's mean is steady + w·late), NaN where the
    wave's lateness is under ``late_min`` s; arrays (N,) in seconds.

    >>> [round(float(v), 3) for v in w_star([0.5, 0.3], [0.3, 0.29], [1.0, 0.01])]
    [0.2, nan]
    """
    measured, steady, late = (np.asarray(v, dtype=float) for v in (measured, steady, late))
    ok = late >= late_min
    return np.where(ok, (measured - steady) / np.where(ok, late, 1.0), np.nan)


def prefill_pool(deployment: str) -> str:
    """The prefill pool of a validate table's deployment string (``disagg P 2x(attn TP4 ...) + D ...``).

    >>> prefill_pool("disagg P 1x(attn TP4 DP1 · MoE TP4 EP1) + D 2x(attn TP4 DP1 · MoE TP4 EP1) [fp4]")
    '1x(attn TP4 DP1 · MoE TP4 EP1)'
    """
    m = re.search(r"P (\d+x\([^)]*\))", deployment)
    if m is None:
        raise ValueError(f"deployment {deployment!r} has no prefill pool 'P Nx(...)'; fix: pass disaggregated rows")
    return m.group(1)


def floors(x: pd.DataFrame, c_max: float = FLOOR_C_MAX, queued_max: float = FLOOR_QUEUED_MAX) -> pd.DataFrame:
    """Per (system, engine, cfg, isl): the lowest-concurrency row at C ≤ ``c_max``, kept where its measured TTFT is at
    most ``queued_max`` times the model's ``unloaded`` TTFT, with ``resid_ms`` = 1e3·(measured − predicted TTFT).
    ``x``: one row per point with those columns and ``concurrency``, ``measured_ttft_s``, ``predicted_ttft_s``,
    ``unloaded`` (s; any others kept).

    >>> x = pd.DataFrame({"system": "s", "engine": "e", "cfg": ["a", "a", "b"], "isl": 1024, "concurrency": [8, 4, 4],
    ...                   "measured_ttft_s": [0.3, 0.25, 5.0], "predicted_ttft_s": [0.3, 0.2, 0.2],
    ...                   "unloaded": [0.2, 0.2, 0.2]})
    >>> floors(x)[["cfg", "concurrency", "resid_ms"]].round(1).values.tolist()
    [['a', 4, 50.0]]
    """
    lo = x[x.concurrency <= c_max].sort_values("concurrency").groupby(["system", "engine", "cfg", "isl"]).head(1)
    lo = lo[lo.measured_ttft_s <= queued_max * lo.unloaded]
    return lo.assign(resid_ms=1e3 * (lo.measured_ttft_s - lo.predicted_ttft_s))


def increments(fl: pd.DataFrame, short: int = 1024, long: int = 8192) -> pd.DataFrame:
    """The ISL ``short`` → ``long`` increment of the floor (s), measured and model, over every pair of ``fl`` rows
    (from :func:`floors`, with ``model``, ``precision`` and ``pool``) that share system, engine, model, precision and
    prefill pool.

    ``fl`` also carries the model's ``prefill_s`` (the pool's lone-prompt service) and ``wait`` (its queue and waits).

    Returns columns system, engine, model, precision, pool, cfg_short, cfg_long, d_measured_s, d_model_s, d_service_s,
    d_wait_s (the model's increment split into service and wait), ratio (model over measured increment)."""
    key = ["system", "engine", "model", "precision", "pool"]
    cols = [*key, "cfg", "measured_ttft_s", "predicted_ttft_s", "prefill_s", "wait"]
    m = fl[fl.isl == short][cols].merge(fl[fl.isl == long][cols], on=key, suffixes=("_short", "_long"))
    m["d_measured_s"] = m.measured_ttft_s_long - m.measured_ttft_s_short
    m["d_model_s"] = m.predicted_ttft_s_long - m.predicted_ttft_s_short
    m["d_service_s"] = m.prefill_s_long - m.prefill_s_short
    m["d_wait_s"] = m.wait_long - m.wait_short
    m["ratio"] = m.d_model_s / m.d_measured_s
    return m[[*key, "cfg_short", "cfg_long", "d_measured_s", "d_model_s", "d_service_s", "d_wait_s", "ratio"]]


def _meta(path: str) -> pd.DataFrame:
    d = pd.read_csv(path)
    d = d[(d.source == "aiconfigurator") & (d["mode"] == "disagg")].drop_duplicates("id").set_index("id")
    return pd.DataFrame({"model": d.model, "precision": d.precision, "pool": d.deployment.map(prefill_pool)})


def main() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import aic_gb_ttft_terms39 as t39

    from jalapeno.serve.queueing import REQUESTS_PER_USER

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--rows", action="store_true", help="the GB TensorRT-LLM 8k rows at steady, 1/R and shipped")
    a = ap.parse_args()
    x = t39.priced(t39.table(a.csv, None))
    x = x.join(_meta(a.csv)).join(t39.share_rows(x.index))
    x["w_star"] = w_star(x.measured_ttft_s, x.steady, x.late)
    pd.set_option("display.width", 250)
    med = {"n": ("w_star", "size"), "n_wave": ("w_star", "count"), "w_star": ("w_star", "median")}
    q = {
        "q25": ("w_star", lambda v: v.quantile(0.25)),
        "q75": ("w_star", lambda v: v.quantile(0.75)),
        "w_shipped": ("w_shipped", "median"),
        "late_s": ("late", "median"),
    }
    print(f"1. the share each row asks for (late >= {LATE_MIN_S} s; 1/R = {1 / REQUESTS_PER_USER:g}), every system:")
    print(x.groupby(["engine", "isl", "band"]).agg(**med, **q).round(3).to_string())
    print("\n   by system (GB and B200/H200), every band:")
    print(x.groupby(["system", "engine", "isl"]).agg(**med).round(3).to_string())
    if a.rows:
        r = x[(x.engine == "trtllm") & (x.isl == 8192) & x.system.str.startswith("gb")].copy()
        for k, w in (("steady", 0.0), ("one_in_r", 1 / REQUESTS_PER_USER)):
            r[f"e_{k}"] = (r.steady + w * r.late) / r.measured_ttft_s - 1
        r["e_shipped"] = (r.steady + r.w_shipped * r.late) / r.measured_ttft_s - 1
        cols = ["system", "cfg", "concurrency", "split", "measured_ttft_s", "steady", "late", "w_star"]
        print("\n2. GB TensorRT-LLM 8k rows, error at the steady queue / 1/R / the shipped share:")
        print(
            r.sort_values(["system", "cfg", "concurrency"])[[*cols, "e_steady", "e_one_in_r", "e_shipped"]]
            .round(3)
            .to_string(index=False)
        )
    fl = floors(x)
    print(f"\n3. floors (lowest C <= {FLOOR_C_MAX} per deployment), measured - model ms:")
    print(
        fl.groupby(["engine", "precision", "isl"])
        .agg(
            n=("resid_ms", "size"),
            median_ms=("resid_ms", "median"),
            lo_ms=("resid_ms", "min"),
            hi_ms=("resid_ms", "max"),
        )
        .round(1)
        .to_string()
    )
    print("\n   1k -> 8k increment of the floor, same system, engine, model, precision and prefill pool (s):")
    inc = increments(fl)
    print(inc.round(3).to_string(index=False))
    print("\n   model / measured increment, medians:")
    print(inc.groupby(["engine", "precision"]).ratio.agg(["size", "median", "min", "max"]).round(2).to_string())


if __name__ == "__main__":
    main()
