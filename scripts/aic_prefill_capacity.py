"""The prefill pool's measured capacity against the model's, on aiconfigurator's disaggregated rows (issue 18).

A closed loop whose prefill pool is saturated completes requests at the pool's capacity, so such a row
measures it: λ = C / (TTFT + (OSL − 1)·TPOT) (Little's law over one request's cycle, the measured TTFT and
TPOT), and one prefill worker delivers λ·ISL/x prompt tokens/s (x prefill workers). The model's capacity is
serve/disagg.prefill_perf's ``tokens_per_s`` (budget / the full budget step's interval) at the row's own
prefill layout, budget and precision, priced with the row's stack as fit/validate.predict_points does.

A row counts as prefill-bound when its measured TTFT is at least ``--bound`` (default 5) times the model's
TTFT of one prompt alone (the row at C = 1): then the queue, not the prefill, is most of its TTFT. On those
rows the ratio model / measured is the model's capacity error; the script prints it by system, engine
and prefill attention layout (TEP: attention TP; DEP: attention DP), with the median measured and model
tokens/s per worker. A diagnosis: nothing is fitted, nothing shipped changes. Flagged rows
(fit/aic_quality.py) are left out. Run: python scripts/aic_prefill_capacity.py [--bound 5] (about a minute)
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import pandas as pd


def measured_rate(concurrency, ttft_s, tpot_s, osl):
    """λ = C / (TTFT + (OSL − 1)·TPOT), requests/s, of a closed loop of C users (Little's law).

    >>> measured_rate(128, 7.0, 0.02, 1001)  # 128 / (7 + 20) = 4.741
    4.7407
    """
    return round(float(concurrency) / (float(ttft_s) + (float(osl) - 1) * float(tpot_s)), 4)


def attention_kind(layout) -> str:
    """``DEP`` when the prefill layout's attention runs data parallel (dp > 1), else ``TEP``."""
    return "DEP" if layout.dp > 1 else "TEP"


def layout_label(layout) -> str:
    """``TP8 DP1 EP8``: the prefill layout's attention TP, attention DP and expert parallelism.

    >>> from jalapeno.deploy.layout import Layout
    >>> layout_label(Layout(dp=8, ep=8))
    'TP1 DP8 EP8'
    """
    return f"TP{layout.tp} DP{layout.dp} EP{layout.ep}"


def model_capacity(points, stack_of) -> dict:
    """id → (the model's prompt tokens/s of one prefill worker, attention kind) for disaggregated points."""
    from jalapeno.cost.pool_backends import with_pool_backends
    from jalapeno.deploy.deployment import pool_overlap
    from jalapeno.errors import JalapenoError
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.validate import point_workload
    from jalapeno.serve.disagg import prefill_perf
    from jalapeno.specs.catalog import load_model

    out = {}
    for p in points:
        st = stack_of(p)
        dep = with_stack_mtp(p.deployment, st, p.model)
        model, pricer = load_model(p.model), load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        lay = dep.prefill.layout
        try:
            pre = prefill_perf(
                model,
                with_pool_backends(pricer, dep.prefill, model, lay, dep.precision.kv_cache.name),
                lay,
                dep.precision,
                point_workload(p),
                dep.prefill_budget(lay),
                pool_overlap(dep.overlap, model, lay),
            )
        except JalapenoError:  # a layout the predictor refuses too (its row reads infeasible in validate)
            continue
        out[p.id] = (pre.tokens_per_s, attention_kind(lay))
    return out


def main(bound: float) -> None:
    print(plateau_table(main_frame(bound)).round(2).to_string())


def main_frame(bound: float) -> pd.DataFrame:
    """One line per priced disaggregated row: its pool type, whether it is queued (TTFT ≥ ``bound`` × the lone
    prompt's), the measured prompt tokens/s per prefill worker and the model's (the table :func:`plateau_table` reads)."""
    from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, predict_points

    points, _ = load_aiconfigurator()
    flagged = set(aic_ttft_flags(points)) | set(aic_source_flags(points))
    pts = [
        p
        for p in points
        if p.mode == "disagg"
        and p.mapping == "matched"
        and p.id not in flagged
        and p.deployment is not None
        and p.deployment.prefill is not None
    ]
    got = predict_points(pts).pivot_table(index="id", columns="metric", values="measured")
    lone = predict_points([dataclasses.replace(p, concurrency=1.0) for p in pts])
    lone = lone[lone.metric == "ttft_s"].set_index("id").predicted
    cap = model_capacity(pts, point_stack)
    rows = []
    for p in pts:
        if p.id not in cap or p.id not in got.index or not np.isfinite(got.loc[p.id, ["ttft_s", "tpot_s"]]).all():
            continue
        lam = measured_rate(p.concurrency, got.loc[p.id, "ttft_s"], got.loc[p.id, "tpot_s"], p.osl)
        rows.append(
            {
                "id": p.id,
                "system": p.system,
                "engine": p.framework,
                "model": p.model,
                "attn": cap[p.id][1],
                "isl": p.isl,
                "precision": p.precision,
                "layout": layout_label(p.deployment.prefill.layout),
                "queued": got.loc[p.id, "ttft_s"] >= bound * lone.get(p.id, np.inf),
                "measured_tok_s": lam * p.isl / p.deployment.prefill.workers,
                "model_tok_s": cap[p.id][0],
            }
        )
    return pd.DataFrame(rows)


def plateau_table(df: pd.DataFrame, within: float = 0.10) -> pd.DataFrame:
    """Per (system, engine, model, precision, prefill layout, ISL): the rows, the largest measured tokens/s per
    worker (a lower bound of the capacity), how many queued rows lie within ``within`` of it (a plateau: the
    pool's capacity reached at several loads), the model's capacity and model / measured-max. Groups
    without two queued rows on the plateau are dropped (their largest load need not reach the capacity).

    >>> t = pd.DataFrame({"system": "s", "engine": "e", "model": "m", "precision": "fp8", "layout": "L",
    ...                   "attn": "TEP", "isl": 8192, "queued": [True, True, False],
    ...                   "measured_tok_s": [100.0, 95.0, 50.0], "model_tok_s": 150.0})
    >>> plateau_table(t)[["rows", "plateau"]].values.tolist(), float(plateau_table(t).model_over_measured.iloc[0])
    ([[3, 2]], 1.5)
    """
    keys = ["system", "engine", "model", "precision", "attn", "layout", "isl"]

    def one(g):
        top = g.measured_tok_s.max()
        on = (g.queued & (g.measured_tok_s >= (1 - within) * top)).sum()
        return pd.Series(
            {
                "rows": len(g),
                "plateau": int(on),
                "measured_max": top,
                "model_tok_s": g.model_tok_s.median(),
                "model_over_measured": g.model_tok_s.median() / top,
            }
        )

    t = df.groupby(keys).apply(one, include_groups=False)
    t = t[t.plateau >= 2]
    return t.astype({"rows": int, "plateau": int})


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--bound", type=float, default=5.0, help="measured TTFT / lone-prompt TTFT that marks a prefill-bound row"
    )
    main(ap.parse_args().bound)
