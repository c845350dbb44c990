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
attention-DP imbalance can explain. The engine's decode step measured against the model's at the same
running batch (:func:`step_residuals`): five runs of 2025 aggregated attention-DP TensorRT-LLM (the two B200
Server runs, the B200 Offline run, NVIDIA's trtllm-bench B200 and H200 runs) leave 23-31 ms per step unpriced. The same engine shape outside MLPerf (:func:`published_engine_check`):
NVIDIA's own trtllm-bench max-throughput figures for DeepSeek-R1 (attention DP 8, EP 8, 128-896
sequences per rank, fixed 1K/2K lengths) served by the model at their published engine limits,
which no other validation source covers (InferenceX's aggregated DeepSeek-R1 rows run SGLang at <= 64
sequences). The Llama FP8 rows by scale granularity (:func:`fp8_granularity_check`): their checkpoints
are per-tensor (fit/mlperf.py), priced by the per-tensor FP8 GEMM (gemm[fp8]); read as block-scaled
(``-p fp8``, gemm[fp8_block], their pricing before issue 18 item 7) for comparison. Llama-2-70B
Offline at the submissions' own engines (:func:`llama2_at_submitted_engines`) against the frontier peak
they map to, and H200's FP8 GEMMs at Llama-70B's shapes in TensorRT-LLM's measured table against the
parametric fits of both granularities (:func:`h200_fp8_gemm_check`). Prints; no prediction depends on it.

    python scripts/mlperf_diagnosis.py
"""

from __future__ import annotations

import numpy as np

from jalapeno.fit.mlperf import (
    MLPERF_ENGINES,
    MLPERF_TRTLLM_RELEASE,
    benchmark_spread,
    running_per_chip,
    submitted_deployment,
)
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


#: NVIDIA/TensorRT-LLM docs/source/blogs/Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md (reproduced at
#: TensorRT-LLM commit b6261862, mid-2025: before 1.2.0rc3, as MLPerf's): trtllm-bench ``throughput``, TP8
#: with attention DP, EP8, fixed ISL 1,024 / OSL 2,048, ``--max_batch_size`` per rank, ``--max_num_tokens``,
#: ``--concurrency`` = batch x 8: (label, system, precision, batch per rank, tokens per step, published
#: 'Per GPU Output Throughput (tps/gpu)', published 'Per User Output Throughput [w/ ctx]' tok/s)
PUBLISHED_TRTLLM_BENCH = (
    ("B200 FP4, FP8 KV (R1-0528)", "b200", "fp4", 896, 2048, 5393.2755, 6.1806),
    ("B200 FP4, BF16 KV", "b200", "fp4,kv=bf16,attn=bf16", 384, 1536, 4548.0105, 11.9263),
    ("H200 FP8, BF16 KV", "h200", "fp8,kv=bf16", 128, 1151, 1436.1584, 11.3476),
)


def published_engine_check() -> list[dict]:
    """Per :data:`PUBLISHED_TRTLLM_BENCH` entry: the model's output tok/s per GPU and TPOT (s) at the
    published engine (attention DP 8, EP 8, the batch per rank and token limit, TensorRT-LLM at
    :data:`MLPERF_TRTLLM_RELEASE`), beside the published figures (step time = 1 / per-user rate)."""
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.formats import get_precision

    model, out = load_model("deepseek-r1"), []
    for label, system, prec, batch, tokens, tps_gpu, tps_user in PUBLISHED_TRTLLM_BENCH:
        dep = Deployment(
            get_precision(prec),
            Pool(Layout(tp=1, dp=8, ep=8), workers=1),
            max_running=batch,
            max_tokens_per_step=tokens,
            budget_per="rank",
        )
        pricer = load_any_pricer(
            system, "calibrated", pricer="roofline", stack=get_stack(f"trtllm@{MLPERF_TRTLLM_RELEASE}")
        )
        r = serve_at_concurrency(model, pricer, dep, Workload("1K/2K", 1024, 2048, 1.0), [batch * 8])
        out.append(
            {
                "label": label,
                "batch": batch,
                "model_tps_gpu": float(r.output_throughput_per_chip[0]),
                "model_tpot_s": float(r.tpot_s[0]),
                "tps_gpu": tps_gpu,
                "step_s": 1 / tps_user,
            }
        )
    return out


def fp8_granularity_check() -> list[dict]:
    """The MLPerf Llama FP8 rows (per-tensor checkpoints, mapped to ``fp8-tensor``) predicted as mapped
    and with the checkpoint read as 128x128-block scaled (``fp8``, priced by gemm[fp8_block]): id,
    system, measured, block, per_tensor (tok/s per chip, input + output). Offline rows (``matched`` at their
    engine since round 32 for AMD's, else ``frontier_peak``) are compared at the frontier peak."""
    from jalapeno.analysis.comparison import system_frontier
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.latency_limits import peak_within_limits
    from jalapeno.fit.validate import peak_within_tpot, point_stack
    from jalapeno.specs.formats import get_precision

    fronts, out = {}, []
    for p in load_mlperf(server_mapping="frontier@limits")[0]:
        base, comma, options = p.precision.partition(",")  # options: e.g. attn=fp8 (a declared FP8 context FMHA)
        if base != "fp8-tensor":
            continue
        row = {"id": p.id, "system": p.system, "model": p.model, "measured": p.measured["throughput_per_chip"]}
        for key, prec in (("block", "fp8" + comma + options), ("per_tensor", p.precision)):
            k = (p.system, p.model, p.workload.isl, p.workload.osl, prec)
            if k not in fronts:
                pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p))
                fronts[k] = (
                    system_frontier(load_model(p.model), pricer, p.workload, get_precision(prec), SweepOptions()),
                    pricer,
                )
            sf, pricer = fronts[k]
            if p.mapping in ("frontier_peak", "matched"):  # Offline rows, at their engine or not: the frontier peak
                row[key] = float(sf.y.max())
            elif p.mapping == "frontier@limits":
                row[key] = peak_within_limits(
                    load_model(p.model), pricer, p.workload, sf.sweep, p.tpot_limit_s, p.ttft_limit_s
                )[0]
            else:
                row[key] = peak_within_tpot(sf.sweep.points, p.tpot_limit_s)
        out.append(row)
    return out


