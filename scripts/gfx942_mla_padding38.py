"""gfx942's 16-head MLA decode pads each query to four rows: aiter's dispatch, the padding factor, and a what-if (issue 18, round 38).

Question (mla38): round 38 (amd38, ``scripts/gfx942_fmoe_rows38.py``) found that once MI300X/MI325X's fused MoE is
priced from gfx942's own aiter rows, the SGLang-ROCm DeepSeek-R1 FP8 TP8 rows ask ~3.2x (MI325X) / ~4x (MI300X) the
MLA decode price at 16 heads per rank. Is there a published 16-head gfx942 figure, or a sourced reason?

No published gfx942 timing of the 16-head decode was found (the published gfx942 MLA figures are the 64-head FP8
kernel's, ROCm/aiter PR #3188, which the 0.140 fraction comes from). What the sources do give is the kernel that
runs and its tile, so a padding factor:

- The rows' engine passes BF16 queries over an FP8 KV cache in aiter's persistent mode: InferenceX
  ``benchmarks/dsr1_fp8_mi300x.sh`` / ``dsr1_fp8_mi325x.sh`` (SemiAnalysisAI/InferenceX@1fc5d73cdd) launch SGLang
  with ``SGLANG_AITER_MLA_PERSIST=1 --kv-cache-dtype fp8_e4m3 --attention-backend aiter``; SGLang's DeepSeek
  ``forward_absorb_core`` quantises the absorbed query to FP8 only under ``_use_aiter_gfx95`` (gfx950), on gfx942 it
  is ``torch.cat([q_nope_out, q_pe])`` (BF16), and the aiter backend hands it to ``mla_decode_fwd`` as is.
- aiter's dispatch (ROCm/aiter ``csrc/py_itfs_cu/asm_mla.cu``, the ``gqa_ratio == 16`` branch, the same at
  0990e765fb (2026-02-12, before the rows' v0.5.9 image) and at e4048607a5 (HEAD of the snapshot read); the only
  BF16-query, FP8-KV gqa-16 kernel since 7c0e15cdb7, PR #1233, 2025-11-03): for BF16
  queries over FP8 (or byte) KV in persistent mode, ``max_seqlen_q <= 4`` looks up the ``qSeqLen = 4`` kernel;
  ``hsa/gfx942/mla/mla_asm.csv`` registers for (bf16, fp8, Gqa 16, ps 1) only ``qSeqLen 4``:
  ``mla_a16w8_qh16_m16x4_n16x1_coex0_mask1_ps`` — 16 heads x 4 query rows = a 64-row M tile — while the valid rows
  are ``s_MQA = gqa_ratio * max_seqlen_q`` = 16. One decode token fills 16 of 64 rows: padding factor 4 on the
  kernel's MFMA work (the KV latent is still read once). BF16-over-BF16 persistent is padded the same way
  (``config_max_seqlen_q = 4; // padding it``); FP8 queries have a native ``qh16_qseqlen1`` kernel (no padding);
  aiter PR #2917 states the M granularity: "It is still an M=16 gemm and those extra lines will be just zeroes".

What-if priced here (nothing shipped, no stack refit): ``mla_decode.bf16.peak_fraction`` divided by the padding factor
on MI300X/MI325X (the shipped 0.140 applied to the padded work: the kernel's MFMA rate as the 64-head kernel's,
the named assumption fit/amd.py already makes, on 4x the work), alone and with gfx942's own fused-MoE fit
(``scripts/gfx942_fmoe_rows38.py``). Printed: (1) the dispatch and the factor; (2) the MLA decode op at the rows'
shapes; (3) round 33's 0.5.19 batch series and the 1k -> 8k context pairs under each; (4) with ``--validate``, the
MI300X/MI325X DeepSeek-R1 InferenceX rows (held out and all) under each, plus the v0.5.9 step-overhead rule refitted
the way ``scripts/sglang_rocm_release.py`` fits it (about 5 minutes). Run: python scripts/gfx942_mla_padding38.py [--validate]

Round 39 built the package (fit/amd.py, cost/attention.mla_decode_padding; ``fit/amd.GFX942_PACKAGE``, off as
shipped): "shipped" here is round 38's tree, restored by ``gfx942_fmoe_rows38.before_sets`` under every variant (the v0.5.9 rule too), so the
figures are those of the round-38 section.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import math
from pathlib import Path

import numpy as np

#: ROCm/aiter hsa/gfx942/mla/mla_asm.csv (e4048607a5; the same rows at 0990e765fb), Gqa 16 decode kernels:
#: (qType, kvType, ps, qSeqLen) -> kernel name
GFX942_QH16_DECODE = {
    ("bf16", "bf16", 1, 4): "mla_a16w16_qh16_m16x4_n16x1_coex0_mask1_ps",
    ("bf16", "bf16", 0, 1): "mla_dec_stage1_bf16_a16w16_subQ16_mqa16",
    ("bf16", "bf16", 0, 4): "mla_a16w16_qh16_m16x4_n16x1_coex0_mask1",
    ("bf16", "bf16", 0, 8): "mla_a16w16_qh16_m32x4_n16x1_coex0_mask1",
    ("bf16", "fp8", 1, 4): "mla_a16w8_qh16_m16x4_n16x1_coex0_mask1_ps",
    ("fp8", "fp8", 1, 1): "mla_a8w8_qh16_qseqlen1_gqaratio16_ps",
    ("fp8", "fp8", 1, 2): "mla_a8w8_qh16_qseqlen2_gqaratio16_ps",
    ("fp8", "fp8", 1, 4): "mla_a8w8_qh64_qseqlen4_gqaratio16_ps",
    ("fp8", "fp8", 0, 1): "mla_a8w8_qh16_qseqlen1_gqaratio16",
    ("fp8", "fp8", 0, 2): "mla_a8w8_qh16_qseqlen2_gqaratio16",
    ("fp8", "fp8", 0, 4): "mla_a8w8_qh64_qseqlen4_gqaratio16",
}
HEADS = 16  # DeepSeek-R1's 128 query heads over TP8 (config.json num_attention_heads 128)
SYSTEMS = ("mi300x", "mi325x")
#: measured 1k -> 8k TPOT rise at C64, v0.5.9 (scripts/mi325x_sglang_decode_shape.py PAIRS_TPOT_MS)
PAIR_RISE_MS = {"mi325x": 74.8 - 44.7, "mi300x": 85.3 - 51.3}
#: round 38's v0.5.9 step-overhead rule (data/stacks.toml; 9.16 ms with fit/amd.GFX942_PACKAGE on, round 39)
RULE_BEFORE_S = 6.60e-3


def config_qseqlen(q: str, kv: str, persistent: bool, q_len: int) -> int:
    """The ``qSeqLen`` aiter's ``asm_mla.cu`` looks up for ``gqa_ratio == 16`` on gfx942 (the branch quoted above)."""
    if q == "bf16" and kv == "bf16":
        if persistent:
            return 4 if q_len <= 4 else q_len
        return 1 if q_len == 1 else (4 if q_len <= 4 else 8)
    if q == "bf16":  # FP8 / byte KV: only a persistent kernel exists
        if not persistent:
            raise ValueError("bf16 queries over fp8 KV: aiter registers no non-persistent gqa-16 kernel on gfx942")
        return 4 if q_len <= 4 else q_len
    return q_len if q_len <= 2 else 4


