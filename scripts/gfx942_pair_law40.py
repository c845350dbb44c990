"""MI300X against MI325X on one image: the measured decode pair law leaves no room for chip-independent step time (mi325x40).

Question (issue 18, round 40): with round 39's gfx942 DeepSeek package on (``fit/amd.GFX942_PACKAGE``), MI325X's
held-out rows meet the goals but MI300X's two v0.5.9 rows go to +13% throughput. Are MI300X's rows on an older
image / aiter than MI325X's, so the package should apply per image? Or is it a memory / clock effect?

Image (read, not inferred; :data:`IMAGE_FACTS`): rows 26/28 (8k/1k) and 34/35 (1k/1k) ran one image,
``lmsysorg/sglang:v0.5.9-rocm700-mi30x``, set for both keys by one commit (SemiAnalysisAI/InferenceX f267602ff,
PR #816, 2026-02-27; "AITER v0.1.10.post3"), with the same server flags (``benchmarks/single_node/
dsr1_fp8_mi300x.sh`` / ``dsr1_fp8_mi325x.sh`` at that commit: TP8, ``--mem-fraction-static 0.8
--cuda-graph-max-bs 128 --chunked-prefill-size 131072 --num-continuous-decode-steps 4 --kv-cache-dtype fp8_e4m3
--attention-backend aiter``, ``SGLANG_USE_AITER=1 SGLANG_AITER_MLA_PERSIST=1``); the only difference is
``HSA_NO_SCRATCH_RECLAIM=1`` on MI300X when its MEC firmware is older than 177 (an RCCL memory-reclaim
workaround, not a kernel choice). So no release rule can separate the pair.

aiter's tuned fused-MoE rows (:data:`AITER_CU304_FMOE`): at ``cu_num`` 304 (MI300X/MI325X) aiter ships no tuned
fused-MoE row for the shape these runs execute — DeepSeek-R1 at MoE TP8 EP1 is 7168 x 256 per rank, 257 experts
(256 + the fused shared one), top-9 — in any release from v0.1.10.post3 (the v0.5.9 image) to v0.1.20 (the
v0.5.17-era SGLang ROCm Dockerfile pins ROCm/aiter c16d44b93a, 2026-08-18, which is in v0.1.20). The 15 rows of
84493f0e5b (PR #3951, 2026-07-23, first in v0.1.19) that round 39 fitted are DeepSeek-V3.2's EP8 shape, 7168 x 2048,
33 experts, top-9 ("TP8/EP8 (topk=9). Config data only"). Both releases therefore run this shape from aiter's
untuned defaults, on both chips: the package's MoE price is a transfer across shapes on both images, and kernel
availability by release does not separate v0.5.9 from v0.5.19 for it.

The pair law (:func:`pair_law`, :func:`fixed_time_allowed`): InferenceX publishes median TPOT on both chips. For the
two DeepSeek-R1 runs T_MI300X = 1.130 x T_MI325X + 0.8 ms (through 44.7 -> 51.3 and 74.8 -> 85.3 ms), the slope
the HBM ratio 6.0 / 5.3 = 1.132. If a step were HBM-bound time scaling by that ratio plus a chip-independent part
F, F = (1.132 T_MI325X - T_MI300X) / 0.132: -5.3 ms (1k/1k) and -4.7 ms (8k/1k) — none; gpt-oss-120b TP1 8k/1k
(rows 44/45, vLLM, another engine and model) gives +1.9 ms of a 43.5 ms step. The model's decode step
(:func:`decode_split`, cost/step.step_cost at C = 64, context ISL + OSL / 2) holds 17.6 ms of overhead (per-kernel
floors and the v0.5.9 rule), 1.5 ms of all-reduce and 1.7 / 7.0 ms of compute the same on both chips (package off);
with the package on (the padded MLA decode at aiter's MI300X-measured 0.140 of a peak the datasheets give both
chips alike, the rule at 9.16 ms) 19.3 + 1.5 + 5.1 / 26.3 ms, 60-73% of MI325X's step, so its pair ratio falls
from 1.065-1.073 to 1.034-1.050 where the rows measure 1.140-1.148. That, not an MI300X-only cost, is why MI300X's
error grows with the package: each term that moves MI325X's step into chip-independent time lowers MI300X's
predicted step with it.

The clock: AMD's max-achievable dense FP8 GEMM clocks (1,230 / 1,464 MHz, 750 / 1,000 W; ROCm blog "Measuring
Max-Achievable FLOPs - Part 2", scripts/gfx942_power.py) would scale the compute-bound and per-kernel GPU time by up
to 1.190 if MI300X's decode clock were power-limited; with F = 0 the two rows need 11-12 ms of the MI325X step at
that ratio (10.7 / 12.0 ms, :func:`clock_share_needed`). No published gfx942 decode clock was found, so this stays a lead: the
measurement that decides it is ``amd-smi metric --clock`` (or rocprof's GRBM_GUI_ACTIVE / cycle counters) on both
chips during one decode step of this recipe.

Nothing is fitted and no prediction moves.

Run: python scripts/gfx942_pair_law40.py
"""

