"""InferenceX GB200 saturated-row TTFT: the analytic model against the request-level simulator, wave by wave (issue 18
item 6a, round 48, gb200ix48; diagnosis, nothing fitted or shipped).

Question: InferenceX GB200 TTFT held out is 93.9% / bias −93.9% (n 3; rows 29 DeepSeek-R1 FP4 1k/1k C 6,144 and 41
gpt-oss-120b 8k/1k C 512 at ~5% of the measured median, row 47 −6.4%). Does InferenceX's protocol itself (idle start:
the 2·C warm-up drains first, then 10·C counted prompts with C sent at once, lengths uniform in [0.8 L, L]) put a
multi-second *median* TTFT on these deployments at the model's own step costs, so that the analytic idle-start model
misses it? And does the analytic model agree with the simulator within issue 18's 15% on TTFT here (item 6a)?

For each row named (``inferencex_points:N``) it prices the deployment validation prices (serve/point.
serve_at_concurrency: the run's TTFT mean and p50, and the steady state), then simulates the same deployment, stack
and workload (serve/sim/run.simulate, ``warmup=0``: InferenceX's protocol) and prints the simulator's TTFT mean
and p50 beside the analytic ones, the counted requests split into waves of C by arrival (:func:`wave_table`: each wave's
median TTFT), and what the measured median needs by Little's law: the users held before their first token
λ·TTFT against those the simulator holds, and the prefill pool's capacity against the measured rate λ (a steady
queue of that size needs λ at the pool's capacity, i.e. the capacity at most λ). Nothing is fitted or written.

Run: python scripts/gb200_ix_ttft_waves48.py [29 41 47]   (about a minute; row 29 simulates 61,440 requests)
"""

from __future__ import annotations

import sys
from importlib.resources import files

import numpy as np
import pandas as pd

from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.disagg import pool_prefill_perf
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.run import simulate

#: InferenceX's counted prompts per user (benchmark_serving ``--num-prompts`` = 10·C; srt-slurm sa-bench
#: ``NUM_PROMPTS_MULT`` 10, InferenceX benchmarks/multi_node/srt_bench.sh the same default)
PROMPTS_PER_USER = 10
#: a measured median TTFT above this multiple of the simulated run's reads as a queue the simulation does not hold
#: (a reporting threshold, not a measurement)
QUEUED = 3.0


def wave_table(arrival_s, ttft_s, concurrency: int) -> pd.DataFrame:
    """The counted requests sorted by arrival and cut into waves of ``concurrency``: per wave its first and last
    arrival (s), median and mean TTFT (s). A closed loop of C users sends wave k's prompts as wave k − 1's finish.

    >>> wave_table([0, 0, 5, 6], [3.0, 1.0, 0.5, 0.7], 2)[["wave", "ttft_p50_s"]].to_dict("list")
    {'wave': [0, 1], 'ttft_p50_s': [2.0, 0.6]}

    Raises:
        ValueError: ``concurrency`` below 1, or ``arrival_s`` and ``ttft_s`` of different lengths.
    """
    a, t = np.asarray(arrival_s, dtype=float), np.asarray(ttft_s, dtype=float)
    if concurrency < 1 or a.shape != t.shape:
        raise ValueError(f"wave_table: concurrency {concurrency} (needs >= 1), {a.size} arrivals, {t.size} TTFTs")
    order = np.argsort(a, kind="stable")
    d = pd.DataFrame({"arrival_s": a[order], "ttft_s": t[order]})
    d["wave"] = np.arange(len(d)) // int(concurrency)
    g = d.groupby("wave").agg(
        first_s=("arrival_s", "min"),
        last_s=("arrival_s", "max"),
        ttft_p50_s=("ttft_s", "median"),
        ttft_mean_s=("ttft_s", "mean"),
    )
    return g.reset_index()


def held_before_first_token(rate_per_s: float, ttft_s: float) -> float:
    """Users a closed loop holds before their first token, λ·TTFT (Little's law on the TTFT span).

    >>> held_before_first_token(97.68, 7.6283)  # row 29 measured: ~745 of its 6,144 users
    745.1...
    """
    return float(rate_per_s) * float(ttft_s)


def main(rows: list[str]) -> None:
    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    wanted = {f"inferencex_points:{r}" for r in rows}
    for p in (q for q in points if q.id in wanted):
        model, pricer, dep, wl = priced_point(p)  # as validate prices the row (its stack, MTP and pricer)
        m, c, g = p.measured, int(p.concurrency), dep.chips
        lam = m["throughput_per_chip"] * g / (wl.mean_isl + wl.mean_osl)
        print(f"== {p.id} {p.system} {p.model} {p.isl}/{p.osl} C={c} on {g} GPUs: {dep.label}")
        print(
            f"  measured: TTFT p50 {m['ttft_s']:.2f} s, TPOT p50 {m['tpot_s'] * 1e3:.1f} ms, lambda {lam:.1f}/s; "
            f"before first token {held_before_first_token(lam, m['ttft_s']):.0f} users"
        )
        run = serve_at_concurrency(model, pricer, dep, wl, [c])
        steady = serve_at_concurrency(model, pricer, dep, wl, [c], idle_start=False)
        print(
            f"  analytic: run TTFT mean {run.ttft_s[0]:.2f} s p50 {run.ttft_p50_s[0]:.2f} s, steady p50 "
            f"{steady.ttft_p50_s[0]:.2f} s, TPOT {run.tpot_s[0] * 1e3:.1f} ms, lambda {run.request_rate_per_s[0]:.1f}/s"
        )
        res = simulate(model, pricer, dep, workload=wl, concurrency=c, num_requests=PROMPTS_PER_USER * c, warmup=0)
        r = res.requests
        t50, tmean = float(r.ttft_s.median()), float(r.ttft_s.mean())
        span = float(r.done_s.max() - r.arrival_s.min())
        sim_lam = len(r) / span
        print(
            f"  simulator (InferenceX protocol, {len(r):,} requests): TTFT mean {tmean:.2f} s p50 {t50:.2f} s, "
            f"TPOT p50 {float(r.tpot_s.median()) * 1e3:.1f} ms, lambda {sim_lam:.1f}/s; analytic / simulator: "
            f"p50 {run.ttft_p50_s[0] / t50 - 1:+.0%}, mean {run.ttft_s[0] / tmean - 1:+.0%} (item 6a: within 15%)"
        )
        w = wave_table(r.arrival_s, r.ttft_s, c)
        print(
            "  simulator by wave (C requests each, by arrival): p50 TTFT s "
            + " ".join(f"{v:.2f}" for v in w.ttft_p50_s)
        )
        pre = pool_prefill_perf(model, pricer, dep, wl)
        cap = dep.prefill.workers * pre.tokens_per_s / wl.mean_isl
        queued = m["ttft_s"] > QUEUED * t50  # the measured median is a queue the simulated run does not hold
        need = "; a steady queue of the measured size needs the pool at most lambda" if queued else ""
        print(
            f"  prefill pool {cap:.1f} req/s at the model's speed, measured lambda {lam:.1f}/s: ratio {cap / lam:.2f}{need}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["29", "41", "47"])
