"""Which run each InferenceX "best configuration" row is (fit/run_identity.py; docs/gap_disagg_overprediction.md §round 30).

For every shipped best row (``max_throughput_per_gpu``, or no interactivity) prints how validation maps it, the GPU
count its closed-loop identity implies (throughput per GPU, TTFT, TPOT, concurrency; fit/data_quality rule 1), every
run the benchmark config in force made at its concurrency (search-space runs or published entries, MTP as stated,
both where silent) with its GPU count and predicted throughput per chip (calibrated roofline, the row's engine
profile), and the run the row is matched with when one is identified. Nothing is fitted or written.
Run: python scripts/best_row_runs.py [N ...]   (N = line of data/validation/inferencex_points.csv; default: all)
"""

from __future__ import annotations

import csv
import sys
from importlib.resources import files

from jalapeno.deploy.engines import identified_candidates
from jalapeno.fit.run_identity import admits, implied_gpus
from jalapeno.fit.searched import matching_spaces, searched_runs
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_inferencex, point_stack, point_workload, with_stack_mtp
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model


def main(lines: list[str]) -> None:
    path = files("jalapeno") / "data/validation/inferencex_points.csv"
    with path.open() as f:
        cells = {f"inferencex_points:{k}": r for k, r in enumerate(csv.DictReader(f), start=2)}
    points, _ = load_inferencex(path)
    wanted = {f"inferencex_points:{n}" for n in lines}
    for p in points:
        r = cells[p.id]
        best = r.get("point_type") == "max_throughput_per_gpu" or not p.measured.get("interactivity")
        if (wanted and p.id not in wanted) or not best or not p.measured.get("throughput_per_chip") \
                or p.mapping not in ("matched", "best_entry@concurrency") and not p.mapping.startswith("searched") \
                or p.mapping == "matched" and not p.identified_from:
            continue
        g = implied_gpus(p.measured, p.isl, p.osl, p.concurrency)
        print(f"== {p.id} {p.system} {p.framework} {p.isl}/{p.osl} C={p.concurrency} measured "
              f"{p.measured['throughput_per_chip']:.1f} tok/s/GPU; mapping {p.mapping}"
              f"{' (was ' + p.identified_from + ')' if p.identified_from else ''}; implied GPUs "
              f"{'-' if g is None else f'{g:.2f}'}")
        if not p.concurrency:
            print("   no concurrency: the best of every run up to each entry's conc-end (not identified)")
            continue
        stated = {"mtp": True, "none": False}.get((r.get("spec") or "").strip())
        ents = identified_candidates(p.system, p.model, r["framework"].strip(), p.precision, p.isl, p.osl,
                                     p.concurrency, stated)
        runs = [e.deployment() for e in ents] if len(ents) >= 2 else [d for d, _ in searched_runs(
            p.system, p.model, p.isl, p.osl, matching_spaces(p.system, p.model, r["precision"], r["framework"],
                                                             p.isl, p.osl, r["disagg"], r["date"]),
            stated, p.concurrency)]
        stack = point_stack(p)
        model, wl = load_model(p.model), point_workload(p)
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=stack)
        for d in runs:
            d = with_stack_mtp(d, stack, p.model)
            thr = float(serve_at_concurrency(model, pricer, d, wl, [p.concurrency]).throughput_per_chip[0])
            mark = "<- matched" if p.deployment is not None and d.label == with_stack_mtp(
                p.deployment, stack, p.model).label else ""
            print(f"   {d.chips:3d} GPUs {'admitted' if admits(d.chips, g) else 'excluded':8s} {d.label}: "
                  f"{thr:.1f} ({thr / p.measured['throughput_per_chip'] - 1:+.1%}) {mark}")


if __name__ == "__main__":
    main(sys.argv[1:])
