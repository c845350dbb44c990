"""Which term of the GB200/GB300 disaggregated TTFT is wrong on the rows that are not saturated (issue 18, round 39;
diagnosis, nothing fitted or shipped).

Every unflagged aiconfigurator disaggregated DeepSeek-R1 / Kimi row of gb200-nvl72 and gb300-nvl72 in a validate table
(fit and held out) is priced as validation prices it (scripts/gb_ttft_twins38._price) and its TTFT split into the
model's *unloaded* parts (front end + the prefill pool's lone-prompt service + KV hand-off + the first decode step,
serve/ttft_parts.py) and the model's *wait* (the rest: steady prefill queue, idle-start burst, attention-DP and slot
waits). Two utilisations of the prefill pool: the model's, ρ_model = λ_model · mean ISL / (workers · tokens/s), and the
measured one at the model's capacity, ρ_meas = λ_meas · mean ISL / (same), λ = C / (TTFT + (OSL − 1)·TPOT) (Little's
law over one request's cycle). κ = 1 + (OSL − 1)·TPOT / TTFT (measured) is how much a rate error is amplified in
TTFT *if* the row is rate-limited (docs/gap_disagg_overprediction.md, round 39); a row with ρ_meas < 1
is below the model's capacity; since the measured plateaus sit 1.2-2.1x below it (round 39), ρ_meas does not
identify saturation, and the light-load slope below is taken over C ≤ :data:`LIGHT_C` instead.

Per deployment (aiconfigurator config id and ISL) the rows are then read as intercept + slope × C over the
light-load rows (C ≤ :data:`LIGHT_C`): ``floor_resid`` = measured − model at the deployment's lowest C (what the unloaded terms miss when
the wait is small), and ``slope_ratio`` = the model's dTTFT/dC over the measured one (least squares over ≥ 2
such rows; > 1: the model's queue grows too fast with load). The held-out rows are summarised by system ×
engine × concurrency band (lo ≤ 8 < mid ≤ 64 < hi) with their deployments' floor residual and slope ratio.

``--sim`` also prices every held-out light-load row (C ≤ :data:`LIGHT_C`) three more ways — with no idle-start burst
(the steady queue alone), with the burst share a finite closed-loop run derives for itself (``prefill_burst_fraction
= None``, serve/queueing.idle_start) — and runs serve/sim's finite run on it (InferenceX's protocol: 10·C counted
requests from an idle server, ``warmup=0``, seed 0), so the analytic queue is checked against the simulator on the
rows the issue calls mid load.

``--share`` prices every held-out row with no burst and with every counted request in the burst (share 1): the
mean TTFT is linear in the share w (serve/queueing.idle_start: steady + w · late), so the share each row asks for is
w* = (measured − steady) / late, printed per system × engine × band beside the shipped share (the client's fitted
``prefill_burst_fraction``).

``--decay [--all-systems]`` (a what-if, nothing shipped) prices the fit and held-out rows with a share that falls as the wave's
lateness grows against the model's own cycle, w(x) = w0 / (1 + x / x0), x = late / (TTFT + (OSL − 1)·TPOT) (both
the model's: no measured value enters a prediction); (w0, x0) per engine are fitted on the **fit split** only
(grid, least squares of log(model / measured)), and the held-out TTFT median / bias per system × engine × band
are printed before (the shipped share) and after.

Usage: python scripts/aic_gb_ttft_terms39.py VALIDATE_ALL.csv [--rows] [--sim] [--share] [--decay [--all-systems]]
(VALIDATE_ALL.csv from ``jalapeno validate --json -o FILE`` without ``--held-out``: the deployments' fit rows
give the intercepts and slopes; about 15 s, ``--sim`` about a minute more)
"""

from __future__ import annotations

import argparse
import re

import numpy as np
import pandas as pd

