"""MLPerf v5.1 AMD Llama-2-70B rows: is MI355X's MXFP4 GEMM pricing the +22% over-prediction at AMD's own engine,
and what separates the MI300X and MI325X Interactive rows (issue 18; diagnosis, docs/gap_large_batch_decode.md
"Round 32").

Part 1, GEMMs: the model's four MXFP4 GEMMs of one Llama-2-70B TP1 layer (QKV 10240x8192, O 8192x8192, gate-up
57344x8192, down 8192x28672; x 80 layers) at the submitted engine's decode batch (3,072) and prefill budget (40,960
tokens), against aiter's own measured MI355X kernel times for the same shapes (:data:`AITER_A4W4`: the
``f4gemm_bf16_per1x32Fp4_BpreShuffle`` ASM kernels, which the harness selects with ``VLLM_TRITON_FP4_GEMM_USE_ASM=1``
and ``VLLM_TRITON_FP4_GEMM_BPRESHUFFLE=1``), and the model's large-M MXFP4 rate against AMD's best published one
(:data:`GLUON_MXFP4_TFLOPS`).

Part 2, per request: the GPU time of one request on the V0 engine (no chunked prefill: prompts and decodes in
separate steps) = OSL x decode step / decode batch + ISL x prefill step / prefill tokens, with the model's GEMMs and
with aiter's, against the run's 8 / 333.216 samples/s.

Part 3, MI300X vs MI325X Interactive: the two harness configs' schedulers and the runs' own TTFT / TPOT
(:data:`INTERACTIVE_RUNS`): the admission wait a V0 multi-step window adds (:func:`multistep_wait_s`).

Part 4, gfx942 per-tensor FP8 at TP1: the model's four Llama-2-70B GEMMs of a decode step on MI300X / MI325X against
hipBLASLt's tuned times from AMD's own tuning override (:data:`HIPBLASLT_FP8`), at 35 / 81 (the Interactive runs'
load per GPU), 512 and 2,048 sequences.

Run: python scripts/mi355x_mxfp4_llama2.py   (a few seconds)
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.batch import Batch
from jalapeno.cost.step import step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

#: aiter's measured MI355X MXFP4 GEMM times, µs, by (N, K) then M (ROCm/aiter ``aiter/configs/
#: a4w4_blockscale_tuned_gemm.csv`` as shipped in amd-aiter 0.1.7.post2.dev18, rows with ``cu_num`` 256 — the table
#: data/calibration/mi355x.toml's ``gemm.fp4`` fit reads): the decode batch's neighbours and the largest M
AITER_A4W4 = {
    (10240, 8192): {2880: 117.3484, 3200: 122.2919, 32768: 1088.4791},
    (8192, 8192): {2880: 96.8561, 3200: 104.4674, 32768: 858.7152},
    (57344, 8192): {2880: 567.131, 3072: 735.2449, 3200: 649.529, 32768: 6141.7014},
    (8192, 28672): {2880: 274.6138, 3200: 305.1042, 32768: 2662.8512},
}
#: the model's op names for those shapes (one Llama-2-70B layer at TP1)
SHAPES = {
    "attn.qkv_proj": (10240, 8192),
    "attn.o_proj": (8192, 8192),
    "dense_ffn.gate_up": (57344, 8192),
    "dense_ffn.down": (8192, 28672),
}
#: AMD's best published MXFP4 GEMM rate on MI355X: 5,255 TFLOP/s at 4096 x 4096 x 32768 (ROCm blog "From Naive to
#: Near-Peak: Building High-Performance GEMM Kernels with Gluon", rocm.blogs.amd.com, 2026)
GLUON_MXFP4_TFLOPS = 5255.0
#: the open/AMD 8 x MI355X run (inference_results_v5.1 @965182b open/AMD/results/8xMI355X_2xEPYC_9575F/llama2-70b-99/
#: Offline/performance/run_1/mlperf_log_summary.txt): 333.216 samples/s, 93,045.8 output tok/s over 8 GPUs; its
#: engine (open/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/offline_mi355x.yaml): decode batch 3,072,
#: max_num_batched_tokens 40,960, no chunked prefill; mean ISL 222 (the dataset), OSL 93,045.8 / 333.216
MI355X_RUN = {
    "samples_per_s": 333.216,
    "output_tok_s": 93045.8,
    "gpus": 8,
    "isl": 222.0,
    "batch": 3072,
    "prefill_tokens": 40960,
}
#: closed/AMD Llama-2-70B Interactive (inference_results_v5.1 @965182b closed/AMD/results/<system>/llama2-70b-99/
#: Interactive/performance/run_1/mlperf_log_summary.txt, mean / p99 first-token and time-to-output-token latency;
#: closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/interactive_<chip>.yaml: num_scheduler_steps, engine)
INTERACTIVE_RUNS = {
    "mi300x": {
        "ttft_mean_s": 0.201330486,
        "ttft_p99_s": 0.435976100,
        "tpot_mean_s": 0.032102490,
        "tpot_p99_s": 0.039507635,
        "scheduler_steps": 8,
        "engine": "V0 sync, no chunked prefill, 600 seqs",
    },
    "mi325x": {
        "ttft_mean_s": 0.117895427,
        "ttft_p99_s": 0.334009081,
        "tpot_mean_s": 0.035266243,
        "tpot_p99_s": 0.039838610,
        "scheduler_steps": 1,
        "engine": "V1 async, chunked prefill, 3,840 seqs",
    },
}


#: hipBLASLt's tuned per-tensor FP8 GEMM times on gfx942 (304 CUs), µs, by (N, K) then M (tokens): AMD's tuning
#: override (inference_results_v5.1 @965182b closed/AMD/code/llama2-70b-99/scripts/gemm_llama2-70b/aa0bda7b/
#: tuning_spx_1700_formatted.txt, the ``HIPBLASLT_TUNING_OVERRIDE_FILE`` of interactive_mi325x.yaml; each row's
#: benchmark columns GFLOP/s, GB/s, µs: the µs column here). Transposed as hipBLASLt states it (its m = N here)
HIPBLASLT_FP8 = {
    (10240, 8192): {35: 28.0984, 81: 33.8743, 512: 85.585, 2048: 260.361},
    (8192, 8192): {35: 22.8624, 81: 28.7806, 512: 68.3228, 2048: 212.188},
    (57344, 8192): {35: 104.314, 81: 114.172, 512: 351.107, 2048: 1388.49},
    (8192, 28672): {35: 56.3801, 81: 65.0375, 512: 222.116, 2048: 696.042},
}


def gfx942_fp8_check(system: str = "mi325x", rows=(35, 81, 512, 2048), ctx: float = 372.0) -> list[dict]:
    """The model's four per-tensor FP8 GEMMs of a Llama-2-70B TP1 decode step on ``system`` (x 80 layers, s) at
    ``rows`` sequences against hipBLASLt's tuned times (:data:`HIPBLASLT_FP8`), and the model's decode-only step."""
    model, layers = load_model("llama-2-70b"), 80
    pricer = load_any_pricer(system, "calibrated", pricer="roofline", stack="vllm-rocm")
    batch = Batch.make(decode_seqs=list(rows), decode_ctx=ctx, prefill_tokens=0, prefill_ctx=0)
    sc = step_cost(model, pricer, Layout(tp=1), get_precision("fp8-tensor"), batch)
    out = []
    for i, m in enumerate(rows):
        ops = {r["op"]: r["time_s"] for r in sc.op_rows(i)}
        out.append(
            {
                "rows": m,
                "step_s": float(sc.step_time_s[i]),
                "model_gemm_s": sum(ops[o] for o in SHAPES),
                "hipblaslt_gemm_s": sum(HIPBLASLT_FP8[SHAPES[o]][m] for o in SHAPES) * 1e-6 * layers,
            }
        )
    return out


def table_s(n: int, k: int, m: float) -> float:
    """aiter's time for an m x n x k MXFP4 GEMM, seconds: its row at m, else linear between the rows either side,
    beyond the largest row that row's rate (time proportional to m)."""
    rows = AITER_A4W4[(n, k)]
    if m in rows:
        return rows[m] * 1e-6
    ms = sorted(rows)
    if m > ms[-1]:
        return rows[ms[-1]] * 1e-6 * m / ms[-1]
    return float(np.interp(m, ms, [rows[x] for x in ms])) * 1e-6


