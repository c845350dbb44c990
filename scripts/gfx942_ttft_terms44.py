"""Which TTFT term the gfx942 package moves, per row (issue 18, round 44; diagnosis, nothing fitted or shipped).

``fit/amd.GFX942_TABLE_CLOCK`` (the clocked gfx942 package with round 43's padded MLA decode) meets the MI325X held-out
interactivity / throughput goals but takes the held-out MI325X TTFT median past 20% and the fidelity guard's MI325X
TTFT past its threshold (docs/gap_large_batch_decode.md, round 43). This script prices every InferenceX TTFT row of
MI300X / MI325X as validation prices it (the point's stack and deployment, roofline, calibrated sets of the tree it
runs in) and splits the model's mean TTFT into serve/ttft_parts.PARTS (front end, prefill, first decode step,
waits). It also prices one lone prompt's prefill step (ISL tokens, no decode batch: cost/step.step_cost) and splits
it by what the package's clock can touch: FP8 GEMM / fused-MoE ops priced compute-bound (``gemm.fp8``,
``gemm.fp8_block`` and the routed experts' compute side, the families fit/amd.TABLE_TIMED_ON scales by the chip's
clock), attention (MLA / GQA prefill: H200-derived fractions, not clocked), HBM-bound ops, and the rest (collectives,
per-kernel and per-step fixed costs).

Two runs and a comparison, because the package lives in the calibration files (``jalapeno calibrate``) and the
stack refit (data/stack_fits.toml, data/stacks.toml):

    PYTHONPATH=<main>/src python scripts/gfx942_ttft_terms44.py --json base.json
    PYTHONPATH=<package-on tree>/src python scripts/gfx942_ttft_terms44.py --json on.json
    python scripts/gfx942_ttft_terms44.py --compare base.json on.json

(each run a few seconds). ``--compare`` prints per row: measured, model before / after, error before / after, and the change of
each TTFT part and of the lone prefill step's clock-priced part (ms); then the held-out median per system.
"""

from __future__ import annotations

import argparse
import json
import statistics

#: the systems of the package (fit/amd.GFX942_SYSTEMS; spelled here so that --compare needs no jalapeno import)
SYSTEMS = ("mi300x", "mi325x")
#: the splits a held-out figure takes (fit/heldout.py: held_out and rows no fit drew)
HELD_OUT = ("held_out", "none")


def _prefill_split(model, pricer, dep, isl: int) -> dict:
    """A lone ``isl``-token prompt's prefill step on ``dep``'s decode pool, s, split into clocked (FP8 GEMM / MoE
    compute-bound), attention, HBM-bound and rest (the step time less the op times: collectives, fixed costs)."""
    from jalapeno.cost.pool_backends import with_pool_backends
    from jalapeno.cost.step import Batch, step_cost

    pool = dep.decode
    pr = with_pool_backends(pricer, pool, model, pool.layout, dep.precision.kv_cache.name)
    sc = step_cost(model, pr, pool.layout, dep.precision, Batch.make(decode_seqs=0, decode_ctx=0, prefill_tokens=isl))
    out = {"clocked": 0.0, "attention": 0.0, "hbm": 0.0}
    for r in sc.op_rows(0):
        if r["kind"] == "attention":
            out["attention"] += r["time_s"]
        elif r["bound"] == "compute" and r["kind"] in ("gemm", "moe") and r["format"] == "fp8":
            out["clocked"] += r["time_s"]
        elif r["bound"] == "hbm_bandwidth":
            out["hbm"] += r["time_s"]
    step = float(sc.step_time_s[0])
    out["rest"] = step - sum(out.values())
    out["step"] = step
    return out


