"""MI300X against MI325X: the pair's gap split by bound, against the ratio a power-capped clock would give (powerclk26).

MI300X and MI325X are one CDNA 3 die (304 CUs, the same datasheet peaks at the 2,100 MHz boost)
with different HBM (5.3 / 6.0 TB/s) and board power (750 / 1,000 W). Under dense matrix load the
clock falls to what the board power allows: AMD's max-achievable FP8 GEMM runs at a median 1,230 MHz
on MI300X and 1,464 MHz on MI325X (ROCm blog "Measuring Max-Achievable FLOPs - Part 2", 2025-02-27,
Table 1), 1.190x apart. Memory-bound work does not reach the power limit (decode draws 137-300 W
of a 700 W H200 and no cap triggers: Ma et al., "The Illusion of Power Capping in LLM Decode",
arXiv 2605.11999, 2026; inference's token phase is memory-bound and little affected by power
capping, its prompt phase is: Patel et al., POLCA, arXiv 2308.12908 / ASPLOS 2024). So if the
power cap is the mechanism, the pair's measured speed ratio rises with the compute-bound share of
the run, from the HBM ratio 6.0 / 5.3 = 1.132 (all HBM-bound) towards 1.190 (all compute-bound),
and can exceed neither.

This script prices the steps that make up each paired run on both chips (``step_cost``, the
calibrated roofline and the point's software stack) and splits one request's time on MI300X into
compute-bound, HBM-bound, fixed (per-kernel and per-step overhead) and link time: one request =
its prompt prefilled in one step (ISL tokens) + OSL decode steps at the run's concurrency C shared
by C requests (decode context ISL + OSL / 2). It prints, per run, the model's MI325X/MI300X ratio,
the ratio the power-cap hypothesis gives (MI300X's split with compute x 1 / 1.190, HBM x 1 / 1.132,
fixed and link unchanged), the ceiling if the fixed time scaled too, and the measured ratio
(the validate figures, ``scripts/gfx942_pair.py``). Nothing is fitted and no prediction moves.

Second part: the MLPerf v5.1 Llama-2-70B pair is not one engine on two chips. The submitted harness
configs (mlcommons/inference_results_v5.1 @965182b, closed/AMD/code/llama2-70b-99.9/harness_llm/
models/llama2-70b/{offline,server}_{mi300x,mi325x}.yaml) differ in the inputs printed at the end.

Run: python scripts/gfx942_power.py
"""

from __future__ import annotations

from jalapeno.cost import roofline
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.fit.amd import SUSTAINED_CLOCK_MHZ
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack

PAIR = ("mi300x", "mi325x")
#: median clock under AMD's max-achievable dense FP8 GEMM, MHz: MI300X, MI325X (fit/amd.SUSTAINED_CLOCK_MHZ, the one
#: statement of the ROCm blog's Table 1 clocks)
MAF_CLOCK_FP8_MHZ = (SUSTAINED_CLOCK_MHZ["mi300x"], SUSTAINED_CLOCK_MHZ["mi325x"])
CLOCK_RATIO = MAF_CLOCK_FP8_MHZ[1] / MAF_CLOCK_FP8_MHZ[0]
HBM_RATIO = 6.0 / 5.3  # datasheet HBM bandwidths (catalog mi325x.toml / mi300x.toml)
#: assumption (one constant with the model's, cost/roofline.DENSE_UTILISATION since round 41): an op draws enough
#: power to be clock-limited only at >= a quarter of its format's datasheet peak, half the max-achievable utilisation
#: (FP8 MAF 1,273 of 2,615 TFLOP/s = 0.49); the few-row GEMMs and fused MoE of decode run far below it (gpt-oss: 0.6%)
#: and are priced as not throttled (the all-compute column bounds it)
DENSE_UTILISATION = roofline.DENSE_UTILISATION
#: the hypothesis is tested against the model without the clock it proposes: both chips priced at the calibration's
#: clock (Chip.dense_clock_ratio 1; with cost/roofline.POWER_CLOCK on, round 41, MI300X's pricer already runs its
#: dense ops at 0.840 of it, and the split would count the clock twice)
CALIBRATION_CLOCK = (("chip.dense_clock_ratio", 1.0),)

