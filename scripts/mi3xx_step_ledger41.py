"""MI325X's decode step as the model prices it, term by term: what each term scales with and which chip it was fitted or measured on (mi3xx41).

Question (issue 18, round 41): held out, InferenceX MI325X misses interactivity (9.8 / -8.4%, TPOT bias +9.2%) and
throughput bias (-6.3%); MI300X misses TTFT (20.0%). Round 40 (``scripts/gfx942_pair_law40.py``) measured, on one
image, MI300X TPOT = 1.130 x MI325X's + 0.8 ms (1.132 is the HBM ratio 6.0 / 5.3), which leaves no room for
chip-independent decode time; round 40's rocmfront40 found MI300X's median TTFT 1.35x MI325X's where the model prices
the two alike. Which part of MI325X's step is over-priced, which of its terms scale with HBM, and which of their
constants were fitted on which chip?

Part 1, the ledger (:func:`ledger`): each held-out MI325X DeepSeek-R1 row's decode step (``cost/step.step_cost``,
TP8, MoE TP8 EP1, FP8, FP8 KV, mean context ISL + OSL / 2, the row's SGLang-ROCm release) split into the model's own
attribution — routed-expert HBM time, other HBM-bound time, compute-bound time, per-kernel overhead, the step's fixed
cost, the collectives — priced on MI325X and on MI300X, with each term's MI300X/MI325X ratio and the provenance of the
constant that sets it (:func:`provenance`: read from ``data/stack_fits.toml``, ``fit/amd.py`` and ``data/stacks.toml``).

Part 2, the v0.5.19 sweep (rows 76-80, MI325X only, mean TPOT): measured TPOT less the model's share of interleaved
prefill (C x P / OSL, P the model's price of one prompt of mean length 0.9 ISL; InferenceX draws lengths from
[0.8 ISL, ISL]) against the model's decode step, so the step the rows imply is set beside the step the model prices.

Part 3, prefill (:func:`prefill_ratio`): the model's MI300X/MI325X price of one prompt against the measured
MI300X/MI325X TTFT ratio of each like-for-like pair (rows 28/26, 35/34, 45/44; one image, one day each).

Part 4, a source on what one untuned gfx942 GEMM shape costs a whole decode step (:data:`AITER_1930_TPOT_MS`):
ROCm/aiter PR #1930 (2026-01-29), Triton ``gemm_a8w8_blockscale`` tuned for N = 2112, K = 7168 (DeepSeek-R1's fused
``q_a_proj`` + ``kv_a_proj_with_mqa``, 1,536 + 576 outputs) on MI300X: SGLang DeepSeek-R1 1k/1k median TPOT before
and after. Whether the v0.5.9 image (aiter v0.1.10.post3) carries that config was not established.

Nothing is fitted and no prediction moves. Run: python scripts/mi3xx_step_ledger41.py
"""

from __future__ import annotations

import csv
import tomllib
from importlib.resources import files

from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.errors import SpecError
from jalapeno.fit import amd
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack

#: datasheet HBM bandwidths MI325X / MI300X, TB/s (catalog mi325x.toml / mi300x.toml)
HBM_RATIO = 6.0 / 5.3
#: InferenceX draws each prompt's length uniformly from [0.8 ISL, ISL] (DESIGN.md §2.4): the mean is 0.9 ISL
MEAN_ISL_FRACTION = 0.9
#: held-out MI325X DeepSeek-R1 rows (id = line of data/validation/inferencex_points.csv): (id, ISL, OSL, C, stack)
LEDGER_ROWS = (
    (77, 8192, 1024, 8, "sglang-rocm@0.5.19"),
    (79, 8192, 1024, 32, "sglang-rocm@0.5.19"),
    (34, 1024, 1024, 64, "sglang-rocm@0.5.9"),
    (26, 8192, 1024, 64, "sglang-rocm@0.5.9"),
)
#: the v0.5.19 MI325X sweep, rows 76-80 (C = 4 .. 64)
SWEEP_ROWS = (76, 77, 78, 79, 80)
#: like-for-like pairs, one image and one day each: (MI300X row, MI325X row, model, precision, TP, stack)
TTFT_PAIRS = (
    (28, 26, "deepseek-r1", "fp8", 8, "sglang-rocm@0.5.9"),
    (35, 34, "deepseek-r1", "fp8", 8, "sglang-rocm@0.5.9"),
    (45, 44, "gpt-oss-120b", "mxfp4", 1, "vllm-rocm"),
)
#: ROCm/aiter PR #1930 (benenzhu, 2026-01-29), "[Triton] Add tune config on Mi300x/Mi325x for gemm_A8W8_blockscale
#: used in Deepseek models": SGLang DeepSeek-R1, MI300X, 1k/1k, median TPOT ms (before, after) by concurrency
AITER_1930_TPOT_MS = {4: (28.76, 22.05), 8: (37.19, 25.56), 16: (47.17, 30.83), 32: (46.60, 34.30)}