#: The Llama-2-70B Offline submissions' engines (inference_results_v5.1 @965182b): per GPU one TP1
#: instance; (batch, tokens per step). NVIDIA B200 / GB200 (closed/NVIDIA/configs/{B200-SXM-180GBx8,
#: GB200-NVL72_GB200-186GB_aarch64x4}/Offline/llama2-70b.py: gpu_batch_size 2048, max_num_tokens 3584,
#: FP8 KV, chunked context), Nebius H200 (closed/Nebius/configs/H200-SXM-141GBx8/Offline/llama2-70b.py:
#: 2048, 1536), AMD vLLM (closed/AMD/code/llama2-70b-99.9/harness_llm/models/llama2-70b/offline_mi*.yaml:
#: the decode batch the harness's scheduler targets, VLLM_LLAMA2_MLPERF_MAX_TARGET_DECODE_BATCH 1536 /
#: 2048 / 3072, and max_num_batched_tokens 40960 / 65536 / 40960). MangoBoost's MI355X clusters are not
#: read (their own harness).
LLAMA2_OFFLINE_ENGINES = {
    "b200": (2048, 3584),
    "gb200-nvl72": (2048, 3584),
    "h200": (2048, 1536),
    "mi300x": (1536, 40960),
    "mi325x": (2048, 65536),
    "mi355x": (3072, 40960),
}