from __future__ import annotations

import dataclasses

from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.errors import SpecError
from jalapeno.fit.amd import SUSTAINED_CLOCK_MHZ, gfx942_package_params
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack

#: datasheet HBM bandwidths MI325X / MI300X, TB/s (catalog mi325x.toml / mi300x.toml)
HBM_RATIO = 6.0 / 5.3
#: median clock under AMD's max-achievable dense FP8 GEMM, MI325X / MI300X (fit/amd.SUSTAINED_CLOCK_MHZ: ROCm blog
#: "Measuring Max-Achievable FLOPs - Part 2", 2025-02-27, Table 1: 1,464 / 1,230 MHz)
CLOCK_RATIO = SUSTAINED_CLOCK_MHZ["mi325x"] / SUSTAINED_CLOCK_MHZ["mi300x"]
#: the v0.5.9 rule refitted on the package's tree (round 39, scripts/sglang_rocm_release.py at commit e3aa504), s
PACKAGE_RULE_S = 9.16e-3

#: published median TPOT, ms, (MI325X, MI300X): src/jalapeno/data/validation/inferencex_points.csv
PAIRS = (
    ("DeepSeek-R1 FP8 SGLang v0.5.9 TP8 1k/1k C=64 (rows 34/35)", 1024, 44.7, 51.3),
    ("DeepSeek-R1 FP8 SGLang v0.5.9 TP8 8k/1k C=64 (rows 26/28)", 8192, 74.8, 85.3),
    ("gpt-oss-120b MXFP4 vLLM v0.17.0 TP1 8k/1k C=64 (rows 44/45)", None, 43.5, 49.0),
)

#: what each DeepSeek-R1 run used on each chip (SemiAnalysisAI/InferenceX f267602ff, PR #816, 2026-02-27)
IMAGE_FACTS = (
    ("image", "lmsysorg/sglang:v0.5.9-rocm700-mi30x", "lmsysorg/sglang:v0.5.9-rocm700-mi30x"),
    ("aiter (PR #816 description)", "v0.1.10.post3", "v0.1.10.post3"),
    ("server flags (dsr1_fp8_mi3x0x.sh)", "identical", "identical"),
    ("HSA_NO_SCRATCH_RECLAIM", "1 if MEC firmware < 177", "unset"),
)

#: ROCm/aiter tuned fused-MoE shapes at cu_num 304 (MI300X/MI325X) by release, (model_dim, inter_dim, experts,
#: topk) -> rows; every ``*tuned_fmoe*.csv`` under aiter/configs at the tag (git show <tag>:<file>)
AITER_CU304_FMOE = {
    "v0.1.10.post3": {},
    "v0.1.18": {},
    "v0.1.20": {(7168, 2048, 33, 9): 15, (4096, 192, 128, 8): 16, (4096, 384, 128, 8): 16},
}
#: the shape DeepSeek-R1's routed experts run at MoE TP8 EP1 (per-rank intermediate 2048 / 8; shared expert fused)
DSR1_TP8_SHAPE = (7168, 256, 257, 9)


def pair_law(t_a: tuple[float, float], t_b: tuple[float, float]) -> tuple[float, float]:
    """(slope, intercept ms) of T_MI300X = slope x T_MI325X + intercept through two runs' (MI325X, MI300X) TPOTs, ms.

    Raises:
        SpecError: the two runs have the same MI325X TPOT (no line through them).
    """
    (x1, y1), (x2, y2) = t_a, t_b
    if x1 == x2:
        raise SpecError("t_a, t_b", f"both runs have MI325X TPOT {x1} ms", "pass two runs of different step time")
    slope = (y2 - y1) / (x2 - x1)
    return slope, y1 - slope * x1


def fixed_time_allowed(t_325: float, t_300: float, ratio: float = HBM_RATIO) -> float:
    """Chip-independent time F (same units as the TPOTs) that a step of HBM-bound time scaling by ``ratio`` plus F
    needs to give both measured TPOTs: t_300 = ratio (t_325 - F) + F. Negative: the pair is further apart than the
    ratio, no chip-independent time fits.

    Raises:
        SpecError: ``ratio`` is 1 (every F fits or none).
    """
    if ratio == 1.0:
        raise SpecError("ratio", "1.0 leaves F undetermined", "pass the chips' HBM ratio (> 1)")
    return (ratio * t_325 - t_300) / (ratio - 1.0)


