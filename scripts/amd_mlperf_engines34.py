"""MLPerf v5.1 AMD / MangoBoost Llama-2-70B rows: is each row priced at the engine it ran, and what couples the
MangoBoost 32 / 64 x MI355X runs (issue 18; diagnosis, docs/gap_large_batch_decode.md "Round 34").

Part 1, the engines: what each submission's harness config runs (:data:`ENGINES`, vLLM 0.9.1 V0 with multi-step
scheduling except MI325X Interactive's V1) against the profile the model prices them with (``vllm-rocm``: vLLM V1's
fixed costs, graph replay), and how much of the model's decode step that profile's fixed cost is.

Part 2, one request's GPU time on each 8-GPU Offline engine (separate prompt and decode steps: OSL x decode step /
decode batch + ISL x prefill step / prefill budget) against the run's 8 / samples-per-second, and the residual per
sequence per decode step a harness-wide host cost would have to be, with the model's GEMMs and (gfx942) with
hipBLASLt's tuned FP8 GEMM times (scripts/mi355x_mxfp4_llama2.py :data:`HIPBLASLT_FP8`). The three runs share the host
(2 x EPYC 9575F) and the harness, so a host cost of V0's would be one figure across them.

Part 3, MangoBoost's scaling: per-GPU rates of AMD's 8-GPU run and MangoBoost's 32 / 64-GPU runs against the
``target_qps`` each submitter set (LoadGen issues target_qps x min_duration x 1.1 samples), the completion pattern
(min / mean / max latency) and the output length.

Run: python scripts/amd_mlperf_engines34.py   (a few seconds)
"""

from __future__ import annotations

import sys
from pathlib import Path

from jalapeno.cost.batch import Batch
from jalapeno.cost.step import step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mi355x_mxfp4_llama2 import HIPBLASLT_FP8, SHAPES  # noqa: E402

_CFG = "mlcommons/inference_results_v5.1 @965182b {}/code/llama2-70b-99/harness_llm/models/llama2-70b/{}.yaml"
#: The submitted engines, read from each harness config (``_CFG``; MangoBoost: open/AMD_MangoBoost/code/
#: llama2-70b-99/apps/mlperf/vllm_args.json ``offline_vllm_args``). Release: the systems JSON ``framework`` field
#: (open/AMD/systems/8xMI355X_2xEPYC_9575F.json: "vLLM 0.9.1.dev2+g790cf6584 ... aiter 0.1.2.dev46"; MangoBoost's
#: 32x / 64x JSON: "PyTorch 2.8.0a0+git74091a9, aiter 0.1.4.dev17", its LLMBoost image). V0: ``engine_version: sync``
#: / ``VLLM_USE_V1: 0`` or unset (vLLM 0.9's ROCm default for these options); V1: ``VLLM_USE_V1: 1``.
#: steps: ``num_scheduler_steps``; batch: ``VLLM_LLAMA2_MLPERF_MAX_TARGET_DECODE_BATCH`` (else ``max_num_seqs``)
ENGINES = {
    "mi300x Offline": {
        "cfg": _CFG.format("closed/AMD", "offline_mi300x"),
        "engine": "V0",
        "eager": True,
        "steps": 11,
        "batch": 1536,
        "tokens": 40960,
        "chunked": False,
    },
    "mi325x Offline": {
        "cfg": _CFG.format("closed/AMD", "offline_mi325x"),
        "engine": "V0",
        "eager": True,
        "steps": 7,
        "batch": 2048,
        "tokens": 65536,
        "chunked": False,
    },
    "mi355x Offline": {
        "cfg": _CFG.format("open/AMD", "offline_mi355x"),
        "engine": "V0",
        "eager": False,
        "steps": 19,
        "batch": 3072,
        "tokens": 40960,
        "chunked": False,
    },
    "mi355x MangoBoost Offline": {
        "cfg": "open/AMD_MangoBoost/code/llama2-70b-99/apps/mlperf/vllm_args.json",
        "engine": "V0",
        "eager": False,
        "steps": 19,
        "batch": 3450,
        "tokens": 65536,
        "chunked": False,
    },
    "mi300x Server": {
        "cfg": _CFG.format("closed/AMD", "server_mi300x"),
        "engine": "V0",
        "eager": True,
        "steps": 9,
        "batch": 608,
        "tokens": 40960,
        "chunked": False,
    },
    "mi300x Interactive": {
        "cfg": _CFG.format("closed/AMD", "interactive_mi300x"),
        "engine": "V0",
        "eager": True,
        "steps": 8,
        "batch": 600,
        "tokens": 40960,
        "chunked": False,
    },
    "mi325x Interactive": {
        "cfg": _CFG.format("closed/AMD", "interactive_mi325x"),
        "engine": "V1",
        "eager": True,
        "steps": 1,
        "batch": 2048,
        "tokens": 43008,
        "chunked": True,
    },
}

