"""The InferenceX best rows' median TTFT at their highest-throughput concurrency against the closed-loop identity (issue 18, round 30).

For each row named (``inferencex_points:N``) prints the measured triple (throughput per GPU, median TTFT, median
TPOT), the request rate λ = throughput·G/(mean ISL + mean OSL) and what the closed loop C = λ·(TTFT + (OSL − 1)·TPOT)
puts where: requests decoding (λ·(OSL − 1)·TPOT) and before their first token (λ·TTFT); then the model's triple on
the deployment validation prices (the run's: idle-start mean and p50, and the steady state), its decode batch against
the decode cap that binds it, and for a disaggregated row the prefill pool's capacity in requests/s and the share of
it the measured and the modelled rate use. Nothing is fitted or written.
Run: python scripts/ix_saturated_ttft.py [29 30 32 41 43 25]
"""

from __future__ import annotations

import sys
from importlib.resources import files

import numpy as np

from jalapeno.fit.mlperf_scenarios import priced_point

from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.disagg import decode_curve, pool_prefill_perf
from jalapeno.serve.point import serve_at_concurrency


def main(rows: list[str]) -> None:
    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    wanted = {f"inferencex_points:{r}" for r in rows}
    for p in (q for q in points if q.id in wanted):
        (model, pricer, dep, wl), m = priced_point(p), p.measured
        g, c = dep.chips, float(p.concurrency)
        lam = m["throughput_per_chip"] * g / (wl.mean_isl + wl.mean_osl)
        print(f"== {p.id} {p.system} {p.model} {p.framework} {p.isl}/{p.osl} C={c:g} on {g} GPUs: {dep.label}")
        if m.get("tpot_s") and m.get("ttft_s"):
            dec, first = lam * (wl.mean_osl - 1) * m["tpot_s"], lam * m["ttft_s"]
            print(
                f"  measured: {m['throughput_per_chip']:.0f} tok/s/GPU, TTFT p50 {m['ttft_s']:.2f} s, TPOT p50 "
                f"{m['tpot_s'] * 1e3:.1f} ms; lambda {lam:.2f}/s, C/lambda {c / lam:.1f} s vs TTFT + (OSL-1)TPOT "
                f"{m['ttft_s'] + (wl.mean_osl - 1) * m['tpot_s']:.1f} s; decoding {dec:.0f}, before first token {first:.0f}"
            )
        run = serve_at_concurrency(model, pricer, dep, wl, [c])
        ss = serve_at_concurrency(model, pricer, dep, wl, [c], idle_start=False)
        inst = dep.decode.workers
        for name, x in (("run", run), ("steady", ss)):
            print(
                f"  model {name}: {x.throughput_per_chip[0]:.0f} tok/s/GPU, TTFT mean {x.ttft_s[0]:.2f} s p50 "
                f"{x.ttft_p50_s[0]:.2f} s, TPOT {x.tpot_s[0] * 1e3:.1f} ms; decoding {x.decode_batch[0] * inst:.0f} "
                f"({x.decode_batch[0]:.0f} per instance), admission queue {x.queue_s[0]:.2f} s, limit '{x.limit[0]}'"
            )
        dc = decode_curve(model, pricer, dep.decode.layout, dep.precision, wl, np.array([1.0]), dep.mtp, dep)
        print(f"  decode cap {dc.cap:.0f} per instance ({dc.cap_name}) x {inst}")
        if dep.prefill is not None:
            pre = pool_prefill_perf(model, pricer, dep, wl)
            cap = dep.prefill.workers * pre.tokens_per_s / wl.mean_isl
            print(
                f"  prefill pool {cap:.1f} req/s ({dep.prefill.workers} x {pre.tokens_per_s:.0f} prompt tok/s): "
                f"measured lambda uses {lam / cap:.2f}, model {run.request_rate_per_s[0] / cap:.2f}"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["29", "30", "32", "41", "43", "25"])
