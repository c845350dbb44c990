"""Which run each InferenceX "best configuration" row is (fit/run_identity.py; docs/gap_disagg_overprediction.md §round 30).

For every shipped best row (``max_throughput_per_gpu``, or no interactivity) prints how validation maps it, the GPU
count its closed-loop identity implies (throughput per GPU, TTFT, TPOT, concurrency; fit/data_quality rule 1), every
run the benchmark config in force made at its concurrency (search-space runs or published entries, MTP as stated,
both where silent) with its GPU count and the error of every metric the row gives (throughput per chip, TPOT, TTFT,
interactivity) were the row matched with that run (fit/validate.predict_points, as validation prices a matched row),
and the run the row is matched with when one is identified. The chosen run's errors beside the other runs' show
whether the GPU-count rule picks the run the model fits best (review30: it is picked from the row's cells alone, no
prediction; docs/gap_disagg_overprediction.md §Is the chosen run independent of the metrics it is judged on?).
Nothing is fitted or written.
Run: python scripts/best_row_runs.py [N ...]   (N = line of data/validation/inferencex_points.csv; default: all)
"""

from __future__ import annotations

import csv
import sys
from dataclasses import replace
from importlib.resources import files

from jalapeno.deploy.engines import identified_candidates
from jalapeno.fit.run_identity import admits, implied_gpus
from jalapeno.fit.searched import matching_spaces, searched_runs
from jalapeno.fit.validate import predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import calibrated_systems

METRICS = ("throughput_per_chip", "tpot_s", "ttft_s", "interactivity")


def main(lines: list[str]) -> None:
    path = files("jalapeno") / "data/validation/inferencex_points.csv"
    with path.open() as f:
        cells = {f"inferencex_points:{k}": r for k, r in enumerate(csv.DictReader(f), start=2)}
    points, _ = load_inferencex(path)
    wanted = {f"inferencex_points:{n}" for n in lines}
    for p in points:
        r = cells[p.id]
        best = r.get("point_type") == "max_throughput_per_gpu" or not p.measured.get("interactivity")
        if (
            (wanted and p.id not in wanted)
            or not best
            or not p.measured.get("throughput_per_chip")
            or p.mapping not in ("matched", "best_entry@concurrency")
            and not p.mapping.startswith("searched")
            or p.mapping == "matched"
            and not p.identified_from
        ):
            continue
        g = implied_gpus(p.measured, p.isl, p.osl, p.concurrency)
        print(
            f"== {p.id} {p.system} {p.framework} {p.isl}/{p.osl} C={p.concurrency} measured "
            f"{p.measured['throughput_per_chip']:.1f} tok/s/GPU; mapping {p.mapping}"
            f"{' (was ' + p.identified_from + ')' if p.identified_from else ''}; implied GPUs "
            f"{'-' if g is None else f'{g:.2f}'}"
        )
        if not p.concurrency:
            print("   no concurrency: the best of every run up to each entry's conc-end (not identified)")
            continue
        stated = {"mtp": True, "none": False}.get((r.get("spec") or "").strip())
        ents = identified_candidates(
            p.system, p.model, r["framework"].strip(), p.precision, p.isl, p.osl, p.concurrency, stated
        )
        runs = (
            [e.deployment() for e in ents]
            if len(ents) >= 2
            else [
                d
                for d, _ in searched_runs(
                    p.system,
                    p.model,
                    p.isl,
                    p.osl,
                    matching_spaces(
                        p.system, p.model, r["precision"], r["framework"], p.isl, p.osl, r["disagg"], r["date"]
                    ),
                    stated,
                    p.concurrency,
                )
            ]
        )
        alts = [replace(p, id=f"{p.id}#{k}", deployment=d, mapping="matched") for k, d in enumerate(runs)]
        err = predict_points(alts, calibrated_systems()) if alts else None
        for k, d in enumerate(runs):
            e = err[err.id == f"{p.id}#{k}"].set_index("metric").error * 100 if err is not None else {}
            errs = "  ".join(f"{m.split('_')[0]} {e[m]:+6.1f}%" for m in METRICS if m in e)
            mark = "<- matched" if p.deployment is not None and d.label == p.deployment.label else ""
            print(
                f"   {d.chips:3d} GPUs {'admitted' if admits(d.chips, g) else 'excluded':8s} "
                f"{'-' if g is None else f'{d.chips / g:4.2f}'} {d.label}: {errs} {mark}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