#: The 8-GPU Offline runs (inference_results_v5.1 @965182b {closed,open}/AMD/results/<system>/llama2-70b-99/Offline/
#: performance/run_1/mlperf_log_summary.txt: samples/s, output tok/s; MI325X: system _1): precision as mapped
OFFLINE_RUNS = {
    "mi300x": {
        "samples_per_s": 92.1544,
        "output_tok_s": 27803.9,
        "batch": 1536,
        "tokens": 40960,
        "precision": "fp8-tensor",
    },
    "mi325x": {
        "samples_per_s": 114.7,
        "output_tok_s": 34520.4,
        "batch": 2048,
        "tokens": 65536,
        "precision": "fp8-tensor",
    },
    "mi355x": {
        "samples_per_s": 333.216,
        "output_tok_s": 93045.8,
        "batch": 3072,
        "tokens": 40960,
        "precision": "w4a4-mxfp4",
    },
}
#: OpenOrca's mean input, tokens (fit/mlperf.MLPERF_LENGTHS: 222.33 over 24,576 samples)
MEAN_ISL = 222.33

#: The MI355X Offline runs (LoadGen summaries and mlperf_log_detail.txt, inference_results_v5.1 @965182b
#: open/AMD/results/8xMI355X_2xEPYC_9575F and open/AMD_MangoBoost/results/{32,64}xMI355X-PollaraCluster-EPYC9575F:
#: ``result_samples_per_second``, ``result_tokens_per_second``, ``requested_offline_expected_qps`` (target_qps),
#: ``result_{min,mean,max}_latency_ns``)
SCALE_RUNS = {
    8: {
        "who": "AMD",
        "samples_per_s": 333.216,
        "output_tok_s": 93045.8,
        "target_qps": 330,
        "lat_s": (3921.599, 3947.625, 3982.714),
    },
    32: {
        "who": "MangoBoost",
        "samples_per_s": 1221.76,
        "output_tok_s": 350820.0,
        "target_qps": 1280,
        "lat_s": (2000.786, 2049.752, 2091.977),
    },
    64: {
        "who": "MangoBoost",
        "samples_per_s": 2265.65,
        "output_tok_s": 648248.0,
        "target_qps": 2560,
        "lat_s": (35.222, 1123.670, 2245.375),
    },
}


