"""How a measured sweep's time splits between TTFT and TPOT, against the model's split (docs/model.md §12).

For each matched InferenceX point with a measured TPOT and TTFT (default: the MI325X and H200
DeepSeek-R1 8k/1k SGLang sweeps, rows 76-80 and 61-65), the point's validation deployment is
served three ways: analytically as validated (serve/point.serve_at_concurrency, the recipe's
prefill scheduling), analytically with the other prefill scheduling (``mixed``: a prompt rides in
a decode step; ``separate``: SGLang's default prefill-first step, docs/model.md §12), and by the
request-level simulator with InferenceX's idle start (serve/sim, ``warmup=0``). Columns: the
modelled decode-only step at the model's decode batch (serve/open_loop.decode_pool_step, no prefill), the
stall (modelled TPOT minus that step: the prompts' prefill work the decoding users wait out),
and the prefill stall per prompt the measured TPOT would imply were the decode-only step right,
(TPOT_measured − decode step)·(mean OSL − 1)/(C − 1). A last table fits TPOT = a + b·C over
each sweep (least squares), measured and modelled.

``--moe`` prints instead the routed-expert share of each row's decode step (docs/model.md §12,
round sglang14): the modelled ``moe.experts`` time of the decode-only step, the MoE time the
measured TPOT implies were every other op and the stall right (TPOT_measured − stall − the step's
other ops), their ratio, and the ratio a decode-time expert popularity σ would give on its own,
f_σ(B)/f_0(B) with f the touched fraction (cost/moe.touched_fraction; σ = ``--sigma``, default the
measured DeepSeek-R1 1.03 of specs/routing.py). An implied ratio that falls with B like f_σ/f_0 and
is the same at 1k and 8k prompts is a per-touched-expert cost, not a per-step or per-sequence one.
Run: python scripts/tpot_split.py [--moe [--sigma S]] [ROW ...]   (ROW = the number after inferencex_points:)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from jalapeno.cost.moe import touched_fraction
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.limits import decode_step_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.routing import MEASURED_ROUTING_SIGMA
from jalapeno.specs.workload import Workload

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _served_point import served_point  # noqa: E402  (scripts/_served_point.py)

ROWS = (61, 62, 63, 64, 65, 76, 77, 78, 79, 80)


def _decode_only(model, pricer, dep, wl: Workload, batch: float) -> tuple[float, float]:
    """Modelled decode-only step (no prompt in it) at ``batch`` sequences and the workload's decode
    context, and the ``moe.experts`` op's share of it (0 for a dense model), s."""
    lay = dep.decode.layout
    sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [batch])  # as served: pool backends, graph padding
    moe = sum(r["time_s"] for r in sc.op_rows(0) if r["op"] == "moe.experts")
    return float(decode_step_s(sc, pricer.efficiency, dep, np.array([batch]), lay)[0]), float(moe)


