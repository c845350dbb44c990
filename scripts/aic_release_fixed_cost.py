"""Is there a vLLM >= 0.17 per-step fixed cost on Blackwell? MiniMax-M2.5 rows fit, Kimi K2.5 NVFP4 rows judge.

docs/gap_aic_itl.md (Kimi section) asks whether Kimi K2.5's +13-17% TPOT over-prediction on its NVFP4 rows
(vLLM 0.17-0.19 on B200/B300/GB200) is an engine-release effect: a release's per-step cost that the vLLM
profile prices wrong. A release rule cannot be fitted on the Kimi rows it is judged on, so this script fits
it on another catalog MoE model run under the same releases on the same chips (aiconfigurator-core 0.12.0's
MiniMax-M2.5 rows: vLLM 0.17.0, 0.19.0 and a nightly on B200/B300) and reports the held-out error on Kimi.

1. TPOT signed error (median) and n per (model, system, checkpoint precision, vLLM release), as validate
   predicts the rows (fit/validate.predict_points with each point's stack).
2. Declared split of the MiniMax Blackwell vLLM >= 0.17 rows: within each (system, precision, release, ISL,
   OSL, deployment) group sorted by concurrency (then id), rows alternate fit / held out starting with fit.
   Fitted: one additive per-step cost c (seconds, a grid of -3..+3 ms by 0.02 ms) added to every predicted
   TPOT, minimising the mean |log((predicted + c) / measured)| of the fit half (TPOT is linear in a per-step
   constant at a fixed batch: the surrogate fit/stack_fit.py uses). Fitted once on all those rows and once
   per release, to see whether releases differ.
3. The pooled c applied to the Kimi K2.5 NVFP4 vLLM rows on Blackwell (none of them in the fit): median
   and signed error before and after, and the MiniMax held-out half's.

Nothing is written. Reads aiconfigurator-core's systems/silicon_sample.csv (pip install -e ".[calibrate]").
Run: python scripts/aic_release_fixed_cost.py (about a minute)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jalapeno.fit.aic_rows import AIC_MODELS
from jalapeno.fit.validate import load_aiconfigurator, predict_points

BLACKWELL = ("b200", "b300", "gb200-nvl72")
#: a per-step cost grid, seconds
GRID = np.arange(-3e-3, 3e-3 + 1e-9, 2e-5)


def release(framework: str) -> tuple[float, ...]:
    """Sort key of a vLLM release label (``vllm 0.19.0``; a ``nightly-<sha>`` sorts after every release)."""
    v = framework.split(" ", 1)[1]
    return (np.inf,) if v.startswith("nightly") else tuple(float(x) for x in v.split(".")[:3])


def tpot_rows() -> pd.DataFrame:
    # validate leaves the MiniMax rows out (data/stack_fits.toml is not fitted on them); this diagnosis maps
    # them as their checkpoints ran (fit/aic_rows.row_precision: fp8 -> the block-FP8 release, fp4 -> NVFP4)
    AIC_MODELS.setdefault("MiniMaxAI/MiniMax-M2.5", "minimax-m2.5")
    pts = [
        p
        for p in load_aiconfigurator()[0]
        if p.model in ("minimax-m2.5", "kimi-k2.5") and p.framework.startswith("vllm ")
    ]
    got = predict_points(pts)
    t = got[got.metric == "tpot_s"].copy()
    t["new_release"] = [release(f) >= (0, 17) for f in t.framework]
    return t


def split(rows: pd.DataFrame) -> pd.Series:
    """True for a fit row: alternate within (system, precision, release, ISL, OSL, deployment) by concurrency."""
    fit = pd.Series(False, index=rows.index)
    for _, g in rows.groupby(["system", "precision", "framework", "isl", "osl", "deployment"]):
        order = g.sort_values(["concurrency", "id"]).index
        fit.loc[order[::2]] = True
    return fit


def fit_step_cost(rows: pd.DataFrame) -> float:
    loss = [np.mean(np.abs(np.log((rows.predicted + c).clip(lower=1e-6) / rows.measured))) for c in GRID]
    return float(GRID[int(np.argmin(loss))])


def errors(rows: pd.DataFrame, c: float = 0.0) -> str:
    e = (rows.predicted + c) / rows.measured - 1
    return f"median |err| {e.abs().median():6.1%}  bias {e.median():+6.1%}  n {len(e)}"


def main() -> None:
    t = tpot_rows()
    print("1. TPOT signed error (median) per model, system, precision, vLLM release")
    table = t.groupby(["model", "system", "precision", "framework"]).agg(
        n=("error", "size"), bias=("error", "median"), measured_ms=("measured", lambda x: 1e3 * x.median())
    )
    print(table.round(3).to_string())

    mm = t[(t.model == "minimax-m2.5") & t.system.isin(BLACKWELL) & t.new_release]
    fit = split(mm)
    c = fit_step_cost(mm[fit])
    print(
        f"\n2. MiniMax-M2.5, Blackwell, vLLM >= 0.17: fitted per-step cost c = {1e3 * c:+.2f} ms "
        f"(fit half n {int(fit.sum())})"
    )
    for fw, g in mm[fit].groupby("framework"):
        print(f"   {fw:34s} alone: c = {1e3 * fit_step_cost(g):+.2f} ms (fit n {len(g)})")
    print(f"   MiniMax held out  before: {errors(mm[~fit])}")
    print(f"   MiniMax held out  after : {errors(mm[~fit], c)}")

    kimi = t[(t.model == "kimi-k2.5") & t.system.isin(BLACKWELL) & (t.precision == "fp4") & t.new_release]
    print("\n3. Kimi K2.5 NVFP4, vLLM >= 0.17 on Blackwell (held out: no Kimi row is fitted)")
    for (sys_, fw), g in kimi.groupby(["system", "framework"]):
        print(f"   {sys_:12s} {fw:14s} before: {errors(g)}   after: {errors(g, c)}")
    print(f"   all                         before: {errors(kimi)}   after: {errors(kimi, c)}")


if __name__ == "__main__":
    main()
