"""MLPerf v5.1 Server / Interactive rows: the per-query TPOT tail (p99 / mean over samples) the runs measured against the
model's, at each run's own scheduled rate — round 40's prompts alone (serve/tpot_tail.tpot_quantile_s) and the
prompts with the decode batch's occupancy (serve/tpot_tail, shipped on in round 41), with the occupancy part and the
prompt part alone beside them (issue 18; docs/gap_large_batch_decode.md "Round 41 (mlperftail41)").

Per row (``matched@limits``, an engine read): the run's rate per instance (``scheduled_per_s`` of
fit/mlperf_server.DEFAULT_SERVER_RUNS, LoadGen's Poisson rate: a test setting, not a result), the model's decode
batch there, the step's marginal time per decoding request s (secant over ±10% of the batch) and per prompt token σ,
arrivals per step a = λτ, and p99 / mean TPOT: measured (the run's log), round 40's prompts-only form
(serve/tpot_tail.tpot_quantile_s), as shipped (serve/tpot_tail.poisson_tpot_s), occupancy + prompts, occupancy only
(σ = 0), prompts only (s = 0) (serve/tpot_tail). Then the run's ramp from an empty engine (:func:`ramp_tail`, the
run's span from its LoadGen settings, fit/mlperf_server): the per-query mean and p99 over the whole run. Nothing is
fitted; the rows' own figures enter nowhere but the "measured" column.

Run: python scripts/mlperf_tpot_tail41.py   (about 40 s)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def tail_parts(model, pr, one, wl, pts) -> dict[str, float]:
    """The step's marginal costs and the four model p99 / mean TPOT ratios at ``pts`` (one point)."""
    from jalapeno.cost.pool_backends import with_pool_backends
    from jalapeno.cost.step import Batch, pool_step_cost
    from jalapeno.serve import tpot_tail
    from jalapeno.serve.open_loop import ISL_GRID
    from jalapeno.serve.tpot_tail import poisson_tpot_s, tpot_quantile_s

    lay = one.decode.layout
    p = with_pool_backends(pr, one.decode, model, lay, one.precision.kv_cache.name)
    budget = float(one.prefill_budget(lay))
    b = float(pts.decode_batch[0]) / lay.pp
    chunk = min(wl.mean_isl, budget / max(lay.dp, 1))
    sc = pool_step_cost(
        model,
        p,
        one,
        lay,
        Batch.make(
            decode_seqs=np.array([b, b, 0.9 * b, 1.1 * b]),
            decode_ctx=wl.decode_ctx,
            prefill_tokens=np.array([0.0, budget, 0.0, 0.0]),
            prefill_ctx=(wl.mean_isl - chunk) / 2,
            prefill_seqs=np.array([0.0, budget / chunk, 0.0, 0.0]),
        ),
    )
    t = sc.step_time_s
    sigma, slope = max(t[1] - t[0], 0.0) / budget, max(t[3] - t[2], 0.0) / (0.2 * float(pts.decode_batch[0]))
    step, tpot = float(pts.step_time_s[0]), float(pts.tpot_s[0])
    per_step = step / tpot
    isl = np.array([wl.isl_quantile((k + 0.5) / ISL_GRID) for k in range(ISL_GRID)])
    osl = np.array([wl.osl_quantile((k + 0.5) / ISL_GRID) for k in range(ISL_GRID)])
    steps = np.maximum(osl - 1.0, 1.0) / per_step
    a = float(pts.request_rate_per_s[0]) * step

    def ratio(s_, g_):
        var, k3 = tpot_tail.tail_cumulants(np.array([a]), np.array([s_]), np.array([g_]), isl, steps)
        return (step + float(tpot_tail.tail_excess_s(0.99, var, k3)[0])) / step

    var, k3 = tpot_tail.tail_cumulants(np.array([a]), np.array([slope]), np.array([sigma]), isl, steps)
    return {
        "var": var[0],
        "k3": k3[0],
        "steps": steps,
        "step_s": step,
        "per_step": per_step,
        "slope_s": slope,
        "slope_us": slope * 1e6,
        "sigma_us": sigma * 1e6,
        "a": a,
        "L": a * float(steps.mean()),
        "shipped": float(poisson_tpot_s(model, pr, one, wl, pts)[0]) / tpot,
        "round40": float(
            tpot_quantile_s(0.99, np.array([step]), np.array([sigma]), np.array([a]), isl, steps, np.array([budget]))[0]
        )
        / step,
        "joint": ratio(slope, sigma),
        "occupancy": ratio(slope, 0.0),
        "prompts": ratio(0.0, sigma),
    }


def integrated_occupancy(x, d) -> np.ndarray:
    """H(x) = ∫_0^x E[min(D, u)] du = E[m·x − m²/2], m = min(D, x) (0 for x <= 0), steps², for windows ``x`` (any
    shape) and the requests' decode steps ``d`` (M,, equally likely)."""
    d = np.sort(np.asarray(d, dtype=float).ravel())
    x = np.maximum(np.asarray(x, dtype=float), 0.0)
    k = np.searchsorted(d, x, side="right")
    s1, s2 = np.concatenate([[0.0], np.cumsum(d)]), np.concatenate([[0.0], np.cumsum(d**2)])
    return (x * s1[k] - s2[k] / 2 + (d.size - k) * x**2 / 2) / d.size