def moe_share(rows, sigma: float) -> None:
    """Print the routed-expert share table of ``--moe`` (module docstring) for the rows' points."""
    want = {f"inferencex_points:{r}" for r in rows}
    pts, _ = load_inferencex(DEFAULT_POINTS)
    print(
        f"| row | system | ISL | C | decode batch B | TPOT meas ms | TPOT model ms | stall ms | MoE model ms | "
        f"MoE implied ms | implied / model | f_σ/f_0 at σ = {sigma:g} |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in pts:
        if p.id not in want or p.deployment is None or not p.measured.get("tpot_s"):
            continue
        model, pricer, dep, wl = priced_point(p)
        if model.moe is None:
            continue
        run = serve_at_concurrency(model, pricer, dep, wl, [int(p.concurrency)])
        batch = float(run.decode_batch[0])
        t_dec, t_moe = _decode_only(model, pricer, dep, wl, batch)
        tpot_m, tpot = p.measured["tpot_s"], float(run.tpot_s[0])
        implied = tpot_m - (tpot - t_dec) - (t_dec - t_moe)
        e, k = model.moe.num_experts, model.moe.top_k
        skew = float(touched_fraction(batch, e, k, sigma) / touched_fraction(batch, e, k))
        print(
            f"| {p.id.split(':')[1]} | {p.system} | {p.isl} | {int(p.concurrency)} | {batch:.1f} | "
            f"{tpot_m * 1e3:.2f} | {tpot * 1e3:.2f} | {(tpot - t_dec) * 1e3:.2f} | {t_moe * 1e3:.2f} | "
            f"{implied * 1e3:.2f} | {implied / t_moe:.2f} | {skew:.2f} |"
        )


def main(rows) -> None:
    want = {f"inferencex_points:{r}" for r in rows}
    pts, _ = load_inferencex(DEFAULT_POINTS)
    print(
        "| row | system | C | TPOT meas ms | TPOT model ms | decode-only ms | stall ms | implied stall/prompt s | "
        "other scheduling: TPOT ms / TTFT s | simulator: TPOT ms / TTFT s | TTFT meas s | TTFT model s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    sweeps: dict[str, list] = defaultdict(list)
    for p in pts:
        if p.id not in want or p.deployment is None or not p.measured.get("tpot_s") or not p.measured.get("ttft_s"):
            continue
        model, pricer, dep, wl, run = served_point(p)
        c = int(p.concurrency)
        other = "separate" if dep.prefill_steps == "mixed" else "mixed"
        alt = serve_at_concurrency(model, pricer, dataclasses.replace(dep, prefill_steps=other), wl, [c])
        sim = simulate(model, pricer, dep, workload=wl, concurrency=c, warmup=0).summary
        t_dec, _ = _decode_only(model, pricer, dep, wl, float(run.decode_batch[0]))
        tpot_m, tpot = p.measured["tpot_s"], float(run.tpot_s[0])
        implied = (tpot_m - t_dec) * (wl.mean_osl - 1) / (c - 1) if c > 1 else float("nan")
        field = "ttft_p50_s" if p.ttft_median else "ttft_s"
        print(
            f"| {p.id.split(':')[1]} | {p.system} | {c} | {tpot_m * 1e3:.1f} | {tpot * 1e3:.1f} | {t_dec * 1e3:.1f} | "
            f"{(tpot - t_dec) * 1e3:.1f} | {implied:.2f} | {other}: {alt.tpot_s[0] * 1e3:.1f} / "
            f"{getattr(alt, field)[0]:.2f} | {sim['tpot_s']['mean'] * 1e3:.1f} / {sim['ttft_s']['mean']:.2f} | "
            f"{p.measured['ttft_s']:.2f} | {getattr(run, field)[0]:.2f} |"
        )
        sweeps[f"{p.system} {p.isl}/{p.osl}"].append((c, tpot_m, tpot))
    print(
        "\n| sweep | measured a ms, b ms/user | model a ms, b ms/user | per-user slope, measured (each step of C) | "
        "model |"
    )
    print("|---|---|---|---|---|")
    for name, pts_ in sweeps.items():
        c, m, t = (np.array(x, dtype=float) for x in zip(*sorted(pts_)))
        bm, am = np.polyfit(c, m * 1e3, 1)
        bt, at = np.polyfit(c, t * 1e3, 1)
        steps_m = " / ".join(f"{x:.2f}" for x in np.diff(m * 1e3) / np.diff(c))
        steps_t = " / ".join(f"{x:.2f}" for x in np.diff(t * 1e3) / np.diff(c))
        print(f"| {name} | {am:.1f}, {bm:.2f} | {at:.1f}, {bt:.2f} | {steps_m} | {steps_t} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", nargs="*", type=int, default=list(ROWS), help="InferenceX row numbers")
    ap.add_argument("--moe", action="store_true", help="the routed-expert share table instead (docstring)")
    ap.add_argument(
        "--sigma",
        type=float,
        default=MEASURED_ROUTING_SIGMA,
        help="expert popularity σ of the f_σ/f_0 column (default: the measured DeepSeek-R1 σ)",
    )
    args = ap.parse_args()
    if args.moe:
        moe_share(args.rows, args.sigma)
    else:
        main(args.rows)