def points_row(row_id: int) -> dict:
    """Row ``row_id`` of data/validation/inferencex_points.csv (the id ``validate`` prints: the file's line number).

    Raises:
        SpecError: no such row.
    """
    with (files("jalapeno") / "data/validation/inferencex_points.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not 2 <= row_id < len(rows) + 2:
        raise SpecError("row_id", f"{row_id} is not a data line of inferencex_points.csv", f"pass 2 .. {len(rows) + 1}")
    return rows[row_id - 2]


def stack_fit_systems(stack: str) -> tuple[list[str], float]:
    """(systems, kernel_launch_s) of ``stack``'s fit in data/stack_fits.toml: the chips whose rows set its constants.

    Raises:
        SpecError: the stack has no fit there.
    """
    fits = tomllib.loads((files("jalapeno") / "data/stack_fits.toml").read_text())["fits"]
    if stack not in fits:
        raise SpecError("stack", f"{stack!r} has no entry in data/stack_fits.toml", f"pass one of {sorted(fits)}")
    fit = fits[stack]
    return list(fit["report"]["systems"]), float(fit["values"].get("kernel_launch_s", float("nan")))


def provenance() -> dict[str, str]:
    """Where each ledger term's constant comes from and which chip it was fitted or measured on."""
    systems, k = stack_fit_systems("sglang-rocm")
    return {
        "routed_experts_hbm": f"fused-MoE HBM fraction borrowed from {amd.MOE_FROM['mi325x']}'s aiter tuned_fmoe fit "
        "(fit/amd.MOE_FROM; gfx950, 8 TB/s)",
        "other_hbm": f"aiter tuned GEMM tables at cu_num {amd.AITER_CU['mi325x']} (gfx942; MI300X or MI325X not recorded)",
        "compute": "few-row GEMM rule and MLA decode (gfx942 tables, the same price on both chips)",
        "per_kernel": f"sglang-rocm kernel_launch_s {k * 1e6:.1f} us, stack fit on rows of {', '.join(systems)}",
        "step_fixed": "0.5 ms (AMD efficiency set); v0.5.9: the release rule 6.60 ms, fitted on MI325X issue #890",
        "collectives": "xGMI all-reduce model (topology, not fitted)",
    }


def ledger(system: str, isl: int, osl: int, conc: int, stack_name: str) -> dict[str, float]:
    """The model's DeepSeek-R1 FP8 TP8 decode step on ``system``: {term: s} with "step" the step time, s.

    Terms: routed_experts_hbm (moe.experts' HBM part where HBM binds it), other_hbm, compute, per_kernel (the ops'
    per-kernel overheads), step_fixed (the stack's per-step cost), collectives. They sum to the attribution's total;
    the step is at most that sum (overlap)."""
    model = load_model("deepseek-r1")
    stack = get_stack(stack_name)
    pricer = system_pricer(system, "calibrated", [], stack, "roofline")
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=8, dp=1, ep=1), model),
        get_precision("fp8"),
        Batch.make(decode_seqs=conc, decode_ctx=isl + osl // 2),
    )
    att = sc.summary(0)["attribution_s"]
    ops = {r["op"]: r for r in sc.op_rows(0)}
    moe = ops["moe.experts"]
    moe_hbm = moe["memory_s"] if moe["memory_s"] >= moe["compute_s"] else 0.0
    per_kernel = sum(r["overhead_s"] for r in ops.values())
    return {
        "routed_experts_hbm": moe_hbm,
        "other_hbm": att["hbm_bandwidth"] - moe_hbm,
        "compute": att["compute"],
        "per_kernel": per_kernel,
        "step_fixed": att["overhead"] - per_kernel,
        "collectives": att["scale_up_link"] + att["scale_out_link"],
        "step": float(sc.step_time_s[0]),
    }


def prompt_s(system: str, model_name: str, precision: str, tp: int, stack_name: str, tokens: int) -> float:
    """The model's price of one prompt of ``tokens`` alone in a step on ``system`` (MoE EP1 over the TP ranks), s."""
    model = load_model(model_name)
    pricer = system_pricer(system, "calibrated", [], get_stack(stack_name), "roofline")
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=tp, dp=1, ep=1), model),
        get_precision(precision),
        Batch.make(decode_seqs=0, decode_ctx=0, prefill_tokens=tokens),
    )
    return float(sc.step_time_s[0])


def implied_step_ms(tpot_ms: float, conc: int, prompt_ms: float, osl: int) -> float:
    """The decode step a closed-loop run's TPOT implies once its interleaved prefill is taken out, ms:
    TPOT - C x P / OSL (each of the C users' prompts stalls the decode stream once per OSL tokens).

    Raises:
        SpecError: a non-positive OSL.
    """
    if osl <= 0:
        raise SpecError("osl", f"{osl} output tokens", "pass the run's output length (> 0)")
    return tpot_ms - conc * prompt_ms / osl