def padding_factor(q: str = "bf16", kv: str = "fp8", persistent: bool = True, q_len: int = 1) -> float:
    """Query rows the dispatched kernel computes per valid row: its tile (16 heads x the looked-up qSeqLen, rounded
    to the MFMA's 16-row M) over ``s_MQA`` = 16 x ``q_len``. Raises KeyError when gfx942 registers no such kernel."""
    cq = config_qseqlen(q, kv, persistent, q_len)
    GFX942_QH16_DECODE[(q, kv, int(persistent), cq)]
    return math.ceil(HEADS * max(cq, q_len) / 16) * 16 / (HEADS * q_len)


def shape_module():
    """scripts/gfx942_fmoe_rows38.py (round 38, amd38), loaded by path: its MoE fit, series and context pairs."""
    path = Path(__file__).with_name("gfx942_fmoe_rows38.py")
    spec = importlib.util.spec_from_file_location("gfx942_fmoe_rows38", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def padded_sets(system: str = "mi325x", factor: float | None = None) -> list[str]:
    """``--set`` override: the shipped ``mla_decode.bf16.peak_fraction`` over the padding factor (on round 38's
    unpadded tile, :func:`shape_module`'s ``before_sets``)."""
    from jalapeno.cli.system_opts import system_pricer

    eff = system_pricer(system, "calibrated", [], None, "roofline").efficiency
    f = padding_factor() if factor is None else factor
    return [f"efficiency.mla_decode.bf16.peak_fraction={eff.kernel_peak('mla_decode', 'bf16') / f!r}"]


def moe_sets() -> list[str]:
    """gfx942's own fused-MoE fit (scripts/gfx942_fmoe_rows38.py) as ``--set`` overrides."""
    g = shape_module()
    p, rep = g.own_fit("mi325x")
    return g.fit_sets(p, rep["kernel_floor_s"])


def mla_op(system: str, b: int, ctx: float, sets: list[str]) -> dict:
    """The ``attn.mla_decode`` op row (times in ms) of DeepSeek-R1 FP8 TP8 EP1 decode, ``sets`` applied."""
    from jalapeno.cli.common import resolve_precision
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.layout import Layout, for_model
    from jalapeno.specs.catalog import load_model

    m = load_model("deepseek-r1")
    pr = system_pricer(system, "calibrated", shape_module().with_before(system, sets), "sglang-rocm@0.5.19", "roofline")
    sc = step_cost(
        m,
        pr,
        for_model(Layout(tp=8, dp=1, ep=1), m),
        resolve_precision(m, "fp8", "fp8"),
        Batch.make(decode_seqs=b, decode_ctx=ctx, prefill_tokens=0, prefill_ctx=0),
    )
    r = next(r for r in sc.op_rows(0) if r["op"] == "attn.mla_decode")
    return {k: (v * 1e3 if k.endswith("_s") else v) for k, v in r.items()}


def pair_rises(sets: list[str]) -> dict[str, tuple[float, float]]:
    """Per chip: the model's C64 1k -> 8k TPOT rise (step + prompt stall) and its MLA decode part, ms."""
    ps = shape_module().context_pairs({s: sets for s in SYSTEMS})
    out = {}
    for s in SYSTEMS:
        lo, hi = (next(x for x in ps if x["system"] == s and x["isl"] == i) for i in (1024, 8192))
        out[s] = (hi["step"] + hi["stall"] - lo["step"] - lo["stall"], hi["mla"] - lo["mla"])
    return out


def _stats(e: np.ndarray) -> str:
    a = np.abs(e) * 100
    return f"{np.median(a):5.1f} / {np.percentile(a, 90):5.1f} / {np.median(e) * 100:+6.1f} (n {e.size})"


def validate_whatif(variants: dict[str, list[str]], rule_s: dict[str, float]) -> None:
    """Predict the MI300X/MI325X DeepSeek-R1 InferenceX rows with ``variants``' overrides on those two chips
    (``rule_s``: a v0.5.9 step overhead per variant, else the shipped rule) and print median / p90 / bias."""
    import jalapeno.fit.table_lookup as tl
    from jalapeno.fit.heldout import split_labels
    from jalapeno.specs.system_overrides import parse_sets
    from jalapeno.fit.validate import point_release, point_stack, predict_points
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    every, _ = load_inferencex(DEFAULT_POINTS)
    split = split_labels(every)  # the stack fits' split, as validate --held-out draws it
    pts = [p for p in every if p.system in SYSTEMS and p.model == "deepseek-r1"]
    original = tl.load_any_pricer
    res = {}
    g = shape_module()
    for name, sets in variants.items():

        def patched(system, efficiency="calibrated", overrides=(), pricer="roofline", stack=None, _s=sets):
            extra = tuple(parse_sets(g.with_before(system, _s))) if system in SYSTEMS else ()
            return original(system, efficiency, tuple(overrides) + extra, pricer, stack)

        def stack_of(p, _r=rule_s.get(name, RULE_BEFORE_S)):
            st = point_stack(p)
            v = point_release(p)
            old = bool(v) and tuple(int(x) for x in v.split(".")[:3]) < (0, 5, 12)
            return dataclasses.replace(st, step_overhead_s=_r) if (_r and old) else st

        tl.load_any_pricer = patched
        try:
            res[name] = predict_points(pts, stack_of=stack_of)
        finally:
            tl.load_any_pricer = original
    for held in (True, False):
        print(f"  {'held out (split not fit)' if held else 'all rows'}: median / p90 / bias %")
        for s in SYSTEMS:
            for metric in ("throughput_per_chip", "interactivity", "ttft_s"):
                cells = []
                for name, df in res.items():
                    d = df[(df.system == s) & (df.metric == metric) & df.error.notna()]
                    if held:
                        d = d[[split.get(i) != "fit" for i in d.id]]
                    cells.append(f"{name}: {_stats(d.error.to_numpy())}")
                print(f"    {s} {metric:20s} " + " | ".join(cells))


def release_rule(sets: list[str]) -> float:
    """scripts/sglang_rocm_release.py's v0.5.9 step overhead refitted with ``sets`` on MI300X/MI325X (s)."""
    import jalapeno.fit.table_lookup as tl
    from jalapeno.specs.system_overrides import parse_sets

    spec = importlib.util.spec_from_file_location("rel", Path(__file__).with_name("sglang_rocm_release.py"))
    rel = importlib.util.module_from_spec(spec)
    original = tl.load_any_pricer
    g = shape_module()

    def patched(system, efficiency="calibrated", overrides=(), pricer="roofline", stack=None):
        extra = tuple(parse_sets(g.with_before(system, sets))) if system in SYSTEMS else ()
        return original(system, efficiency, tuple(overrides) + extra, pricer, stack)

    tl.load_any_pricer = patched
    try:
        spec.loader.exec_module(rel)
        rel.load_any_pricer = patched
        return rel.fitted_step_overhead()[1]
    finally:
        tl.load_any_pricer = original


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--validate", action="store_true", help="also predict the MI300X/MI325X DeepSeek-R1 rows (~5 min)")
    args = ap.parse_args()
    print("(1) aiter gfx942 gqa-16 decode dispatch (asm_mla.cu; hsa/gfx942/mla/mla_asm.csv)")
    for q, kv, ps in (("bf16", "fp8", True), ("bf16", "bf16", True), ("bf16", "bf16", False), ("fp8", "fp8", True)):
        cq = config_qseqlen(q, kv, ps, 1)
        print(
            f"  q {q:4s} kv {kv:4s} {'persistent' if ps else 'split-kv  '} q_len 1 -> qSeqLen {cq}: "
            f"{GFX942_QH16_DECODE[(q, kv, int(ps), cq)]}, padding x{padding_factor(q, kv, ps, 1):g}"
        )
    pad, moe = padded_sets(), moe_sets()
    print(f"  the rows' engine (SGLang, BF16 query, FP8 KV, persistent): x{padding_factor():g} -> {pad[0]}")
    print("\n(2) attn.mla_decode per step, MI325X, 8k/1k mean context 8,704 (ms): shipped | padded")
    for b in (4, 16, 64):
        s0, s1 = mla_op("mi325x", b, 8704, []), mla_op("mi325x", b, 8704, pad)
        print(
            f"  C{b:<3d} compute {s0['compute_s']:6.2f} | {s1['compute_s']:6.2f}  memory {s0['memory_s']:5.2f} | "
            f"{s1['memory_s']:5.2f}  time {s0['time_s']:6.2f} | {s1['time_s']:6.2f}"
        )
    g = shape_module()
    print("\n(3) 0.5.19 8k/1k series (MI325X): refit intercept a (and MLA multiplier k), rms")
    for name, s in (("shipped", []), ("padded", pad), ("gfx942 MoE", moe), ("gfx942 MoE + padded", moe + pad)):
        rs = g.series(s)
        fa, fk = g.refit(rs, False), g.refit(rs, True)
        print(
            f"  {name:20s} a only: rms {fa['rms']:.2f} ms, step error "
            + " ".join(f"{e:+.0%}" for e in fa["err"])
            + f" | a + k: k {fk['k']:.2f}, rms {fk['rms']:.2f} ms"
        )
    print("   C64 1k -> 8k TPOT rise, v0.5.9 (ms): model (MLA part) vs measured")
    for name, s in (("shipped", []), ("padded", pad), ("gfx942 MoE + padded", moe + pad)):
        pr = pair_rises(s)
        print(
            f"  {name:20s} "
            + "  ".join(f"{c} {pr[c][0]:.1f} ({pr[c][1]:.1f}) vs {PAIR_RISE_MS[c]:.1f}" for c in SYSTEMS)
        )
    if args.validate:
        rule = release_rule(moe + pad)
        print(
            f"\n(4) what-if on the MI300X/MI325X DeepSeek-R1 rows; v0.5.9 rule refitted under gfx942 MoE + padded: "
            f"{rule * 1e3:.2f} ms (shipped 6.60)"
        )
        validate_whatif(
            {"shipped": [], "padded": pad, "MoE+padded": moe + pad, "MoE+padded+rule": moe + pad},
            {"MoE+padded+rule": rule},
        )


if __name__ == "__main__":
    main()
