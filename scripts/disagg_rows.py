"""Split measured disaggregated InferenceX rows by the closed-loop identity (docs/gap_disagg_overprediction.md).

For each row named (``inferencex_points:N`` = CSV line N of data/validation/inferencex_points.csv),
prints every deployment validation prices it with (its own, or each search-space / published-entry
candidate): predicted throughput per GPU, TTFT, TPOT and the binding limit; then what the measured
row implies in a closed loop of C users on that deployment's G GPUs: request rate
λ = throughput·G / (mean ISL + mean OSL), E2E = C / λ, the TPOT that E2E leaves after the model's
TTFT, (E2E − TTFT_model) / (mean OSL − 1), and the TTFT it leaves after the model's TPOT. Nothing is
fitted or written. Run: python scripts/disagg_rows.py 123 124 125 126 31 27 32
"""

from __future__ import annotations

import sys
from importlib.resources import files

from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_stack, with_stack_mtp, point_workload
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model


def main(rows: list[str]) -> None:
    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    wanted = {f"inferencex_points:{r}" for r in rows}
    for p in (q for q in points if q.id in wanted):
        stack = point_stack(p)
        model = load_model(p.model)
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=stack)
        wl = point_workload(p)
        m = p.measured
        print(
            f"== {p.id} {p.system} {p.framework} C={p.concurrency:g} mapping={p.mapping} measured "
            f"thr={m['throughput_per_chip']} tpot={m['tpot_s']} ttft={m['ttft_s']}"
        )
        cands = p.candidates or (p.deployment,)
        for c in cands:
            dep = with_stack_mtp(c[0] if isinstance(c, tuple) else c, stack, p.model)
            r = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
            thr, ttft, tpot = r.throughput_per_chip[0], r.ttft_p50_s[0], r.tpot_s[0]
            lam = m["throughput_per_chip"] * dep.chips / (wl.mean_isl + wl.mean_osl)
            e2e = p.concurrency / lam
            print(
                f"  {dep.label}\n    model: thr {thr:.1f} ({thr / m['throughput_per_chip'] - 1:+.1%}) "
                f"TTFT {ttft:.2f} s TPOT {tpot * 1e3:.2f} ms limit '{r.limit[0]}'\n"
                f"    implied on {dep.chips} GPUs: lambda {lam:.2f}/s E2E {e2e:.2f} s; TPOT after model TTFT "
                f"{(e2e - ttft) / (wl.mean_osl - 1) * 1e3:.2f} ms; TTFT after model TPOT "
                f"{e2e - (wl.mean_osl - 1) * tpot:.2f} s"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["123", "124", "125", "126", "31", "27", "32"])