def gemm_check(decode_ctx: float = 362.0) -> list[dict]:
    """The model's decode step (3,072 sequences at ``decode_ctx``) and prefill step (40,960 tokens of 184 prompts),
    MI355X w4a4-mxfp4 TP1, vllm-rocm stack: per step its time, its four GEMMs' time (x 80 layers) and aiter's for
    the same shapes (the decode batch's own row for gate-up, ``*_interp`` between 2,880 and 3,200 instead)."""
    model, layers = load_model("llama-2-70b"), 80
    pricer = load_any_pricer("mi355x", "calibrated", pricer="roofline", stack="vllm-rocm")
    b = MI355X_RUN["batch"]
    batch = Batch.make(
        decode_seqs=[b, 0],
        decode_ctx=[decode_ctx, 0],
        prefill_tokens=[0, MI355X_RUN["prefill_tokens"]],
        prefill_seqs=[0, 184],
        prefill_ctx=0,
    )
    sc = step_cost(model, pricer, Layout(tp=1), get_precision("w4a4-mxfp4"), batch)
    out = []
    for i, (kind, m) in enumerate((("decode", b), ("prefill", MI355X_RUN["prefill_tokens"]))):
        ops = {r["op"]: r["time_s"] for r in sc.op_rows(i)}
        model_g = sum(ops[o] for o in SHAPES)
        table_g = sum(table_s(*SHAPES[o], m) for o in SHAPES) * layers
        interp = (
            sum(
                table_s(*SHAPES[o], m)
                if o != "dense_ffn.gate_up"
                else float(np.interp(m, [2880, 3200], [567.131, 649.529])) * 1e-6
                for o in SHAPES
            )
            * layers
            if kind == "decode"
            else table_g
        )
        out.append(
            {
                "step": kind,
                "rows": m,
                "step_s": float(sc.step_time_s[i]),
                "model_gemm_s": model_g,
                "table_gemm_s": table_g,
                "table_gemm_interp_s": interp,
                "per_op": {o: (ops[o], table_s(*SHAPES[o], m) * layers) for o in SHAPES},
            }
        )
    return out


