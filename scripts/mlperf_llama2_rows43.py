"""MLPerf v5.1 Llama-2-70B: the Interactive rows (B200 / GB200 +37-38%, MI300X +47%, MI325X "_2" -29%) and the
MI355X multi-node Offline rows (+19% at 8 GPUs, +28% at 32, +38% at 64); issue 18, diagnosis only,
docs/gap_large_batch_decode.md "Round 43 (mlperfllama43)". Nothing here changes a prediction.

It prints three tables:

- ``step``: for every Llama-2-70B TensorRT-LLM row at its declared engine (``matched@limits``), the run's decode batch
  per instance (Little's law: output tok/s x mean TPOT, scripts/mlperf_interactive_tail37.measured_running), its mean
  TPOT, the model's mean TPOT at that batch (serve/analytic.aggregated_by_batch) and their ratio; then the same with
  the KV cache in BF16 (``,kv=bf16``), the what-if the Interactive configs allow: their ``trtllm_checkpoint_flags``
  carry no ``kv_cache_dtype`` (Server / Offline: ``'fp8'``; closed/NVIDIA/code/llmlib/config.py
  ``DEFAULT_CHECKPOINT_FLAGS`` None), but the quantized checkpoint's folder is one per (TP, PP, precision)
  (closed/NVIDIA/code/llama2-70b/tensorrt/builder.py ``LLAMA2QuantizerConfig``: ``...-tp1pp1-fp4``) and
  llmlib/builder.TRTLLMQuantizerOp reuses it when it exists, so which KV dtype the Interactive engine ran depends on
  which scenario was calibrated first: not determinable from the repository. ``row`` gives the whole row's
  prediction (fit/latency_limits.engine_within_limits) both ways.
- ``amd``: AMD's two Interactive runs, measured (LoadGen summary figures): running per GPU, mean / p99 TPOT and TTFT.
  The two systems ran different engines (``interactive_mi300x.yaml``: vLLM V0 ``sync``, ``num_scheduler_steps`` 8,
  eager, ``max_num_seqs`` 600, no chunked prefill; ``interactive_mi325x.yaml``: V1 ``async`` with AMD's MLPerf
  scheduler ``VLLM_LLAMA2_MLPERF_SCHED``, one scheduler step, chunked prefill, ``max_num_seqs`` 3840, a tuned
  hipBLASLt table); the model prices both rows with one generic vLLM-ROCm engine (``frontier@limits``).
- ``amd engines``: the same two rows priced at those declared engines (:data:`AMD_INTERACTIVE`, the what-if of
  declaring them in fit/mlperf_engines.MLPERF_LIMIT_ENGINES): tok/s per chip, the load the limits admit and its p99 TTFT.
- ``nodes``: the MI355X Llama-2-70B Offline rows by GPU count: measured output tok/s per GPU, its ratio to the
  8-GPU AMD run, the model's (validate's) figure and error.

Reading (round 43): at the run's own decode batch the model's step is 1.31x (B200) and 1.19x (H200) faster than the
Interactive runs' while it is 0.91-1.03x the Server runs' (batches 784-1,528): an Interactive-only cost. A BF16 KV
cache takes B200 to 1.20x and its row from +37% to +24%, but it cannot be established from the sources (above), and
the H200 Interactive config does declare an FP8 KV cache and still shows 1.19x. The MI300X run stood at 35 a GPU
with a p99 TTFT of 436 ms (limit 450) and a mean TTFT of 201 ms against 118 ms on the MI325X run: the V0 engine's
8-step windows hold a new prompt until the window ends, which the model does not price. At the declared engines the model admits 26-27 a GPU (TPOT-bound, p99 TTFT 0.31 s): -37% / -69%, worse than the generic engine. The MI355X per-GPU output falls
to 0.943x at 32 GPUs and 0.871x at 64 against AMD's 8-GPU run, where the model has no term for the cluster.
Run: python scripts/mlperf_llama2_rows43.py   (about twenty seconds)
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np

from jalapeno.fit.latency_limits import engine_within_limits
from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.submitted_engine import SubmittedEngine, submitted_deployment
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.validate import predict_points
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.specs.formats import get_precision

_AMD_INT = (
    "inference_results_v5.1 @965182b closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/interactive_{}.yaml"
)


def _script(name: str):
    """A sibling diagnosis script, imported by path (scripts/ is no package)."""
    path = Path(__file__).resolve().with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def with_kv(p, kv: str):
    """Row ``p`` (fit/validate.MeasuredPoint) with its deployment's precision given the KV override ``kv`` (e.g.
    ``",kv=bf16"``; "" = unchanged)."""
    if not kv:
        return p
    prec = p.precision + kv
    return dataclasses.replace(
        p, precision=prec, deployment=dataclasses.replace(p.deployment, precision=get_precision(prec))
    )


def step_rows(pts, kvs=("", ",kv=bf16")) -> list[dict]:
    """One dict per (Llama-2-70B ``matched@limits`` row, KV override): the run's decode batch per instance, its mean
    TPOT (s), the model's at that batch, and the row's prediction (tok/s per chip) against the measured one."""
    tail37 = _script("mlperf_interactive_tail37")
    out = []
    for p in pts:
        if p.model != "llama-2-70b" or p.mapping != "matched@limits":
            continue
        m, wl = p.measured, p.workload
        run = tail37.measured_running(
            m["throughput_per_chip"], wl.mean_isl, wl.mean_osl, m["tpot_s"], p.deployment.decode.layout.chips
        )
        for kv in kvs:
            q = with_kv(p, kv)
            model, pr, dep, wl = priced_point(q)
            one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
            sp = aggregated_by_batch(model, pr, one, wl, np.array([run]))
            row = engine_within_limits(model, pr, dep, wl, q.concurrency, q.tpot_limit_s, q.ttft_limit_s, q.server_run)
            out.append(
                {
                    "row": p.id[9:],
                    "kv": kv.lstrip(",") or "preset",
                    "running": run,
                    "tpot_s": m["tpot_s"],
                    "model_tpot_s": float(sp.tpot_s[0]),
                    "measured": m["throughput_per_chip"],
                    "predicted": row["throughput_per_chip"],
                }
            )
    return out


def amd_rows(pts) -> list[dict]:
    """AMD's Llama-2-70B Interactive runs as measured: running per GPU (Little's law), TPOT / TTFT mean and p99 (s)."""
    lat = _script("mlperf_server_tpot_tail35").measured_latencies
    out = []
    for p in pts:
        if p.model != "llama-2-70b" or "_AMD_" not in p.id or not p.id.endswith("_Interactive"):
            continue
        m, wl = p.measured, p.workload
        out_tok = m["throughput_per_chip"] * wl.mean_osl / (wl.mean_isl + wl.mean_osl)
        out.append({"row": p.id[9:], "out_tok_s": out_tok, "running": out_tok * m["tpot_s"], **lat(p.id)})
    return out


#: AMD's Interactive engines as their configs declare them (closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/
#: interactive_{mi300x,mi325x}.yaml @965182b): one TP1 vLLM engine per GPU, ``max_num_seqs`` and
#: ``max_num_batched_tokens``; MI300X's V0 ``num_scheduler_steps`` 8 (MI325X's V1 engine runs one step)
AMD_INTERACTIVE = {
    "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Interactive": SubmittedEngine(
        600, 40960, _AMD_INT.format("mi300x"), 1, 1, 1, None, scheduler_steps=8
    ),
    "mlperf51_AMD_8xMI325X_2xEPYC_9575F_2_llama2-70b-99_Interactive": SubmittedEngine(
        3840, 43008, _AMD_INT.format("mi325x"), 1, 1, 1, None
    ),
}


def amd_engine_rows(pts) -> list[dict]:
    """AMD's Interactive rows priced at their declared engines (:data:`AMD_INTERACTIVE`) within the rules' limits
    (fit/latency_limits.engine_within_limits) instead of validate's ``frontier@limits``: tok/s per chip, the picked
    load per GPU and its Poisson p99 TTFT (s)."""
    out = []
    for p in pts:
        if p.id not in AMD_INTERACTIVE:
            continue
        dep, conc = submitted_deployment(AMD_INTERACTIVE[p.id], p.precision, p.chips)
        q = dataclasses.replace(p, deployment=dep, concurrency=conc, mapping="matched@limits")
        model, pr, dep, wl = priced_point(q)
        r = engine_within_limits(model, pr, dep, wl, conc, q.tpot_limit_s, q.ttft_limit_s, q.server_run)
        out.append(
            {
                "row": p.id[9:],
                "measured": p.measured["throughput_per_chip"],
                "predicted": r["throughput_per_chip"],
                "load": r["concurrency"] / p.chips,
                "ttft_p99_s": r["ttft_p99_s"],
            }
        )
    return out


def node_rows(pts) -> list[dict]:
    """The MI355X Llama-2-70B Offline rows: GPUs, measured output tok/s per GPU and its ratio to the 8-GPU AMD run,
    the model's throughput per chip (input + output tokens) and its error."""
    rows = [p for p in pts if p.system == "mi355x" and p.model == "llama-2-70b" and p.id.endswith("_Offline")]
    df = predict_points(rows)
    df = df[df.metric == "throughput_per_chip"].set_index("id")
    out = []
    for p in sorted(rows, key=lambda p: p.chips):
        wl = p.workload
        out_tok = p.measured["throughput_per_chip"] * wl.mean_osl / (wl.mean_isl + wl.mean_osl)
        out.append(
            {
                "row": p.id[9:],
                "gpus": p.chips,
                "out_tok_s": out_tok,
                "measured": p.measured["throughput_per_chip"],
                "predicted": float(df.loc[p.id, "predicted"]),
            }
        )
    base = next(r["out_tok_s"] for r in out if r["gpus"] == 8)
    for r in out:
        r["vs_8"] = r["out_tok_s"] / base
    return out


