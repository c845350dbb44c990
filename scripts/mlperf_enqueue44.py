"""MLPerf v5.1 TensorRT-LLM Llama rows (engines without CUDA graphs): can the host's kernel enqueue be the per-step
time the model misses? (issue 18; diagnosis only, docs/gap_large_batch_decode.md "Round 44 (mlperfeager44)").
Nothing here changes a prediction.

Every v5.1 Llama config runs llmlib's ``TrtllmExecutorCore`` (a TensorRT engine under TensorRT-LLM's C++ executor,
orchestrator mode; inference_results_v5.1 @965182b closed/NVIDIA/code/llmlib/cores/trtllm_executor_core.py), whose
config raises ``NotImplementedError("CUDA Graphs are not supported in TRT/C++ backend yet.")`` for ``use_graphs``
(code/llmlib/config.py), hence ``use_graphs: False`` everywhere. Each step's engine is enqueued kernel by kernel
(``IExecutionContext::enqueueV3``). For every Server / Interactive row at its declared engine this prints, at the
run's own decode batch B (Little's law, scripts/mlperf_interactive_tail37.measured_running):

- K, the kernels the model counts in one decode-only step (OpTable.kernels, all layers) and the fixed time it already
  charges for them (Σ kernels · max(kernel_launch_s, floor), serially, inside the step: cost/roofline.op_times);
- T, the model's decode-only GPU step (cost/step.step_cost);
- the enqueue time K·h with h = :data:`LAUNCH_S` (NVIDIA's CUDA-graphs post: back-to-back launches of a 2.9 µs
  kernel cost 3.8 µs each on the host), and the two readings of an eager step: TensorRT's "enqueue-bound" reading
  max(T, K·h) (the host runs ahead; exposed only when K·h > T), and a fully serial reading T + K·(h − launch
  already charged) (the host never runs ahead, an upper bound);
- the per-step time the row would need (measured TPOT − the model's at B, the model without the Llama engines'
  fitted harness term of round 47, fit/mlperf_engines.LLAMA_TRT_HARNESS_STEP_S), and the h that each reading would need
  to supply it (h_max: K·h = T + need; h_serial: launch + need / K).

Reading (round 44): K·h is 2.4-6.7 ms against T of 17-580 ms on all 18 rows, so the enqueue-bound reading adds
nothing anywhere (h_max 12-143 µs a kernel, 3-38x the source); a need equal at T 23 and 109 ms (H200 Llama-2-70B
Interactive +6.0, Server +6.1 ms) is no max(T, host) at all. The serial reading adds 0.8-2.1 ms (15-25% of the H200
needs) and would need h 8.9-10.4 µs on the four H200 rows, but -8.2 to 11.3 µs on B200 / GB200: the enqueue explains
neither the size nor the sign pattern. Run: python scripts/mlperf_enqueue44.py (~20 s).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from jalapeno.cost.batch import Batch
from jalapeno.cost.step import step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.serve.analytic import aggregated_by_batch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling scripts, as the others import them

#: Host seconds per kernel launch when launches run back to back ahead of the GPU: NVIDIA Technical Blog, A. Gray,
#: "Getting Started with CUDA Graphs" (2019-09-05): a 2.9 µs kernel launched 20 x in a stream without a sync per
#: kernel costs 3.8 µs a kernel (9.6 µs with a sync after each; 3.4 µs from a graph). An upper figure for a modern
#: host's cudaLaunchKernel; TensorRT's per-layer setup in enqueueV3 adds to it (NVIDIA/TensorRT issue #1256:
#: "some kernel setup work for each layer", its size depends on the CPU) and no source read here times it.
LAUNCH_S = 3.8e-6
#: The Offline configs' layout and in-flight batch per instance (tensor_parallelism, pipeline_parallelism,
#: gpu_batch_size; inference_results_v5.1 @965182b closed/{NVIDIA,Nebius}/configs/<system>/Offline/<benchmark>.py,
#: every one ``use_graphs: False``); the rows themselves are mapped ``frontier_peak`` (no declared engine).
OFFLINE_CONFIGS = {
    "NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99": (1, 1, 2048),
    "NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b": (2, 2, 128),
    "NVIDIA_GB200-NVL72_GB200-186GB_aarch64x4_TRT_llama2-70b-99": (1, 1, 2048),
    "NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_llama3p1-405b": (2, 2, 2048),
    "Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99": (1, 1, 2048),
    "Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b": (4, 2, 512),
}


def enqueue_terms(kernels: float, gpu_s: float, charged_s: float, need_s: float, h_s: float = LAUNCH_S) -> dict:
    """The enqueue readings of one step (all seconds): K·h, what max(T, K·h) adds over T, what the serial reading adds
    over the launches already charged (K·h − charged, floored at 0), and the h each reading needs to add ``need_s``.

    >>> r = enqueue_terms(1000, 0.020, 0.0026, 0.006, 4e-6)
    >>> round(r["kh_s"], 4), r["max_adds_s"], round(r["serial_adds_s"], 4), round(r["h_max_s"] * 1e6, 1), round(r["h_serial_s"] * 1e6, 1)
    (0.004, 0.0, 0.0014, 26.0, 8.6)
    """
    kh = kernels * h_s
    return {
        "kh_s": kh,
        "max_adds_s": max(0.0, kh - gpu_s),
        "serial_adds_s": max(0.0, kh - charged_s),
        "h_max_s": (gpu_s + need_s) / kernels,
        "h_serial_s": (charged_s + need_s) / kernels,
    }


def row_table() -> list[dict]:
    """One dict per TensorRT-LLM Llama Server / Interactive row at its declared engine (``matched@limits``)."""
    import mlperf_interactive_tail37 as tail37  # noqa: PLC0415  (a sibling script)

    out = []
    for p in load_mlperf()[0]:
        if p.mapping != "matched@limits" or "_TRT_llama" not in p.id:
            continue
        # without the Llama engines' fitted harness term (fit/mlperf_engines.LLAMA_TRT_HARNESS_STEP_S, round 47): it
        # stands in for the per-step time this table looks for
        model, pr, dep, wl = priced_point(dataclasses.replace(p, harness_step_s=0.0))
        lay = dep.decode.layout
        m = p.measured
        run = tail37.measured_running(m["throughput_per_chip"], wl.mean_isl, wl.mean_osl, m["tpot_s"], lay.chips)
        one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
        model_tpot = float(aggregated_by_batch(model, pr, one, wl, np.array([run])).tpot_s[0])
        k, t, charged = _decode_step(model, pr, lay, dep.precision, wl, run)
        need = m["tpot_s"] - model_tpot
        out.append(
            {
                "row": p.id[9:],
                "layers": model.num_layers,
                "tp": lay.tp,
                "running": run,
                "kernels": k,
                "gpu_s": t,
                "charged_s": charged,
                "tpot_s": m["tpot_s"],
                "model_s": model_tpot,
                "need_s": need,
                **enqueue_terms(k, t, charged, need),
            }
        )
    return out


def _decode_step(model, pr, lay, precision, wl, batch: float) -> tuple[float, float, float]:
    """(K kernels, T s, launches already charged s) of the model's decode-only step at ``batch`` on ``lay``."""
    b = Batch.make(
        decode_seqs=np.array([batch]), decode_ctx=wl.decode_ctx, prefill_tokens=np.array([0.0]), prefill_ctx=0.0
    )
    sc = step_cost(model, pr, lay, precision, b)
    return float(sc.ops.kernels.sum()), float(sc.step_time_s[0]), float(sc.times.overhead_s[:, 0].sum())