SYSTEMS = ("gb200-nvl72", "gb300-nvl72")
#: the largest concurrency whose rows set a deployment's light-load slope (the issue's mid band's top): above it
#: the runs pass the pool's measured plateau (docs/gap_disagg_overprediction.md, round 39), which ρ at the model's
#: capacity does not flag (every held-out GB row has ρ_meas < 0.8 there)
LIGHT_C = 64
#: InferenceX / aiconfigurator prompt lengths are uniform in [0.8·ISL, ISL] (specs/workload.INFERENCEX_RANGE_RATIO)
MEAN_PROMPT_FRACTION = 0.9


def band(c: float) -> str:
    """The issue's concurrency band of ``c`` users: ``lo`` (≤ 8), ``mid`` (≤ 64) or ``hi``.

    >>> band(8), band(9), band(64), band(65)
    ('lo', 'mid', 'mid', 'hi')
    """
    return "lo" if c <= 8 else "mid" if c <= 64 else "hi"


def kappa(ttft_s: float, tpot_s: float, osl: float) -> float:
    """κ = 1 + (OSL − 1)·TPOT / TTFT: the factor a relative rate error takes in a saturated row's TTFT.

    >>> round(kappa(2.0, 0.01, 1001), 3)
    6.0
    """
    return 1.0 + (osl - 1.0) * tpot_s / ttft_s


def rho(concurrency, ttft_s, tpot_s, osl, mean_isl, pool_tok_s) -> float:
    """The prefill pool's utilisation λ·mean ISL / pool tokens/s, λ = C / (TTFT + (OSL − 1)·TPOT) requests/s.

    >>> round(rho(10, 0.5, 0.0095, 1001, 900, 1000.0), 3)
    0.9
    """
    return concurrency / (ttft_s + (osl - 1.0) * tpot_s) * mean_isl / pool_tok_s


def fit_line(c, y) -> tuple[float, float]:
    """(intercept, slope) of y against c by least squares; NaN slope with fewer than 2 distinct c.

    >>> fit_line([10, 20, 30], [1.5, 2.5, 3.5])
    (0.5, 0.1)
    """
    c, y = np.asarray(c, float), np.asarray(y, float)
    if len(np.unique(c)) < 2:
        return (float(y[np.argmin(c)]) if len(c) else float("nan"), float("nan"))
    s, a = np.polyfit(c, y, 1)
    return round(float(a), 12), round(float(s), 12)


def table(path: str, systems=SYSTEMS) -> pd.DataFrame:
    """One row per disaggregated aiconfigurator point of ``systems`` (None: every system): measured / predicted TTFT
    and TPOT, split, config id."""
    d = pd.read_csv(path)
    if missing := {"source", "system", "metric", "mode", "id", "measured", "predicted", "split", "quality"} - set(d):
        raise SystemExit(
            f"{path}: missing column(s) {sorted(missing)}; fix: pass a `jalapeno validate --json -o X.csv`"
        )
    d = d[(d.source == "aiconfigurator") & (d["mode"] == "disagg") & d.quality.isna()]
    d = d if systems is None else d[d.system.isin(systems)]
    w = d.pivot_table(index="id", columns="metric", values=["measured", "predicted"], aggfunc="first")
    w.columns = [f"{a}_{b}" for a, b in w.columns]
    meta = d.drop_duplicates("id").set_index("id")[["system", "framework", "isl", "osl", "concurrency", "split"]]
    w = meta.join(w).dropna(subset=["measured_ttft_s", "measured_tpot_s", "predicted_ttft_s"])
    w["cfg"] = w.index.map(lambda s: (re.search(r"cfg\d+", s) or [s])[0])
    return w