def llama2_at_submitted_engines() -> list[dict]:
    """The Llama-2-70B Offline rows (8-GPU submissions) served at their engines
    (:data:`LLAMA2_OFFLINE_ENGINES`, every slot filled) beside the frontier peak they map to: id,
    measured, matched, peak (tok/s per chip, input + output) and the matched point's limit."""
    from jalapeno.analysis.comparison import system_frontier
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.validate import point_stack
    from jalapeno.specs.formats import get_precision

    model, out = load_model("llama-2-70b"), []
    for p in load_mlperf(server_mapping="frontier@limits")[0]:
        if p.model != "llama-2-70b" or not p.id.endswith("_Offline") or "MangoBoost" in p.id:
            continue
        batch, tokens = LLAMA2_OFFLINE_ENGINES[p.system]
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p))
        dep = Deployment(
            get_precision(p.precision), Pool(Layout(tp=1), workers=8), max_running=batch, max_tokens_per_step=tokens
        )
        r = serve_at_concurrency(model, pricer, dep, p.workload, [batch * 8])
        peak = system_frontier(model, pricer, p.workload, get_precision(p.precision), SweepOptions()).y.max()
        out.append(
            {
                "id": p.id,
                "measured": p.measured["throughput_per_chip"],
                "matched": float(r.throughput_per_chip[0]),
                "peak": float(peak),
                "limit": str(r.limit[0]),
                "decode_batch": float(r.decode_batch[0]),
            }
        )
    return out


def h200_fp8_gemm_check() -> dict:
    """H200 FP8 GEMMs at Llama-2-70B's TP1 shapes (n x k = 8192 x 8192 and 10240 x 8192, m 1,024-4,096):
    TensorRT-LLM's measured per-tensor FP8 TFLOP/s (aiconfigurator-core's h200_sxm trtllm 1.3.0rc20
    ``gemm_perf``, ``gemm_dtype`` fp8; None without the package) beside the parametric fits' at m = 1,536
    (gemm[fp8] per-tensor and gemm[fp8_block]: peak fraction x m / (m + half rows) x the chip's FP8 peak)."""
    from importlib import resources

    import pandas as pd

    pricer = load_any_pricer("h200", "calibrated", pricer="roofline")
    eff, m = pricer.efficiency, 1536.0
    peak = pricer.system.chip.peak("fp8")
    fit, block = (eff.gemm_peak(k) * m / (m + eff.gemm_half(k)) * peak for k in ("fp8", "fp8_block"))
    measured = None
    try:
        f = resources.files("aiconfigurator_core") / "systems/data/h200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet"
        df = pd.read_parquet(str(f))
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        df = None
    if df is not None:
        s = df[
            (df.gemm_dtype == "fp8") & (df.k == 8192) & df.n.isin([8192, 10240]) & df.m.isin([1024, 1536, 2048, 4096])
        ]
        tf = 2 * s.m * s.n * s.k / s.latency / 1e9
        measured = (float(tf.min()), float(tf.max()))
    return {
        "peak_tflops": peak / 1e12,
        "fit_tflops_m1536": fit / 1e12,
        "block_fit_tflops_m1536": block / 1e12,
        "measured_tflops": measured,
    }


def diagnosis() -> dict:
    """The figures: the run's and the dataset's output percentiles, the decode contexts, the run's
    running requests per chip, and per pricing step (label -> (TPOT s at the run's load, output
    tok/s/chip with every slot filled)); the blog's engine figures per GPU."""
    osl = (E2E_S - TTFT_MEAN_S) / TPOT_MEAN_S
    spr = benchmark_spread("deepseek-r1").with_mean_osl(MEAN_OSL)
    run = running_per_chip(OUT_TOK_S / 8, TPOT_MEAN_S)
    dep, full = submitted_deployment(
        MLPERF_ENGINES["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"], "fp4", 8
    )
    base = load_model("deepseek-r1")
    fixed = Workload("fixed", round(spr.mean_isl), MEAN_OSL, 1.0)
    spread = Workload("dataset", round(spr.mean_isl), MEAN_OSL, 1.0, spread=spr)
    steps = {}
    rel = f"trtllm@{MLPERF_TRTLLM_RELEASE}"
    for label, wl, stack, routing in (
        ("fixed means, newest trtllm", fixed, "trtllm", "uniform"),
        ("dataset spread, newest trtllm", spread, "trtllm", "uniform"),
        (f"dataset spread, {rel}", spread, rel, "uniform"),
        (f"dataset spread, {rel}, natural-text routing", spread, rel, "measured"),
    ):
        model = with_routing(base, routing)
        pricer = load_any_pricer("b200", "calibrated", pricer="roofline", stack=get_stack(stack))
        r = serve_at_concurrency(model, pricer, dep, wl, [run * 8, full])
        steps[label] = (float(r.tpot_s[0]), float(r.throughput_per_chip[1] * wl.mean_osl / (wl.mean_isl + wl.mean_osl)))
    return {
        "run_osl": dict(zip(Q.tolist(), osl)),
        "data_osl": {q: spr.osl_quantile(q) for q in Q.tolist()},
        "ctx_spread": spr.decode_ctx,
        "ctx_fixed": spr.mean_isl + spr.mean_osl / 2,
        "running": run,
        "full": full,
        "steps": steps,
        "blog_gpu": BLOG10_TPS / BLOG10_GPUS,
        "blog_sol_gpu": BLOG10_SOL_TPS / BLOG10_GPUS,
    }