def offline_table() -> list[dict]:
    """One dict per TensorRT-LLM Llama Offline row: K, T and K·h at its config's layout and in-flight batch
    (:data:`OFFLINE_CONFIGS`), priced with its Server row's system, efficiency set and precision. A PP engine's
    step is one stage's (the layers on one chip), so K and T are a stage's."""
    pts = {p.id: p for p in load_mlperf()[0]}
    out = []
    for key, (tp, pp, batch) in OFFLINE_CONFIGS.items():
        model, pr, dep, wl = priced_point(dataclasses.replace(pts[f"mlperf51_{key}_Server"], harness_step_s=0.0))
        k, t, charged = _decode_step(model, pr, Layout(tp=tp, pp=pp), dep.precision, wl, float(batch))
        out.append(
            {
                "row": f"{key}_Offline",
                "tp": tp,
                "pp": pp,
                "batch": batch,
                "kernels": k,
                "gpu_s": t,
                "charged_s": charged,
                "kh_s": k * LAUNCH_S,
            }
        )
    return out


def main() -> None:
    print(f"h = {LAUNCH_S * 1e6:.1f} us a kernel (CUDA-graphs post); ms unless named")
    print(
        f"  {'row':58s} {'L':>3s} {'TP':>2s} {'B':>6s} {'K':>5s} {'T':>6s} {'chg':>5s} {'K*h':>5s} "
        f"{'max+':>4s} {'ser+':>4s} {'meas':>6s} {'model':>6s} {'need':>6s} {'h_max us':>8s} {'h_ser us':>8s}"
    )
    for r in row_table():
        print(
            f"  {r['row'][:58]:58s} {r['layers']:3d} {r['tp']:2d} {r['running']:6.1f} {r['kernels']:5.0f} "
            f"{1e3 * r['gpu_s']:6.1f} {1e3 * r['charged_s']:5.2f} {1e3 * r['kh_s']:5.2f} {1e3 * r['max_adds_s']:4.1f} "
            f"{1e3 * r['serial_adds_s']:4.1f} {1e3 * r['tpot_s']:6.1f} {1e3 * r['model_s']:6.1f} "
            f"{1e3 * r['need_s']:+6.1f} {1e6 * r['h_max_s']:8.1f} {1e6 * r['h_serial_s']:8.1f}"
        )
    print("Offline (config layout and in-flight batch; a PP engine's figures are one stage's)")
    for r in offline_table():
        print(
            f"  {r['row'][:58]:58s} TP{r['tp']} PP{r['pp']} B {r['batch']:5d}  K {r['kernels']:5.0f}  "
            f"T {1e3 * r['gpu_s']:6.1f}  charged {1e3 * r['charged_s']:5.2f}  K*h {1e3 * r['kh_s']:5.2f}  "
            f"max+ {1e3 * max(0.0, r['kh_s'] - r['gpu_s']):.1f}  serial+ {1e3 * max(0.0, r['kh_s'] - r['charged_s']):.1f}"
        )


if __name__ == "__main__":
    main()
