"""The round-robin decode-slot wait at the slot cap in the simulator's steady state, worker by worker (issue 18
item 6a, round 49, rrwait49; docs/gap_disagg_overprediction.md; nothing fitted or written).

Row 29 (InferenceX GB200 DeepSeek-R1 FP4 disaggregated 1k/1k, P 1 x DEP4 + D 2 x DEP4 of 768 running a rank, C =
6,144 = the decode slots) as validate prices it, served by the simulator with Dynamo's round-robin front end and its
in-line warm-up (2·C uncounted requests, then 10·C counted: the steady state the analytic ``idle_start=False``
point stands for). It prints

1. the analytic point and the inputs serve/disagg.py passes serve/rr_wait.py (n = the decode batch b, slots B,
   workers N, the away time P) next to the derivation's (n = C/N): the slack B − b already holds the C/N − b
   away users a worker, which the wave's lag n·P·f adds a second time; and the waits of the wave form and of the
   phase-mixed steady form (slack B − b, σ² = (N − 1)/N · λ_v ∫F(1 − F) dS: :func:`steady_sigma`);
2. each decode worker's requests in system (decoding + waiting for a slot), its queue, TPOT, completions and
   output tokens per second over the steady part of the run: a full worker (B decoding) steps slower in
   proportion, so its token rate equals the other's and nothing pulls the split back;
3. the split X = D_2 − D_1 (D_v = requests in system at v − B) over the run, its mean and sd, and the
   variance of its increments against the lag (short lags: Poisson-like completions; lags past the decode
   spread: 2·Var(fast part) + a slow drift);
4. the counted requests' mean and median wait for a slot (first token − KV at the decode worker) by wave;
5. the simulator's decode step time and b/τ near the cap, bucketed and with the batch interpolated between buckets
   (serve/sim/step_time.BATCH_INTERP_ON): the bucket edge at 3,057 makes a full worker slower in tokens a second
   than one a few slots short, which is what holds the split. The simulation runs with the switch off (the
   round-48 simulator, to show the split) unless ``--interp`` (the shipped default since round 49).

Run: python scripts/rr_wait_split49.py [--c 6144] [--seed 0] [--router round_robin] [--interp] (~25 s a run)
"""

from __future__ import annotations

import argparse
import math
from importlib.resources import files

import numpy as np

from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import INFERENCEX_RANGE_RATIO, point_stack, with_stack_mtp
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.rr_wait import osl_spread_tokens, wave_wait_s
from jalapeno.serve.sim import step_time
from jalapeno.serve.sim.simulation import Simulation
from jalapeno.serve.sim.workloads import fixed_length_requests
from jalapeno.specs.catalog import load_model
from jalapeno.specs.workload import Workload

LAGS_S = (1, 5, 10, 20, 40, 80, 160)


def normal_excess(sigma, slack):
    """E[max(X − s, 0)] of X ~ Normal(0, σ²): σ φ(s/σ) − s (1 − Φ(s/σ)) (σ/√(2π) at s = 0)."""
    if sigma <= 0:
        return 0.0
    z = slack / sigma
    return sigma * math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) - slack * 0.5 * math.erfc(z / math.sqrt(2))


def steady_sigma(rate_per_worker: float, workers: int, spread_increments_s) -> float:
    """σ of a worker's requests in system about their mean in the phase-mixed steady state: each request that
    reached worker v u seconds ago is still there with probability 1 − F(u) (F: the decode time's CDF), so over
    arrivals at rate λ_v the count's variance is λ_v ∫ F(1 − F) dS = λ_v Σ p(1 − p) ΔQ_S over the quantile grid
    (uniform spread w: λ_v·w/6), and its deviation from the workers' mean keeps (N − 1)/N of it."""
    dq = np.asarray(spread_increments_s, dtype=float)
    p = (np.arange(dq.size) + 0.5) / dq.size
    var = rate_per_worker * float((p * (1 - p) * dq).sum()) * (workers - 1) / workers
    return math.sqrt(max(var, 0.0))


