"""MLPerf v5.1 DeepSeek-R1 Server rows: the operating point the submission ran against the one the model picks
(issue 18; diagnosis only, docs/gap_large_batch_decode.md "Round 20").

A Server result is valid only with p99 TTFT <= 2 s and p99 TPOT <= 80 ms (fit/mlperf.MLPERF_RULES: mlcommons/inference
loadgen/mlperf.conf); the submitter raises the Poisson rate until a limit binds (the configs' ``server_target_qps``:
5 per 8 GPUs on NVIDIA B200, 5 x 9 on GB200-NVL72 x72). For each row this prints

- ``measured``: sequences decoding per attention rank by Little's law (output tok/s per GPU x mean TPOT; one rank per
  GPU under DEP8), the mean TPOT, the p99 TPOT and TTFT;
- ``model @ measured load``: the submitted engine (fit/mlperf.MLPERF_LIMIT_ENGINES, CUDA-graph padding included)
  served at that decode batch (serve/analytic.aggregated_by_batch): mean TPOT, Poisson p99 TPOT and TTFT
  (serve/open_loop), throughput per chip;
- ``model @ cap``: the same engine at its ``gpu_batch_size`` 512 per rank, the most its slots allow;
- ``measured/model step``: the measured mean TPOT over the modelled one at the measured load.

Reading (round 20): at the measured load the model's step is 2.0-2.3x faster than the run's, and even at the
engine's 512-per-rank cap its p99 TPOT stays under 80 ms, so the best point within the limits is the cap: the model
runs ~3.3x the measured decode batch at a similar TPOT. The Server error (+222-305%) is the decode-step gap of the
Offline rows, amplified by the TPOT limit (throughput at the limit ~ B(τ_limit)/τ_limit grows with the batch the
limit admits), not a mapping error: ``frontier@limits`` (the default until round 31) prices the same 512-per-rank point within 1-5%
of the submitted engine's (engine@limits). The modelled TTFT (p99 ~0.3 s) is far below the run's (1.2-1.8 s): the
configs' attention-DP balancing (``adp_balancing_timeout_iters`` 9, ``batching_wait_iters`` 3) holds each prompt
up to 9 steps until every rank has one, which the submitted deployments do not carry yet; it does not bind the
model's Server point (2 s limit).
Run: python scripts/mlperf_server_operating_point.py   (about ten seconds)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jalapeno.cost.pricer import load_pricer
from jalapeno.fit.mlperf import MLPERF_LIMIT_ENGINES, MLPERF_RULES, load_mlperf, submitted_deployment
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.serve.open_loop import poisson_ttft_s
from jalapeno.serve.tpot_tail import poisson_tpot_s
from jalapeno.specs.catalog import load_model, load_system

STACK = "trtllm@1.2.0rc2"


def measured_per_rank(p) -> float:
    """Sequences decoding per attention rank (= per GPU under DEP8): output tok/s per GPU x mean TPOT."""
    wl = p.workload
    out_rate = p.measured["throughput_per_chip"] * wl.mean_osl / (wl.mean_isl + wl.mean_osl)
    return out_rate * p.measured["tpot_s"]


def operating_points(row_id: str) -> dict:
    """The measured point and the model's at the measured load and at the cap (module docstring), seconds and
    tok/s per chip."""
    pts, _ = load_mlperf(server_mapping="frontier@limits")
    p = next(x for x in pts if x.id == row_id)
    model = load_model(p.model)
    eng = MLPERF_LIMIT_ENGINES[row_id]
    dep, _ = submitted_deployment(eng, p.precision, p.chips, model, load_system(p.system))
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    pr = load_pricer(p.system, stack=STACK)
    per_rank = measured_per_rank(p)
    dp = one.decode.layout.dp
    sp = aggregated_by_batch(model, pr, one, p.workload, np.array([per_rank, eng.batch_per_rank], dtype=float) * dp)
    t99, f99 = poisson_tpot_s(model, pr, one, p.workload, sp), poisson_ttft_s(model, pr, one, p.workload, sp)
    at = [
        {
            "per_rank": float(sp.decode_batch[i] / dp),
            "tpot_s": float(sp.tpot_s[i]),
            "tpot_p99_s": float(t99[i]),
            "ttft_p99_s": float(f99[i]),
            "throughput_per_chip": float(sp.throughput_per_chip[i]),
        }
        for i in range(2)
    ]
    return {
        "per_rank": per_rank,
        "tpot_s": p.measured["tpot_s"],
        "throughput_per_chip": p.measured["throughput_per_chip"],
        "model_at_load": at[0],
        "model_at_cap": at[1],
        "tpot_limit_s": MLPERF_RULES["deepseek-r1"].server_tpot_s,
    }


def main() -> None:
    print(
        f"{'row':58s} {'meas/rank':>9s} {'TPOT ms':>7s} | {'model TPOT':>10s} {'p99':>6s} {'TTFT99 s':>8s} | "
        f"{'cap TPOT':>8s} {'p99':>6s} {'thr/chip':>8s} | {'step ratio':>10s} {'thr ratio':>9s}"
    )
    for rid in MLPERF_LIMIT_ENGINES:
        if "deepseek-r1_Server" not in rid:
            continue
        o = operating_points(rid)
        a, c = o["model_at_load"], o["model_at_cap"]
        print(
            f"{rid[9:67]:58s} {o['per_rank']:9.0f} {o['tpot_s'] * 1e3:7.1f} | {a['tpot_s'] * 1e3:10.1f} "
            f"{a['tpot_p99_s'] * 1e3:6.1f} {a['ttft_p99_s']:8.2f} | {c['tpot_s'] * 1e3:8.1f} {c['tpot_p99_s'] * 1e3:6.1f} "
            f"{c['throughput_per_chip']:8.0f} | {o['tpot_s'] / a['tpot_s']:10.2f} "
            f"{c['throughput_per_chip'] / o['throughput_per_chip']:9.2f}"
        )


if __name__ == "__main__":
    main()
