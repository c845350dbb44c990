"""AMD Instinct calibration on the tuned-kernel tables AMD ships in ``amd-aiter`` (``jalapeno calibrate``).

Data: ``aiter/configs/*.csv`` of the ``amd-aiter`` package (AMD, MIT licence), read through the
installed distribution without importing it (``pip install -e ".[calibrate]"``); none of its code
is used. Each row is the best kernel aiter's tuner found for one shape on one chip, with its
measured time (``us``), keyed by the chip's compute-unit count ``cu_num``:

- 304 CUs: MI300X and MI325X (the same CDNA3 die). The block-scale rows were tuned on MI300X:
  ROCm/aiter PR #365 (commit 1e8ac92007, 2025-05-01) added them as "config for 300", beside "config
  for 308" (80 CUs) and the MI355X rows, and the installed rows' shapes and times are that commit's.
  Both chips fit on them against their own peaks and HBM bandwidths, so MI325X is priced at
  MI300X's absolute GEMM times (a lower fraction of its faster HBM3E), although AMD's
  max-achievable dense FP8 GEMM is 1.19x MI300X's on it (1,519 vs 1,273 TFLOP/s at 1,464 vs
  1,230 MHz, the 1,000 W board against 750 W; ROCm blog "Measuring Max-Achievable FLOPs - Part 2")
  and its HBM 1.13x: transferring MI300X's fit with those ratios was tried and not kept, because
  MI325X's own rows then over-predict by about what MI300X's do (docs/model.md §12,
  ``scripts/gfx942_pair.py``);
- 256 CUs: MI355X (CDNA4).

The tables are read, and put in the fits' frames, by fit/aiter_tables.py (``read_table``, ``gemm_frame``,
``moe_frame``, ``per_channel_ratio``, ``AITER_CU``; split from here in round 47 and re-exported).

Tables and the formats they calibrate (the forms are calibrate.py's, fitted by its functions):

- ``a8w8_blockscale_tuned_gemm``: FP8 GEMMs with 1x128/128x128 block scales (DeepSeek's FP8
  recipe) → ``gemm[fp8_block]``; on a chip whose pre-shuffled-weight tables have rows
  (``a8w8_blockscale_bpreshuffle_tuned_gemm`` and its DeepSeek-V3 shapes,
  ``model_configs/a8w8_blockscale_bpreshuffle_tuned_gemm_dsv3``: MI355X only) those replace it,
  the fastest kernel per shape: they are the kernels the engines run for block-scale FP8 linears
  (ROCm/ATOM ``atom/model_ops/linear.py`` @7934d5e8f calls ``gemm_a8w8_blockscale_bpreshuffle``
  while ``ATOM_FP8_BLOCKSCALE_WEIGHT_PRESHUFFLE``, default 1, is set; before ROCm/ATOM d3475867c,
  2026-05-08, always), ~2x the plain kernels' median throughput at M >= 4096 (1,170-1,340 vs 623
  TFLOP/s);
- ``a8w8_bpreshuffle_tuned_gemm``: FP8 GEMMs with per-token activation x per-channel weight
  scales and pre-shuffled weights → ``gemm[fp8]``, the per-tensor / per-channel FP8 GEMM of
  checkpoints without 2-D blocks (AMD-Quark ``w_fp8_a_fp8``, the kernels AMD's MLPerf v5.1 vLLM
  runs with ``VLLM_MLPERF_SWIZZLE_FP8_LINEAR``: pre-shuffled weights) (MI355X rows). A chip without
  rows of its own (MI300X/MI325X) borrows its block-scale fit with the peak fraction scaled by the
  per-channel / block-scale throughput ratio measured on the same CDNA3 architecture
  (:func:`per_channel_ratio`: aiter's ``cu_num`` 80 rows, gfx942 with 80 CUs, which aiter names
  MI308 in ``aiter/jit/utils/chip_info.py``, the one CDNA3 part with both tables: median over the
  shapes with M >= 1024 in both, where both kernels are compute-bound); half rows and HBM fraction
  stay the block-scale fit's (assumption: no CDNA3 per-channel rows at MI300X's CU count);
- ``a4w4_blockscale_tuned_gemm``: MXFP4 GEMMs (32-element blocks, one E8M0 scale: 0.53125 B per
  element) → ``gemm[fp4]`` (MI355X only);
- ``tuned_fmoe``: fused MoE layers (BF16, and FP8 with 1x128 block scales), routed experts on one
  GPU → ``moe[bf16]``, ``moe[fp8]`` (MI355X rows only; MI300X/MI325X borrow MI355X's fit — the same aiter kernels,
  the nearest measured AMD family — rather than an NVIDIA one). aiter tunes three shapes per format
  on MI355X, two of them DeepSeek-R1's TP8 and TP4 expert slices (hidden 7168, intermediate 256 /
  512, 256 experts, top-8), at 16-1024 tokens. MI355X's own fit takes every shape and holds out the
  token counts that are odd powers of two (:data:`MOE_SPLIT`): with DeepSeek's shape held out, as on
  NVIDIA's many-shape tables, the FP8 fit rested on seven rows of one 4096 x 384 shape and missed
  DeepSeek's TP8 layer by 56% median (113 µs measured vs 175 µs at 16 tokens, 221 vs 359 µs at 64);
  fitted on all three, 14% (FP8) and 6% (BF16) median on the held-out token counts (HBM fraction
  0.46 → 0.68 FP8, 0.63 → 0.77 BF16; fused-MoE floor 20 → 36 µs; the 512-1024-token FP8 rows, whose
  per-assignment cost the HBM-bound form does not carry, stay 25-55% under). The fit MI300X/MI325X borrow keeps
  DeepSeek's shape held out (:data:`MOE_DONOR_SPLIT`): lent the all-shape fit, their end-to-end
  throughput error went 12.6% → 22.2% (MI300X) and 6.7% → 5.6% (MI325X), their own GEMM fit
  instead 8.2% and 10.7%, each above one fidelity threshold; MI355X's FP8 fused-MoE kernels
  (gfx950) are not CDNA3's, so the transfer stays as it was until CDNA3 rows at 304 CUs are measured
  (the table's gfx942 rows are at ``cu_num`` 80, aiter's MI308: 2.7-2.9 TB/s on DeepSeek's TP8 FP8
  slice, flat per touched expert from 16 to 256 tokens, and fitted poorly by this form — 40% median,
  a 143 µs floor — as a part limited by its 80 CUs, not its HBM; docs/model.md §12, AMD round 14). No
  fused-MoE row binds on compute, so a chip's own set takes its dense GEMM's peak fraction with no
  row penalty as the MoE compute curve (:func:`unbound_moe_compute`), not the dense η(m) fallback.

Serving cost per kernel: NVIDIA stacks replay CUDA graphs with programmatic dependent launch (PDL,
``TRTLLM_ENABLE_PDL``), which overlaps a kernel's prologue with its predecessor's tail, so the
NVIDIA sets keep the small ``kernel_launch_s`` assumption and report their kernel floors unused.
ROCm has no PDL counterpart, so an AMD kernel's measured floor is paid in serving: the AMD sets
set ``kernel_launch_s`` to the median floor of the tuned GEMMs (the time of a kernel doing almost
no work, taken as every kernel's fixed cost; charging it to GEMMs only was tried and predicted
the AMD points worse, docs/validation.md), bounded by the fastest kernel in the same tables (a
fixed cost cannot exceed the whole time of a kernel that also did work: the fitted intercept of a
poorly fitted format — 12.5 µs for MI355X's plain FP8 rows, 24% median error — is not a floor
when a tuned kernel completes in 2.9-3.7 µs), and ``moe_floor_s`` to the fused-MoE floor. A
modelling choice, judged on end-to-end data in docs/validation.md.

gfx942's own block-scale fused MoE (issue 18, round 39): ROCm/aiter 84493f0e5b (PR #3951) adds 15 fused-MoE rows
at ``cu_num`` 304 (MI325X) of DeepSeek's EP8 slice (7168 x 2048, 33 experts top-9, FP8 per_1x128), vendored in
data/kernels/aiter_gfx942_fmoe_ds_v3.csv (the pinned package predates them). :func:`gfx942_block_moe` fits them
(fit/kernels.fit_moe, :data:`MOE_SPLIT`) against MI325X, the chip that timed them, and MI300X/MI325X take the
fractions and floor as ``moe[fp8_block]`` (``floor_s`` with them) when :data:`GFX942_PACKAGE` is on (off as shipped): the entry only FP8 routed experts that name no
kernels of their own are priced by (specs/efficiency.Efficiency.moe_entry: DeepSeek/Kimi's block-scaled FP8 on
aiter's fused MoE). ``moe[fp8]`` and ``moe_floor_s`` stay MI355X's borrowed fit, which keeps pricing the experts
that are not aiter's block-scale kernel (gpt-oss's MXFP4 experts, vLLM's W4A16 Triton on gfx942). Named
assumption: MI300X (the same gfx942 die, 5.3 TB/s) reaches MI325X's fractions. docs/gap_large_batch_decode.md,
round 38 (amd38) and round 39.

Table clocks (issue 18, round 42; :data:`GFX942_TABLE_CLOCK`, off as shipped): aiter's 304-CU rows carry the clock of
the board whose tuner timed them (PR #2881's MI300X rows vs PR #3951's MI325X rows at the same shapes: 1.158x at
M >= 1,024, AMD's sustained clocks 1,464 / 1,230 = 1.19). Switched on, each :data:`TABLE_TIMED_ON` family's compute
fraction is scaled by the priced chip's clock over the timing board's (:func:`apply_table_clock`), the routed
block-scale experts take gfx942's own MI325X-timed HBM fraction (:func:`gfx942_expert_hbm`) and the MLA decode its
padded rows (below; round 43: with it the model's C = 64 1k -> 8k TPOT rise is the measured one on both chips).

gfx942's 16-head MLA decode pads its query rows (``mla_decode_tile_rows`` = :data:`GFX942_MLA_DECODE_TILE_ROWS`,
MI300X/MI325X, with the MoE under the same switch): aiter's dispatch (``csrc/py_itfs_cu/asm_mla.cu``, ``gqa_ratio == 16``: BF16 queries over FP8 KV
look up ``qSeqLen = 4`` for any ``max_seqlen_q <= 4``) runs ``mla_a16w8_qh16_m16x4_n16x1_coex0_mask1_ps``
(``hsa/gfx942/mla/mla_asm.csv``, the only BF16-query FP8-KV gqa-16 kernel since 7c0e15cdb7, PR #1233): 16 heads x 4
query rows, so a decode token fills 16 of 64 rows (cost/attention.mla_decode_padding: x4 MFMA work, the latent
read once). gfx950 (MI355X) takes the FP8-query ``qh16_qseqlen1`` kernel, unpadded; SGLang quantises the query
to FP8 only on gfx950 (``_use_aiter_gfx95``). docs/gap_large_batch_decode.md, round 38 (mla38).

MLA decode (``attn.mla_decode``, the weight-absorbed generation kernel): aiter ships no tuned table
for it, so its compute fraction is the best aiter publishes: ROCm/aiter PR #3188 (merged 2026-05-14,
native QH64 FP8 persistent decode, ``op_tests/test_mla_persistent.py`` over batch {1, 4, 16, 64,
128} x context {1k .. 32k} on MI300X) reports "Peak: 367 TFLOPS at b128/ctx32k", in the test's own
FLOP count 2·heads·(576 + 512) per query per cached token — the model's count (cost/attention.py) —
against MI300X's 2,614.9 TFLOPS FP8 dense (AMD datasheet): :data:`AITER_MLA_DECODE_PEAK_FRACTION`
= 0.140, set as ``mla_decode.{fp8,bf16}.peak_fraction`` on every AMD set. Assumptions, named: the
BF16-query kernels (a16w8/a16w16) reach the same fraction of the BF16 peak, and CDNA4 (MI355X,
gfx950) the same fraction of its own peaks (no MI355X figure read). The NVIDIA fit it replaces
(FlashMLA / TRT-LLM kernels, 0.52-0.58 of peak) prices a 128-head (attention data-parallel) decode
compute-bound at 4x aiter's published best. The HBM fraction stays the derived one (the test's
"TB/s" column counts bytes the same way, but no figure was read for it).

Everything else (attention, HBM fraction of non-GEMM traffic, collectives, BF16 GEMMs) keeps the
nearest measured NVIDIA family's value and its low/high band (calibrate.derived_set); the file is
``kind = "partial"``. Except the NCCL message-size ramps (:data:`NVLINK_RAMPS`): fitted per NVLink
generation on NVIDIA's tables, they are not Infinity Fabric's, so the AMD sets keep the shipped
default ramp (docs/model.md §5).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.fit.aiter_tables import (  # noqa: F401 (re-exported: split from here, round 47)
    AITER_CU,
    DISTRIBUTION,
    GEMM_TABLES,
    MOE_QUANT,
    PER_CHANNEL_RATIO_MIN_M,
    PRESHUFFLED_TABLES,
    TABLES,
    gemm_frame,
    moe_frame,
    package_version,
    per_channel_ratio,
    read_table,
)
from jalapeno.fit.kernels import FLOOR_EXCLUDED_DTYPES, fit_gemm, fit_moe, gemm_floors
from jalapeno.errors import SpecError
from jalapeno.specs.kernel_lookup import MOE_GEMM_KEY
from jalapeno.specs.efficiency import flatten_params, nest_params
from jalapeno.specs.hardware import System

#: AMD systems whose tables hold no fused-MoE rows, and the AMD system whose MoE fit they take
MOE_FROM = {"mi300x": "mi355x", "mi325x": "mi355x"}
#: gfx942 chips: their block-scale fused MoE (``moe[fp8_block]``) and padded MLA decode (module docstring)
GFX942_SYSTEMS = ("mi300x", "mi325x")
#: whether ``jalapeno calibrate`` writes that package (:func:`gfx942_package_params`) into the gfx942 sets. Off as
#: shipped: on, it takes the held-out MI325X DeepSeek-R1 rows inside the goals but MI300X's throughput to +13% and the
#: fidelity guard's MI300X throughput / MI325X and overall TTFT medians past their thresholds, a stack refit included
#: (docs/gap_large_batch_decode.md, round 39). Turning it on: True, then `jalapeno calibrate -s mi300x,mi325x` and
#: scripts/sglang_rocm_release.py (9.16 ms) — branch gfx942pkg39-on
GFX942_PACKAGE = False
#: whether ``jalapeno calibrate`` prices each gfx942 table family at the clock of the chip being priced over the clock
#: of the board that timed it (:func:`apply_table_clock`, :data:`TABLE_TIMED_ON`) and the routed block-scale experts at
#: gfx942's own MI325X-timed HBM fraction (:func:`gfx942_expert_hbm`) and the padded MLA decode (round 43,
#: :func:`gfx942_clock_params`) — together, so that the MI300X/MI325X pair keeps MI300X's step above MI325X's. Off as
#: shipped: on, with the stack refit (sglang-rocm kernel_launch_s 9.5 -> 9.75 us, its v0.5.9 rule 6.60 -> 7.92 ms),
#: every MI325X held-out interactivity / throughput goal is met (9.8 / -8.4% -> 6.0 / -2.5%; -6.3% -> +1.0% bias) but
#: MI325X's TTFT median goes 18.1% -> 20.2%, MI300X's throughput bias +2.1% -> +6.2% and the fidelity guard breaches
#: (MI325X TTFT 16.6% > 15%) (docs/gap_large_batch_decode.md, rounds 42 and 43). Turning it on: True,
#: `jalapeno calibrate -s mi300x,mi325x`, scripts/fit_stacks.py, scripts/sglang_rocm_release.py (round 43's what-if ran these)
GFX942_TABLE_CLOCK = False
#: AMD's median clock under the max-achievable dense FP8 GEMM, MHz: MI300X (750 W) 1,230, MI325X (1,000 W) 1,464
#: (ROCm blog "Measuring Max-Achievable FLOPs - Part 2", 2025-02-27, Table 1; scripts/gfx942_table_clock.py). The one
#: statement of these clocks: the scripts import it, and mi300x.toml's chip.dense_clock_ratio (0.840, a file figure
#: the system loader reads) is their ratio to 3 digits, held to it by tests/unit/test_bad_input43.py
SUSTAINED_CLOCK_MHZ = {"mi300x": 1230.0, "mi325x": 1464.0}
#: table family (flat-key prefix) -> the board whose tuner timed its rows (docs/gap_large_batch_decode.md round 42,
#: gfx942clock42: ROCm/aiter 1e8ac92007 PR #365 "config for 300" for the block-scale GEMMs and gemm.fp8's absolute
#: speed; 04427a5d8f PR #3188 "Tested on MI300X" for MLA decode; 84493f0e5b PR #3951 "gfx942 MI325X" for the fused
#: MoE). The MI355X lend (``moe.fp8``/``moe.bf16``) and the H200-derived families have no sourced lender clock: ratio 1
TABLE_TIMED_ON = {
    "gemm.fp8_block": "mi300x",
    "gemm.fp8": "mi300x",
    "mla_decode.fp8": "mi300x",
    "mla_decode.bf16": "mi300x",
    "moe.fp8_block": "mi325x",
}
#: the vendored gfx942 fused-MoE rows (ROCm/aiter 84493f0e5b, PR #3951) and the chip that timed them (the commit)
GFX942_FMOE_TABLE = Path(__file__).resolve().parents[1] / "data" / "kernels" / "aiter_gfx942_fmoe_ds_v3.csv"
GFX942_FMOE_CHIP = "mi325x"
#: query rows per sequence of gfx942's BF16-query FP8-KV 16-head MLA decode kernel: 16 heads x qSeqLen 4
#: (ROCm/aiter hsa/gfx942/mla/mla_asm.csv ``mla_a16w8_qh16_m16x4_n16x1_coex0_mask1_ps``; asm_mla.cu)
GFX942_MLA_DECODE_TILE_ROWS = 16 * 4
#: AMD systems without per-channel FP8 GEMM rows of their own → the aiter ``cu_num`` of the same
#: architecture whose per-channel / block-scale ratio their ``gemm[fp8]`` borrows (module docstring)
PER_CHANNEL_RATIO_CU = {"mi300x": 80, "mi325x": 80}
#: NVLink-generation NCCL ramps of the derived family, not carried into an AMD set (module docstring)
NVLINK_RAMPS = (
    "link_fraction",
    "link_half_bytes",
    "link_shape",
    "in_switch_fraction",
    "in_switch_half_bytes",
    "in_switch_shape",
)
#: aiter's MLA decode kernel, best published fraction of the dense peak (module docstring): ROCm/aiter
#: PR #3188, MI300X QH64 FP8 persistent decode, 367 TFLOPS at batch 128 x context 32k / 2,614.9 TFLOPS
#: (AMD Instinct MI300X datasheet, FP8 dense); applied to every AMD chip and to BF16 queries (assumed)
AITER_MLA_DECODE_TFLOPS, AITER_MLA_DECODE_ON_PEAK_TFLOPS = 367.0, 2614.9
AITER_MLA_DECODE_PEAK_FRACTION = AITER_MLA_DECODE_TFLOPS / AITER_MLA_DECODE_ON_PEAK_TFLOPS
#: the attention formats the AMD engines run MLA decode in (fp8 queries: ATOM FP8; bf16: SGLang, Quark MXFP4)
MLA_DECODE_FORMATS = ("bf16", "fp8")
#: the MoE fit's held-out split on a chip's own rows (fit/kernels.MOE_SPLITS): aiter tunes three
#: fused-MoE shapes per format on MI355X, DeepSeek's TP8/TP4 slices among them (7168 x 256 and
#: 7168 x 512, 256 experts, top-8), so every shape is fitted and alternate token counts are held out
MOE_SPLIT = "tokens"
#: the split of the fit a chip without fused-MoE rows borrows (:data:`MOE_FROM`): DeepSeek's shape
#: held out, as before issue 18's ATOM round (module docstring: chosen on end-to-end error)
MOE_DONOR_SPLIT = "shape"
#: the row count at which a fused-MoE format without a fitted compute curve reaches half its peak
#: fraction (:func:`unbound_moe_compute`): the fit's own lower bound (fit/kernels.fit_moe)
MOE_UNBOUND_HALF_ROWS = 1.0


def borrow_per_channel(params: dict, report: dict, ratio: float, shapes: int, cu: int) -> None:
    """Set, in place, ``gemm.fp8.*`` (flat keys) from the chip's block-scale fit with the peak
    fraction scaled by ``ratio`` (capped at 1), where the chip has no per-channel fit of its own."""
    if "gemm.fp8.peak_fraction" in params or "gemm.fp8_block.peak_fraction" not in params:
        return
    for f in ("half_rows", "hbm_fraction"):
        if f"gemm.fp8_block.{f}" in params:
            params[f"gemm.fp8.{f}"] = params[f"gemm.fp8_block.{f}"]
    params["gemm.fp8.peak_fraction"] = min(params["gemm.fp8_block.peak_fraction"] * ratio, 1.0)
    report.setdefault("gemm", {})["fp8_borrowed"] = {
        "from": "fp8_block",
        "peak_ratio": ratio,
        "shapes": shapes,
        "ratio_cu_num": cu,
        "source": "aiter a8w8_bpreshuffle_tuned_gemm / a8w8_blockscale_tuned_gemm, median time ratio, M >= "
        f"{PER_CHANNEL_RATIO_MIN_M} (fit/amd.per_channel_ratio)",
    }


def unbound_moe_compute(params: dict, gemm: dict, report: dict) -> None:
    """Complete, in place, the compute curve of each fused-MoE format the fit left unidentified.

    aiter's fused-MoE rows are HBM-bound at every measured token count (the fit's compute-bound
    share is below ``MOE_COMPUTE_MIN_SHARE`` for every format), so the fit emits no compute
    parameters and the step would fall back to the dense GEMM's η(m) curve — fitted on aiter's
    dense GEMMs, whose few-row tiles leave the matrix cores idle (MI355X FP8: half of the peak
    fraction at ~120 rows). Under it a fused MoE with a few rows per expert is priced compute-bound
    where the tables show it HBM-bound (gpt-oss-120b at 128 sequences: 4 rows per expert, 20 of a
    25 ms step). The fused kernel's compute is bounded from below only; it is set to the same
    chip's measured dense-GEMM peak fraction with no row penalty (``half_rows`` =
    :data:`MOE_UNBOUND_HALF_ROWS`), formats whose GEMM this chip measured; the report records it.
    Applied to a chip's own fit only: MI300X/MI325X keep the borrowed fit as it was (lent, the
    completed curve moved their vLLM gpt-oss rows from -21…+7% to +11…+35%; docs/model.md §12).

    Args:
        params: the chip's nested parameters (``{"moe": {fmt: {...}}, "gemm": ...}``), completed in place.
        gemm: the chip's fitted ``gemm`` parameters.
        report: the MoE fit's report; each completed format gets a ``compute`` note.
    """
    for fmt, rep in report.get("formats", {}).items():
        have = params.get("moe", {}).get(fmt)
        if have is None:
            continue
        peak = gemm.get(MOE_GEMM_KEY.get(fmt, fmt), {}).get("peak_fraction")
        if "peak_fraction" in have or peak is None:
            continue
        have.update(peak_fraction=peak, half_rows=MOE_UNBOUND_HALF_ROWS)
        rep["compute"] = "unbound: the dense GEMM's peak fraction, no row penalty (fit/amd.unbound_moe_compute)"


def fit_amd(system: System, tables: dict[str, pd.DataFrame], moe_split: str = MOE_SPLIT) -> tuple[dict, dict]:
    """(parameters, report) of one AMD chip from aiter tables (see the module docstring).

    ``moe_split``: the fused-MoE fit's held-out split (fit/kernels.MOE_SPLITS): :data:`MOE_SPLIT`
    for the chip's own set, :data:`MOE_DONOR_SPLIT` for the fit a chip of :data:`MOE_FROM` borrows.
    """
    cu = AITER_CU[system.name]
    params, report = {}, {"cu_num": cu}
    g = gemm_frame(tables, cu)
    if len(g):
        p_gemm, r_gemm = fit_gemm(g, system)
        params.update(p_gemm)
        report["gemm"] = r_gemm
        floors = gemm_floors(r_gemm)
        fastest = float(g[~g.gemm_dtype.isin(FLOOR_EXCLUDED_DTYPES)].latency.min()) / 1e3
        if floors:  # the median fitted floor, bounded by the fastest measured kernel (module docstring)
            params["kernel_launch_s"] = min(float(np.median(floors)), fastest)
            report["fastest_kernel_s"] = fastest
    if "tuned_fmoe" in tables:
        m = moe_frame(tables["tuned_fmoe"], cu)
        if len(m):
            p_moe, r_moe = fit_moe(m, system, split=moe_split)
            params.update(p_moe)
            if r_moe.get("rows"):
                params["moe_floor_s"] = r_moe["kernel_floor_s"]
            report["moe"] = r_moe
    return params, report


def gfx942_block_moe(rows: pd.DataFrame | None = None) -> tuple[dict, dict]:
    """(flat ``moe.fp8_block.*`` parameters, report) of gfx942's own block-scale fused MoE (module docstring).

    ``rows``: aiter ``tuned_fmoe`` columns (default: data/kernels/aiter_gfx942_fmoe_ds_v3.csv), fitted by
    fit/kernels.fit_moe against :data:`GFX942_FMOE_CHIP` with the :data:`MOE_SPLIT` split; the fitted floor
    becomes the entry's ``floor_s``.

    Raises:
        SpecError: the rows hold no FP8 per_1x128 row at ``cu_num`` 304.
    """
    from jalapeno.specs.catalog import load_system

    rows = pd.read_csv(GFX942_FMOE_TABLE) if rows is None else rows
    cu = AITER_CU[GFX942_FMOE_CHIP]
    m = moe_frame(rows, cu)
    m = m[m.moe_dtype == "fp8_block"]
    if not len(m):
        raise SpecError(
            str(GFX942_FMOE_TABLE),
            f"no FP8 per_1x128 fused-MoE row at cu_num {cu}",
            "restore the rows of ROCm/aiter 84493f0e5b (data/kernels/README.md)",
        )
    p, rep = fit_moe(m, load_system(GFX942_FMOE_CHIP), split=MOE_SPLIT)
    out = {f"moe.fp8_block.{k}": v for k, v in p["moe"]["fp8"].items()}
    out["moe.fp8_block.floor_s"] = rep["kernel_floor_s"]
    rep.update(
        fitted_on=GFX942_FMOE_CHIP,
        source="ROCm/aiter 84493f0e5b (PR #3951) a8w8_blockscale_tuned_fmoe_ds_v3, "
        "cu_num 304; data/kernels/aiter_gfx942_fmoe_ds_v3.csv",
    )
    return out, rep


def table_clock_ratio(family: str, chip: str) -> float:
    """Compute-rate factor of table family ``family`` (a :data:`TABLE_TIMED_ON` key) priced on ``chip``: the chip's
    sustained clock over the timing board's (:data:`SUSTAINED_CLOCK_MHZ`); 1 where either clock is unsourced.

    >>> round(table_clock_ratio("gemm.fp8_block", "mi325x"), 4), round(table_clock_ratio("moe.fp8_block", "mi300x"), 4)
    (1.1902, 0.8402)
    """
    timer = TABLE_TIMED_ON.get(family)
    if timer not in SUSTAINED_CLOCK_MHZ or chip not in SUSTAINED_CLOCK_MHZ:
        return 1.0
    return SUSTAINED_CLOCK_MHZ[chip] / SUSTAINED_CLOCK_MHZ[timer]


def apply_table_clock(params: dict, report: dict, chip: str) -> None:
    """Scale, in place, each :data:`TABLE_TIMED_ON` family's ``peak_fraction`` (flat keys) by
    :func:`table_clock_ratio` (capped at 1): a compute-bound kernel's rate follows the clock its board holds it at.
    HBM fractions and ``kernel_launch_s`` are left as fitted: the one gfx942 family tuned on both boards at the same
    shapes (ROCm/aiter PR #2881 vs #3951) shows the clock ratio (1.158 at M >= 1,024) on compute-bound rows only, and
    1.02-1.06 at M <= 64 (latency- and HBM-bound), below both the clock (1.19) and the HBM ratio (1.13)."""
    notes = {}
    for family in TABLE_TIMED_ON:
        key, r = f"{family}.peak_fraction", table_clock_ratio(family, chip)
        if key in params and r != 1.0:
            params[key] = min(1.0, params[key] * r)
            notes[family] = {"clock_ratio": r, "timed_on": TABLE_TIMED_ON[family]}
    report["table_clock"] = {
        "families": notes,
        "source": "fit/amd.SUSTAINED_CLOCK_MHZ (AMD MAF blog) and TABLE_TIMED_ON (aiter commits)",
    }


def gfx942_expert_hbm() -> dict:
    """``{"moe.fp8_block.hbm_fraction": f}``: the HBM fraction of :func:`gfx942_block_moe`'s fit (MI325X-timed rows,
    ~0.735), the rate gfx942's routed block-scale experts reach in the fused MoE SGLang-ROCm runs. Only the HBM
    side: the rows are HBM-bound at every token count, so the entry's compute side falls back as ``moe[fp8]``'s
    does (specs/efficiency.Efficiency.moe_entry) to the clock-scaled dense block-scale fit. Named assumption (round
    39): MI300X reaches the same fraction of its own HBM (an HBM fraction carries no clock: :func:`apply_table_clock`).
    """
    return {"moe.fp8_block.hbm_fraction": gfx942_block_moe()[0]["moe.fp8_block.hbm_fraction"]}


def gfx942_clock_params() -> dict:
    """Flat parameters :data:`GFX942_TABLE_CLOCK` writes into the gfx942 sets besides the clocks: the routed experts
    at :func:`gfx942_expert_hbm`'s rate and the padded MLA decode the rows' kernel runs, ``mla_decode_tile_rows`` =
    :data:`GFX942_MLA_DECODE_TILE_ROWS` (16 heads x qSeqLen 4; round 43: the per-user decode cost round 42 found
    missing once the experts ran at their own rate). Raises: SpecError, as :func:`gfx942_block_moe`."""
    return {**gfx942_expert_hbm(), "mla_decode_tile_rows": float(GFX942_MLA_DECODE_TILE_ROWS)}


def gfx942_package_params() -> tuple[dict, dict]:
    """(flat parameters, report) of gfx942's DeepSeek package (module docstring): :func:`gfx942_block_moe`'s
    ``moe.fp8_block.*`` and ``mla_decode_tile_rows`` = :data:`GFX942_MLA_DECODE_TILE_ROWS`. What
    :func:`amd_overlay` writes into the :data:`GFX942_SYSTEMS` sets when :data:`GFX942_PACKAGE` is on; as
    ``--set efficiency.<key>=<value>`` overrides, the same prices on any set."""
    params, rep = gfx942_block_moe()
    params["mla_decode_tile_rows"] = float(GFX942_MLA_DECODE_TILE_ROWS)
    return params, {
        "moe_fp8_block": rep,
        "tile_rows_source": "ROCm/aiter hsa/gfx942/mla/mla_asm.csv "
        "mla_a16w8_qh16_m16x4_n16x1_coex0_mask1_ps; asm_mla.cu gqa_ratio 16",
    }


def amd_overlay(
    name: str,
    system: System,
    derived: dict,
    moe_source: dict | None = None,
    tables: dict[str, pd.DataFrame] | None = None,
) -> dict:
    """An AMD calibration set: the derived set with aiter-measured parameters on top.

    Args:
        derived: calibrate.derived_set(name, ...) (parameters, low/high, provenance).
        moe_source: the fitted parameters of the AMD system named in :data:`MOE_FROM`, if any.
        tables: aiter tables by name (default: read from the installed package).
    """
    if tables is None:
        tables = {n: read_table(n) for n in TABLES}
    # parameters one level deep (flatten_params: ``moe.fp8.hbm_fraction``), nested again at the end
    params, report = fit_amd(system, tables)
    if report.get("moe", {}).get("rows"):  # the chip's own fused-MoE fit (a borrowed one keeps its donor's)
        unbound_moe_compute(params, params.get("gemm", {}), report["moe"])
    params = flatten_params(params)
    if name in PER_CHANNEL_RATIO_CU:  # no per-channel FP8 rows of its own: the CDNA3 ratio on its block fit
        cu = PER_CHANNEL_RATIO_CU[name]
        borrow_per_channel(params, report, *per_channel_ratio(tables, cu), cu)
    if "moe_floor_s" not in params and moe_source:
        borrowed = {k: v for k, v in flatten_params(moe_source).items() if k.startswith(("moe.", "moe_"))}
        params.update(borrowed)
        report["moe"] = {"rows": 0, "borrowed_from": MOE_FROM.get(name, "")}
    # MLA decode: aiter's published best (module docstring), not an NVIDIA kernel's
    for f in MLA_DECODE_FORMATS:
        params[f"mla_decode.{f}.peak_fraction"] = AITER_MLA_DECODE_PEAK_FRACTION
    report["mla_decode"] = {
        "peak_fraction": AITER_MLA_DECODE_PEAK_FRACTION,
        "source": "ROCm/aiter PR #3188: MI300X QH64 FP8 persistent MLA decode, "
        "367 TFLOPS at b128/ctx32k over 2614.9 TFLOPS FP8 dense",
    }
    if name in GFX942_SYSTEMS and GFX942_PACKAGE:  # gfx942's own block-scale fused MoE and padded MLA decode
        package, rep = gfx942_package_params()
        params.update(package)
        report["moe_fp8_block"] = rep["moe_fp8_block"]
        report["mla_decode"]["tile_rows_source"] = rep["tile_rows_source"]
    if name in GFX942_SYSTEMS and GFX942_TABLE_CLOCK:  # each family at this chip's clock; experts at gfx942's rate
        if not GFX942_PACKAGE:
            params.update(gfx942_clock_params())
        apply_table_clock(params, report, name)
    measured = set(params)
    base = {k: v for k, v in flatten_params(derived["parameters"]).items() if k not in NVLINK_RAMPS}
    # an unmeasured MoE parameter falls back to the AMD GEMM fit (token passes: to none — aiter's
    # single-GPU fused-MoE rows fold them into the HBM fraction)
    for k in [k for k in base if k.startswith("moe.") and k not in measured]:
        del base[k]
    # the serial k loop is the TensorRT-LLM block-scale kernel's (fit/kernels.SERIAL_K_KEYS), not aiter's
    for k in [k for k in base if k.endswith(".k_block_s")]:
        del base[k]
    band = {
        b: nest_params({k: v for k, v in flatten_params(derived.get(b, {})).items() if k in base and k not in measured})
        for b in ("low", "high")
    }
    out = {
        "system": name,
        "parameters": nest_params({**base, **params}),
        **band,
        "provenance": {
            "package": f"amd-aiter {package_version()}",
            "tables": [n for n in TABLES if n in tables],
            "measured": sorted(measured),
            **derived["provenance"],
        },
        "report": report,
    }
    return out
