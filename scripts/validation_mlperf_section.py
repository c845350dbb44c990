"""Section of docs/validation.md on the MLPerf Inference rows (issue 18 part 7): each result
predicted through fit/mlperf.py's mapping, the lengths assumed, and the errors per group.
scripts/gen_validation_doc.py calls :func:`mlperf_section` with one line.
"""

from __future__ import annotations

import numpy as np

from jalapeno.fit.mlperf import DEFAULT_MLPERF, MLPERF_LENGTHS, MLPERF_SKIPPED, load_mlperf
from jalapeno.fit.validate import error_summary, predict_points
from jalapeno.fit.validation_run import calibrated_systems


def mlperf_section() -> list[str]:
    """Markdown lines: data, assumed lengths, mapping, errors per system / model and the rows."""
    pts, skipped = load_mlperf()
    rows = predict_points(pts, calibrated_systems())
    ok = rows.dropna(subset=["error"])
    lines = ["## MLPerf Inference v5.1 results (own source, `jalapeno validate --mlperf`)", "",
             (f"MLPerf Inference v5.1 results (`{DEFAULT_MLPERF.name}`, shipped in src/jalapeno/data/validation, "
              "each row with its source: closed division, `mlperf_log_summary.txt` of mlcommons/"
              "inference_results_v5.1). Reported as their own source (`mlperf`), never fitted. MLPerf counts "
              "output tokens only: measured throughput per chip = output tok/s / chips x (ISL + OSL) / OSL. "
              "Offline results map to the predicted frontier's peak, Server / Interactive results to the "
              "frontier at the measured interactivity (1 / mean TPOT); lengths fixed at the means below "
              "(the datasets' spread is not modelled)."), "",
             "| benchmark | model | mean ISL | mean OSL | where the lengths come from |", "|---|---|---|---|---|"]
    for bench, ln in MLPERF_LENGTHS.items():
        lines.append(f"| {bench} | {ln.model} | {ln.isl} | {ln.osl} | {ln.source} |")
    lines += ["", "Not mapped: " + "; ".join(f"`{k}` ({v})" for k, v in MLPERF_SKIPPED.items()) + ".", ""]
    if ok.empty:
        return lines + ["No MLPerf result could be predicted.", ""]
    e = ok.error.to_numpy()
    lines += [(f"Overall (throughput per chip): n = {len(e)}, median |error| {np.median(np.abs(e)):.1%}, "
               f"p90 {np.percentile(np.abs(e), 90):.1%}, bias {np.median(e):+.1%}; {len(skipped)} results skipped, "
               f"{int(rows.error.isna().sum())} not predicted."), "",
              "| system | model | metric | n | median abs. error | p90 | bias |", "|---|---|---|---|---|---|---|"]
    s = error_summary(ok, by=("system", "model"))
    for r in s.itertuples():
        lines.append(f"| {r.system} | {r.model} | {r.metric} | {r.n} | {r.median_ape:.1%} | {r.p90_ape:.1%} | "
                     f"{r.bias:+.1%} |")
    lines += ["", "Reading: `frontier_peak` and `frontier@interactivity` are the loosest mappings (a maximum over",
              "every enumerated layout and batch, with no MLPerf latency bound or dataset spread), and",
              "DeepSeek-R1's long outputs make them most optimistic; Llama-2-70B is under-predicted on every",
              "system at the assumed 300-token mean input. Rows the model cannot serve say why.", "",
              "| id | mapping | precision | measured tok/s/chip | predicted | error |", "|---|---|---|---|---|---|"]
    for r in rows.sort_values("id").itertuples():
        pred = f"not predicted: {r.notes.split('; ')[-1][:80]}" if np.isnan(r.predicted) else f"{r.predicted:.4g}"
        err = "-" if np.isnan(r.error) else f"{r.error:+.0%}"
        lines.append(f"| {r.id} | {r.mapping} | {r.precision} | {r.measured:.4g} | {pred} | {err} |")
    lines.append("")
    return lines
