"""Is the Poisson TTFT tail the engine's shape? The MLPerf v5.1 Llama-3.1-405B Server / Interactive runs checked.

For each TensorRT-LLM Llama-3.1-405B Server / Interactive row (round 30, mlperf30; docs/gap_large_batch_decode.md):
the prefill rate R (tokens per second of one instance while prompts wait, = budget / t_hi) that makes the
queue of serve/open_loop.py reproduce the run's own measured MEAN TTFT — prompts of the dataset's 8,313 input
lengths, FCFS chunked prefill at R, Poisson arrivals at the run's measured rate per instance (output tok/s /
mean output / instances), plus half the measured mean TPOT (the step in progress) and a front end (the one
these rows are priced with, the profile's 0.15 s + 6.4 us per prompt token; zero as a what-if: the NVIDIA
Llama harness drives the TensorRT-LLM Executor in process with token ids) — and the p99 TTFT that
the same queue then gives, beside the measured p99. A p99 near the measured one says the tail has the
engine's shape (so the rows' error is the prefill rate, compared with the model's own R at the submitted
engine); a diagnosis only: R is solved from the run's mean and is never an input of a prediction.

Run: ``python scripts/mlperf_ttft_tail.py``
"""

from __future__ import annotations

import csv
import re

import numpy as np

from jalapeno.serve.open_loop import mg1_wait, ttft_quantile_s

#: The rows: result key, TP instances in the run (GPUs / tensor_parallelism), runtime max_num_tokens (the
#: configs, inference_results_v5.1 @965182b closed/{NVIDIA,Nebius}/configs/*/{Server,Interactive}/llama3_1-405b.py)
ROWS = (
    ("NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Interactive", 2, 1536),
    ("NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Server", 2, 2048),
    ("NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_llama3p1-405b_Interactive", 18, 1024),
    ("NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_llama3p1-405b_Server", 18, 2048),
    ("Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Interactive", 1, 2560),
    ("Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Server", 1, 2560),
)


def queue_ttft(rate: float, isl: np.ndarray, prefill_tok_s: float, fixed_s: np.ndarray) -> tuple[float, float, float]:
    """(load ρ, mean TTFT, p99 TTFT) in s of the FCFS prefill queue: prompts of ``isl`` tokens (K,, equally likely)
    served at ``prefill_tok_s``, Poisson at ``rate`` per s, each TTFT = wait + own service + ``fixed_s`` (K,)."""
    v = isl / prefill_tok_s
    rho, w = mg1_wait(rate, v)
    c = v + fixed_s
    return float(rho[0]), float(c.mean() + w[0]), float(ttft_quantile_s(0.99, [rate], v[None, :], c[None, :])[0])


def implied_rate(rate: float, isl: np.ndarray, fixed_s: np.ndarray, mean_ttft_s: float) -> float:
    """The prefill rate (tok/s) at which :func:`queue_ttft`'s mean TTFT equals ``mean_ttft_s``, by bisection
    (the mean falls as the rate rises); nan when even an instant prefill leaves the mean above it."""
    if fixed_s.mean() >= mean_ttft_s:
        return float("nan")
    lo, hi = rate * float(isl.mean()) * (1 + 1e-9), 1e9  # the slowest stable rate, a fast one
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        r, mean, _ = queue_ttft(rate, isl, mid, fixed_s)
        lo, hi = (mid, hi) if r >= 1 or mean > mean_ttft_s else (lo, mid)
    return float(hi)


def rows(http_front_end: bool = True) -> list[dict]:
    """One dict per row of :data:`ROWS`: key, rate per instance, implied prefill rate (tok/s), ρ, its p99 TTFT
    and the measured mean / p99 TTFT and mean TPOT (s)."""
    from jalapeno.fit.mlperf import DEFAULT_MLPERF, benchmark_spread
    from jalapeno.specs.workload import Workload

    met: dict[str, dict[str, float]] = {}
    notes = {}
    with DEFAULT_MLPERF.open(newline="", encoding="utf-8-sig") as f:
        for r in csv.DictReader(f):
            k = re.sub(r"_(tput|TTFT_mean|TTFT_p99|TPOT_mean|TPOT_p99)$", "", r["id"]).removeprefix("mlperf51_")
            met.setdefault(k, {})[r["metric"]] = float(r["value"])
            if r["metric"] == "output_tok_s_system":
                notes[k] = r["notes"]
    spr = benchmark_spread("llama3.1-405b")
    wl = Workload("mlperf:llama3.1-405b", round(spr.mean_isl), round(spr.mean_osl), 1.0, spread=spr)
    isl = np.array([wl.isl_quantile((k + 0.5) / 256) for k in range(256)])
    out = []
    for key, inst, budget in ROWS:
        m = met[key]
        osl = float(re.search(r"mean output tok/sample ~(\d+)", notes[key]).group(1))
        rate = m["output_tok_s_system"] / osl / inst
        fixed = m["TPOT_mean"] / 2e3 + ((0.15 + 6.4e-6 * isl) if http_front_end else 0.0 * isl)
        r_tok = implied_rate(rate, isl, fixed, m["TTFT_mean"] / 1e3)
        rho, mean, p99 = queue_ttft(rate, isl, r_tok, fixed)
        out.append(
            {
                "key": key,
                "rate": rate,
                "budget": budget,
                "prefill_tok_s": r_tok,
                "rho": rho,
                "p99": p99,
                "ttft_mean": m["TTFT_mean"] / 1e3,
                "ttft_p99": m["TTFT_p99"] / 1e3,
                "tpot": m["TPOT_mean"] / 1e3,
            }
        )
    return out


if __name__ == "__main__":
    for fe in (True, False):
        print("front end", "0.15 s + 6.4 us per prompt token (the rows' pricing)" if fe else "0 (what-if)")
        for r in rows(fe):
            print(
                f"  {r['key']:72s} {r['rate']:.3f}/s  prefill {r['prefill_tok_s']:6.0f} tok/s "
                f"(step of {r['budget']}: {r['budget'] / r['prefill_tok_s'] * 1e3:4.0f} ms)  rho {r['rho']:.2f}  "
                f"p99 {r['p99']:.2f} s vs measured {r['ttft_p99']:.2f} ({100 * (r['p99'] / r['ttft_p99'] - 1):+.0f}%)"
            )