def price_rows() -> list[dict]:
    """Every InferenceX MI300X / MI325X point with a measured TTFT, priced in this tree (module docstring)."""
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.heldout import split_labels
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload, with_harness_step
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.serve.ttft_parts import ttft_parts
    from jalapeno.specs.catalog import load_model

    points = load_inferencex(DEFAULT_POINTS)[0]
    labels = split_labels(points, ttft_predicted=())
    out = []
    for p in points:
        if p.system not in SYSTEMS or p.measured.get("ttft_s") is None or p.deployment is None:  # row 120: None
            continue
        stack = point_stack(p)
        model, wl, dep = load_model(p.model), point_workload(p), with_stack_mtp(p.deployment, stack, p.model)
        pr = with_harness_step(
            load_any_pricer(p.system, "calibrated", stack=stack, pricer="roofline"), p.harness_step_s
        )
        pts = serve_at_concurrency(model, pr, dep, wl, [p.concurrency])
        stat = pts.ttft_p50_s if p.ttft_median else pts.ttft_s
        parts = {k: float(v[0]) for k, v in ttft_parts(model, pr, dep, wl, pts).items()}
        out.append(
            {
                "id": p.id.split(":")[-1],
                "system": p.system,
                "stack": stack.name,
                "isl": p.isl,
                "C": p.concurrency,
                "split": labels[p.id],
                "measured": p.measured["ttft_s"],
                "median": bool(p.ttft_median),
                "model": float(stat[0]),
                "mean_model": float(pts.ttft_s[0]),
                "parts": parts,
                "prefill_step": _prefill_split(model, pr, dep, int(wl.mean_isl)),
            }
        )
    return out


def compare(base: list[dict], on: list[dict]) -> None:
    """Print the per-row table and the held-out medians (module docstring)."""
    on_by = {r["id"]: r for r in on}
    print(
        "| row | system | stack | ISL | C | split | measured s | model s before -> on | error % before -> on | "
        "Δ front end / prefill / first step / waits ms | lone prefill step ms (clocked part) before -> on |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for b in sorted(base, key=lambda r: (r["system"], int(r["id"]))):
        o = on_by[b["id"]]
        if b["measured"] is None:
            continue
        e0, e1 = (100 * (x["model"] / x["measured"] - 1) for x in (b, o))
        d = [
            1e3 * (o["parts"][k] - b["parts"][k])
            for k in ("frontend_s", "prefill_s", "first_step_s", "queue_and_waits_s")
        ]
        pb, po = b["prefill_step"], o["prefill_step"]
        print(
            f"| {b['id']} | {b['system']} | {b['stack']} | {b['isl']} | {b['C']:g} | {b['split']} | "
            f"{b['measured']:.3f}{' (p50)' if b['median'] else ''} | {b['model']:.3f} -> {o['model']:.3f} | {e0:+.1f} -> {e1:+.1f} | "
            f"{' / '.join(f'{x:+.1f}' for x in d)} | {1e3 * pb['step']:.1f} ({1e3 * pb['clocked']:.1f}) -> "
            f"{1e3 * po['step']:.1f} ({1e3 * po['clocked']:.1f}) |"
        )
    print()
    for system in SYSTEMS:
        for name, rows in (("before", base), ("on", on)):
            errs = [
                abs(r["model"] / r["measured"] - 1)
                for r in rows
                if r["system"] == system and r["split"] in HELD_OUT and r["measured"]
            ]
            if errs:
                print(
                    f"{system} held-out TTFT median |error| {name}: {100 * statistics.median(errs):.1f}% (n {len(errs)})"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="price the rows in this tree and write them here")
    ap.add_argument("--compare", nargs=2, metavar=("BASE", "ON"), help="two --json files: print the row table")
    a = ap.parse_args()
    if a.json:
        rows = price_rows()
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
        print(f"{len(rows)} rows -> {a.json}")
    if a.compare:
        with open(a.compare[0]) as f0, open(a.compare[1]) as f1:
            compare(json.load(f0), json.load(f1))
    if not (a.json or a.compare):
        ap.error("give --json OUT (price in this tree) and/or --compare BASE ON")


if __name__ == "__main__":
    main()