def main() -> None:
    pts = load_mlperf()[0]
    print("step: the run's decode batch, mean TPOT (ms) measured / model, and the row (tok/s per chip)")
    print(
        f"{'row':58s} {'kv':7s} {'run':>5s} {'TPOT':>6s} {'model':>6s} {'ratio':>5s} | {'meas':>6s} {'pred':>6s} {'err':>6s}"
    )
    for r in step_rows(pts):
        print(
            f"{r['row'][:58]:58s} {r['kv']:7s} {r['running']:5.0f} {1e3 * r['tpot_s']:6.1f} "
            f"{1e3 * r['model_tpot_s']:6.1f} {r['tpot_s'] / r['model_tpot_s']:5.2f} | {r['measured']:6.0f} "
            f"{r['predicted']:6.0f} {100 * (r['predicted'] / r['measured'] - 1):+5.1f}%"
        )
    print("\namd: AMD's Interactive runs as measured (ms)")
    print(f"{'row':58s} {'out/GPU':>7s} {'run':>4s} {'TPOT':>5s} {'p99':>5s} {'TTFT':>5s} {'p99':>5s}")
    for r in amd_rows(pts):
        print(
            f"{r['row'][:58]:58s} {r['out_tok_s']:7.0f} {r['running']:4.0f} {1e3 * r['TPOT_mean']:5.1f} "
            f"{1e3 * r['TPOT_p99']:5.1f} {1e3 * r['TTFT_mean']:5.0f} {1e3 * r['TTFT_p99']:5.0f}"
        )
    print("\namd engines: AMD's Interactive rows at their declared engines (tok/s per chip; load per GPU; p99 TTFT s)")
    for r in amd_engine_rows(pts):
        print(
            f"{r['row'][:58]:58s} {r['measured']:6.0f} {r['predicted']:6.0f} "
            f"{100 * (r['predicted'] / r['measured'] - 1):+5.1f}%  load {r['load']:5.0f}  TTFT99 {r['ttft_p99_s']:.2f}"
        )
    print("\nnodes: MI355X Llama-2-70B Offline by GPU count (output tok/s per GPU; row figures: input + output)")
    print(f"{'row':70s} {'GPUs':>4s} {'out/GPU':>7s} {'vs 8':>5s} | {'meas':>6s} {'pred':>6s} {'err':>6s}")
    for r in node_rows(pts):
        print(
            f"{r['row'][:70]:70s} {r['gpus']:4d} {r['out_tok_s']:7.0f} {r['vs_8']:5.3f} | {r['measured']:6.0f} "
            f"{r['predicted']:6.0f} {100 * (r['predicted'] / r['measured'] - 1):+5.1f}%"
        )


if __name__ == "__main__":
    main()