#: (label, model, precision, stack, tp, ep, ISL, OSL, concurrency, prompts per prefill step, measured
#: MI325X/MI300X throughput ratio, its source, MI300X/MI325X TPOT ratio the source publishes beside it or None:
#: InferenceX's mean TPOTs 51.3/44.7, 85.3/74.8, 49.0/43.5 ms; rows 51/53 ran different TP). Prompts per prefill step: 1 under InferenceX's closed loop
#: (requests end and re-arrive one at a time); MLPerf Offline fills MI300X's max_num_batched_tokens 40,960
#: with 222-token prompts (184). Measured ratios: `jalapeno validate` rows (InferenceX 2026-02-27 and 2026-03-09
#: runs; MLPerf v5.1 AMD Offline), as tabulated by scripts/gfx942_pair.py (docs/model.md §12).
RUNS = (
    (
        "InferenceX DeepSeek-R1 SGLang 1k/1k C=64",
        "deepseek-r1",
        "fp8",
        "sglang-rocm@0.5.9",
        8,
        1,
        1024,
        1024,
        64,
        1,
        342.8 / 298.7,
        "rows 34/35",
        51.3 / 44.7,
    ),
    (
        "InferenceX DeepSeek-R1 SGLang 8k/1k C=64",
        "deepseek-r1",
        "fp8",
        "sglang-rocm@0.5.9",
        8,
        1,
        8192,
        1024,
        64,
        1,
        907.6 / 790.8,
        "rows 26/28",
        85.3 / 74.8,
    ),
    (
        "InferenceX gpt-oss-120b vLLM 1k/1k C=64 (TP1)",
        "gpt-oss-120b",
        "mxfp4",
        "vllm-rocm",
        1,
        1,
        1024,
        1024,
        64,
        1,
        4521.2 / 3887.2,
        "rows 51/53 (MI325X ran TP2)",
        None,
    ),
    (
        "InferenceX gpt-oss-120b vLLM 8k/1k C=64 (TP1)",
        "gpt-oss-120b",
        "mxfp4",
        "vllm-rocm",
        1,
        1,
        8192,
        1024,
        64,
        1,
        13010.9 / 11511.9,
        "rows 44/45",
        49.0 / 43.5,
    ),
    (
        "MLPerf v5.1 Llama-2-70B Offline (TP1, decode batch 1,536)",
        "llama-2-70b",
        "fp8-tensor",
        "vllm-rocm",
        1,
        1,
        222,
        301,
        1536,
        184,
        7502.3 / 6034.1,
        "AMD 8xMI325X / 8xMI300X",
        None,
    ),
)

#: MLPerf v5.1 AMD Llama-2-70B harness configs that differ between the pair (the files named above;
#: read from the repository, not inferred): input -> (MI300X, MI325X), Offline then Server.
MLPERF_CONFIG_DIFF = (
    (
        "Offline VLLM_MLPERF_SWIZZLE_FP8_LINEAR (torchao SwizzleTensor FP8 weights, "
        "closed/AMD/setup/vllm_patches/Swizzle-fp8-linear.patch)",
        "unset (0)",
        "1",
    ),
    ("Offline VLLM_LLAMA2_MLPERF_{MIN,MAX}_TARGET_DECODE_BATCH", "1,280-1,536", "2,048"),
    ("Offline max_num_seqs / max_num_batched_tokens", "1,792 / 40,960", "2,700 / 65,536"),
    ("Offline num_scheduler_steps / engine_version", "11 / (default)", "7 / sync"),
    ("Server VLLM_MLPERF_SWIZZLE_FP8_LINEAR", "unset (0)", "1"),
    ("Server HIPBLASLT_TUNING_OVERRIDE_FILE", "none", "llama2-mi325x-server-tuning.txt"),
    ("Server decode batch target / max_num_seqs", "352-608 / 650", "512-832 / 1,024"),
)


SIDE = ("dense", "prefill", "decode_step")  # request_split's keys that are not parts of the request's time