def per_request(steps: list[dict], osl: float | None = None) -> dict:
    """One request's GPU time on the separate-step engine (seconds): OSL x decode step / batch + ISL x prefill step
    / prefill tokens, with the model's GEMMs and with aiter's; and the run's measured 1 / (samples/s per GPU)."""
    run = MI355X_RUN
    osl = run["output_tok_s"] / run["samples_per_s"] if osl is None else osl
    dec, pre = steps

    def t(swap: str | None) -> float:
        d = dec["step_s"] + (dec[swap] - dec["model_gemm_s"] if swap else 0.0)
        p = pre["step_s"] + (pre["table_gemm_s"] - pre["model_gemm_s"] if swap else 0.0)
        return osl * d / dec["rows"] + run["isl"] * p / pre["rows"]

    measured = run["gpus"] / run["samples_per_s"]
    return {
        "osl": osl,
        "measured_s": measured,
        "model_s": t(None),
        "table_s": t("table_gemm_s"),
        "table_interp_s": t("table_gemm_interp_s"),
    }


def model_mxfp4_asymptote_tflops() -> float:
    """The model's large-M MXFP4 GEMM rate on MI355X, TFLOP/s: calibrated ``gemm.fp4.peak_fraction`` x the chip's
    dense FP4 peak (data/calibration/mi355x.toml, data/systems/mi355x.toml)."""
    import tomllib
    from importlib.resources import files

    cal = tomllib.loads(files("jalapeno.data").joinpath("calibration/mi355x.toml").read_text())
    sysd = tomllib.loads(files("jalapeno.data").joinpath("systems/mi355x.toml").read_text())
    return cal["parameters"]["gemm"]["fp4"]["peak_fraction"] * sysd["chip"]["peak_dense_tflops"]["fp4"]["value"]


def multistep_wait_s(steps: int, step_s: float, q: float | None = None) -> float:
    """Admission wait a V0 multi-step scheduler adds to TTFT, seconds: a prompt arriving at a uniform time within a
    window of ``steps`` decode steps waits for the window's end (vLLM V0 schedules prefills only between windows).
    ``q`` None: the mean, steps x step_s / 2; else its ``q`` quantile, q x steps x step_s. ASSUMPTION: arrivals
    uniform over the window (Poisson arrivals independent of the engine's phase); the window's steps at the mean
    TPOT."""
    return steps * step_s * (0.5 if q is None else q)


