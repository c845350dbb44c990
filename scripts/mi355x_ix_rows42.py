"""MI355X InferenceX rows, one table, and ATOM 0.1.1's gpt-oss launch (FP8 KV, prefill-only steps) on rows 42 / 49 (issue 18, round 42, mi355x42).

Question: held-out InferenceX MI355X interactivity misses its median and p90 goals (10.9 / 25.3%, n 4: MoRI-SGLang
DeepSeek-R1 rows 24 / 31, ATOM gpt-oss-120b rows 42 / 49). Which rows and which priced term set the figures?

Printed: (1) every MI355X InferenceX row the model predicts (fit and held out): split, model, precision, engine and
its release, layout (with MTP as priced), ISL / OSL, concurrency and the error per metric, as
``jalapeno validate -s mi355x`` gives them; (2) the rows and held-out goal figures (median / p90 / bias of the
error, goals.py's definitions) that move when the recipe ``atom-mi355x-gptoss-fp4`` is matched to rows 42 / 49
(deploy/engines.RECIPES_OFF emptied for the run; shipped off); (3) for rows 42 / 49 under that recipe, the model's
decode-only step at its decode batch by op, the stall (modelled TPOT less that step: the prompts' prefill-only steps
the decoding users wait out) and the decode step the measured TPOT leaves were the stall right.

Sources (the recipe's, data/engines.toml): SemiAnalysisAI/InferenceX @2be3de60f (PR #419, 2026-01-14, the rows'
date) ``benchmarks/gptoss_fp4_mi355x_atom_slurm.sh`` passes ``--kv_cache_dtype fp8``; ROCm/ATOM @f969215aa
(2026-01-14) ``atom/model_ops/attention_mha.py`` stores the cache in FP8 and decodes gpt-oss with aiter's
``pa_decode_gluon``; ``atom/model_engine/scheduler.py`` returns admitted prompts as a prefill-only batch.
Nothing is fitted or written. Run: python scripts/mi355x_ix_rows42.py   (about 10 s)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

import jalapeno.deploy.engines as engines
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS, run_validation
from jalapeno.serve.limits import decode_step_s
from jalapeno.serve.open_loop import decode_pool_step

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _served_point import served_point  # noqa: E402  (scripts/_served_point.py)

RECIPE = "atom-mi355x-gptoss-fp4"
GPTOSS_ROWS = ("inferencex_points:42", "inferencex_points:49")
METRICS = ("throughput_per_chip", "interactivity", "tpot_s", "ttft_s")


def mi355x_rows(recipe_on: bool) -> pd.DataFrame:
    """Validation rows of the MI355X InferenceX points (all splits), with the recipe matched or not."""
    saved = engines.RECIPES_OFF
    engines.RECIPES_OFF = saved - {RECIPE} if recipe_on else saved
    try:
        rows = run_validation(use_aiconfigurator=False, systems=("mi355x",))["rows"]
    finally:
        engines.RECIPES_OFF = saved
    return rows[rows.source == "inferencex"]


def goal_figures(rows: pd.DataFrame) -> dict[str, tuple[int, float, float, float]]:
    """Per metric over the held-out rows (split not ``fit``, no quality flag): n, median |error|, p90 |error|
    (NumPy's linear percentile) and bias (median signed error), in %; goals.py's definitions."""
    ho = rows[(rows.split != "fit") & (rows.quality.fillna("") == "")].dropna(subset=["error"])
    out = {}
    for m in METRICS:
        e = ho[ho.metric == m].error.to_numpy(float)
        if len(e):
            out[m] = (
                len(e),
                100 * float(np.median(np.abs(e))),
                100 * float(np.percentile(np.abs(e), 90)),
                100 * float(np.median(e)),
            )
    return out


def row_table(rows: pd.DataFrame) -> None:
    """Print one line per MI355X row: its identity and the error per metric (%)."""
    print(
        "| row | split | model | precision | engine (stack) | layout as priced | ISL/OSL | C | "
        + " | ".join(METRICS)
        + " |"
    )
    print("|---|---|---|---|---|---|---|---|" + "---|" * len(METRICS))
    for rid, g in sorted(rows.groupby("id"), key=lambda x: int(x[0].split(":")[1])):
        r = g.iloc[0]
        err = {m: f"{100 * e:+.1f}" for m, e in zip(g.metric, g.error)}
        c = "best" if pd.isna(r.concurrency) else f"{r.concurrency:g}"
        lay = r.deployment if isinstance(r.deployment, str) else "(search best)"
        print(
            f"| {rid.split(':')[1]} | {r.split} | {r.model} | {r.precision} | {r.framework} ({r.stack}) | {lay} | "
            f"{r.isl}/{r.osl} | {c} | " + " | ".join(err.get(m, "") for m in METRICS) + " |"
        )


def moved(before: pd.DataFrame, after: pd.DataFrame) -> None:
    """Print the (row, metric) pairs whose prediction differs, and the held-out goal figures both ways."""
    key = ["id", "metric"]
    j = before.merge(after, on=key, suffixes=("_off", "_on"))
    j = j[~np.isclose(j.predicted_off, j.predicted_on, rtol=1e-9)]
    print("\n| row | metric | error, recipe off | recipe on |\n|---|---|---|---|")
    for _, r in j.iterrows():
        print(f"| {r.id.split(':')[1]} | {r.metric} | {100 * r.error_off:+.1f}% | {100 * r.error_on:+.1f}% |")
    off, on = goal_figures(before), goal_figures(after)
    print(
        "\n| held-out MI355X metric | n | off: median / p90 / bias % | on: median / p90 / bias % |\n|---|---|---|---|"
    )
    for m in METRICS:
        if m in off:
            a, b = off[m], on[m]
            print(f"| {m} | {a[0]} | {a[1]:.1f} / {a[2]:.1f} / {a[3]:+.1f} | {b[1]:.1f} / {b[2]:.1f} / {b[3]:+.1f} |")


def ledger() -> None:
    """Print rows 42 / 49's decode step by op under the recipe, the stall and the step the measured TPOT leaves."""
    saved = engines.RECIPES_OFF
    engines.RECIPES_OFF = saved - {RECIPE}
    try:
        pts = [p for p in load_inferencex(DEFAULT_POINTS)[0] if p.id in GPTOSS_ROWS]
        print(
            "\n| row | ISL | decode batch | TPOT meas / model ms | decode-only step ms | stall ms | "
            "step the measurement leaves ms | ops of the step, us (largest first) |\n|---|---|---|---|---|---|---|---|"
        )
        for p in pts:
            model, pricer, dep, wl, run = served_point(p)
            batch = float(run.decode_batch[0])
            lay = dep.decode.layout
            sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [batch])  # as served: pool backends, padding
            step = float(decode_step_s(sc, pricer.efficiency, dep, np.array([batch]), lay)[0])
            tpot, meas = float(run.tpot_s[0]), p.measured["tpot_s"]
            ops = sorted(((r["op"], r["time_s"]) for r in sc.op_rows(0)), key=lambda x: -x[1])
            text = ", ".join(f"{o} {t * 1e6:.0f}" for o, t in ops[:6])
            print(
                f"| {p.id.split(':')[1]} | {p.isl} | {batch:.1f} | {meas * 1e3:.2f} / {tpot * 1e3:.2f} | "
                f"{step * 1e3:.2f} | {(tpot - step) * 1e3:.2f} | {(meas - (tpot - step)) * 1e3:.2f} | {text} |"
            )
    finally:
        engines.RECIPES_OFF = saved


def main() -> None:
    before, after = mi355x_rows(False), mi355x_rows(True)
    row_table(before)
    moved(before, after)
    ledger()


if __name__ == "__main__":
    main()
