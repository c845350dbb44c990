"""MLPerf v5.1 AMD Llama-2-70B Server / Interactive rows at their submitted vLLM engines (issue 18;
docs/gap_large_batch_decode.md "Round 48 (mlperf48)"): the figures behind fit/mlperf_engines.AMD_LIMIT_ENGINES_ON.

Data: fit/mlperf_engines.MLPERF_AMD_LIMIT_ENGINES (closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/
{server,interactive}_mi3*.yaml of mlcommons/inference_results_v5.1 @965182b) and the rows of
data/validation/mlperf_points.csv. Two blocks:

1. ``rows``: each row's signed throughput-per-chip error with the switch off (``frontier@limits``, as shipped) and on
   (``matched@limits`` at the submitted engine), as `validate --mlperf` prices them.
2. ``load``: the model's mean TPOT of each submitted engine in closed loop at the run's own load (Little's law:
   output tok/s per GPU x mean TPOT), with the prompts mixed into the decode steps and in steps of their own, against
   the run's measured mean TPOT.

Run: python scripts/mlperf_amd_engines48.py   (about half a minute)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import jalapeno.fit.mlperf_engines as me
from jalapeno.fit.mlperf import load_mlperf, running_per_chip

#: each row's measured output tok/s (system, 8 GPUs) and mean TPOT (ms), its mlperf_log_summary.txt
#: (data/validation/mlperf_points.csv)
MEASURED = {
    "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Interactive": (8840.42, 32.1),
    "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server": (24593.8, 144.6),
    "mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Server": (32027.6, 148.7),
    "mlperf51_AMD_8xMI325X_2xEPYC_9575F_2_llama2-70b-99_Interactive": (18407.2, 35.3),
}


def run_load_per_gpu(key: str) -> float:
    """Requests running per GPU in the run (Little's law on the decode: output tok/s per GPU x mean TPOT).

    >>> round(run_load_per_gpu("mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Interactive"), 1)
    35.5
    """
    tok_s, tpot_ms = MEASURED[key]
    return running_per_chip(tok_s / 8, tpot_ms / 1e3)


def row_errors(on: bool) -> dict[str, float]:
    """Signed throughput-per-chip error of each AMD Server / Interactive row with the switch ``on`` or off."""
    from jalapeno.fit.validate import predict_points

    was, me.AMD_LIMIT_ENGINES_ON = me.AMD_LIMIT_ENGINES_ON, on
    try:
        pts = [p for p in load_mlperf()[0] if p.id in MEASURED]
        df = predict_points(pts)
    finally:
        me.AMD_LIMIT_ENGINES_ON = was
    df = df[df.metric == "throughput_per_chip"]
    return dict(zip(df.id, df.error))


def engine_tpot_ms(key: str, prefill_steps: str) -> float:
    """The model's mean TPOT (ms) of row ``key``'s submitted engine in closed loop at the run's load per GPU."""
    from jalapeno.fit.measured_point import point_stack, point_workload
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    p = {q.id: q for q in load_mlperf()[0]}[key]
    dep, _ = me.submitted_deployment(me.MLPERF_AMD_LIMIT_ENGINES[key], p.precision, p.chips)
    pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p))
    res = serve_at_concurrency(
        load_model(p.model),
        pricer,
        replace(dep, prefill_steps=prefill_steps),
        point_workload(p),
        [run_load_per_gpu(key) * p.chips],
    )
    return float(np.asarray(res.tpot_s)[0]) * 1e3


def main() -> None:
    off, on = row_errors(False), row_errors(True)
    print("1. rows: signed throughput/chip error, frontier@limits (shipped) -> submitted engine (AMD_LIMIT_ENGINES_ON)")
    for key in MEASURED:
        print(f"  {key[9:]:60s} {off[key]:+7.1%} -> {on[key]:+7.1%}")
    print(
        "2. load: model mean TPOT (ms) of the submitted engine at the run's load, mixed | separate prompts vs measured"
    )
    for key, (_, tpot) in MEASURED.items():
        mixed, sep = engine_tpot_ms(key, "mixed"), engine_tpot_ms(key, "separate")
        print(f"  {key[9:]:60s} {run_load_per_gpu(key):6.1f} a GPU  {mixed:6.1f} | {sep:6.1f}  vs {tpot:6.1f}")


if __name__ == "__main__":
    main()
