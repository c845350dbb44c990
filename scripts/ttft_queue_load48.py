"""TTFT under load, analytic against the simulator from one user to the saturating load, mean and median
(issue 18 item 6a, round 48, ttftq48; docs/model.md §8.7; nothing fitted or written).

scripts/ttft_queue_grid.py compares mean TTFT at C = 4/32/128. InferenceX reports a *median* TTFT on
most of the rows that miss (``ttft_stat`` = median: GB200 disaggregated, MI300X, MI355X; data/validation
README), and the gap gb200ix48 found (row 29, −32% on the median at ρ 0.74, means within 9%) sits near
the prefill pool's saturation. This script sweeps C = 1, 4, 16, ... up to the first concurrency the analytic
model reports a capacity limit (an admission queue) or ``--max-c``, on the seed systems x the validation
rows' models (DeepSeek-R1 FP8 TP8/EP8, gpt-oss-120b MXFP4 TP2), aggregated and disaggregated (one prefill
worker beside one decode worker; plus DeepSeek-R1 FP4 with attention-DP prefill DEP4 + decode 2 x DEP4, row
29's shape), at InferenceX's 1k/1k and 8k/1k. Both sides price steps with the same step cost and run
InferenceX's protocol (10·C counted requests from an idle server, lengths uniform in [0.8 L, L]), so a gap is
queueing arithmetic. For each point it prints the analytic/simulated mean and median TTFT, the ratio, the
analytic prefill utilisation ρ (the served prompt tokens over the pool's full-step capacity) and ``*`` where
either ratio leaves ±15%.

Run: python scripts/ttft_queue_load48.py [--systems h200,gb200-nvl72] [--max-c 2048] [--only disagg]
(~1-10 s a point; the default grid ~10 min on one core)
"""

from __future__ import annotations

import argparse

import numpy as np

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import JalapenoError
from jalapeno.serve.disagg import pool_prefill_perf
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

TOL = 0.15  # issue 18 item 6a: the analytic TTFT within 15% of the simulator's
SYSTEMS = ("h200", "b200", "gb200-nvl72", "mi300x", "mi325x", "mi355x")
WORKLOADS = ("1k1k", "8k1k")


def cases(system: str):
    """(label, model, deployment) of the grid on ``system``."""
    fp8, mx = get_precision("fp8"), get_precision("mxfp4")
    ds = Layout(tp=8, ep=8)
    yield "dsr1 fp8 tep8", "deepseek-r1", "agg", Deployment(fp8, Pool(ds))
    yield "dsr1 fp8 tep8", "deepseek-r1", "disagg", Deployment(fp8, Pool(ds), prefill=Pool(ds, 1))
    yield "gptoss mxfp4 tp2", "gpt-oss-120b", "agg", Deployment(mx, Pool(Layout(tp=2)))
    yield (
        "gptoss mxfp4 tp1+tp2",
        "gpt-oss-120b",
        "disagg",
        Deployment(mx, Pool(Layout(tp=2)), prefill=Pool(Layout(tp=1), 1)),
    )
    if system in ("b200", "gb200-nvl72"):
        dep4 = Layout(dp=4, ep=4)
        yield (
            "dsr1 fp4 dep4+2xdep4",
            "deepseek-r1",
            "disagg",
            Deployment(get_precision("fp4"), Pool(dep4, 2), prefill=Pool(dep4, 1)),
        )


def prefill_rho(model, pricer, dep, wl, rec) -> float:
    """The prefill load a point asks of its pool: λ·ISL over the pool's full-step capacity (disaggregated),
    nan for an aggregated deployment (its prefill shares the steps)."""
    if dep.prefill is None:
        return float("nan")
    pre = pool_prefill_perf(model, pricer, dep, wl)
    return rec["request_rate_per_s"] * wl.mean_isl / (dep.prefill.workers * pre.tokens_per_s)


def point(model, pricer, dep, wl, c: int) -> dict | None:
    """Analytic and simulated TTFT (mean, p50) at ``c`` users, or None when the analytic point is infeasible."""
    ana = serve_at_concurrency(model, pricer, dep, wl, [c]).record(0)
    if not ana["feasible"]:
        return None
    sim = simulate(model, pricer, dep, workload=wl, concurrency=c, seed=0, warmup=0).summary["ttft_s"]
    return {
        "mean": (ana["ttft_s"], sim["mean"]),
        "p50": (ana["ttft_p50_s"], sim["p50"]),
        "limit": ana["limit"] or "-",
        "rho": prefill_rho(model, pricer, dep, wl, ana),
    }


def main(systems, workloads, max_c: int, only: str | None) -> list[dict]:
    print(
        "| system | case | mode | workload | C | ρ prefill | mean ana / sim s | err | p50 ana / sim s | err | limit |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    out = []
    for s in systems:
        pricer = load_pricer(s)
        for label, mname, mode, dep in cases(s):
            if only and mode != only:
                continue
            model = load_model(mname)
            for wname in workloads:
                wl = get_workload(wname)
                c = 1
                while c <= max_c:
                    try:
                        r = point(model, pricer, dep, wl, c)
                    except JalapenoError as e:
                        print(f"| {s} | {label} | {mode} | {wname} | {c} | skipped: {e} |")
                        break
                    if r is None:
                        break
                    e_m, e_p = (r[k][0] / r[k][1] - 1 for k in ("mean", "p50"))
                    flag = "*" if max(abs(e_m), abs(e_p)) > TOL else ""
                    print(
                        f"| {s} | {label} | {mode} | {wname} | {c} | {r['rho']:.2f} | {r['mean'][0]:.3f} / "
                        f"{r['mean'][1]:.3f} | {e_m:+.0%} | {r['p50'][0]:.3f} / {r['p50'][1]:.3f} | {e_p:+.0%}{flag} | "
                        f"{r['limit']} |",
                        flush=True,
                    )
                    out.append(
                        {
                            "system": s,
                            "case": label,
                            "mode": mode,
                            "wl": wname,
                            "c": c,
                            "err_mean": e_m,
                            "err_p50": e_p,
                            "rho": r["rho"],
                            "limit": r["limit"],
                        }
                    )
                    if r["limit"] != "-":
                        break  # the saturating load: an admission queue from here on
                    c *= 4
    for key in ("err_mean", "err_p50"):
        e = np.abs([r[key] for r in out])
        print(
            f"{key}: median |error| {np.median(e):.1%}, largest {e.max():.1%}, within 15%: {np.mean(e <= TOL):.0%} of {e.size}"
        )
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--max-c", type=int, default=4096)
    ap.add_argument("--only", choices=("agg", "disagg"))
    a = ap.parse_args()
    main(a.systems.split(","), a.workloads.split(","), a.max_c, a.only)