#: The B200 Server runs of NVIDIA's and Google's DeepSeek-R1 engine (mlperf_log_summary.txt via the shipped
#: rows): (label, result id, output tok/s of the 8-GPU system, mean TPOT s, the run's mean output tokens)
SERVER_RUNS = (
    ("Google B200 Server", "mlperf51_Google_B200-SXM-180GBx8_TRT_deepseek-r1_Server", 14630.74, 0.06127, 3676),
    ("NVIDIA B200 Server", "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server", OUT_TOK_S, TPOT_MEAN_S, MEAN_OSL),
)


def step_residuals() -> list[dict]:
    """The engines' measured decode step against the model's at the same running batch, per run: the
    two B200 Server runs (running per GPU by Little's law, step = mean TPOT; the submission's engine,
    WIDEEP priced by its CUTLASS kernels), the NVIDIA B200 Offline run (every slot: 512 per rank; its
    steady step = 512 / (output tok/s per GPU / the modelled drain factor), serve/finite_run.py) and
    NVIDIA's trtllm-bench B200 384 (BF16 KV) and H200 128 runs (TensorRT-LLM's default MoE backend,
    CUTLASS: docs/source/deployment-guide quick-start recipe for DeepSeek-R1, "The default moe backend is
    CUTLASS"; no H200 CUTLASS table: its calibrated set). Each: label, running per rank, measured and
    modelled step (s), residual (s)."""
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.fit.mlperf import MLPERF_LIMIT_ENGINES, load_mlperf
    from jalapeno.fit.trt_prompt_graphs import TRTLLM_EAGER_CALL_S
    from jalapeno.fit.validate import point_workload
    from jalapeno.serve.finite_run import finite_run_factor
    from jalapeno.specs.formats import get_precision

    model, out = load_model("deepseek-r1"), []
    pts = {p.id: p for p in load_mlperf(server_mapping="frontier@limits")[0]}
    stack = get_stack(f"trtllm@{MLPERF_TRTLLM_RELEASE}")
    b200 = load_any_pricer("b200", "calibrated", pricer="roofline", stack=stack)
    for label, rid, tok_s, tpot, osl in SERVER_RUNS:
        run = running_per_chip(tok_s / 8, tpot)
        dep, _ = submitted_deployment(MLPERF_LIMIT_ENGINES[rid], "fp4", 8)
        wl = Workload(
            "dataset",
            round(pts[rid].workload.mean_isl),
            osl,
            1.0,
            spread=benchmark_spread("deepseek-r1").with_mean_osl(osl),
        )
        r = serve_at_concurrency(model, b200, dep, wl, [run * 8])
        out.append({"label": label, "running": run, "measured_s": tpot, "model_s": float(r.tpot_s[0])})
    p = pts["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"]
    r = serve_at_concurrency(model, b200, p.deployment, point_workload(p), [p.concurrency])
    f = finite_run_factor(model, b200, p.deployment, point_workload(p), p.queries)
    out_gpu = p.measured["throughput_per_chip"] * p.workload.mean_osl / (p.workload.mean_isl + p.workload.mean_osl)
    out.append(
        {
            "label": "NVIDIA B200 Offline (steady)",
            "running": 512.0,
            "measured_s": 512 / (out_gpu / f),
            "model_s": float(r.tpot_s[0]),
        }
    )
    for label, system, prec, batch, tokens, _tps_gpu, tps_user in PUBLISHED_TRTLLM_BENCH[1:]:
        # prompt steps eager, as the MLPerf engines' (no torch.compile in the recipe; round 27, hostiter27)
        dep = Deployment(
            get_precision(prec),
            Pool(Layout(tp=1, dp=8, ep=8), workers=1, moe_backend="cutlass"),
            max_running=batch,
            max_tokens_per_step=tokens,
            budget_per="rank",
            eager_prompt_call_s=TRTLLM_EAGER_CALL_S,
        )
        pricer = b200 if system == "b200" else load_any_pricer(system, "calibrated", pricer="roofline", stack=stack)
        r = serve_at_concurrency(model, pricer, dep, Workload("1K/2K", 1024, 2048, 1.0), [batch * 8])
        out.append(
            {
                "label": f"trtllm-bench {label}",
                "running": float(batch),
                "measured_s": 1 / tps_user,
                "model_s": float(r.tpot_s[0]),
            }
        )
    for row in out:
        row["residual_s"] = row["measured_s"] - row["model_s"]
    return out


