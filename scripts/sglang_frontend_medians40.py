"""SGLang's front end from its own client's low-load medians, and the first-wave stall from the mean - median gap (issue 18, round 40).

The CUDA SGLang front end (``request_overhead_s`` + ``prompt_overhead_s_per_token`` · ISL, data/stack_fits.toml
``fits."sglang"``: 0.0875 s + 17.5 µs) is fitted on InferenceX's H200 **mean** TTFTs at C <= 4, which mix a
per-request cost with a one-off first-wave stall S (docs/model.md §8.7 (10): + S/R on a run's mean, nothing on its
median). This script reads public ``sglang.bench_serving`` runs that print Mean, Median and P99 TTFT at
max-concurrency 1-4 (docs/data/sglang_bench_serving_lowc.csv, each row with its thread) and, per row it can price:

- ``room``: the front end the run's median leaves, median − (the model's p50 with the front end and the stall set to
  zero) — the model's prefill, half step and waits at that load, priced as InferenceX rows are (serve/point.py);
- the profile's front end at that ISL, beside it;
- ``S``: R · [(mean − median)_measured − (mean − median)_model], R = the run's counted requests per user
  (prompts / concurrency), the estimator of scripts/first_wave_stall.py.

Rows without an ISL or prompt count (PR #7621's table) give the measured mean − median gap only.
A deployment is built from the row's system, model, precision and TP (attention TP = MoE TP, EP 1, the flags the
threads show) on the shipped ``sglang`` profile; the B200 of PR #8552 is inferred (NVFP4 needs Blackwell; the thread
names no GPU). Nothing is fitted into the shipped data or written (docs/gap_aic_ttft.md, round 40 frontend40).

Run: python scripts/sglang_frontend_medians40.py
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import load_stacks
from jalapeno.specs.workload import Workload

CSV = Path(__file__).resolve().parents[1] / "docs" / "data" / "sglang_bench_serving_lowc.csv"


def rows(path: Path = CSV) -> list[dict]:
    """The CSV's rows (comment lines start with '#'), strings as written."""
    with path.open() as f:
        return list(csv.DictReader(ln for ln in f if not ln.startswith("#")))


def model_p50_mean(r: dict) -> tuple[float, float, float]:
    """(p50, mean TTFT, the shipped profile's front end) in s of row ``r``'s deployment at its concurrency, the pricer's
    front end and first-wave stall set to zero (the p50 and mean are then the model's accelerator part alone)."""
    st = load_stacks()["sglang"]
    system = r["system"].rstrip("?")
    pr = load_any_pricer(system, "calibrated", pricer="roofline", stack=st)
    isl, osl = int(r["isl"]), int(r["osl"])
    front = pr.efficiency.request_overhead_s + pr.efficiency.prompt_overhead_s_per_token * isl
    pr = pr.with_efficiency(
        replace(pr.efficiency, request_overhead_s=0.0, prompt_overhead_s_per_token=0.0, first_wave_stall_s=0.0)
    )
    tp = int(r["tp"])
    dep = Deployment(get_precision(r["precision"]), Pool(Layout(tp=tp, ep=1)))
    wl = Workload(f"{isl}/{osl}", isl, osl, 1.0)
    res = serve_at_concurrency(load_model(r["model"]), pr, dep, wl, [float(r["concurrency"])])
    return float(res.ttft_p50_s[0]), float(res.ttft_s[0]), front


def main() -> None:
    print(
        "row                 sys    ISL  C | mean  median (ms) | model p50 | room  profile FE | gap meas/model  R   S (s)"
    )
    for r in rows():
        mean, med = float(r["ttft_mean_ms"]) / 1e3, float(r["ttft_median_ms"]) / 1e3
        if not r["isl"] or not r["prompts"] or not r["tp"]:
            print(
                f"{r['id']:19s} {r['system']:6s}    ?  {r['concurrency']} | {mean * 1e3:5.0f} {med * 1e3:6.0f}"
                f"      | (no ISL/TP/prompts: gap mean - median {(mean - med) * 1e3:+.0f} ms only)"
            )
            continue
        p50, m_mean, front = model_p50_mean(r)
        n_user = float(r["prompts"]) / float(r["concurrency"])
        gap, m_gap = mean - med, m_mean - p50
        stall = n_user * (gap - m_gap)
        print(
            f"{r['id']:19s} {r['system']:6s} {r['isl']:>5s} {r['concurrency']} | {mean * 1e3:5.0f} {med * 1e3:6.0f}"
            f"      | {p50 * 1e3:7.1f}   | {(med - p50) * 1e3:5.1f} {front * 1e3:6.1f}     | {gap * 1e3:5.0f} / "
            f"{m_gap * 1e3:4.1f}  {n_user:3.0f} {stall:5.2f}"
        )


if __name__ == "__main__":
    main()
