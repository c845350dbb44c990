"""MLPerf v5.1 Llama-3.1-405B TP4 NVFP4 engines: the full-budget mixed (chunked-prefill) step, term by term
(issue 18; diagnosis only, docs/gap_large_batch_decode.md "Round 31 (mlmixed31)").

The GB200-NVL72 x72 Interactive engine (inference_results_v5.1 @965182b closed/NVIDIA/configs/
GB200-NVL72_GB200-186GB_aarch64x72/Interactive/llama3_1-405b.py): TP4, NVFP4 weights, FP8 KV, ``max_num_tokens`` 1,024,
build flags ``norm_quant_fusion`` and ``gemm_plugin: 'fp4'``, no ``gemm_allreduce_plugin``, no CUDA graphs. The step
priced: a 988-token prompt chunk plus 36 decoding requests (the run's load per instance, round 31) at a 9,800-token
mean context.

Prints (1) the model's op breakdown (``jalapeno step --json``) in groups; (2) each GEMM against aiconfigurator-core
0.12.0's measured TensorRT-LLM 1.3.0rc20 NVFP4 Linear on GB200 (systems/data/gb200/gemm/trtllm/1.3.0rc20/
gemm_perf.parquet: the nearest measured (n, k), log-log in m, scaled by n·k) and the 10 PF dense FP4 peak; (3) the
33.5 MB (1,024 x 16,384 x 2 B) TP4 all-reduce against three measurements on GB200 (TensorRT-LLM 1.3.0rc20
custom_allreduce_perf, NCCL 2.29.2 half and int8; ``message_size`` in elements) and the NVLink 5 floors (900 GB/s
per direction: ring 2(g−1)/g·M/B, NVLS M/B); (4) every B200 / GB200 TP4 Server / Interactive engine per prompt token
at its budget (the model's step as the row is priced: fused GEMM + all-reduce where the config declares it) against
the step the run's own mean TTFT implies (round 30, scripts/mlperf_ttft_tail.py: prefill rate at the budget).
Reading: no term is priced off its measurement; summed, the measured kernels exceed the runs' implied step even
with the all-reduce at the NVLS floor (:func:`floor_step_s`), so the gap is in how the TensorRT-engine path runs
them (FP4 GEMM plugin speed, all-reduce overlap), which no source read here times.
Run: python scripts/mlperf_405b_mixed_step.py   (about ten seconds; needs aiconfigurator-core, the ``aic`` extra)
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.resources import files

import numpy as np
import pandas as pd

GB200 = files("aiconfigurator_core") / "systems" / "data" / "gb200"
LAYERS, HIDDEN, INTER, HEADS, KV_HEADS, HEAD_DIM, TP = 126, 16384, 53248, 128, 8, 128, 4
M = 1024  # tokens in the GB200 Interactive full-budget step (988 prompt + 36 decode)
FP4_PEAK = 10e15  # FLOP/s dense, data/systems/gb200-nvl72.toml
LINK = 900e9  # B/s per direction, NVLink 5 (data/systems/gb200-nvl72.toml)
BASE = ["-m", "llama-3.1-405b", "-p", "nvfp4", "--tp", "4", "--context", "9800", "--stack", "trtllm@1.2.0rc2"]
FUSED = ["--set", "efficiency.gemm_allreduce_fusion=true"]
#: (label, system, budget, decode rows, fused as declared, implied step s: round 30's table in
#: docs/gap_large_batch_decode.md, the prefill rate at which the FCFS prompt queue reproduces the run's mean TTFT)
ENGINES = [
    ("GB200 x72 Interactive", "gb200-nvl72", 1024, 36, False, 0.071),
    ("GB200 x72 Server", "gb200-nvl72", 2048, 63, True, 0.134),  # decode rows: B200 Server's load (assumed)
    ("B200 Interactive", "b200", 1536, 23, True, 0.095),
    ("B200 Server", "b200", 2048, 63, True, 0.146),
]
GEMMS = ("attn.qkv_proj", "attn.o_proj", "dense_ffn.gate_up", "dense_ffn.down")


def model_step(system: str, prefill: int, batch: int, fused: bool) -> dict:
    """The model's step as ``jalapeno step --json`` prints it."""
    args = [*BASE, "-s", system, "--prefill-tokens", str(prefill), "--batch", str(batch), "--json"]
    out = subprocess.run(
        [sys.executable, "-m", "jalapeno", "step", *args, *(FUSED if fused else [])],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def groups_s(s: dict) -> dict[str, float]:
    """The step's time (s) by group: GEMMs, TP all-reduces (as priced: exposed share where fused), elementwise,
    attention, the rest."""
    ops = {o["op"]: o["time_s"] for o in s["ops"]}
    ar = sum(c["time_s"] for c in s["collectives"] if c["collective"].endswith("all_reduce"))
    g = {
        "GEMMs (qkv, o, gate_up, down)": sum(ops[k] for k in GEMMS),
        "TP all-reduces (2 per layer, as priced)": ar,
        "elementwise (norms, residual, act, rope/KV write)": ops["layer.elementwise"]
        + ops["dense_ffn.act"]
        + ops["attn.norm_rope_kv_write"],
        "attention (decode rows + prompt chunk)": ops["attn.decode_full"] + ops["attn.prefill_full"],
    }
    g["rest (lm_head, embedding, gather, exposure)"] = s["step_time_s"] - sum(g.values())
    return g


def nvls_floor_s(message_bytes: float, link_bytes_per_s: float = LINK) -> float:
    """An NVLink-SHARP all-reduce's floor (s): each rank sends and receives the message once, M / B."""
    return message_bytes / link_bytes_per_s


def ring_floor_s(message_bytes: float, group: int, link_bytes_per_s: float = LINK) -> float:
    """A ring all-reduce's floor (s): 2 (g − 1) / g · M / B per rank."""
    return 2 * (group - 1) / group * message_bytes / link_bytes_per_s


def floor_step_s(gemm_s: float, other_s: float, tokens: int, layers: int = LAYERS, hidden: int = HIDDEN) -> float:
    """The step (s) with the GEMMs and the other ops as measured and both TP all-reduces of each layer at the NVLS
    floor (BF16 activations: 2 B per element)."""
    return gemm_s + other_s + 2 * layers * nvls_floor_s(tokens * hidden * 2)


def gemm_measured_s(n: int, k: int, m: int = M) -> tuple[float, tuple[int, int]]:
    """aiconfigurator's measured NVFP4 Linear (TensorRT-LLM 1.3.0rc20, GB200) at m rows: the measured (n, k) nearest
    in log n + log k, log-log in m, scaled by n·k to the asked shape. Returns (seconds, the measured (n, k) used)."""
    d = pd.read_parquet(GB200 / "gemm" / "trtllm" / "1.3.0rc20" / "gemm_perf.parquet")
    d = d[d.gemm_dtype == "nvfp4"]
    dist = np.abs(np.log(d.n.to_numpy(float) / n)) + np.abs(np.log(d.k.to_numpy(float) / k))
    n0, k0 = (int(v) for v in d[["n", "k"]].iloc[int(dist.argmin())])
    c = d[(d.n == n0) & (d.k == k0)].sort_values("m")
    t = np.exp(np.interp(np.log(m), np.log(c.m.to_numpy(float)), np.log(c.latency.to_numpy(float)))) * 1e-3
    return float(t * n * k / (n0 * k0)), (n0, k0)


def main() -> None:
    s = model_step("gb200-nvl72", M - 36, 36, False)
    g = groups_s(s)
    print(f"(1) GB200 x72 Interactive, model step {s['step_time_s'] * 1e3:.1f} ms")
    for k, v in g.items():
        print(f"    {k:50s} {v * 1e3:7.1f} ms")
    print("(2) GEMM per layer, us: model / measured Linear (aiconfigurator, nearest shape) / at the 10 PF FP4 peak")
    ops = {o["op"]: o["time_s"] for o in s["ops"]}
    shapes = {
        "attn.qkv_proj": ((HEADS + 2 * KV_HEADS) * HEAD_DIM // TP, HIDDEN),
        "attn.o_proj": (HIDDEN, HEADS * HEAD_DIM // TP),
        "dense_ffn.gate_up": (2 * INTER // TP, HIDDEN),
        "dense_ffn.down": (HIDDEN, INTER // TP),
    }
    tot = np.zeros(3)
    for name, (n, k) in shapes.items():
        meas, used = gemm_measured_s(n, k)
        peak, mod = 2 * M * n * k / FP4_PEAK, ops[name] / LAYERS
        tot += (mod, meas, peak)
        print(
            f"    {name:18s} n {n:6d} k {k:6d}: {mod * 1e6:6.1f} / {meas * 1e6:6.1f} {used} / {peak * 1e6:5.1f}"
            f"  (model at {peak / mod:.0%} of peak)"
        )
    print(
        f"    x {LAYERS} layers: model {tot[0] * LAYERS * 1e3:.1f}, measured {tot[1] * LAYERS * 1e3:.1f}, "
        f"peak {tot[2] * LAYERS * 1e3:.1f} ms"
    )
    msg = M * HIDDEN * 2
    c = next(c for c in s["collectives"] if c["collective"] == "attn.all_reduce")
    ar = pd.read_parquet(GB200 / "comm" / "trtllm" / "1.3.0rc20" / "custom_allreduce_perf.parquet")
    nc = pd.read_parquet(GB200 / "comm" / "nccl" / "2.29.2" / "nccl_perf.parquet")
    trt = ar[(ar.num_gpus == TP) & (ar.message_size == msg // 2) & (ar.allreduce_dtype == "bfloat16")].latency.iloc[0]
    nc = nc[(nc.op_name == "all_reduce") & (nc.num_gpus == TP)]
    half = nc[(nc.nccl_dtype == "half") & (nc.message_size == msg // 2)].latency.iloc[0]
    i8 = nc[(nc.nccl_dtype == "int8") & (nc.message_size == msg)].latency.iloc[0]
    print(
        f"(3) TP{TP} all-reduce of {msg / 1e6:.1f} MB, us: model {c['time_s'] / c['calls'] * 1e6:.1f}; measured "
        f"TensorRT-LLM {trt * 1e3:.1f}, NCCL half {half * 1e3:.1f}, NCCL int8 {i8 * 1e3:.1f}; NVLink 5 floor ring "
        f"{ring_floor_s(msg, TP) * 1e6:.1f}, NVLS {nvls_floor_s(msg) * 1e6:.1f}"
    )
    other = s["step_time_s"] - g["GEMMs (qkv, o, gate_up, down)"] - g["TP all-reduces (2 per layer, as priced)"]
    print(
        f"    the step with both all-reduces at the NVLS floor: "
        f"{floor_step_s(g['GEMMs (qkv, o, gate_up, down)'], other, M) * 1e3:.1f} ms (run-implied ~71 ms)"
    )
    print("(4) per prompt-budget token, us (model step / budget): GEMM, all-reduce as priced, rest; model vs implied")
    for label, system, budget, batch, fused, implied in ENGINES:
        gs = groups_s(model_step(system, budget - batch, batch, fused))
        gemm, arx = gs["GEMMs (qkv, o, gate_up, down)"], gs["TP all-reduces (2 per layer, as priced)"]
        step = sum(gs.values())
        print(
            f"    {label:22s} budget {budget:5d} {'fused' if fused else 'unfused':7s}: GEMM {gemm / budget * 1e6:5.1f}"
            f" AR {arx / budget * 1e6:5.1f} rest {(step - gemm - arx) / budget * 1e6:5.1f} = "
            f"{step / budget * 1e6:5.1f}; implied {implied / budget * 1e6:5.1f} ({step / implied - 1:+.0%})"
        )


if __name__ == "__main__":
    main()