def request_split(
    system: str,
    model_name: str,
    precision: str,
    stack: str,
    tp: int,
    ep: int,
    isl: int,
    osl: int,
    conc: int,
    prompts: int = 1,
) -> dict:
    """One request's time on ``system``, s, by attribution (compute, hbm_bandwidth, overhead, link):
    its prompt prefilled in a step of ``prompts`` prompts (its share of it) plus ``osl`` decode steps at ``conc`` sequences shared by ``conc``.
    ``prefill`` is the prompt step's time (a part of the others), ``decode_step`` one decode step's (s); ``dense`` is the part of ``compute`` in ops that run at >= :data:`DENSE_UTILISATION` of their
    format's datasheet peak (the rest: few-row GEMMs, fused MoE, attention at low utilisation)."""
    model = load_model(model_name)
    pricer = load_any_pricer(system, "calibrated", CALIBRATION_CLOCK, pricer="roofline", stack=get_stack(stack))
    lay = for_model(Layout(tp=tp, dp=1, ep=ep), model)
    prec = get_precision(precision)
    chip = pricer.system.chip
    out = {
        "compute": 0.0,
        "hbm_bandwidth": 0.0,
        "overhead": 0.0,
        "link": 0.0,
        "dense": 0.0,
        "prefill": 0.0,
        "decode_step": 0.0,
    }
    for batch, weight in (
        (Batch.make(decode_seqs=0, decode_ctx=0, prefill_tokens=isl * prompts), 1.0 / prompts),
        (Batch.make(decode_seqs=conc, decode_ctx=isl + osl // 2), osl / conc),
    ):
        sc = step_cost(model, pricer, lay, prec, batch)
        if not batch.decode_seqs.any():
            out["prefill"] = float(sc.step_time_s[0]) / prompts
        else:
            out["decode_step"] = float(sc.step_time_s[0])
        for k, v in sc.summary(0)["attribution_s"].items():
            out[k if k in out else "link"] += weight * float(v)
        for r in sc.op_rows(0):
            fmt = r["format"] if r["format"] in ("bf16", "fp8") else "fp8"
            if (
                r["bound"] == "compute"
                and r["time_s"] > 0
                and r["flop"] / r["compute_s"] / chip.peak(fmt) >= DENSE_UTILISATION
            ):
                out["dense"] += weight * min(r["compute_s"], r["time_s"])
    return out


def power_cap_ratios(split: dict) -> tuple[float, float]:
    """MI325X/MI300X speed ratio if the pair differed only by the power-capped clock and HBM, from
    MI300X's request split (s, :func:`request_split`): (clock on dense compute only, clock on all compute).
    HBM-bound time / :data:`HBM_RATIO`, clock-limited time / :data:`CLOCK_RATIO`, the rest unchanged."""
    total = sum(v for k, v in split.items() if k not in SIDE)
    rest = split["overhead"] + split["link"] + split["hbm_bandwidth"] / HBM_RATIO
    dense = total / (split["dense"] / CLOCK_RATIO + (split["compute"] - split["dense"]) + rest)
    return dense, total / (split["compute"] / CLOCK_RATIO + rest)


def main() -> None:
    print(f"MAF FP8 clock MI325X/MI300X {CLOCK_RATIO:.3f}; HBM {HBM_RATIO:.3f}\n")
    print(
        "| run | MI300X request time: dense compute / other compute / HBM / fixed / link | model ratio | "
        "power cap on dense compute | power cap on all compute | prefill share | measured ratio | "
        "decode step ratio: model / measured TPOT |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, m, p, st, tp, ep, isl, osl, c, n, meas, src, tpot in RUNS:
        a, b = (request_split(s, m, p, st, tp, ep, isl, osl, c, n) for s in PAIR)
        ta = sum(v for k, v in a.items() if k not in SIDE)
        tb = sum(v for k, v in b.items() if k not in SIDE)
        dense, allc = power_cap_ratios(a)
        parts = (a["dense"], a["compute"] - a["dense"], a["hbm_bandwidth"], a["overhead"], a["link"])
        shares = " / ".join(f"{x / ta:.0%}" for x in parts)
        print(
            f"| {label} | {shares} | {ta / tb:.3f} | {dense:.3f} | {allc:.3f} | {a['prefill'] / ta:.0%} | "
            f"{meas:.3f} ({src}) | {a['decode_step'] / b['decode_step']:.3f} / "
            f"{'-' if tpot is None else f'{tpot:.3f}'} |"
        )
    print("\nMLPerf v5.1 Llama-2-70B: harness inputs that differ (MI300X | MI325X):")
    for what, x, y in MLPERF_CONFIG_DIFF:
        print(f"- {what}: {x} | {y}")


if __name__ == "__main__":
    main()
