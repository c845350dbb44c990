"""Why the GB200/GB300 disaggregated TTFT error changes sign with load: the fitted burst share against the prefill pool's capacity (issue 18).

Every unflagged disaggregated aiconfigurator row of gb200-nvl72 / gb300-nvl72 (fit/aic_quality.py rules out, as
`jalapeno validate`) is priced twice: as shipped (the client's fitted ``prefill_burst_fraction``, data/stack_fits.toml:
SGLang 0.6, TensorRT-LLM 0.35, vLLM 0.5 for the ``inferencex-db`` client) and with the share a finite closed-loop run
derives for itself (``prefill_burst_fraction = None``: one wave in R = 10, serve/queueing.idle_start; the request-level
simulator gives the same, docs/gap_aic_ttft.md round 14). Rows are banded by the load per prefill GPU,
C / (x · tp · dp) (x prefill workers of tp · dp GPUs), and the script prints, per engine and band, the TTFT median
|error| and median error of both, with the measured prefill utilisation against the model's capacity,
ρ = λ·ISL / (x · capacity), λ = C / (TTFT + (OSL − 1)·TPOT) (measured; scripts/aic_prefill_capacity.py).

It then prints the prefill pools' measured plateau in prompt tokens/s per prefill GPU (the largest λ·ISL / GPUs over
the rows queued beyond 5x the lone prompt's TTFT) beside the model's capacity, per system, engine, precision, ISL and
prefill attention kind. ``--sim K`` also runs serve/sim (the same finite run: 10·C counted requests from an idle
server, ``warmup=0``) on the K rows of largest |error| with C ≤ 1,024, against the analytic TTFT at both shares.

A diagnosis: nothing is fitted, no shipped value changes. Flagged rows are left out.
Run: python scripts/aic_gb_disagg_ttft_sign.py [--sim 6] (a few minutes; --sim adds about a minute)
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import pandas as pd

#: the gb systems whose disaggregated rows this reads
SYSTEMS = ("gb200-nvl72", "gb300-nvl72")
#: upper edges of the load bands, concurrency per prefill GPU
BANDS = (2.0, 16.0, 128.0, np.inf)
#: a row counts as queued (its pool near capacity) when its measured TTFT is at least this many lone-prompt TTFTs
QUEUED = 5.0


def load_band(concurrency: float, prefill_gpus: int) -> str:
    """The band of C per prefill GPU (:data:`BANDS`) a row falls in, as a label.

    >>> load_band(4, 4), load_band(64, 4), load_band(8192, 16), load_band(102, 4)
    ('C/gpu <= 2', 'C/gpu 2-16', 'C/gpu > 128', 'C/gpu 16-128')
    """
    per = float(concurrency) / prefill_gpus
    lo = 0.0
    for hi in BANDS:
        if per <= hi:
            if lo == 0.0:
                return f"C/gpu <= {hi:g}"
            return f"C/gpu > {lo:g}" if np.isinf(hi) else f"C/gpu {lo:g}-{hi:g}"
        lo = hi
    raise AssertionError("unreachable: the last band is open")


def tokens_per_gpu(concurrency, ttft_s, tpot_s, osl, isl, gpus) -> float:
    """Prompt tokens/s per prefill GPU a closed loop of C users completes: λ·ISL / GPUs,
    λ = C / (TTFT + (OSL − 1)·TPOT) (Little's law over one request's cycle).

    >>> round(tokens_per_gpu(8192, 22.58, 0.022938, 1024, 1024, 16))  # GB300 SGLang FP4, P 4 x DEP4, C = 8192
    11386
    """
    lam = float(concurrency) / (float(ttft_s) + (float(osl) - 1) * float(tpot_s))
    return lam * float(isl) / gpus


def _rows(points):
    from aic_prefill_capacity import model_capacity

    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload, predict_points, with_stack_mtp
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    shipped = predict_points(points)
    meas = shipped.pivot_table(index="id", columns="metric", values="measured")
    pred = shipped.pivot_table(index="id", columns="metric", values="predicted")
    lone = predict_points([dataclasses.replace(p, concurrency=1.0) for p in points])
    lone = lone[lone.metric == "ttft_s"].set_index("id").predicted
    cap = model_capacity(points, point_stack)
    rows = []
    for p in points:
        if p.id not in cap or p.id not in pred.index or not np.isfinite(pred.loc[p.id, ["ttft_s", "tpot_s"]]).all():
            continue
        st = point_stack(p)
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        derived = dataclasses.replace(
            pricer, efficiency=dataclasses.replace(pricer.efficiency, prefill_burst_fraction=None)
        )
        dep = with_stack_mtp(p.deployment, st, p.model)
        d = serve_at_concurrency(load_model(p.model), derived, dep, point_workload(p), [p.concurrency]).record(0)
        lay = dep.prefill.layout
        gpus = dep.prefill.workers * lay.tp * lay.dp
        m = meas.loc[p.id]
        rows.append(
            {
                "id": p.id,
                "system": p.system,
                "engine": p.framework.split()[0],
                "release": p.framework,
                "model": p.model,
                "precision": p.precision,
                "isl": p.isl,
                "osl": p.osl,
                "c": p.concurrency,
                "prefill": f"{dep.prefill.workers}x TP{lay.tp} DP{lay.dp}",
                "attn": "DEP" if lay.dp > 1 else "TEP",
                "band": load_band(p.concurrency, gpus),
                "measured": m.ttft_s,
                "shipped": pred.loc[p.id, "ttft_s"],
                "derived": d["ttft_s"],
                "queued": m.ttft_s >= QUEUED * lone.get(p.id, np.inf),
                "tok_s_gpu": tokens_per_gpu(p.concurrency, m.ttft_s, m.tpot_s, p.osl, p.isl, gpus),
                "model_tok_s_gpu": cap[p.id][0] / (lay.tp * lay.dp),
            }
        )
    df = pd.DataFrame(rows)
    df["err_shipped"] = df.shipped / df.measured - 1
    df["err_derived"] = df.derived / df.measured - 1
    df["rho"] = df.tok_s_gpu / df.model_tok_s_gpu
    return df


def band_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per engine and load band: n, TTFT median |error| / median error as shipped and at the derived share (%),
    and the median measured prefill utilisation against the model's capacity."""

    def one(g):
        return pd.Series(
            {
                "n": len(g),
                "shipped_med": 100 * g.err_shipped.abs().median(),
                "shipped_bias": 100 * g.err_shipped.median(),
                "derived_med": 100 * g.err_derived.abs().median(),
                "derived_bias": 100 * g.err_derived.median(),
                "rho_measured": g.rho.median(),
            }
        )

    order = {f: i for i, f in enumerate(sorted(df.band.unique(), key=_band_key))}
    t = df.groupby(["engine", "band"]).apply(one, include_groups=False).reset_index()
    t = t.sort_values(["engine", "band"], key=lambda s: s.map(order) if s.name == "band" else s)
    return t.set_index(["engine", "band"]).astype({"n": int})


