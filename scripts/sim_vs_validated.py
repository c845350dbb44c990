"""TTFT and TPOT of the shipped InferenceX rows: measured, analytic and simulator side by side.

Issue 18 item 6a on the validated points themselves rather than on a synthetic grid
(scripts/ttft_queue_grid.py): every matched aggregated (or disaggregated) InferenceX row of the chosen frameworks and
systems is priced as `jalapeno validate` prices it (its stack at the release that ran it, its
recipe's engine limits, fit/validate.point_stack and with_stack_mtp) by the analytic model
(serve_at_concurrency, InferenceX's idle start) and by the request-level simulator with
InferenceX's protocol (10·C counted requests from an idle server, ``warmup=0``, seed 0). Both
price steps with the same step cost, so a gap between them is the queueing and scheduling
arithmetic; a gap to the measured value that both share is the step cost or an engine behaviour
neither models. Rows where the two disagree by more than 15% on mean TTFT are marked ``*``. A row
whose measured TTFT is a median (``ttft_median``) shows it beside both sides' medians.
``--mode disagg`` takes the disaggregated rows (Dynamo: ``--framework dynamo-trt --systems
gb200-nvl72,b200,h100``; the simulator's first token leaves the decode worker once the request holds a
slot, docs/simulator.md §5); ``--max-c`` skips the largest runs (10·C requests each).

Run: python scripts/sim_vs_validated.py [--framework sglang] [--systems h200,b200] [--mode disagg] [--rows 6,22]
(~1 s a row; ~10 s per 100,000 simulated requests)
"""

from __future__ import annotations

import argparse
import sys
from importlib.resources import files

from jalapeno.errors import JalapenoError
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_release, point_stack, with_stack_mtp, point_workload
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.catalog import load_model

TOL = 0.15  # issue 18 item 6a: the analytic TTFT within 15% of the simulator's


def rows(framework: str, systems: set[str], mode: str = "agg", max_c: float = float("inf"), only=None):
    """The matched InferenceX points of ``framework`` on ``systems`` in ``mode`` ("agg" or "disagg")
    with a TTFT or TPOT, at most ``max_c`` users, restricted to the row numbers ``only`` if given."""
    pts, _ = load_inferencex(files("jalapeno") / "data" / "validation" / "inferencex_points.csv")
    for p in pts:
        if (
            p.framework == framework
            and p.system in systems
            and p.mapping == "matched"
            and p.mode == mode
            and p.concurrency <= max_c
            and (only is None or int(p.id.split(":")[1]) in only)
            and p.deployment is not None
            and ("ttft_s" in p.measured or "tpot_s" in p.measured)
        ):
            yield p


def compare(p) -> dict:
    """Measured, analytic and simulated mean TTFT (s) and TPOT (s) of one point."""
    st = point_stack(p)
    model = load_model(p.model)
    pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
    dep = with_stack_mtp(p.deployment, st, p.model)
    wl = point_workload(p)
    ana = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency]).record(0)
    sim = simulate(model, pricer, dep, workload=wl, concurrency=int(p.concurrency), warmup=0, seed=0).summary
    return {
        "ttft": (None if p.ttft_median else p.measured.get("ttft_s"), ana["ttft_s"], sim["ttft_s"]["mean"]),
        "p50": (p.measured.get("ttft_s") if p.ttft_median else None, ana["ttft_p50_s"], sim["ttft_s"]["p50"]),
        "tpot": (p.measured.get("tpot_s"), ana["tpot_s"], sim["tpot_s"]["mean"]),
        "release": point_release(p) or "-",
        "limit": ana["limit"] or "-",
    }


def _cell(measured, value) -> str:
    return f"{value:.3f}" if measured is None else f"{value:.3f} ({value / measured - 1:+.0%})"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Analytic vs simulator vs measured on the shipped InferenceX rows.")
    ap.add_argument("--framework", default="sglang", help="InferenceX framework column (default sglang)")
    ap.add_argument("--systems", default="h200,b200", help="comma-separated systems (default h200,b200)")
    ap.add_argument("--mode", default="agg", choices=("agg", "disagg"), help="aggregated or disaggregated rows")
    ap.add_argument("--max-c", type=float, default=float("inf"), help="skip rows above this many users")
    ap.add_argument("--rows", default="", help="comma-separated row numbers to keep (default all)")
    a = ap.parse_args(argv)
    only = {int(x) for x in a.rows.split(",") if x} or None
    print(
        "| row | system | ISL | C | release | TTFT meas | analytic | simulator | ana/sim | TTFT p50 meas | analytic | "
        "simulator | TPOT meas ms | analytic | simulator | limit |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    gaps = []
    try:
        for p in rows(a.framework, set(a.systems.split(",")), a.mode, a.max_c, only):
            r = compare(p)
            (tm, ta, ts), (pm, pa, ps), (qm, qa, qs) = r["ttft"], r["tpot"], r["p50"]
            gap = ta / ts - 1
            gaps.append(abs(gap))
            mark = " *" if abs(gap) > TOL else ""
            meas = "-" if tm is None else f"{tm:.3f}"
            tpm = "-" if pm is None else f"{pm * 1e3:.2f}"
            tpa = f"{pa * 1e3:.2f}" + ("" if pm is None else f" ({pa / pm - 1:+.0%})")
            tps = f"{ps * 1e3:.2f}" + ("" if pm is None else f" ({ps / pm - 1:+.0%})")
            print(
                f"| {p.id.split(':')[1]} | {p.system} | {p.isl} | {p.concurrency:g} | {r['release']} | {meas} | "
                f"{_cell(tm, ta)} | {_cell(tm, ts)} | {gap:+.0%}{mark} | {'-' if qm is None else f'{qm:.3f}'} | "
                f"{_cell(qm, qa)} | {_cell(qm, qs)} | {tpm} | {tpa} | {tps} | {r['limit']} |"
            )
    except JalapenoError as e:
        print(e)
        return 2
    if gaps:
        print(
            f"\n{len(gaps)} rows; analytic vs simulator mean TTFT: median |gap| {sorted(gaps)[len(gaps) // 2]:.1%}, "
            f"largest {max(gaps):.1%}; {sum(g > TOL for g in gaps)} beyond {TOL:.0%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
