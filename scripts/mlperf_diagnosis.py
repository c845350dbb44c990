"""Figures behind the DeepSeek-R1 diagnosis of docs/validation.md's MLPerf section.

NVIDIA B200 DeepSeek-R1 Server (inference_results_v5.1 @965182b, closed/NVIDIA/results/
B200-SXM-180GBx8_TRT/deepseek-r1/Server/performance/run_1/mlperf_log_summary.txt): TPOT is flat
(66.5 ms mean, 69.9-72.2 ms p50-p99), so end-to-end latency ~ TTFT + TPOT x OSL and the latency
percentiles give the output-length percentiles. Then the model serves the submission's engine
(fit/mlperf.MLPERF_ENGINES) at the run's load (Little's law) with the prompt at its assumed mean and
lengthened to the token-weighted decode context. Prints; no prediction depends on it.

    python scripts/mlperf_diagnosis.py
"""

from __future__ import annotations

import numpy as np

from jalapeno.fit.mlperf import MLPERF_ENGINES, running_per_chip, submitted_deployment
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.workload import Workload

#: mlperf_log_summary.txt figures (seconds; output tok/s of the 8-GPU system)
Q = np.array([0.0, 0.5, 0.9, 0.95, 0.97, 0.99, 0.999, 1.0])
E2E_S = np.array([1.2954, 139.0098, 622.5667, 878.9328, 1063.5134, 1334.3279, 1411.7625, 1413.9582])
TTFT_MEAN_S, TPOT_MEAN_S, OUT_TOK_S, MEAN_OSL, ISL = 0.726163, 0.066461, 18592.24, 3748, 800


def main() -> None:
    osl = (E2E_S - TTFT_MEAN_S) / TPOT_MEAN_S
    u = np.linspace(0, 1, 200_001)
    o = np.interp(u, Q, osl)  # piecewise-linear quantile function between the logged percentiles
    weighted = float((o ** 2).mean() / (2 * o.mean()))
    print("output-length percentiles (tokens):", dict(zip(Q.tolist(), osl.round(0).tolist())))
    print(f"token-weighted decode context past the prompt: {weighted:,.0f} (fixed lengths: {MEAN_OSL / 2:,.0f})")
    run = running_per_chip(OUT_TOK_S / 8, TPOT_MEAN_S)
    print(f"running requests per chip (Little's law): {run:.1f}")
    dep, full = submitted_deployment(MLPERF_ENGINES["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"], "fp4", 8)
    model, pricer = load_model("deepseek-r1"), load_any_pricer("b200", "calibrated", pricer="roofline", stack=None)
    for isl in (ISL, int(ISL + weighted - MEAN_OSL / 2)):
        r = serve_at_concurrency(model, pricer, dep, Workload(f"{isl}/{MEAN_OSL}", isl, MEAN_OSL, 1.0), [run * 8, full])
        print(f"prompt {isl}: TPOT {r.tpot_s[0] * 1e3:.1f} ms at the run's load (measured {TPOT_MEAN_S * 1e3:.1f}); "
              f"{r.throughput_per_chip[1]:,.0f} tok/s/chip with every slot filled ({full:g} in flight)")


if __name__ == "__main__":
    main()