def clock_share_needed(t_325: float, t_300: float, hbm: float = HBM_RATIO, clock: float = CLOCK_RATIO) -> float:
    """With no chip-independent time, the part Y of MI325X's step (same units) that must scale by ``clock`` (the
    rest by ``hbm``) to give MI300X's: t_300 = hbm (t_325 - Y) + clock Y.

    Raises:
        SpecError: ``clock`` equals ``hbm``.
    """
    if clock == hbm:
        raise SpecError("clock", "equal to the HBM ratio leaves Y undetermined", "pass two different ratios")
    return (t_300 - hbm * t_325) / (clock - hbm)


def decode_split(system: str, isl: int, package: bool, osl: int = 1024, conc: int = 64) -> dict:
    """DeepSeek-R1 FP8 SGLang-ROCm v0.5.9 TP8 decode step at ``conc`` sequences, context isl + osl / 2, on
    ``system``: {"step": s, attribution: s} (cost/step.step_cost). ``package``: round 39's gfx942 package put in by
    overrides (fit/amd.gfx942_package_params) and the rule at :data:`PACKAGE_RULE_S`."""
    stack = get_stack("sglang-rocm@0.5.9")
    sets: list[str] = []
    if package:
        params, _ = gfx942_package_params()
        sets = [f"efficiency.{k}={v!r}" for k, v in params.items()]
        stack = dataclasses.replace(stack, step_overhead_s=PACKAGE_RULE_S)
    pricer = system_pricer(system, "calibrated", sets, stack, "roofline")
    model = load_model("deepseek-r1")
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=8, dp=1, ep=1), model),
        get_precision("fp8"),
        Batch.make(decode_seqs=conc, decode_ctx=isl + osl // 2),
    )
    out = {k: float(v) for k, v in sc.summary(0)["attribution_s"].items()}
    out["step"] = float(sc.step_time_s[0])
    return out


def chip_independent_s(split: dict) -> float:
    """The part of a :func:`decode_split` the model prices alike on MI300X and MI325X, s: everything but HBM time."""
    return split["step"] - split.get("hbm_bandwidth", 0.0)


def main() -> None:
    print("What the DeepSeek-R1 pair ran (MI300X | MI325X):")
    for what, a, b in IMAGE_FACTS:
        print(f"- {what}: {a} | {b}")
    print(f"\naiter tuned fused-MoE shapes at cu_num 304 (DeepSeek-R1 TP8 EP1 needs {DSR1_TP8_SHAPE}):")
    for tag, shapes in AITER_CU304_FMOE.items():
        print(f"- {tag}: {shapes or 'none'}; the TP8 shape {'present' if DSR1_TP8_SHAPE in shapes else 'absent'}")
    print(f"\nMeasured pair (median TPOT ms), HBM ratio {HBM_RATIO:.3f}, clock ratio {CLOCK_RATIO:.3f}:")
    print(
        "| run | MI325X | MI300X | ratio | chip-independent time allowed (ms) | time at the clock ratio needed (ms) |"
    )
    print("|---|---|---|---|---|---|")
    for label, _, t325, t300 in PAIRS:
        print(
            f"| {label} | {t325} | {t300} | {t300 / t325:.3f} | {fixed_time_allowed(t325, t300):+.1f} | "
            f"{clock_share_needed(t325, t300):.1f} |"
        )
    slope, icept = pair_law(PAIRS[0][2:], PAIRS[1][2:])
    print(f"DeepSeek-R1 pair law: T_MI300X = {slope:.3f} x T_MI325X {icept:+.2f} ms")
    print("\nModel decode step (C=64), ms: step / chip-independent (overhead, link, compute), MI300X/MI325X ratio:")
    print("| run | package | MI325X step | MI325X chip-independent | MI300X step | ratio | measured TPOT ratio |")
    print("|---|---|---|---|---|---|---|")
    for label, isl, t325, t300 in PAIRS[:2]:
        for package in (False, True):
            b, a = decode_split("mi325x", isl, package), decode_split("mi300x", isl, package)
            print(
                f"| {label} | {'on' if package else 'off'} | {b['step'] * 1e3:.1f} | "
                f"{chip_independent_s(b) * 1e3:.1f} ({chip_independent_s(b) / b['step']:.0%}) | "
                f"{a['step'] * 1e3:.1f} | {a['step'] / b['step']:.3f} | {t300 / t325:.3f} |"
            )


if __name__ == "__main__":
    main()
