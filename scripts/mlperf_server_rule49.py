"""MLPerf v5.1: the worst held-out rows, what the model's Server figure is, and what a Server row measures (issue 18;
docs/gap_large_batch_decode.md "Round 49 (mlperf49)"). Nothing is fitted and no prediction changes.

For the ``--top`` worst rows by |error| (throughput per chip, validate's pricing: fit/validate.predict_points over
fit/mlperf.load_mlperf) this prints the row, its mapping, measured and predicted tok/s per chip (ISL + OSL), which
of the rules' two p99 limits binds the model's pick (fit/latency_limits.engine_within_limits at the row's declared
engine, steady state: with both limits, TPOT alone, TTFT alone and none; ``slots`` when no limit binds below the
engine's slots; a ``frontier@limits`` row has no declared engine and says so), the same submission's Offline row
(measured and predicted) and the Server / Offline ratio measured and modelled, the run's scheduled rate
(fit/mlperf_server.DEFAULT_SERVER_RUNS) and the highest rate a peer ran validly on the same system
(fit/mlperf_quality.valid_peer_rates), and the data-quality flag validate gives it (fit/mlperf_quality.py rule 2:
the submitter's rate).

Run: python scripts/mlperf_server_rule49.py [--top 10]   (about a minute)
"""

from __future__ import annotations

import argparse
import csv
import math

from jalapeno.fit.mlperf_quality import _run_of, mlperf_rate_flags, valid_peer_rates


def binding(pt) -> str:
    """Which p99 limit binds ``pt``'s pick at its declared engine (steady state): 'TPOT', 'TTFT', 'both', 'slots'
    (neither: the engine's slots), or why none can be told."""
    from jalapeno.fit.latency_limits import engine_within_limits
    from jalapeno.fit.mlperf_rules import MLPERF_RULES
    from jalapeno.fit.mlperf_scenarios import benchmark_of, priced_point

    if pt.mapping != "matched@limits":
        return "n/a (frontier: no declared engine)" if pt.mapping.startswith("frontier@") else "n/a (Offline)"
    r = MLPERF_RULES[benchmark_of(pt)]
    ttft, tpot = (
        (r.interactive_ttft_s, r.interactive_tpot_s)
        if pt.id.endswith("Interactive")
        else (r.server_ttft_s, r.server_tpot_s)
    )
    model, pricer, dep, wl = priced_point(pt)

    def best(tp, tt):
        return engine_within_limits(model, pricer, dep, wl, pt.concurrency, tp, tt)["throughput_per_chip"]

    both, only_tpot, only_ttft, free = (
        best(tpot, ttft),
        best(tpot, math.inf),
        best(math.inf, ttft),
        best(math.inf, math.inf),
    )
    near = lambda a, b: abs(a - b) <= 0.01 * b  # noqa: E731
    if near(both, free):
        return f"slots (no limit binds: {both:,.0f} of {free:,.0f})"
    what = [n for n, v in (("TPOT", only_tpot), ("TTFT", only_ttft)) if not near(v, free)]
    return f"{' and '.join(what) or 'both together'} ({both:,.0f} of {free:,.0f} unbounded)"


def main() -> None:
    """Print the table (module docstring)."""
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.mlperf_server import DEFAULT_SERVER_RUNS
    from jalapeno.fit.validate import predict_points
    from jalapeno.fit.validation_run import calibrated_systems

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=10, help="how many of the worst rows (default 10)")
    args = ap.parse_args()
    pts, _ = load_mlperf()
    by = {p.id: p for p in pts}
    rows = predict_points(pts, calibrated_systems())
    rows = rows[rows.metric == "throughput_per_chip"].dropna(subset=["error"])
    pred = dict(zip(rows.id, rows.predicted))
    with DEFAULT_SERVER_RUNS.open(newline="") as f:
        runs = {r["id"]: r for r in csv.DictReader(line for line in f if not line.startswith("#"))}
    peers, flags = valid_peer_rates(), mlperf_rate_flags()
    worst = rows.assign(ae=rows.error.abs()).sort_values("ae", ascending=False).head(args.top)
    for r in worst.itertuples():
        pt = by[r.id]
        scen = r.id.rsplit("_", 1)[1]
        off = r.id[: -len(scen)] + "Offline"
        print(
            f"\n{r.id[9:]}  [{r.mapping}]  measured {r.measured:,.0f}  predicted {r.predicted:,.0f}  "
            f"({r.error:+.1%}) tok/s per chip"
        )
        if scen == "Offline":
            continue
        print(f"  binds: {binding(pt)}")
        if off in by:
            mo, po = by[off].measured["throughput_per_chip"], pred.get(off, float("nan"))
            print(
                f"  Offline twin: measured {mo:,.0f}, predicted {po:,.0f}; Server/Offline measured "
                f"{r.measured / mo:.2f}, modelled {r.predicted / po:.2f}"
            )
        else:
            print("  Offline twin: none in the rows")
        run = runs.get(r.id)
        if run:
            key = _run_of(run["source"])
            others = [(v, who) for v, who in peers.get(key[1:], []) if who != key[0]] if key else []
            top = max(others) if others else None
            print(
                f"  scheduled {float(run['scheduled_per_s']):g}/s; best peer on the same system: "
                + (f"{top[1]} {top[0]:g}/s ({top[0] / float(run['scheduled_per_s']):.2f}x)" if top else "none")
            )
        print(f"  flag: {flags.get((r.id, 'throughput_per_chip'), 'none')}")


if __name__ == "__main__":
    main()
