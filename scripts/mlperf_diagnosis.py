"""Figures behind the DeepSeek-R1 diagnosis of docs/validation.md's MLPerf section.

NVIDIA B200 DeepSeek-R1 Server (inference_results_v5.1 @965182b, closed/NVIDIA/results/
B200-SXM-180GBx8_TRT/deepseek-r1/Server/performance/run_1/mlperf_log_summary.txt): TPOT is flat
(66.5 ms mean, 69.9-72.2 ms p50-p99), so end-to-end latency ~ TTFT + TPOT x OSL and the latency
percentiles give the output-length percentiles; they agree with the dataset's own lengths
(fit/mlperf.benchmark_spread: 4,388 (ISL, OSL) pairs, outputs capped at 20K). Then the model serves
the submission's engine (fit/mlperf.MLPERF_ENGINES: attention DP 8, EP 8, 512 per rank, WIDEEP,
no MTP) at the run's load (Little's law), step by step: fixed mean lengths, the dataset's spread,
the TensorRT-LLM release the submission built (fit/mlperf.MLPERF_TRTLLM_RELEASE), and the expert
popularity of natural text (MLPerf's prompts are real; specs/routing.py, not applied in validation). Last, the
same engine's published throughput on the same length mix (TensorRT-LLM tech blog 10) bounds what
attention-DP imbalance can explain. Prints; no prediction depends on it.

    python scripts/mlperf_diagnosis.py
"""

from __future__ import annotations

import numpy as np

from jalapeno.fit.mlperf import MLPERF_ENGINES, MLPERF_TRTLLM_RELEASE, benchmark_spread, running_per_chip, \
    submitted_deployment
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.routing import with_routing
from jalapeno.specs.stacks import get_stack
from jalapeno.specs.workload import Workload

#: mlperf_log_summary.txt figures (seconds; output tok/s of the 8-GPU system)
Q = np.array([0.0, 0.5, 0.9, 0.95, 0.97, 0.99, 0.999, 1.0])
E2E_S = np.array([1.2954, 139.0098, 622.5667, 878.9328, 1063.5134, 1334.3279, 1411.7625, 1413.9582])
TTFT_MEAN_S, TPOT_MEAN_S, OUT_TOK_S, MEAN_OSL = 0.726163, 0.066461, 18592.24, 3748
#: NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog10_ADP_Balance_Strategy.md ('Performance
#: Summary'): DeepSeek-V3 on 8 GB200, attention DP 8, EP 8, in-flight batching, 16,000 requests of
#: mean input 803 / output 3,653 tokens: 34,140 output tok/s with ADP balance (average balance ratio
#: 87.70%), 37,912 at perfect balance ('SOL TPS'), 25,664 without it (54.11%)
BLOG10_TPS, BLOG10_SOL_TPS, BLOG10_BALANCE, BLOG10_GPUS = 34140, 37912, 0.8770, 8


def diagnosis() -> dict:
    """The figures: the run's and the dataset's output percentiles, the decode contexts, the run's
    running requests per chip, and per pricing step (label -> (TPOT s at the run's load, output
    tok/s/chip with every slot filled)); the blog's engine figures per GPU."""
    osl = (E2E_S - TTFT_MEAN_S) / TPOT_MEAN_S
    spr = benchmark_spread("deepseek-r1").with_mean_osl(MEAN_OSL)
    run = running_per_chip(OUT_TOK_S / 8, TPOT_MEAN_S)
    dep, full = submitted_deployment(MLPERF_ENGINES["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"], "fp4", 8)
    base = load_model("deepseek-r1")
    fixed = Workload("fixed", round(spr.mean_isl), MEAN_OSL, 1.0)
    spread = Workload("dataset", round(spr.mean_isl), MEAN_OSL, 1.0, spread=spr)
    steps = {}
    rel = f"trtllm@{MLPERF_TRTLLM_RELEASE}"
    for label, wl, stack, routing in (("fixed means, newest trtllm", fixed, "trtllm", "uniform"),
                                      ("dataset spread, newest trtllm", spread, "trtllm", "uniform"),
                                      (f"dataset spread, {rel}", spread, rel, "uniform"),
                                      (f"dataset spread, {rel}, natural-text routing", spread, rel, "measured")):
        model = with_routing(base, routing)
        pricer = load_any_pricer("b200", "calibrated", pricer="roofline", stack=get_stack(stack))
        r = serve_at_concurrency(model, pricer, dep, wl, [run * 8, full])
        steps[label] = (float(r.tpot_s[0]), float(r.throughput_per_chip[1] * wl.mean_osl / (wl.mean_isl + wl.mean_osl)))
    return {"run_osl": dict(zip(Q.tolist(), osl)), "data_osl": {q: spr.osl_quantile(q) for q in Q.tolist()},
            "ctx_spread": spr.decode_ctx, "ctx_fixed": spr.mean_isl + spr.mean_osl / 2, "running": run,
            "full": full, "steps": steps, "blog_gpu": BLOG10_TPS / BLOG10_GPUS, "blog_sol_gpu": BLOG10_SOL_TPS / BLOG10_GPUS}


def main() -> None:
    d = diagnosis()
    print("run's output-length percentiles (tokens):", {q: round(v) for q, v in d["run_osl"].items()})
    print("dataset's (scaled to the run's mean):", {q: round(v) for q, v in d["data_osl"].items()})
    print(f"decode context per sequence: {d['ctx_spread']:,.0f} tokens with the spread ({d['ctx_fixed']:,.0f} at "
          "fixed means)")
    print(f"running requests per chip (Little's law): {d['running']:.1f}")
    for label, (tpot, out) in d["steps"].items():
        print(f"{label}: TPOT {tpot * 1e3:.1f} ms at the run's load (measured {TPOT_MEAN_S * 1e3:.1f}); "
              f"{out:,.0f} output tok/s/chip with every slot filled ({d['full']:g} in flight)")
    print(f"TensorRT-LLM blog 10 (same length mix, 8 GB200, DP8 EP8): {d['blog_gpu']:,.0f} output tok/s per GPU at "
          f"balance {BLOG10_BALANCE:.1%}, {d['blog_sol_gpu']:,.0f} at perfect balance: imbalance explains "
          f"{BLOG10_SOL_TPS / BLOG10_TPS - 1:.0%} of the engine's time")


if __name__ == "__main__":
    main()
