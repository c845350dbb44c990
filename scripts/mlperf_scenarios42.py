"""MLPerf v5.1: each Server / Interactive row's engine under its benchmark's three rules, and the Offline twin
(issue 18; diagnosis only, docs/gap_large_batch_decode.md "Round 42 (mlperf42)").

For every row mapped ``matched@limits`` (fit/mlperf.MLPERF_LIMIT_ENGINES / MLPERF_DISAGG_ENGINES) this prints, in tok/s
per chip, the engine's best steady throughput under the benchmark's Interactive rule, its Server rule and no rule
(fit/mlperf_scenarios.scenario_ladder: each a subset of the next, so Interactive <= Server <= unbounded), each best
load (requests in flight per chip), the row's own figure as validate counts it (LoadGen's Server run, to its
last-issued query's response) and the run's measured throughput and load (Little's law: output tok/s x mean TPOT).
Then for every (submitter, system, benchmark) with an Offline row at its declared engine (fit/mlperf.MLPERF_ENGINES):
the Offline engine's steady state with every slot filled, its run's drain (serve/finite_run.finite_run_factor), the
figure validate reports, the measured one, and the Server row's, so the order Offline >= Server can be read both ways:
steady (the rules' subsets) and as LoadGen counts each run.

Reading (round 42): the steady order holds on every row; the counted one breaks on DeepSeek-R1 only (NVIDIA B200
5,275 vs 5,222), where the Offline drain (0.754) costs three times the Server run's last query (0.921), and the
model's Server rule admits 372-384 a rank (0.73-0.75 of the slots) where the runs stood at 112-162.
Run: python scripts/mlperf_scenarios42.py   (about a minute and a half)
"""

from __future__ import annotations

from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.mlperf_scenarios import priced_point, scenario_ladder
from jalapeno.serve.finite_run import finite_run_factor
from jalapeno.serve.point import serve_at_concurrency


def ladder_rows(pts) -> list[dict]:
    """One dict per ``matched@limits`` row of ``pts``: the steady ladder (tok/s per chip; loads per chip), the counted
    Server-rule figure, and the measured throughput and load per chip."""
    out = []
    for p in pts:
        if p.mapping != "matched@limits":
            continue
        s, c = scenario_ladder(p), scenario_ladder(p, counted=True)
        wl = p.workload
        out_rate = p.measured["throughput_per_chip"] * wl.mean_osl / (wl.mean_isl + wl.mean_osl)
        scen = p.id.rsplit("_", 1)[1]
        own = "interactive" if scen == "Interactive" else "server"
        out.append(
            {
                "row": p.id[9:],
                "scenario": scen,
                **{k: v / p.chips if k.endswith("_load") else v for k, v in s.items()},
                "counted": c[own],
                "measured": p.measured["throughput_per_chip"],
                "measured_load": out_rate * p.measured["tpot_s"],
            }
        )
    return out


def offline_rows(pts) -> list[dict]:
    """One dict per Offline row at its declared engine with a Server row of the same submitter, system and benchmark:
    steady (every slot), drain, reported (steady x drain x delivered share) and measured, tok/s per chip."""
    by = {p.id: p for p in pts}
    out = []
    for p in pts:
        if p.mapping != "matched" or not p.id.endswith("_Offline"):
            continue
        model, pricer, dep, wl = priced_point(p)
        steady = float(serve_at_concurrency(model, pricer, dep, wl, [p.concurrency]).throughput_per_chip[0])
        drain = finite_run_factor(model, pricer, dep, wl, p.queries) if p.queries else 1.0
        srv = by.get(p.id[: -len("Offline")] + "Server")
        out.append(
            {
                "row": p.id[9:],
                "steady": steady,
                "drain": drain,
                "reported": steady * drain * p.delivered_share,
                "measured": p.measured["throughput_per_chip"],
                "server_measured": srv.measured["throughput_per_chip"] if srv else float("nan"),
            }
        )
    return out


def main() -> None:
    """Print both tables (module docstring)."""
    pts, _ = load_mlperf()
    print(
        "engine under each rule, steady tok/s per chip (best load per chip); counted = the row's own rule as "
        "LoadGen counts the run"
    )
    print(f"{'row':<72} {'interactive':>16} {'server':>16} {'unbounded':>16} {'counted':>8} {'measured':>16}")
    for r in ladder_rows(pts):
        inter = f"{r['interactive']:7.0f} ({r['interactive_load']:5.1f})" if "interactive" in r else f"{'-':>16}"
        print(
            f"{r['row']:<72} {inter} {r['server']:7.0f} ({r['server_load']:5.1f}) {r['unbounded']:7.0f} "
            f"({r['unbounded_load']:5.1f}) {r['counted']:8.0f} {r['measured']:7.0f} ({r['measured_load']:5.1f})"
        )
    print("\nOffline engines (every slot), tok/s per chip")
    print(f"{'row':<72} {'steady':>8} {'drain':>6} {'reported':>9} {'measured':>9} {'Server meas.':>12}")
    for r in offline_rows(pts):
        print(
            f"{r['row']:<72} {r['steady']:8.0f} {r['drain']:6.3f} {r['reported']:9.0f} {r['measured']:9.0f} "
            f"{r['server_measured']:12.0f}"
        )


if __name__ == "__main__":
    main()