def interactive_pair() -> list[dict]:
    """Per Interactive run: measured mean / p99 TTFT and mean TPOT, its scheduler steps, and the mean and p99
    multi-step admission wait at its own mean TPOT."""
    return [
        {
            "system": s,
            **r,
            "wait_mean_s": multistep_wait_s(r["scheduler_steps"], r["tpot_mean_s"])
            if r["scheduler_steps"] > 1
            else 0.0,
            "wait_p99_s": multistep_wait_s(r["scheduler_steps"], r["tpot_mean_s"], 0.99)
            if r["scheduler_steps"] > 1
            else 0.0,
        }
        for s, r in INTERACTIVE_RUNS.items()
    ]


def main() -> None:
    steps = gemm_check()
    print("Part 1: MI355X MXFP4 GEMMs, Llama-2-70B TP1 x 80 layers (ms): model vs aiter's measured kernels")
    for s in steps:
        print(
            f"  {s['step']} step ({s['rows']:,} rows): step {s['step_s'] * 1e3:.1f} ms; GEMMs model "
            f"{s['model_gemm_s'] * 1e3:.1f}, aiter {s['table_gemm_s'] * 1e3:.1f} (x{s['table_gemm_s'] / s['model_gemm_s']:.3f})"
            + (
                f", gate-up interpolated {s['table_gemm_interp_s'] * 1e3:.1f} (x{s['table_gemm_interp_s'] / s['model_gemm_s']:.3f})"
                if s["step"] == "decode"
                else ""
            )
        )
        for o, (mt, tt) in s["per_op"].items():
            print(f"      {o:18s} model {mt * 1e3:7.2f}  aiter {tt * 1e3:7.2f}  x{tt / mt:.3f}")
    print(
        f"  model's large-M MXFP4 rate {model_mxfp4_asymptote_tflops():.0f} TFLOP/s; AMD's best published "
        f"(Gluon, 4096x4096x32768) {GLUON_MXFP4_TFLOPS:.0f}"
    )
    r = per_request(steps)
    print(
        f"Part 2: one request's GPU time (ISL {MI355X_RUN['isl']:.0f}, OSL {r['osl']:.1f}): measured "
        f"{r['measured_s'] * 1e3:.2f} ms; model {r['model_s'] * 1e3:.2f} ({r['measured_s'] / r['model_s'] - 1:+.1%} "
        f"over-prediction); aiter GEMMs {r['table_s'] * 1e3:.2f} ({r['measured_s'] / r['table_s'] - 1:+.1%}); "
        f"gate-up interpolated {r['table_interp_s'] * 1e3:.2f} ({r['measured_s'] / r['table_interp_s'] - 1:+.1%})"
    )
    print("Part 3: MLPerf Llama-2-70B Interactive, the runs' own latencies and the V0 multi-step admission wait")
    for p in interactive_pair():
        print(
            f"  {p['system']}: {p['engine']}, scheduler steps {p['scheduler_steps']}; TTFT mean / p99 "
            f"{p['ttft_mean_s'] * 1e3:.0f} / {p['ttft_p99_s'] * 1e3:.0f} ms, TPOT mean {p['tpot_mean_s'] * 1e3:.1f} ms; "
            f"admission wait mean / p99 {p['wait_mean_s'] * 1e3:.0f} / {p['wait_p99_s'] * 1e3:.0f} ms"
        )
    print("Part 4: gfx942 per-tensor FP8 GEMMs, Llama-2-70B TP1 decode x 80 layers: model vs hipBLASLt's tuned times")
    for system in ("mi300x", "mi325x"):
        for r in gfx942_fp8_check(system):
            print(
                f"  {system} {r['rows']:5d} sequences: model step {r['step_s'] * 1e3:6.1f} ms, GEMMs model "
                f"{r['model_gemm_s'] * 1e3:6.1f} / hipBLASLt {r['hipblaslt_gemm_s'] * 1e3:6.1f} ms "
                f"(x{r['model_gemm_s'] / r['hipblaslt_gemm_s']:.2f})"
            )


if __name__ == "__main__":
    main()
