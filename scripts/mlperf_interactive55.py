"""MLPerf v5.1 TensorRT-LLM Llama-2-70B Interactive rows (B200 / GB200 x4 +38%): the KV dtype settled by the Server
runs' KV capacity, the GB200 x4 run's headroom under its limits, and the same-config B200 runs at one rate by host
(issue 18, diagnosis only; docs/gap_large_batch_decode.md "Round 55 (mlperfnv55)"). Nothing here changes a prediction.

Three tables:

1. ``kv``: the KV cache each NVIDIA Llama-2-70B Server / Interactive run (B200, GB200 x4) holds a GPU at its own load:
   requests in flight a GPU by Little's law (scripts/mlperf_interactive_tail37.measured_running) x the mean resident
   context (each output token of each OpenOrca sample at ISL + t, scripts/mlperf_interactive52.token_contexts) x the
   model's KV bytes a token (specs/model.ModelSpec.kv_bytes_per_token: 80 layers x 8 KV heads x 128 x K and V, 1 B
   FP8 or 2 B BF16), beside the weights (deploy/memory_fit.weight_bytes_per_chip, NVFP4) and the chip's usable HBM
   (data/systems/{b200,gb200-nvl72}.toml ``hbm_usable_gb``). The quantized checkpoint NVIDIA's harness builds every
   B200 Llama-2-70B engine from is one folder a (TP, PP, precision), ``llama2-70b-chat-hf-tp1pp1-fp4``, reused unless
   ``--force_calibration`` (inference_results_v5.1 @965182b closed/NVIDIA/code/llama2-70b/tensorrt/builder.py
   ``LLAMA2QuantizerConfig``, code/llmlib/builder.py ``TRTLLMQuantizerOp.run``), and TensorRT-LLM takes the KV dtype
   from the checkpoint's ``kv_cache_quant_algo``: so the Server run's dtype is the Interactive run's.
2. ``headroom``: the B200 and GB200 x4 Interactive runs at their own loads: the model's mean TPOT there (the B200
   Interactive engine; GB200 x4 has no published Interactive config, priced with its Server engine, whose larger
   ``max_num_tokens`` leaves the same whole-prompt room at ~230 decode rows: serve/chunked.step_room), the residual
   (measured - model), the run's p99 / mean TPOT, and the load at which the model plus that residual reaches the
   40 ms p99 (loadgen/mlperf.conf, fit/mlperf.MLPERF_RULES) with the run's own tail ratio: the best valid rate it
   implies over the run's (a row's error against that rate is (1 + error) / ratio - 1).
3. ``hosts``: the B200 Llama-2-70B Interactive runs of NVIDIA's config (docs/data/mlperf51_peer_runs.csv) with their
   host CPU (:data:`HOST_CPU`) and, where the same system ran Server at 363.79/s, that run's mean TPOT.

Run: python scripts/mlperf_interactive55.py   (about ten seconds)
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling scripts, as the others import them

from mlperf_interactive52 import token_contexts  # noqa: E402
from mlperf_interactive_tail37 import measured_running  # noqa: E402
from mlperf_peer_runs38 import peer_runs  # noqa: E402

from jalapeno.deploy.memory_fit import weight_bytes_per_chip  # noqa: E402
from jalapeno.fit.mlperf import load_mlperf  # noqa: E402
from jalapeno.fit.mlperf_scenarios import priced_point  # noqa: E402
from jalapeno.serve.analytic import aggregated_by_batch  # noqa: E402
from jalapeno.specs.catalog import load_system  # noqa: E402

_B200 = "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_"
_GB200 = "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x4_TRT_llama2-70b-99_"

#: (row measured, row whose declared engine prices it, system file): GB200 x4 Interactive has no engine of its own
KV_ROWS = (
    (_B200 + "Server", _B200 + "Server", "b200"),
    (_GB200 + "Server", _GB200 + "Server", "gb200-nvl72"),
    (_B200 + "Interactive", _B200 + "Interactive", "b200"),
    (_GB200 + "Interactive", _GB200 + "Server", "gb200-nvl72"),
)

#: p99 TPOT limit of Llama-2-70B Interactive (s): mlcommons/inference loadgen/mlperf.conf (fit/mlperf.MLPERF_RULES)
TPOT_LIMIT_S = 0.040

#: host CPU of each B200 system that ran NVIDIA's Llama-2-70B Interactive config: inference_results_v5.1 @965182b
#: closed/<submitter>/systems/<system>.json ``host_processor_model_name`` (two sockets each)
HOST_CPU = {
    ("NVIDIA", "B200-SXM-180GBx8_TRT"): "Xeon Platinum 8570",
    ("Google", "B200-SXM-180GBx8_TRT"): "Xeon Platinum 8570",
    ("Nebius", "B200-SXM-180GBx8_TRT"): "Xeon Platinum 8580",
    ("Supermicro", "SYS-422GS-NBRT-LCC_B200-SXM-180GBx8_TRT"): "Xeon 6787P",
    ("Dell", "XE9680L_B200_SXM_180GBx8_TRT"): "Xeon Platinum 8562Y+",
    ("GigaComputing", "G894-SD1_B200-SXM-180GBx8_TRT"): "Xeon 6745P",
}


def _point(pts, rid: str):
    return next(p for p in pts if p.id == rid)


def _running(p, chips: int) -> float:
    m = p.measured
    return measured_running(m["throughput_per_chip"], p.isl, p.osl, m["tpot_s"], chips)


def kv_rows(pts=None) -> list[dict]:
    """Table 1: one dict per :data:`KV_ROWS` entry (GB = 1e9 bytes)."""
    pts = pts if pts is not None else load_mlperf()[0]
    out = []
    for rid, engine_rid, system in KV_ROWS:
        p = _point(pts, rid)
        model, _pr, dep, wl = priced_point(_point(pts, engine_rid))
        b = _running(p, dep.decode.layout.chips)
        ctx = float(token_contexts(wl).mean())
        chip = load_system(system).chip
        out.append(
            {
                "row": rid[9:],
                "running": b,
                "context": ctx,
                "kv_fp8_gb": b * ctx * model.kv_bytes_per_token(1.0) / 1e9,
                "kv_bf16_gb": b * ctx * model.kv_bytes_per_token(2.0) / 1e9,
                "weights_gb": weight_bytes_per_chip(model, dep.decode.layout, dep.precision) / 1e9,
                "usable_gb": chip.hbm_usable_bytes / 1e9,
            }
        )
    return out


def headroom_rows(pts=None) -> list[dict]:
    """Table 2: the two Interactive runs (B200, GB200 x4) at their own loads and at the limit the residual implies."""
    pts = pts if pts is not None else load_mlperf()[0]
    peers = {(r["submitter"], r["system"]): r for r in peer_runs(benchmark="llama2-70b-99", scenario="Interactive")}
    out = []
    for rid, engine_rid, _system in KV_ROWS[2:]:
        p = _point(pts, rid)
        model, pr, dep, wl = priced_point(_point(pts, engine_rid))
        one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
        b = _running(p, dep.decode.layout.chips)
        grid = np.linspace(0.5 * b, 1.6 * b, 221)
        tau = aggregated_by_batch(model, pr, one, wl, np.concatenate([[b], grid])).tpot_s
        run = peers[("NVIDIA", rid[9:].split("_llama2")[0].replace("NVIDIA_", ""))]
        measured = p.measured["tpot_s"]
        resid = measured - float(tau[0])
        tail = run["tpot_p99_ms"] / run["tpot_mean_ms"]
        allowed = TPOT_LIMIT_S / tail
        curve = tau[1:] + resid
        b_lim = float(np.interp(allowed, curve, grid))  # curve rises with the batch
        ratio = (b_lim / allowed) / (b / measured)  # requests finished a second: in flight / (OSL x TPOT), OSL equal
        out.append(
            {
                "row": rid[9:],
                "running": b,
                "model_s": float(tau[0]),
                "measured_s": measured,
                "residual_s": resid,
                "tail": tail,
                "p99_of_limit": run["tpot_p99_ms"] / 1e3 / TPOT_LIMIT_S,
                "ttft_p99_ms": run["ttft_p99_ms"],
                "per_gpu_rate": run["scheduled_per_s"] / dep.decode.layout.chips / _chips_in(rid),
                "b_limit": b_lim,
                "rate_ratio": ratio,
            }
        )
    return out


def _chips_in(rid: str) -> int:
    """GPUs of the run's system (the results tree's name: x8 B200, x4 GB200)."""
    return 8 if "B200-SXM-180GBx8" in rid else 4


def host_rows(pts=None) -> list[dict]:
    """Table 3: the B200 runs of NVIDIA's Llama-2-70B Interactive config with their host CPU, the residual at each
    run's own load (measured mean TPOT - the model's at the requests decoding a GPU, output tok/s a GPU x mean TPOT,
    priced with the NVIDIA B200 Interactive engine) and the same system's Server run at NVIDIA's 363.79/s."""
    pts = pts if pts is not None else load_mlperf()[0]
    model, pr, dep, wl = priced_point(_point(pts, _B200 + "Interactive"))
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    server = {(r["submitter"], r["system"]): r for r in peer_runs(benchmark="llama2-70b-99", scenario="Server")}
    out = []
    for r in peer_runs(benchmark="llama2-70b-99", scenario="Interactive"):
        key = (r["submitter"], r["system"])
        if key not in HOST_CPU:
            continue
        s = server.get(key)
        b = r["tokens_per_s"] / 8 * r["tpot_mean_ms"] / 1e3  # output tok/s a GPU (8 GPUs, one TP1 instance each)
        model_s = float(aggregated_by_batch(model, pr, one, wl, np.array([b])).tpot_s[0])
        out.append(
            {
                "submitter": r["submitter"],
                "system": r["system"],
                "cpu": HOST_CPU[key],
                "scheduled_per_s": r["scheduled_per_s"],
                "tpot_mean_ms": r["tpot_mean_ms"],
                "tpot_p99_ms": r["tpot_p99_ms"],
                "running": b,
                "residual_ms": r["tpot_mean_ms"] - model_s * 1e3,
                "server_tpot_mean_ms": s["tpot_mean_ms"] if s and abs(s["scheduled_per_s"] - 363.79) < 0.01 else None,
            }
        )
    return sorted(out, key=lambda d: (-d["scheduled_per_s"], d["tpot_mean_ms"]))


def main() -> None:
    pts = load_mlperf()[0]
    print("1. KV a GPU at each run's own load (GB; context = mean resident tokens a request)")
    print(f"{'row':<62} {'in flight':>9} {'context':>7} {'KV fp8':>7} {'KV bf16':>8} {'weights':>7} {'usable':>6}")
    for r in kv_rows(pts):
        print(
            f"{r['row']:<62} {r['running']:>9.0f} {r['context']:>7.0f} {r['kv_fp8_gb']:>7.1f} {r['kv_bf16_gb']:>8.1f} "
            f"{r['weights_gb']:>7.1f} {r['usable_gb']:>6.0f}"
        )
    print("\n2. The Interactive runs at their own load and at the 40 ms p99 with their own residual and tail (ms)")
    print(
        f"{'row':<62} {'q/s a GPU':>9} {'B':>5} {'model':>6} {'run':>6} {'resid':>6} {'p99/mean':>8} "
        f"{'p99/limit':>9} {'B at limit':>10} {'rate x':>6}"
    )
    for r in headroom_rows(pts):
        print(
            f"{r['row']:<62} {r['per_gpu_rate']:>9.2f} {r['running']:>5.0f} {r['model_s'] * 1e3:>6.2f} "
            f"{r['measured_s'] * 1e3:>6.2f} {r['residual_s'] * 1e3:>+6.2f} {r['tail']:>8.3f} {r['p99_of_limit']:>9.2f} "
            f"{r['b_limit']:>10.0f} {r['rate_ratio']:>6.3f}"
        )
    print("\n3. B200 runs of NVIDIA's Llama-2-70B Interactive config by host CPU (ms)")
    print(
        f"{'submitter':<14} {'host CPU':<22} {'q/s':>7} {'TPOT mean':>9} {'p99':>6} {'B':>5} {'resid':>6} {'Server TPOT @363.79/s':>21}"
    )
    for r in host_rows(pts):
        srv = f"{r['server_tpot_mean_ms']:.2f}" if r["server_tpot_mean_ms"] is not None else "-"
        print(
            f"{r['submitter']:<14} {r['cpu']:<22} {r['scheduled_per_s']:>7.2f} {r['tpot_mean_ms']:>9.2f} "
            f"{r['tpot_p99_ms']:>6.2f} {r['running']:>5.0f} {r['residual_ms']:>+6.2f} {srv:>21}"
        )


if __name__ == "__main__":
    main()