def priced(w: pd.DataFrame) -> pd.DataFrame:
    """``w`` with the model's unloaded parts and wait (s), its pool capacity (prompt tokens/s) and both ρ."""
    from gb_ttft_twins38 import _points, _price

    from jalapeno.fit.validate import point_stack, point_workload, with_stack_mtp
    from jalapeno.fit.table_lookup import load_any_pricer, resolve_pricer
    from jalapeno.serve.disagg import pool_prefill_perf
    from jalapeno.specs.catalog import load_model

    out = []
    for p in _points(w.index):
        st = point_stack(p)
        ttft, parts = _price(p, p.system, st)
        dep = with_stack_mtp(p.deployment, st, p.model)
        pr = load_any_pricer(p.system, "calibrated", stack=st, pricer=resolve_pricer(p.system, "roofline"))
        pool = dep.prefill.workers * pool_prefill_perf(load_model(p.model), pr, dep, point_workload(p)).tokens_per_s
        out.append(
            {
                "id": p.id,
                "model_ttft": ttft,
                "wait": parts["queue_and_waits_s"],
                "unloaded": ttft - parts["queue_and_waits_s"],
                "prefill_s": parts["prefill_s"],
                "pool_tok_s": pool,
            }
        )
    x = w.join(pd.DataFrame(out).set_index("id"), how="inner")
    m = MEAN_PROMPT_FRACTION * x.isl
    x["rho_meas"] = rho(x.concurrency, x.measured_ttft_s, x.measured_tpot_s, x.osl, m, x.pool_tok_s)
    x["rho_model"] = rho(x.concurrency, x.predicted_ttft_s, x.predicted_tpot_s, x.osl, m, x.pool_tok_s)
    x["kappa"] = kappa(x.measured_ttft_s, x.measured_tpot_s, x.osl)
    x["err"] = x.predicted_ttft_s / x.measured_ttft_s - 1
    x["band"] = x.concurrency.map(band)
    x["engine"] = x.framework.str.split().str[0]
    return x


def per_deployment(x: pd.DataFrame) -> pd.DataFrame:
    """Per (system, config, ISL): the lowest-C row's measured − model TTFT and its wait share, and the model's over
    the measured dTTFT/dC over the light-load rows (C ≤ :data:`LIGHT_C`)."""
    rows = []
    for (sysname, cfg, isl), g in x.groupby(["system", "cfg", "isl"]):
        u = g[g.concurrency <= LIGHT_C].sort_values("concurrency")
        lo = g.sort_values("concurrency").iloc[0]
        sm, sp = fit_line(u.concurrency, u.measured_ttft_s)[1], fit_line(u.concurrency, u.predicted_ttft_s)[1]
        rows.append(
            {
                "system": sysname,
                "cfg": cfg,
                "isl": isl,
                "n": len(g),
                "n_light": len(u),
                "c_lo": lo.concurrency,
                "floor_resid_s": lo.measured_ttft_s - lo.predicted_ttft_s,
                "floor_wait_s": lo.wait,
                "floor_unloaded_s": lo.unloaded,
                "slope_meas_ms": 1e3 * sm,
                "slope_model_ms": 1e3 * sp,
                "slope_ratio": sp / sm,
            }
        )
    return pd.DataFrame(rows)


def sim_rows(ids) -> pd.DataFrame:
    """Per point id: the analytic TTFT as shipped, with no idle-start burst, with the run's derived burst share, and
    serve/sim's finite run (s)."""
    import dataclasses

    from gb_ttft_twins38 import NO_BURST, _points, _price

    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload, with_stack_mtp
    from jalapeno.serve.sim.run import simulate
    from jalapeno.specs.catalog import load_model

    out = []
    for p in _points(ids):
        st = point_stack(p)
        pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        sim = simulate(
            load_model(p.model),
            pr,
            with_stack_mtp(p.deployment, st, p.model),
            workload=point_workload(p),
            concurrency=int(p.concurrency),
            seed=0,
            warmup=0,
        ).summary["ttft_s"]["mean"]
        out.append(
            {
                "id": p.id,
                "shipped": _price(p, p.system, st)[0],
                "steady": _price(p, p.system, dataclasses.replace(st, prefill_burst_fraction=NO_BURST))[0],
                "derived": _price(p, p.system, dataclasses.replace(st, prefill_burst_fraction=None))[0],
                "simulated": sim,
            }
        )
    return pd.DataFrame(out).set_index("id")