def in_system(enter, leave, ts) -> np.ndarray:
    """How many of the intervals [enter, leave) hold each time of ``ts`` (NaN ends never count)."""
    enter, leave = np.asarray(enter, dtype=float), np.asarray(leave, dtype=float)
    ok = np.isfinite(enter) & np.isfinite(leave)
    return np.searchsorted(np.sort(enter[ok]), ts, "right") - np.searchsorted(np.sort(leave[ok]), ts, "right")


def increment_variance(x, dt_s: float, lag_s: float) -> float:
    """The variance of x(t + lag) − x(t) over a series sampled every ``dt_s``."""
    k = max(int(round(lag_s / dt_s)), 1)
    x = np.asarray(x, dtype=float)
    return float(np.var(x[k:] - x[:-k])) if x.size > k else float("nan")


def row29(router: str):
    """(model, pricer, deployment, workload, C) of InferenceX row 29 as validate prices it, with ``router``."""
    import dataclasses

    pts, _ = load_inferencex(files("jalapeno") / "data" / "validation" / "inferencex_points.csv")
    p = next(q for q in pts if q.id == "inferencex_points:29")
    st = point_stack(p)
    pricer = load_any_pricer(p.system, "calibrated", stack=st)
    pricer = pricer.with_efficiency(dataclasses.replace(pricer.efficiency, disagg_router=router))
    wl = Workload(f"{p.isl}/{p.osl}", p.isl, p.osl, INFERENCEX_RANGE_RATIO)
    return load_model(p.model), pricer, with_stack_mtp(p.deployment, st, p.model), wl, int(p.concurrency)