def main() -> None:
    d = diagnosis()
    print("run's output-length percentiles (tokens):", {q: round(v) for q, v in d["run_osl"].items()})
    print("dataset's (scaled to the run's mean):", {q: round(v) for q, v in d["data_osl"].items()})
    print(
        f"decode context per sequence: {d['ctx_spread']:,.0f} tokens with the spread ({d['ctx_fixed']:,.0f} at "
        "fixed means)"
    )
    print(f"running requests per chip (Little's law): {d['running']:.1f}")
    for label, (tpot, out) in d["steps"].items():
        print(
            f"{label}: TPOT {tpot * 1e3:.1f} ms at the run's load (measured {TPOT_MEAN_S * 1e3:.1f}); "
            f"{out:,.0f} output tok/s/chip with every slot filled ({d['full']:g} in flight)"
        )
    print(
        f"TensorRT-LLM blog 10 (same length mix, 8 GB200, DP8 EP8): {d['blog_gpu']:,.0f} output tok/s per GPU at "
        f"balance {BLOG10_BALANCE:.1%}, {d['blog_sol_gpu']:,.0f} at perfect balance: imbalance explains "
        f"{BLOG10_SOL_TPS / BLOG10_TPS - 1:.0%} of the engine's time"
    )
    print("NVIDIA's published trtllm-bench max-throughput runs (DP8 EP8, 1K/2K), model vs published:")
    for r in published_engine_check():
        print(
            f"  {r['label']}, {r['batch']} per rank: {r['model_tps_gpu']:,.0f} vs {r['tps_gpu']:,.0f} output tok/s/GPU "
            f"({r['model_tps_gpu'] / r['tps_gpu']:.2f}x); TPOT {r['model_tpot_s'] * 1e3:.0f} vs {r['step_s'] * 1e3:.0f} ms"
        )
    print("The engine's decode step, measured vs modelled at the same running batch per rank:")
    for r in step_residuals():
        print(
            f"  {r['label']}: {r['running']:.0f} running, measured {r['measured_s'] * 1e3:.1f} ms, model "
            f"{r['model_s'] * 1e3:.1f} ms, residual {r['residual_s'] * 1e3:+.1f} ms"
        )
    print("Llama-2-70B Offline at the submitted engines (matched) vs the frontier peak they map to:")
    for r in llama2_at_submitted_engines():
        print(
            f"  {r['id']}: measured {r['measured']:,.0f}, matched {r['matched']:,.0f} (decode batch "
            f"{r['decode_batch']:,.0f}/GPU, {r['limit'] or 'slots'}), peak {r['peak']:,.0f}"
        )
    print("Llama FP8 rows (per-tensor checkpoints), priced as block-scaled FP8 vs as mapped (per-tensor):")
    for r in fp8_granularity_check():
        print(
            f"  {r['id']}: measured {r['measured']:,.0f}, block-scaled {r['block']:,.0f} "
            f"({r['block'] / r['measured'] - 1:+.0%}), per-tensor {r['per_tensor']:,.0f} "
            f"({r['per_tensor'] / r['measured'] - 1:+.0%})"
        )


if __name__ == "__main__":
    main()