def share_rows(ids) -> pd.DataFrame:
    """Per point id: the steady TTFT (no burst), the wave's lateness ``late`` (TTFT at share 1 − steady) and the
    shipped share (s; the share is None → 1/R where the client sets none)."""
    import dataclasses

    from gb_ttft_twins38 import NO_BURST, _points, _price

    from jalapeno.fit.validate import point_stack
    from jalapeno.serve.queueing import REQUESTS_PER_USER

    out = []
    for p in _points(ids):
        st = point_stack(p)
        steady = _price(p, p.system, dataclasses.replace(st, prefill_burst_fraction=NO_BURST))[0]
        one = _price(p, p.system, dataclasses.replace(st, prefill_burst_fraction=1.0))[0]
        w = st.prefill_burst_fraction
        out.append(
            {
                "id": p.id,
                "steady": steady,
                "late": one - steady,
                "w_shipped": 1.0 / REQUESTS_PER_USER if w is None else w,
            }
        )
    return pd.DataFrame(out).set_index("id")


def decay_share(x, w0: float, x0: float):
    """w(x) = w0 / (1 + x / x0): the burst share at the wave's lateness over the cycle ``x`` (a what-if form).

    >>> round(float(decay_share(0.1, 1.0, 0.1)), 3)
    0.5
    """
    return w0 / (1.0 + np.asarray(x, float) / x0)


def fit_decay(x, steady, late, measured) -> tuple[float, float]:
    """(w0, x0) on a grid minimising the sum of squared log(TTFT / measured), TTFT = steady + w(x)·late."""
    best = (np.inf, 1.0, np.inf)
    for w0 in np.linspace(0.05, 2.0, 40):
        for x0 in np.geomspace(1e-3, 10.0, 41):
            e = np.log((steady + decay_share(x, w0, x0) * late) / measured)
            if (v := float(np.sum(e * e))) < best[0]:
                best = (v, float(w0), float(x0))
    return best[1], best[2]