def ramp_tail(parts: dict, span_steps: float, slices: int = 200) -> dict[str, float]:
    """The run's ramp from an empty engine (a LoadGen Server run issues its queries as a Poisson stream over
    ``span_steps`` steps and starts empty): the requests decoding at step u have mean a·[G(u) − G(u − span)],
    G(x) = E[min(D, x)] (M_t/G/∞ from empty: S. G. Eick, W. A. Massey, W. Whitt, "The physics of the M_t/G/∞ queue",
    Operations Research 41(4), 1993), so a query issued at t with n decode steps decodes beside
    a·[H(t + n) − H(t) − H(t + n − span) + H(t − span)] / n on average (:func:`integrated_occupancy`), s per request
    each against the steady L; its spread about that is the steady one at that load (variance and third cumulant
    scaled by the load's share of L, Poisson). Issue times uniform on the span (a Poisson stream given its count),
    ``slices`` of them. Returns p99 and mean over the run's queries of the mean step, as ratios to the steady mean."""
    from jalapeno.serve import tpot_tail

    d, a, s, tau = parts["steps"], parts["a"], parts["slope_s"], parts["step_s"]
    L = a * float(d.mean())
    t = (np.arange(slices) + 0.5) / slices * span_steps
    tt, nn = t[:, None], d[None, :]
    occ = (
        a
        * (
            integrated_occupancy(tt + nn, d)
            - integrated_occupancy(tt, d)
            - integrated_occupancy(tt + nn - span_steps, d)
            + integrated_occupancy(tt - span_steps, d)
        )
        / nn
    )
    shift = (s * (occ - L)).ravel()
    share = (occ / L).ravel()
    var, k3 = (np.broadcast_to(parts[k][None, :], occ.shape).ravel() * share for k in ("var", "k3"))
    lo, hi = float(shift.min()), float(shift.max()) + 40.0 * float(np.sqrt(var.max())) + 1e-6
    for _ in range(60):
        mid = (lo + hi) / 2
        if tpot_tail.exceed_prob(mid - shift, var, k3).mean() > 0.01:
            lo = mid
        else:
            hi = mid
    return {"p99": (tau + hi) / tau, "mean": (tau + float(shift.mean())) / tau}


def rows() -> list[dict]:
    """One dict per Server / Interactive row with a read engine: the run's tail and the model's parts at its rate."""
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.mlperf_server import server_runs
    from jalapeno.serve.point import serve_at_rate
    from mlperf_server_rate40 import _priced, measured_figures

    runs, meas, out = server_runs(), measured_figures(), []
    for p in load_mlperf()[0]:
        if p.mapping != "matched@limits":
            continue
        model, pr, one, wl, w = _priced(p)
        rate = float(runs[p.id]["scheduled_per_s"]) / w
        at = serve_at_rate(model, pr, one, wl, [rate])
        if not bool(at.feasible[0]):
            out.append({"id": p.id, "rate": rate, "over": True})
            continue
        m = meas[p.id]
        parts = tail_parts(model, pr, one, wl, at)
        whole = float(runs[p.id]["scheduled_per_s"])
        span = p.server_run.queries(whole) / whole / parts["step_s"] if p.server_run else float("inf")
        ramp = ramp_tail(parts, span) if np.isfinite(span) else {"p99": parts["joint"], "mean": 1.0}
        out.append(
            {
                "id": p.id,
                "rate": rate,
                "over": False,
                "batch": float(at.decode_batch[0]),
                "tpot_ms": float(at.tpot_s[0]) * 1e3,
                "measured": m["TPOT_p99"] / m["TPOT_mean"],
                "meas_mean_ms": m["TPOT_mean"],
                "span_s": span * parts["step_s"],
                "ramp_p99": ramp["p99"],
                "ramp_mean": ramp["mean"],
                **parts,
            }
        )
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(
        "row (per instance at the run's rate) | batch, TPOT ms | s µs/req, σ µs/tok, a /step | p99/mean TPOT: "
        "measured | round 40 (prompts, Gamma, capped) | shipped (poisson_tpot_s) | occupancy+prompts | occupancy | prompts"
    )
    out = rows()
    for r in out:
        name = r["id"].removeprefix("mlperf51_")[:66]
        if r["over"]:
            print(f"  {name:66s} {r['rate']:6.2f}/s  beyond the modelled capacity")
            continue
        print(
            f"  {name:66s} {r['rate']:6.2f}/s {r['batch']:7.0f} {r['tpot_ms']:6.1f} | {r['slope_us']:7.2f} "
            f"{r['sigma_us']:6.2f} {r['a']:6.3f} | {r['measured']:5.3f} | {r['round40']:5.3f} | {r['shipped']:5.3f} | {r['joint']:5.3f} | "
            f"{r['occupancy']:5.3f} | {r['prompts']:5.3f}"
        )
    print(
        "\nthe run's ramp from empty (issue span s; per-query mean and p99 over the run as ratios to the steady mean; "
        "p99 / mean; model mean over the run vs measured mean)"
    )
    for r in out:
        if r["over"]:
            continue
        name = r["id"].removeprefix("mlperf51_")[:66]
        print(
            f"  {name:66s} {r['span_s']:7.0f} s | mean {r['ramp_mean']:5.3f} p99 {r['ramp_p99']:5.3f} | "
            f"{r['ramp_p99'] / r['ramp_mean']:5.3f} vs measured {r['measured']:5.3f} | "
            f"{r['tpot_ms'] * r['ramp_mean']:6.1f} vs {r['meas_mean_ms']:6.1f} ms"
        )


if __name__ == "__main__":
    main()
