"""Section of docs/validation.md on the MLPerf Inference rows (issue 18 part 7): each result
predicted through fit/mlperf.py's mapping, the lengths assumed, and the errors per group.
scripts/gen_validation_doc.py calls :func:`mlperf_section` with one line.
"""

from __future__ import annotations

import numpy as np

from jalapeno.fit.mlperf import (DEFAULT_MLPERF, MLPERF_LENGTHS, MLPERF_RULES, MLPERF_RULES_SOURCE, MLPERF_SKIPPED,
                                 load_mlperf)
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
              "Offline results map to the submission's own engine (layout, per-rank batch and token limits read "
              "from its config, every slot filled: `matched`) where it is read, else to the predicted frontier's "
              "peak; Server / Interactive results to the "
              "frontier at the measured interactivity (1 / mean TPOT); lengths fixed at the means below "
              "(the datasets' spread is not modelled)."), "",
             "| benchmark | model | mean ISL | mean OSL | where the lengths come from |", "|---|---|---|---|---|"]
    for bench, ln in MLPERF_LENGTHS.items():
        lines.append(f"| {bench} | {ln.model} | {ln.isl} | {ln.osl} | {ln.source} |")
    lines += ["", f"The benchmarks' rules ({MLPERF_RULES_SOURCE}); a Server / Interactive row beyond its p99 "
              "limits would be skipped as not a valid result:", "",
              "| benchmark | Server p99 TTFT / TPOT | Interactive p99 TTFT / TPOT | samples | reference mean output |",
              "|---|---|---|---|---|"]
    for bench, r in MLPERF_RULES.items():
        inter = f"{r.interactive_ttft_s:g} s / {r.interactive_tpot_s * 1e3:g} ms" if r.interactive_ttft_s else "-"
        lines.append(f"| {bench} | {r.server_ttft_s:g} s / {r.server_tpot_s * 1e3:g} ms | {inter} | {r.samples:,} | "
                     f"{r.reference_osl:g} |")
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
              "Why DeepSeek-R1 is over-predicted (the model's figures in this paragraph are as of 60eb6da, when it was",
              "written, not regenerated: `python scripts/mlperf_diagnosis.py` prints the current ones). NVIDIA's B200 Server run",
              "(`closed/NVIDIA/results/B200-SXM-180GBx8_TRT/deepseek-r1/Server/.../mlperf_log_summary.txt`) has",
              "TPOT flat at 66-72 ms from p50 to p99, so its end-to-end latency percentiles (139 s p50, 623 s p90,",
              "1,334 s p99, TTFT ~0.7 s) give the output lengths: ~2,100 tokens median, ~9,400 p90, the 20K cap",
              "at p99, mean 3,748 — a long right tail. The token-weighted decode context E[OSL^2]/(2 E[OSL]) is",
              "~4,000-4,400 tokens past the prompt, about twice the 1,870 of fixed lengths at the same mean. By",
              "Little's law the run carried ~154 running requests per chip (notes column); NVIDIA's config",
              "(`closed/NVIDIA/configs/B200-SXM-180GBx8/{Offline,Server}/deepseek-r1.py`: TP8 with attention DP, EP8,",
              "FP4 weights, FP8 KV, `gpu_batch_size` 512 per rank, `max_num_tokens` 4,608/3,456, WIDEEP MoE, no",
              "MTP) bounds Offline at 512 x 8 = 4,096 in flight (the Offline rows now run that engine, `matched`:",
              "+158..+169% -> +135..+161%). Served at that deployment and ~154 requests per",
              "chip, the model gives TPOT 26 ms at the fixed-length context and 32 ms with the prompt lengthened to",
              "the token-weighted context, against 66 ms measured; at 512 per rank it gives 12,656 tok/s/chip (the",
              "frontier peak is 13,040), so neither the batch bound nor the length spread closes the gap: the",
              "model's DeepSeek-R1 FP4 decode step at these batches and contexts is ~2x faster than the run's",
              "(attention-DP imbalance under a 10x spread of contexts, the WIDEEP MoE backend, long-context MLA",
              "decode are the candidates, none yet sourced). Llama-2-70B's under-prediction at Offline/Server",
              "is not a latency bound either: the runs carry 450-1,530 running requests per chip (Llama-2-70B on",
              "B200/GB200 runs TP1 with `gpu_batch_size` 2,048, `max_num_tokens` 3,584), where the frontier peak",
              "is the right reference; its mean input (an ASSUMPTION, 300) scales the measured per-chip figure by",
              "(ISL + OSL) / OSL and remains the largest unsourced factor.", "",
              "| id | mapping | precision | measured tok/s/chip | predicted | error |", "|---|---|---|---|---|---|"]
    for r in rows.sort_values("id").itertuples():
        pred = f"not predicted: {r.notes.split('; ')[-1][:80]}" if np.isnan(r.predicted) else f"{r.predicted:.4g}"
        err = "-" if np.isnan(r.error) else f"{r.error:+.0%}"
        lines.append(f"| {r.id} | {r.mapping} | {r.precision} | {r.measured:.4g} | {pred} | {err} |")
    lines.append("")
    return lines