def run(c: int | None, seed: int, router: str, interp: bool = False) -> None:
    step_time.BATCH_INTERP_ON = interp
    model, pricer, dep, wl, c29 = row29(router)
    c = c or c29
    ana = serve_at_concurrency(model, pricer, dep, wl, [c], idle_start=False).record(0)
    n_w, cap = dep.decode.workers, dep.decode.layout.dp * dep.max_running
    b, tpot = ana["decode_batch"], ana["tpot_s"]  # the record's decode batch is one worker's
    lam_v = ana["request_rate_per_s"] / n_w
    dq = osl_spread_tokens(wl) * tpot
    away = ana["ttft_s"] - tpot / 2  # the TTFT parts before the slot (less the first step's half), roughly
    print(
        f"row 29 shape, C {c}, router {router}, seed {seed}, interpolated steps {interp}: analytic steady TTFT {ana['ttft_s']:.3f} s (p50 "
        f"{ana['ttft_p50_s']:.3f}); decode batch a worker b {b:.1f} of B {cap}, N {n_w}, TPOT {tpot * 1e3:.2f} ms, "
        f"λ_v {lam_v:.2f} req/s, decode spread {dq.sum():.2f} s"
    )
    print(
        f"  inputs passed: n = b {b:.1f}, slack B − b {cap - b:.1f}; the derivation's n = C/N {c / n_w:.1f}, slack "
        f"B − C/N {cap - c / n_w:.1f}; wave lag n·P·f at mid-wave {b * away * (1 / 64) / dq[32]:.1f} (P ~{away:.2f} s)"
    )
    sig = steady_sigma(lam_v, n_w, dq)
    w_steady = normal_excess(sig, max(cap - b, 0.0)) / lam_v
    print(
        f"  wave form W {float(wave_wait_s(b, cap, n_w, dq, away)) * 1e3:.2f} ms; phase-mixed steady form: σ "
        f"{sig:.1f}, slack {cap - b:.1f}, E[Q] {normal_excess(sig, max(cap - b, 0.0)):.3f}, W {w_steady * 1e3:.2f} ms"
    )
    sim = Simulation(model, pricer, dep, seed=seed, ctx_ref=wl.decode_ctx)
    sim.closed_loop(fixed_length_requests(wl, 12 * c, np.random.default_rng(seed)), c, 2 * c)
    res = sim.run()
    print(f"  simulator TTFT mean {res.summary['ttft_s']['mean']:.3f} s, p50 {res.summary['ttft_s']['p50']:.3f} s")
    rq = sim.requests
    col = {
        a: np.array([getattr(r, a) for r in rq], dtype=float)
        for a in ("arrival_s", "first_token_s", "kv_ready_s", "done_s", "osl")
    }
    inst = np.array([r.instance for r in rq])
    decoders = [i.id for i in sim.instances if i.role == "decode"]
    cycle = float(np.nanmean(col["done_s"] - col["arrival_s"]))
    lo, hi = 2 * cycle, float(np.nanmax(col["done_s"])) - cycle  # past the start-up, before the drain
    dt = 0.5
    ts = np.arange(lo, hi, dt)
    d = {}
    for v in decoders:
        m = inst == v
        sys_v = in_system(col["kv_ready_s"][m], col["done_s"][m], ts)
        q_v = in_system(col["kv_ready_s"][m], col["first_token_s"][m], ts)
        d[v] = sys_v - cap
        done = m & (col["done_s"] >= lo) & (col["done_s"] < hi)
        mt = m & (col["first_token_s"] >= lo) & (col["done_s"] < hi)
        tp = ((col["done_s"] - col["first_token_s"]) / (col["osl"] - 1))[mt].mean()
        rate = done.sum() / (hi - lo)
        print(
            f"  worker {v}: in system {np.mean(sys_v):.1f} (decoding {np.mean(sys_v - q_v):.1f}), queue {np.mean(q_v):.1f}, "
            f"TPOT {tp * 1e3:.2f} ms, {rate:.2f} req/s, {np.mean(sys_v - q_v) / tp:,.0f} output tok/s"
        )
    if len(decoders) == 2:
        x = d[decoders[1]] - d[decoders[0]]
        print(
            f"  split X = D_2 − D_1 over t {lo:.0f}-{hi:.0f} s: mean {x.mean():.1f}, sd {x.std():.1f}; fast part "
            f"derived Var {2 * sig**2 * n_w / (n_w - 1):.0f} (2 workers x λ_v ∫F(1−F))"
        )
        print("  lag s   Var[X(t+lag) − X(t)]   / lag")
        for lag in LAGS_S:
            v = increment_variance(x, dt, lag)
            print(f"  {lag:5d}   {v:10.1f}   {v / lag:8.2f}")
    timer = next(i.timer for i in sim.instances if i.role == "decode")
    ctx = wl.decode_ctx
    print("  decoding   step ms (buckets)   b/τ tok/s   step ms (interpolated)   b/τ tok/s")
    for bb in range(cap - 96, cap + 1, 16):
        was = step_time.BATCH_INTERP_ON
        step_time.BATCH_INTERP_ON = False
        t0 = timer(bb, ctx, 0.0, 0.0, 0)
        step_time.BATCH_INTERP_ON = True
        t1 = timer(bb, ctx, 0.0, 0.0, 0)
        step_time.BATCH_INTERP_ON = was
        print(f"  {bb:8d}   {t0 * 1e3:8.3f}   {bb / t0:10,.0f}   {t1 * 1e3:8.3f}   {bb / t1:10,.0f}")
    wait = col["first_token_s"] - col["kv_ready_s"]
    ids = np.arange(len(rq))
    print("  wave (C requests)   mean wait for a slot s   median s")
    for w in range(len(rq) // c):
        m = (ids // c) == w
        print(f"  {w:4d}   {np.nanmean(wait[m]):.3f}   {np.nanmedian(wait[m]):.3f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--c", type=int, default=None, help="concurrency (default: row 29's, 6,144 = the decode slots)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--router", default="round_robin", choices=("round_robin", "load_aware"))
    ap.add_argument(
        "--interp",
        action="store_true",
        help="interpolated steps (step_time.BATCH_INTERP_ON, the shipped default); without it the nearest bucket",
    )
    args = ap.parse_args(argv)
    run(args.c, args.seed, args.router, args.interp)


if __name__ == "__main__":
    main()
