"""The InferenceX saturated disaggregated rows priced at the prefill capacity aiconfigurator's fit-split rows measure (issue 18, round 39).

The InferenceX best rows at their highest concurrency (GB200 rows 29 and 41, TTFT −94…−96%; B200 row 30, H200 row
32) decode fewer users, faster, than the model and hold the rest before their first token (docs/
gap_disagg_overprediction.md, rounds 30 and 37): the queue sits upstream of the decode pool, and rounds 26 and 30
named the prefill pool at the capacity it measurably delivers as the nearest limit. This script tests that across
sources, with nothing taken from the rows it judges:

1. the measured plateau of each aiconfigurator prefill pool type (system, engine, model, precision, prefill layout,
   ISL) from the **fit split only** of a ``jalapeno validate`` CSV: the largest λ·ISL / x (λ = C / (TTFT + (OSL − 1)·
   TPOT), x prefill workers; scripts/aic_prefill_capacity.measured_rate) over the unflagged disaggregated rows
   whose measured TTFT is ≥ 5× the model's lone prompt (queued: a lower bound of the pool's capacity; a group needs
   two such rows, as round 26's scripts/aic_gb_disagg_ttft_sign.py), against the model's capacity
   (serve/disagg.prefill_perf ``tokens_per_s``, median over the group) at the same layout; and, as its own
   held-out check, each queued held-out row of such a pool type against the plateau (``over_plateau``);
2. each InferenceX disaggregated row whose pool type has such a plateau is priced twice as validation prices it
   (serve/point.serve_at_concurrency, the run's p50 TTFT): as shipped, and with its prefill pool's throughput terms
   (``tokens_per_s``, the step interval, t0 and σ of serve/disagg.PrefillPerf) divided by the group's model /
   measured ratio (capped below at 1: a what-if never speeds a pool up); a lone prompt's latency is left as priced.
   The pool type matches on system, engine, model, precision, prefill layout and ISL; ``--any-isl`` also lets a
   row take the ratio of its pool at another ISL (nearest), ``--any-system`` of another system (same engine,
   model, precision and layout). Printed beside: the prefill utilisation of the measured rate λ = C / (TTFT +
   (OSL − 1)·TPOT) at the model's capacity and at the slowed one, the slowed model's own, and κ (:func:`kappa`).

A what-if and a diagnosis: nothing is fitted into the model, no shipped value changes. Flagged rows are left out.
Run: python scripts/ix_plateau_crosscheck39.py VALIDATE_ALL.csv [--any-isl] [--any-system] (VALIDATE_ALL.csv from
``jalapeno validate --json -o FILE``, every row; a few minutes)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: a row is prefill-bound when its measured TTFT is at least this many times the model's lone prompt (as
#: scripts/aic_prefill_capacity.py's default ``--bound``)
QUEUED = 5.0


def slowed(pre, factor: float):
    """``pre`` (serve/disagg.PrefillPerf) with its throughput terms ``factor`` times slower: tokens/s divided, the
    full step's interval, t0 and σ multiplied; the lone prompt's service time and the PP fill kept.

    >>> from types import SimpleNamespace as N
    >>> from jalapeno.serve.disagg import PrefillPerf
    >>> p = PrefillPerf(None, 1000.0, 0.1, {}, True, "", "compute", 1.0, 0.2, 0.0008, 0.0)
    >>> q = slowed(p, 2.0); (q.tokens_per_s, q.interval_s, q.step0_s, q.per_token_s, q.service_s)
    (500.0, 2.0, 0.4, 0.0016, 0.1)
    """
    f = max(float(factor), 1.0)
    return dataclasses.replace(
        pre,
        tokens_per_s=pre.tokens_per_s / f,
        interval_s=pre.interval_s * f,
        step0_s=pre.step0_s * f,
        per_token_s=pre.per_token_s * f,
    )


def pool_key(system: str, engine: str, model: str, precision: str, layout, isl) -> tuple:
    """The pool-type key a plateau is looked up by: (system, engine, model, precision, 'TPt DPd EPe', ISL).

    >>> from jalapeno.deploy.layout import Layout
    >>> pool_key("gb200-nvl72", "trtllm", "deepseek-r1", "fp4", Layout(dp=4, ep=4), 1024)
    ('gb200-nvl72', 'trtllm', 'deepseek-r1', 'fp4', 'TP1 DP4 EP4', 1024)
    """
    return system, engine, model, precision, f"TP{layout.tp} DP{layout.dp} EP{layout.ep}", int(isl)


def engine_of(framework: str) -> str:
    """The engine word of a row's framework ('TRTLLM 1.0.0rc6' → 'trtllm', 'dynamo-trt' → 'trtllm').

    >>> engine_of("TRTLLM 1.2.0rc6.post2"), engine_of("dynamo-trt"), engine_of("SGLang 0.5.8"), engine_of("dynamo-sglang")
    ('trtllm', 'trtllm', 'sglang', 'sglang')
    """
    f = framework.strip().split(" ")[0].lower()
    return {"dynamo-trt": "trtllm", "dynamo-sglang": "sglang", "dynamo-vllm": "vllm"}.get(f, f)


def kappa(ttft_s: float, tpot_s: float, osl: float) -> float:
    """How many times a relative error in a saturated closed loop's request rate λ shows in its TTFT:
    TTFT = C/λ − (OSL − 1)·TPOT, so dTTFT/TTFT = −(C/λ)/TTFT · dλ/λ and κ = 1 + (OSL − 1)·TPOT / TTFT
    (C/λ from the measured cycle, Little's law). A TTFT within 20% needs λ within 20%/κ.

    >>> round(kappa(7.6283, 0.0553, 921.6), 2)  # InferenceX row 29: C/λ 58.6 s over 7.63 s
    7.67
    """
    return 1.0 + (float(osl) - 1.0) * float(tpot_s) / float(ttft_s)


def lookup(plateaus: dict, key: tuple, any_isl: bool, any_system: bool):
    """The (model / measured ratio, the key it came from) for ``key``: the exact pool type, else with
    ``any_isl`` the same pool at the nearest ISL, else with ``any_system`` the same on another system; None if none.

    >>> t = {("a", "e", "m", "p", "L", 1024): 1.3, ("b", "e", "m", "p", "L", 8192): 1.5}
    >>> lookup(t, ("a", "e", "m", "p", "L", 1024), False, False)[0], lookup(t, ("a", "e", "m", "p", "L", 8192), False, False)
    (1.3, None)
    >>> lookup(t, ("a", "e", "m", "p", "L", 8192), True, False)[0], lookup(t, ("c", "e", "m", "p", "L", 8192), False, True)[0]
    (1.3, 1.5)
    """
    if key in plateaus:
        return plateaus[key], key
    cands = []
    for k, v in plateaus.items():
        same_sys = k[0] == key[0]
        if k[1:5] != key[1:5] or (not same_sys and not any_system) or (k[5] != key[5] and not any_isl):
            continue
        cands.append((not same_sys, abs(np.log(k[5] / key[5])), k, v))
    if not cands:
        return None
    _, _, k, v = min(cands)
    return v, k


def plateau_table(df: pd.DataFrame, min_queued: int = 2) -> pd.DataFrame:
    """Per (system, engine, model, precision, layout, ISL) with at least ``min_queued`` queued rows: the rows, the
    queued ones, the largest measured tokens/s per worker over the queued rows, the model's (median) and their ratio.

    >>> t = pd.DataFrame({"system": "s", "engine": "e", "model": "m", "precision": "fp8", "layout": "L",
    ...                   "isl": 8192, "queued": [True, True, False],
    ...                   "measured_tok_s": [100.0, 80.0, 150.0], "model_tok_s": 150.0})
    >>> plateau_table(t)[["rows", "queued", "measured_max", "model_over_measured"]].values.tolist()
    [[3.0, 2.0, 100.0, 1.5]]
    """
    keys = ["system", "engine", "model", "precision", "layout", "isl"]

    def one(g):
        q = g[g.queued]
        top = q.measured_tok_s.max() if len(q) else np.nan
        return pd.Series(
            {
                "rows": len(g),
                "queued": len(q),
                "measured_max": top,
                "model_tok_s": g.model_tok_s.median(),
                "model_over_measured": g.model_tok_s.median() / top,
            }
        )

    t = df.groupby(keys).apply(one, include_groups=False)
    return t[t.queued >= min_queued]


def aic_rows(csv: str) -> pd.DataFrame:
    """One row per unflagged disaggregated aiconfigurator point of ``csv`` (any split): its pool type, split,
    measured TTFT, whether it is queued (≥ :data:`QUEUED` × the model's lone prompt), the measured prompt tokens/s
    per prefill worker and the model's."""
    from aic_prefill_capacity import measured_rate, model_capacity

    from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, predict_points

    v = pd.read_csv(csv)
    v = v[v.source == "aiconfigurator"]
    split = v.groupby("id").split.first()
    meas = v.pivot_table(index="id", columns="metric", values="measured")
    points, _ = load_aiconfigurator()
    flagged = set(aic_ttft_flags(points)) | set(aic_source_flags(points))
    pts = [
        p
        for p in points
        if p.id in split.index
        and p.mode == "disagg"
        and p.mapping == "matched"
        and p.id not in flagged
        and p.deployment is not None
        and p.deployment.prefill is not None
    ]
    lone = predict_points([dataclasses.replace(p, concurrency=1.0) for p in pts])
    lone = lone[lone.metric == "ttft_s"].set_index("id").predicted
    cap = model_capacity(pts, point_stack)
    rows = []
    for p in pts:
        if p.id not in cap or p.id not in meas.index or not np.isfinite(meas.loc[p.id, ["ttft_s", "tpot_s"]]).all():
            continue
        m = meas.loc[p.id]
        lam = measured_rate(p.concurrency, m.ttft_s, m.tpot_s, p.osl)
        lay = p.deployment.prefill.layout
        rows.append(
            {
                "id": p.id,
                "split": split[p.id],
                "system": p.system,
                "engine": engine_of(p.framework),
                "model": p.model,
                "precision": p.precision,
                "layout": pool_key("", "", "", "", lay, 1)[4],
                "isl": int(p.isl),
                "c": p.concurrency,
                "ttft": m.ttft_s,
                "queued": m.ttft_s >= QUEUED * lone.get(p.id, np.inf),
                "measured_tok_s": lam * p.isl / p.deployment.prefill.workers,
                "model_tok_s": cap[p.id][0],
            }
        )
    return pd.DataFrame(rows)


def held_out_against(df: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The queued held-out rows (split ``held_out`` or ``none``) of ``df`` (:func:`aic_rows`) whose pool type has a
    fit-split plateau in ``table``: their measured tokens/s per worker over that plateau (≈ 1: the capacity the fit
    rows measure holds on rows they did not see; < 1: the row is not at the plateau, or its load is).

    >>> t = pd.DataFrame({"measured_max": [100.0]}, index=pd.MultiIndex.from_tuples(
    ...     [("s", "e", "m", "p", "L", 1024)], names=["system", "engine", "model", "precision", "layout", "isl"]))
    >>> d = pd.DataFrame({"id": ["a", "b", "c"], "split": ["held_out", "fit", "none"], "system": "s", "engine": "e",
    ...                   "model": "m", "precision": "p", "layout": "L", "isl": 1024, "c": 1.0, "ttft": 1.0,
    ...                   "queued": [True, True, False], "measured_tok_s": [97.0, 100.0, 50.0], "model_tok_s": 1.0})
    >>> held_out_against(d, t)[["id", "over_plateau"]].values.tolist()
    [['a', 0.97]]
    """
    keys = ["system", "engine", "model", "precision", "layout", "isl"]
    h = df[df.split.isin(["held_out", "none"]) & df.queued].copy()
    top = table.measured_max
    h["plateau"] = [top.get(tuple(r), np.nan) for r in h[keys].itertuples(index=False)]
    h = h[np.isfinite(h.plateau)]
    h["over_plateau"] = h.measured_tok_s / h.plateau
    return h


def ix_rows(plateaus: dict, any_isl: bool, any_system: bool, csv: str) -> pd.DataFrame:
    """Each InferenceX disaggregated row with a plateau: measured, shipped and slowed-pool p50 TTFT, and TPOT."""
    import jalapeno.serve.point as point
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload, with_stack_mtp
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.specs.catalog import load_model

    v = pd.read_csv(csv)
    split = v[v.source == "inferencex"].groupby("id").split.first()
    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    shipped_perf = point.pool_prefill_perf
    out = []
    for p in points:
        dep0 = p.deployment
        if p.mode != "disagg" or dep0 is None or dep0.prefill is None or not p.measured.get("ttft_s"):
            continue
        key = pool_key(p.system, engine_of(p.framework), p.model, p.precision, dep0.prefill.layout, p.isl)
        hit = lookup(plateaus, key, any_isl, any_system)
        if hit is None:
            continue
        ratio, src = hit
        st, model, wl = point_stack(p), load_model(p.model), point_workload(p)
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        dep = with_stack_mtp(dep0, st, p.model)
        res = {}
        for name, f in (("shipped", 1.0), ("slowed", ratio)):
            point.pool_prefill_perf = lambda *a, f=f: slowed(shipped_perf(*a), f)  # noqa: E731
            try:
                res[name] = point.serve_at_concurrency(model, pricer, dep, wl, [float(p.concurrency)])
            finally:
                point.pool_prefill_perf = shipped_perf
        m = p.measured
        cap = dep.prefill.workers * shipped_perf(model, pricer, dep, wl).tokens_per_s / wl.mean_isl  # requests/s
        lam = float(p.concurrency) / (m["ttft_s"] + (wl.mean_osl - 1) * m.get("tpot_s", np.nan))
        row = {
            "id": p.id.split(":")[-1],
            "system": p.system,
            "model": p.model,
            "isl": p.isl,
            "c": p.concurrency,
            "split": split.get(p.id, "?"),
            "ratio": round(ratio, 2),
            "from": f"{src[0].split('-')[0]} {src[4]} {src[5]}",
            "ttft": m["ttft_s"],
        }
        for name, r in res.items():
            row[f"ttft_{name}"] = float(r.ttft_p50_s[0])
            row[f"err_{name}"] = 100 * (float(r.ttft_p50_s[0]) / m["ttft_s"] - 1)
        row["rho_meas"] = lam / cap
        row["rho_meas_slowed"] = lam * ratio / cap
        row["rho_model_slowed"] = float(res["slowed"].request_rate_per_s[0]) * ratio / cap
        row["tpot_ms"] = 1e3 * m.get("tpot_s", np.nan)
        row["kappa"] = kappa(m["ttft_s"], m.get("tpot_s", np.nan), wl.mean_osl)
        row["tpot_shipped_ms"], row["tpot_slowed_ms"] = (1e3 * float(res[k].tpot_s[0]) for k in ("shipped", "slowed"))
        row["thr_err_shipped"], row["thr_err_slowed"] = (
            100 * (float(res[k].throughput_per_chip[0]) / m["throughput_per_chip"] - 1) for k in ("shipped", "slowed")
        )
        out.append(row)
    return pd.DataFrame(out)


def main(csv: str, any_isl: bool, any_system: bool) -> None:
    rows = aic_rows(csv)
    t = plateau_table(rows[rows.split == "fit"])
    print("aiconfigurator fit-split prefill plateaus (prompt tokens/s per prefill worker):")
    print(t.round(2).to_string())
    h = held_out_against(rows, t)
    print("\naiconfigurator held-out queued rows against their pool type's fit-split plateau:")
    print(
        h[
            [
                "id",
                "system",
                "engine",
                "precision",
                "layout",
                "isl",
                "c",
                "ttft",
                "measured_tok_s",
                "plateau",
                "over_plateau",
            ]
        ]
        .round(3)
        .to_string(index=False)
        if len(h)
        else "(none)"
    )
    plateaus = {
        (s, e, m, pr, lay, int(isl)): float(r.model_over_measured) for (s, e, m, pr, lay, isl), r in t.iterrows()
    }
    d = ix_rows(plateaus, any_isl, any_system, csv)
    print("\nInferenceX disaggregated rows with a plateau: p50 TTFT s, error %, TPOT ms, throughput error %:")
    print(d.round(3).to_string(index=False) if len(d) else "(none)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="a `jalapeno validate --json -o FILE` CSV of every row (its split column)")
    ap.add_argument("--any-isl", action="store_true", help="take the pool's plateau at the nearest other ISL")
    ap.add_argument("--any-system", action="store_true", help="take the same pool type's plateau on another system")
    a = ap.parse_args()
    main(a.csv, a.any_isl, a.any_system)