def chip_free_allowed_ms(t_325: float, t_300: float, ratio: float = HBM_RATIO) -> float:
    """Chip-independent time F a step needs for both measured TPOTs if the rest scales by ``ratio``:
    t_300 = ratio (t_325 - F) + F; negative when the pair is further apart than ``ratio``.

    Raises:
        SpecError: ``ratio`` is 1.
    """
    if ratio == 1.0:
        raise SpecError("ratio", "1.0 leaves F undetermined", "pass the chips' HBM ratio (> 1)")
    return (ratio * t_325 - t_300) / (ratio - 1.0)


def main() -> None:
    prov = provenance()
    terms = list(prov)
    print("Part 1. MI325X DeepSeek-R1 decode step by term, ms (MI325X | MI300X | ratio); measured mean/median TPOT:")
    for row_id, isl, osl, conc, stack in LEDGER_ROWS:
        meas = points_row(row_id)
        b, a = ledger("mi325x", isl, osl, conc, stack), ledger("mi300x", isl, osl, conc, stack)
        print(f"\nrow {row_id}: {isl}/{osl} C={conc} {stack}; measured TPOT {meas['tpot_ms']} ms ({meas['tpot_stat']})")
        print("| term | MI325X | MI300X | ratio | constant from |")
        print("|---|---|---|---|---|")
        for t in terms:
            r = a[t] / b[t] if b[t] else float("nan")
            print(f"| {t} | {b[t] * 1e3:.2f} | {a[t] * 1e3:.2f} | {r:.3f} | {prov[t]} |")
        chip_free = b["step"] - b["routed_experts_hbm"] - b["other_hbm"]
        print(
            f"| step | {b['step'] * 1e3:.2f} | {a['step'] * 1e3:.2f} | {a['step'] / b['step']:.3f} | "
            f"not HBM-scaled on MI325X: {chip_free * 1e3:.2f} ms ({chip_free / b['step']:.0%}) |"
        )
    print("\nMeasured pairs (one image): chip-independent time the TPOTs allow at the HBM ratio 1.132:")
    for r300, r325, *_ in TTFT_PAIRS:
        t300, t325 = float(points_row(r300)["tpot_ms"]), float(points_row(r325)["tpot_ms"])
        print(
            f"- rows {r300}/{r325}: {t300} / {t325} ms = {t300 / t325:.3f}; F = {chip_free_allowed_ms(t325, t300):+.1f} ms"
        )

    print(
        "\nPart 2. v0.5.19 MI325X 8k/1k sweep: measured mean TPOT less the model's interleaved prefill, against the model's step (ms):"
    )
    p_ms = prompt_s("mi325x", "deepseek-r1", "fp8", 8, "sglang-rocm@0.5.19", int(MEAN_ISL_FRACTION * 8192)) * 1e3
    print(f"one prompt of {int(MEAN_ISL_FRACTION * 8192)} tokens priced {p_ms:.1f} ms")
    print(
        "| row | C | measured TPOT | implied step | model step | implied - model | model per-kernel + step fixed | routed experts HBM |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row_id in SWEEP_ROWS:
        meas = points_row(row_id)
        conc = int(meas["conc"])
        led = ledger("mi325x", 8192, 1024, conc, "sglang-rocm@0.5.19")
        imp = implied_step_ms(float(meas["tpot_ms"]), conc, p_ms, 1024)
        print(
            f"| {row_id} | {conc} | {float(meas['tpot_ms']):.2f} | {imp:.2f} | {led['step'] * 1e3:.2f} | "
            f"{imp - led['step'] * 1e3:+.2f} | {(led['per_kernel'] + led['step_fixed']) * 1e3:.2f} | "
            f"{led['routed_experts_hbm'] * 1e3:.2f} |"
        )

    print("\nPart 3. Prefill: the model's MI300X/MI325X price of one prompt against the measured TTFT ratio:")
    print(
        "| rows | model | ISL | prompt MI325X ms | prompt MI300X ms | model ratio | measured TTFT MI300X / MI325X ms | measured ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r300, r325, model, prec, tp, stack in TTFT_PAIRS:
        m300, m325 = points_row(r300), points_row(r325)
        tokens = int(MEAN_ISL_FRACTION * int(m325["isl"]))
        p325 = prompt_s("mi325x", model, prec, tp, stack, tokens)
        p300 = prompt_s("mi300x", model, prec, tp, stack, tokens)
        t300, t325 = float(m300["ttft_ms"]), float(m325["ttft_ms"])
        print(
            f"| {r300}/{r325} | {model} TP{tp} | {m325['isl']} | {p325 * 1e3:.1f} | {p300 * 1e3:.1f} | "
            f"{p300 / p325:.3f} | {t300} / {t325} ({m325['ttft_stat']}) | {t300 / t325:.3f} |"
        )

    print("\nPart 4. ROCm/aiter PR #1930 (MI300X, SGLang DeepSeek-R1 1k/1k, median TPOT ms): one GEMM shape tuned")
    print("| C | before | after | saved |")
    print("|---|---|---|---|")
    for conc, (before, after) in AITER_1930_TPOT_MS.items():
        print(f"| {conc} | {before} | {after} | {before - after:.2f} |")


if __name__ == "__main__":
    main()