def _band_key(label: str) -> float:
    nums = [float(x) for x in label.replace("C/gpu", "").replace("<=", "").replace(">", "").split("-") if x.strip()]
    return nums[0] + (0.5 if ">" in label else 0.0)


def plateau_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per system, engine, precision, ISL and prefill attention kind with at least two queued rows: the largest
    measured prompt tokens/s per prefill GPU (a lower bound of the pool's capacity), the model's, and their ratio."""
    q = df[df.queued]
    t = q.groupby(["system", "engine", "precision", "isl", "attn"]).agg(
        rows=("id", "size"), measured_max=("tok_s_gpu", "max"), model=("model_tok_s_gpu", "median")
    )
    t = t[t.rows >= 2]
    t["model_over_measured"] = t.model / t.measured_max
    return t.round(2)


def sim_rows(df: pd.DataFrame, points, k: int) -> pd.DataFrame:
    """The analytic TTFT (shipped share, derived share) against serve/sim's finite run on the ``k`` rows of
    largest shipped |error| with C ≤ 1,024."""
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload, with_stack_mtp
    from jalapeno.serve.sim.run import simulate
    from jalapeno.specs.catalog import load_model

    by = {p.id: p for p in points}
    pick = df[df.c <= 1024].assign(a=df.err_shipped.abs()).nlargest(k, "a")
    out = []
    for r in pick.itertuples():
        p = by[r.id]
        st = point_stack(p)
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        s = simulate(
            load_model(p.model),
            pricer,
            with_stack_mtp(p.deployment, st, p.model),
            workload=point_workload(p),
            concurrency=int(p.concurrency),
            seed=0,
            warmup=0,
        ).summary
        out.append(
            {
                "id": r.id.replace("aic:", ""),
                "measured": r.measured,
                "shipped": r.shipped,
                "derived": r.derived,
                "simulated": s["ttft_s"]["mean"],
            }
        )
    return pd.DataFrame(out).round(3)


def main(sim: int) -> None:
    from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags
    from jalapeno.fit.validate import load_aiconfigurator

    points, _ = load_aiconfigurator()
    flagged = set(aic_ttft_flags(points)) | set(aic_source_flags(points))
    points = [
        p
        for p in points
        if p.system in SYSTEMS
        and p.mode == "disagg"
        and p.mapping == "matched"
        and p.id not in flagged
        and p.deployment is not None
        and p.deployment.prefill is not None
    ]
    df = _rows(points)
    pd.set_option("display.width", 200)
    print(f"TTFT error by engine and load per prefill GPU (n {len(df)}; %):")
    print(band_table(df).round(2).to_string())
    for eng, g in df.groupby("engine"):
        print(
            f"{eng}: all n {len(g)}, shipped {100 * g.err_shipped.abs().median():.1f}% / "
            f"{100 * g.err_shipped.median():+.1f}%, derived share {100 * g.err_derived.abs().median():.1f}% / "
            f"{100 * g.err_derived.median():+.1f}%"
        )
    print("\nMeasured prefill plateau, prompt tokens/s per prefill GPU (queued rows):")
    print(plateau_table(df).to_string())
    if sim:
        print("\nAnalytic (shipped / derived share) against the simulator, TTFT s:")
        print(sim_rows(df, points, sim).to_string(index=False))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", type=int, default=0, help="simulate this many worst rows with C <= 1024")
    main(ap.parse_args().sim)