def offline_residual(system: str, gemms: str = "model") -> dict:
    """One request's GPU time on ``system``'s 8-GPU Offline engine (s): model vs measured (8 / samples/s), and the
    residual per sequence per decode step (s) if it all sat in decode. ``gemms`` "hipblaslt" swaps the model's four
    decode GEMMs (x 80 layers) for hipBLASLt's tuned times at 2,048 rows, scaled in proportion to the batch
    (gfx942 only). Decode context: mean ISL + half the mean OSL."""
    run = OFFLINE_RUNS[system]
    osl, b, t = run["output_tok_s"] / run["samples_per_s"], run["batch"], run["tokens"]
    pricer = load_any_pricer(system, "calibrated", pricer="roofline", stack="vllm-rocm")
    batch = Batch.make(
        decode_seqs=[b, 0],
        decode_ctx=[MEAN_ISL + osl / 2, 0],
        prefill_tokens=[0, t],
        prefill_seqs=[0, int(t // MEAN_ISL)],
        prefill_ctx=0,
    )
    sc = step_cost(load_model("llama-2-70b"), pricer, Layout(tp=1), get_precision(run["precision"]), batch)
    dec, pre = (float(x) for x in sc.step_time_s)
    if gemms == "hipblaslt":
        ops = {r["op"]: r["time_s"] for r in sc.op_rows(0)}
        dec += sum(HIPBLASLT_FP8[SHAPES[o]][2048] * 1e-6 * 80 * b / 2048 - ops[o] for o in SHAPES)
    model_s = osl * dec / b + MEAN_ISL * pre / t
    measured_s = 8 / run["samples_per_s"]
    return {
        "osl": osl,
        "decode_step_s": dec,
        "prefill_step_s": pre,
        "model_s": model_s,
        "measured_s": measured_s,
        "overhead_s": float(sc.attribution_s["overhead"][0]),
        "per_seq_step_s": (measured_s - model_s) / osl,
    }


def scale_table() -> list[dict]:
    """Per MI355X Offline run: GPUs, samples/s and output tok/s per GPU, target_qps per GPU, achieved / target,
    mean output length, and mean latency / max latency (0.5 when completions are spread evenly over the run,
    ~1 when responses reach LoadGen at the end)."""
    out = []
    for gpus, r in SCALE_RUNS.items():
        lo, mean, hi = r["lat_s"]
        out.append(
            {
                "gpus": gpus,
                "who": r["who"],
                "samples_per_gpu": r["samples_per_s"] / gpus,
                "tok_per_gpu": r["output_tok_s"] / gpus,
                "target_per_gpu": r["target_qps"] / gpus,
                "achieved_of_target": r["samples_per_s"] / r["target_qps"],
                "osl": r["output_tok_s"] / r["samples_per_s"],
                "mean_of_max": mean / hi,
                "first_s": lo,
            }
        )
    return out


def main() -> None:
    print("Part 1: the submitted engines (the model prices every AMD row with the vllm-rocm profile: V1, graphs)")
    for k, e in ENGINES.items():
        print(
            f"  {k:26s} {e['engine']} eager={str(e['eager']):5s} scheduler steps {e['steps']:2d} batch "
            f"{e['batch']:5d} batched tokens {e['tokens']:6d} chunked prefill {e['chunked']}"
        )
    print(
        "Part 2: one request's GPU time on the 8-GPU Offline engines (ms); residual per sequence per decode step (us)"
    )
    for s in OFFLINE_RUNS:
        for g in ("model", "hipblaslt") if s != "mi355x" else ("model",):
            r = offline_residual(s, g)
            print(
                f"  {s} ({g} GEMMs): decode step {r['decode_step_s'] * 1e3:.1f} ms (profile overhead "
                f"{r['overhead_s'] * 1e3:.2f} ms), prefill step {r['prefill_step_s'] * 1e3:.0f} ms; request model "
                f"{r['model_s'] * 1e3:.2f} / measured {r['measured_s'] * 1e3:.2f} ms "
                f"({r['measured_s'] / r['model_s'] - 1:+.1%}); residual {r['per_seq_step_s'] * 1e6:+.1f} us"
            )
    print("Part 3: MI355X Offline per GPU against the submitters' target_qps")
    for r in scale_table():
        print(
            f"  {r['gpus']:2d} GPUs ({r['who']}): {r['samples_per_gpu']:.2f} samples/s ({r['tok_per_gpu']:,.0f} "
            f"output tok/s) per GPU, target {r['target_per_gpu']:.2f} ({r['achieved_of_target']:.1%}); OSL "
            f"{r['osl']:.1f}; first response {r['first_s']:.0f} s, mean / max latency {r['mean_of_max']:.3f}"
        )


if __name__ == "__main__":
    main()