def _decay(x: pd.DataFrame) -> None:
    """Fit :func:`decay_share` per engine on the fit split; print held-out TTFT before / after."""
    s = x.join(share_rows(x.index))
    s = s[s.late > 1e-6].copy()
    s["xw"] = s.late / (s.predicted_ttft_s + (s.osl - 1) * s.predicted_tpot_s)
    s["shipped"] = s.steady + s.w_shipped * s.late
    s["after"] = np.nan
    for eng, g in s.groupby("engine"):
        f = g[g.split == "fit"]
        if len(f) < 4:
            continue
        w0, x0 = fit_decay(f.xw, f.steady, f.late, f.measured_ttft_s)
        print(f"{eng}: w0 {w0:.3f}, x0 {x0:.4f} (fit rows {len(f)})")
        s.loc[g.index, "after"] = g.steady + decay_share(g.xw, w0, x0) * g.late
    ho = s[(s.split != "fit") & s.after.notna()]
    e0, e1 = ho.shipped / ho.measured_ttft_s - 1, ho.after / ho.measured_ttft_s - 1
    t = pd.DataFrame({"system": ho.system, "engine": ho.engine, "band": ho.band, "e0": e0, "e1": e1})
    for keys in (["system"], ["system", "engine", "band"]):
        print(
            t.groupby(keys)
            .agg(
                n=("e0", "size"),
                med_before=("e0", lambda e: e.abs().median()),
                bias_before=("e0", "median"),
                med_after=("e1", lambda e: e.abs().median()),
                bias_after=("e1", "median"),
            )
            .round(3)
            .to_string()
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--rows", action="store_true", help="print every held-out row")
    ap.add_argument("--sim", action="store_true", help="the light-load held-out rows against serve/sim")
    ap.add_argument("--share", action="store_true", help="the burst share each held-out row asks for")
    ap.add_argument("--decay", action="store_true", help="what-if: a share falling with the wave's lateness")
    ap.add_argument("--all-systems", action="store_true", help="--decay over every system's rows (fit and report)")
    a = ap.parse_args()
    x = priced(table(a.csv, None if a.all_systems else SYSTEMS))
    dep = per_deployment(x).set_index(["system", "cfg", "isl"])
    x = x.join(dep[["floor_resid_s", "slope_ratio"]], on=["system", "cfg", "isl"])
    ho = x[x.split != "fit"]
    pd.set_option("display.width", 250)
    if a.decay:
        print("\nwhat-if: w(x) = w0 / (1 + x / x0), fitted per engine on the fit split; held-out TTFT |err| / bias:")
        _decay(x)
        return
    if a.rows:
        cols = [
            "system",
            "engine",
            "cfg",
            "isl",
            "concurrency",
            "measured_ttft_s",
            "predicted_ttft_s",
            "err",
            "unloaded",
            "wait",
            "rho_meas",
            "rho_model",
            "kappa",
            "floor_resid_s",
            "slope_ratio",
        ]
        print(ho.sort_values(["system", "engine", "isl", "concurrency"])[cols].round(3).to_string(index=False))
    ho = ho.assign(queued=ho.measured_ttft_s / ho.unloaded)
    agg = {
        "n": ("err", "size"),
        "within20": ("err", lambda e: int((e.abs() <= 0.2).sum())),
        "abs_err": ("err", lambda e: e.abs().median()),
        "err": ("err", "median"),
        "left_s": ("measured_ttft_s", "median"),
        "unloaded_s": ("unloaded", "median"),
        "wait_s": ("wait", "median"),
        "queued": ("queued", "median"),
        "rho_meas": ("rho_meas", "median"),
        "rho_model": ("rho_model", "median"),
        "floor_resid_s": ("floor_resid_s", "median"),
        "slope_ratio": ("slope_ratio", "median"),
    }
    g = ho.groupby(["system", "engine", "band"]).agg(**agg)
    g["left_s"] = (
        ho.assign(left=ho.measured_ttft_s - ho.predicted_ttft_s).groupby(["system", "engine", "band"]).left.median()
    )
    print(
        "\nheld-out GB rows by system x engine x band; medians; left_s = measured - model, queued = measured / "
        "the model's unloaded TTFT"
    )
    print(g.round(3).to_string())
    print("\nall held-out GB rows by band:")
    print(ho.groupby(["system", "band"]).agg(**agg).drop(columns=["left_s"]).round(3).to_string())
    print(f"\ndeployments with a held-out row (floor = lowest-C row; slopes over the rows with C <= {LIGHT_C}):")
    print(dep.loc[dep.index.isin(set(zip(ho.system, ho.cfg, ho.isl)))].round(3).to_string())
    if a.share:
        s = ho.join(share_rows(ho.index))
        s["w_star"] = (s.measured_ttft_s - s.steady) / s.late.where(s.late > 1e-6)
        print("\nthe burst share each held-out row asks for, w* = (measured - steady) / late (medians; late s):")
        print(
            s.groupby(["system", "engine", "band"])
            .agg(
                n=("w_star", "size"),
                w_star=("w_star", "median"),
                w_shipped=("w_shipped", "median"),
                late=("late", "median"),
            )
            .round(3)
            .to_string()
        )
        if a.rows:
            print(
                s.sort_values(["system", "engine", "isl", "concurrency"])[
                    [
                        "system",
                        "engine",
                        "cfg",
                        "isl",
                        "concurrency",
                        "measured_ttft_s",
                        "steady",
                        "late",
                        "w_star",
                        "w_shipped",
                    ]
                ]
                .round(3)
                .to_string(index=False)
            )
    if a.sim:
        light = ho[ho.concurrency <= LIGHT_C]
        s = light[["system", "engine", "cfg", "isl", "concurrency", "measured_ttft_s"]].join(sim_rows(light.index))
        s["shipped/sim"], s["derived/sim"] = s.shipped / s.simulated, s.derived / s.simulated
        s["meas/sim"] = s.measured_ttft_s / s.simulated
        print(f"\nheld-out rows with C <= {LIGHT_C}: analytic (shipped, steady, derived share) against serve/sim, s:")
        print(s.sort_values(["system", "engine", "isl", "concurrency"]).round(3).to_string(index=False))
        print("\nmedians by system x engine:")
        print(s.groupby(["system", "engine"])[["shipped/sim", "derived/sim", "meas/sim"]].median().round(3).to_string())


if __name__ == "__main__":
    main()
