"""The steady TTFT median with the wait's spread against the simulator, on held-out InferenceX rows' configurations.

Round 51 (ttftmed51; serve/ttft_spread.py, switch ``STEADY_SPREAD_ON``, shipped off). For each row (the
inferencex_points.csv row id, priced as ``jalapeno validate`` prices it: fit/mlperf_scenarios.priced_point) at its own
concurrency: the simulator's steady TTFT median and mean (serve/sim/, seed 0, an in-line warm-up of 30 waves: round 49
found 2 leave the idle start's bunching in), the analytic steady median with the switch off (the mean plus the length
terms) and on; then InferenceX's run (``warmup=0``) simulated against the analytic run median, off / spread /
``LATER_WAVES_ON`` / both. Figures: docs/gap_aic_ttft.md round 51, docs/model.md §8.7.

Run: python scripts/ttft_spread_sim51.py [--rows 28,26,42,64,40,72] [--parts] [--separate]   (about a second a row)

Round 52 (ttftwaves52; docs/gap_aic_ttft.md round 52): ``--parts`` adds each row's steady TTFT parts
(serve/ttft_parts.py: front end, prefill, half a step, waits, ms) and ``--separate`` prices the rows again with
prompts in prefill-only steps (``Deployment.prefill_steps`` "separate", the scheduling ATOM 0.1.1 ran: ROCm/ATOM
@f969215aa atom/model_engine/scheduler.py), both sides: ``--rows 49,42 --parts --separate`` is the MI355X ATOM
diagnosis.
"""

from __future__ import annotations

import argparse
import dataclasses

from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve import later_waves, ttft_spread
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.run import simulate
from jalapeno.serve.ttft_parts import ttft_parts

#: MI300X / MI325X DeepSeek-R1 SGLang 8k C 64, MI355X gpt-oss ATOM 8k C 128, H200 DeepSeek-R1 SGLang 8k C 32, B200
#: gpt-oss TRT-LLM 8k C 256, B200 DeepSeek-R1 SGLang 1k C 64, MI325X gpt-oss vLLM 8k C 64, H100 gpt-oss vLLM 8k C 64
DEFAULT_ROWS = (28, 26, 42, 64, 40, 72, 44, 46)
#: in-line warm-up waves of the simulator's steady state
WARMUP_WAVES = 30


def _median(model, pricer, dep, wl, c: int, spread: bool, waves: bool, idle_start: bool) -> float:
    old = ttft_spread.STEADY_SPREAD_ON, later_waves.LATER_WAVES_ON
    ttft_spread.STEADY_SPREAD_ON, later_waves.LATER_WAVES_ON = spread, waves
    try:
        return float(serve_at_concurrency(model, pricer, dep, wl, [c], idle_start=idle_start).ttft_p50_s[0])
    finally:
        ttft_spread.STEADY_SPREAD_ON, later_waves.LATER_WAVES_ON = old


def row_figures(p) -> dict:
    """One row's figures, s: ``sim_ss_p50``, ``sim_ss_mean``, ``ss_off``, ``ss_on``, ``sim_run_p50`` and ``run`` (the
    analytic run median off / spread / later waves / both)."""
    model, pricer, dep, wl = priced_point(p)
    c = int(p.concurrency)
    ss = simulate(model, pricer, dep, workload=wl, concurrency=c, seed=0, warmup=WARMUP_WAVES * c).summary["ttft_s"]
    run = simulate(model, pricer, dep, workload=wl, concurrency=c, seed=0, warmup=0).summary["ttft_s"]
    return {
        "sim_ss_p50": ss["p50"],
        "sim_ss_mean": ss["mean"],
        "sim_run_p50": run["p50"],
        "ss_off": _median(model, pricer, dep, wl, c, False, False, False),
        "ss_on": _median(model, pricer, dep, wl, c, True, False, False),
        "run": [_median(model, pricer, dep, wl, c, sp, lw, True) for lw in (False, True) for sp in (False, True)],
    }


def parts_ms(p) -> dict:
    """The row's steady TTFT (switches off) split into serve/ttft_parts.PARTS, ms."""
    model, pricer, dep, wl = priced_point(p)
    pts = serve_at_concurrency(model, pricer, dep, wl, [int(p.concurrency)], idle_start=False)
    return {k: 1e3 * float(v[0]) for k, v in ttft_parts(model, pricer, dep, wl, pts).items()}


def main(rows: list[int], parts: bool = False, separate: bool = False) -> None:
    pts, _ = load_inferencex(DEFAULT_POINTS)
    by_id = {int(p.id.split(":")[1]): p for p in pts if p.id.startswith("inferencex_points:")}
    print(
        "row  system  model  engine  ISL  C (measured TTFT) | steady, ms: sim median / mean, analytic median off -> "
        "on (vs sim) | run, ms: sim median, analytic off / spread / later waves / both (vs sim)"
    )
    for r in rows:
        for sep in (False, True) if separate else (False,):
            _row(by_id[r], r, parts, sep)


def _row(p, r: int, parts: bool, sep: bool) -> None:
    if sep:
        p = dataclasses.replace(p, deployment=dataclasses.replace(p.deployment, prefill_steps="separate"))
    f = row_figures(p)
    e = lambda a, b: f"{100 * (a / b - 1):+.0f}%"  # noqa: E731
    ms = lambda x: f"{1e3 * x:.1f}"  # noqa: E731
    print(
        f"{r} {p.system} {p.model} {p.framework} {p.isl} C{int(p.concurrency)}{' separate' if sep else ''} "
        f"(measured {ms(p.measured['ttft_s'])} ms) | "
        f"{ms(f['sim_ss_p50'])} / {ms(f['sim_ss_mean'])}, {ms(f['ss_off'])} ({e(f['ss_off'], f['sim_ss_p50'])}) -> "
        f"{ms(f['ss_on'])} ({e(f['ss_on'], f['sim_ss_p50'])}) | {ms(f['sim_run_p50'])}, "
        + " / ".join(f"{ms(x)} ({e(x, f['sim_run_p50'])})" for x in f["run"])
    )
    if parts:
        print("    steady parts, ms: " + ", ".join(f"{k} {v:.2f}" for k, v in parts_ms(p).items()))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--rows", default=",".join(map(str, DEFAULT_ROWS)), help="inferencex_points row ids, comma-separated"
    )
    ap.add_argument("--parts", action="store_true", help="each row's steady TTFT parts (serve/ttft_parts.py), ms")
    ap.add_argument("--separate", action="store_true", help="each row again with prompts in prefill-only steps")
    a = ap.parse_args()
    main([int(x) for x in a.rows.split(",")], a.parts, a.separate)
