"""MI355X gpt-oss-120b on ATOM: the routed experts run as aiter's W4A16 (BF16 x MXFP4) fused MoE, not the W4A8
the ``mxfp4`` preset prices; aiter's own tuned a16w4 table against the model's decode MoE, and what it would do to
InferenceX rows 42 / 49 (issue 18, round 39, h200int39; docs/gap_large_batch_decode.md). Nothing is fitted or written.

Which path ran: the rows (gptoss-fp4-mi355x-atom, ``openai/gpt-oss-120b``, 2026-01-14) ran ATOM 0.1.1. ROCm/ATOM
``atom/model_ops/moe.py`` @f969215aa (the last commit on 2026-01-14) ``Mxfp4MoEMethod``: ``use_triton`` only on gfx94x,
so on gfx950 a Swiglu-with-bias MoE (gpt-oss) takes ``shuffle_weight_a16w4`` / ``shuffle_scale_a16w4`` and aiter's
``fused_moe`` with ``QuantType.per_1x32`` and BF16 activations (no activation quantisation), weights and intermediate
padded to a multiple of 256 (``pad_align = 256``: 2,880 -> 3,072). aiter's CK-tile a16w4 MoE landed before the rows
(ROCm/aiter #1341, "[MI35X]cktile moe a16w4 support", 2025-11-07). The model prices gpt-oss's experts as W4A8
(``moe[fp8]``, docs/model.md §1), at the unpadded 2,880.

The measurement: ROCm/aiter ``aiter/configs/model_configs/gptoss_a16w4_tuned_fmoe.csv`` @c2b69b9b87 (#4130,
2026-07-09; MIT), gfx950 ``cu_num`` 256, model_dim 3,072, 128 experts, top-4, Swiglu, BF16 x float4_e2m1fn_x2
per_1x32, kernel ``swiglu_mxfp4_bf16_cktile``, 1-128 tokens, at inter_dim 3,072 / 1,536 / 512 (the TP1 / TP2 / TP8
slices of 2,880 after the 256 padding). ``us`` (µs a layer) is the kernel(s), not the routing sort (``moe_sorting``);
aiter's tuner routes with random scores (uniform top-4) unless ``TUNE_MOE_EXPERT_BALANCE`` is set (round-robin);
at 128 tokens the two touch 125.8 / 128 experts. Caveat: the table is six months after the image; the kernel family
is the image's, its tuned tile choice may not be.

Prints:

1. the table at TP1 beside the model's ``moe.experts`` op of a TP1 decode step (gpt-oss-120b, mi355x, the rows'
   stack ``atom-rocm``) per layer, at 1-128 sequences;
1b. aiter's CK-tile A8W4 rows of ``gptoss_fp8fp4_tuned_fmoe.csv`` (same commit; the prompt steps: aiter
   ``fused_moe`` @86be9824fe quantises MXFP4 Swiglu activations to FP8 from 512 tokens on gfx950, BF16 below) beside
   the model's ``moe.experts`` of a prompt-only TP1 step, per layer, 512-16,384 tokens;
2. for every InferenceX MI355X gpt-oss ATOM row with a measured TPOT (validation deployment, its modelled decode
   batch): the model's decode-step MoE (36 layers), the table's at the same tokens, the TPOT with the table's MoE in
   place of the model's (every other op, the prompt steps and the scheduling kept), and the interactivity error
   before / after against the measured;
3. the held-out InferenceX MI355X interactivity median / p90 / bias before / after (other rows unchanged), from a
   ``jalapeno validate --held-out --json -o`` CSV.

Usage: python scripts/mi355x_gptoss_a16w4_moe39.py [HELD_OUT_CSV]   (a few seconds)
"""

from __future__ import annotations

import csv
import sys

import numpy as np

#: aiter gptoss_a16w4_tuned_fmoe.csv @c2b69b9b87 (ROCm/aiter #4130, 2026-07-09): tokens, and ``us`` a layer by inter_dim
A16W4_SOURCE = "ROCm/aiter aiter/configs/model_configs/gptoss_a16w4_tuned_fmoe.csv @c2b69b9b87 (2026-07-09)"
A16W4_TOKENS = (1, 2, 4, 8, 16, 32, 64, 128)
A16W4_US = {
    3072: (39.1026, 48.9153, 64.1659, 97.7976, 148.1326, 234.6067, 290.5618, 319.4357),
    1536: (32.0815, 34.6309, 46.1847, 61.3954, 88.5828, 124.1052, 162.3633, 182.5234),
    512: (26.3005, 26.8119, 29.3846, 36.5994, 49.1679, 67.8354, 71.8491, 81.8598),
}
#: the same file's cktile A8W4 rows (FP8 x MXFP4, ``_tag`` flydsl_fallback: kernels ``cktile_a8w4_bm32``, the CK-tile
#: family of ROCm/aiter #1667, 2025-12-20; the file's FlyDSL rows are a later family), inter_dim 3,072: tokens, us1 + us2
A8W4_SOURCE = "ROCm/aiter aiter/configs/model_configs/gptoss_fp8fp4_tuned_fmoe.csv @c2b69b9b87 (cktile_a8w4_bm32 rows)"
A8W4_TOKENS = (512, 1024, 2048, 4096, 8192, 16384)
A8W4_US = (
    527.0715 + 117.3402,
    286.4048 + 142.6674,
    446.6267 + 181.4069,
    786.0193 + 275.9191,
    1478.4233 + 480.9397,
    2752.7649 + 908.23,
)
#: aiter fused_moe @86be9824fe (2026-01-14): MXFP4 Swiglu on gfx950 quantises activations to FP8 from this many tokens
BF16_FP8_BOUND = 512
#: gpt-oss-120b decoder layers, each with one routed-expert block (HF config ``num_hidden_layers``)
LAYERS = 36
#: ATOM pads hidden and per-rank intermediate to this multiple (atom/model_ops/moe.py @f969215aa ``pad_align``)
PAD_ALIGN = 256
#: the InferenceX MI355X gpt-oss-120b ATOM rows with a TPOT (validation ids; both TP1, C 128)
ROWS = (42, 49)


def padded(width: int) -> int:
    """``width`` rounded up to ATOM's 256 padding (2,880 -> 3,072; 1,440 -> 1,536; 360 -> 512)."""
    if width <= 0:
        raise ValueError(f"width must be positive, got {width}")
    return -(-width // PAD_ALIGN) * PAD_ALIGN


def a16w4_layer_s(tokens, inter: int = 3072) -> np.ndarray:
    """aiter's a16w4 fused-MoE time (s a layer) at ``tokens`` (array) for padded intermediate ``inter``:
    log-log interpolation between the measured rows, linear from the last two beyond 128 tokens.

    Raises:
        ValueError: an ``inter`` the table does not hold, or a token count below 1.
    """
    if inter not in A16W4_US:
        raise ValueError(f"inter {inter} not in the a16w4 table ({sorted(A16W4_US)}); pass a padded width")
    t = np.atleast_1d(np.asarray(tokens, float))
    if (t < 1).any():
        raise ValueError(f"tokens must be >= 1, got {t.min()}")
    x, y = np.log(A16W4_TOKENS), np.log(A16W4_US[inter])
    out = np.exp(np.interp(np.log(np.minimum(t, 128.0)), x, y))
    slope = (A16W4_US[inter][-1] - A16W4_US[inter][-2]) / (128 - 64)
    out = np.where(t > 128, A16W4_US[inter][-1] + slope * (t - 128), out)
    return out * 1e-6


def _rows():
    """The MI355X gpt-oss ATOM points with their stack-priced model, pricer and deployment."""
    from jalapeno.fit.mlperf_scenarios import priced_point
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    pts, _ = load_inferencex(DEFAULT_POINTS)
    want = {f"inferencex_points:{r}" for r in ROWS}
    for p in pts:
        if p.id in want and p.deployment is not None and p.measured.get("tpot_s"):
            model, pricer, dep, wl = priced_point(p)
            yield p, model, pricer, dep, wl


def per_layer_table() -> None:
    """Part 1: table vs the model's moe.experts per layer at TP1 (the rows' deployment and stack)."""
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from tpot_split import _decode_only

    p, model, pricer, dep, wl = next(_rows())
    print(
        f"1. Routed experts per layer, TP1 (µs): aiter a16w4 ({A16W4_SOURCE}) vs the model (W4A8, row {p.id.split(':')[1]}'s stack)"
    )
    print("| tokens | aiter a16w4 | model moe.experts | model / aiter |")
    print("|---|---|---|---|")
    for b in A16W4_TOKENS:
        _, moe = _decode_only(model, pricer, dep, wl, float(b))
        a = a16w4_layer_s(b)[0]
        print(f"| {b} | {a * 1e6:.1f} | {moe / LAYERS * 1e6:.1f} | {moe / LAYERS / a:.2f} |")


def prefill_table() -> None:
    """Part 1b: aiter's cktile A8W4 rows (the prompt steps: FP8 activations from 512 tokens) vs the model's
    ``moe.experts`` of a prompt-only TP1 step, per layer."""
    from jalapeno.cost.batch import Batch
    from jalapeno.cost.step import pool_step_cost

    p, model, pricer, dep, wl = next(_rows())
    lay = dep.decode.layout
    print(f"\n1b. Prompt-step routed experts per layer, TP1 (µs): {A8W4_SOURCE} vs the model")
    print("| tokens | aiter cktile A8W4 | model moe.experts | model / aiter |")
    print("|---|---|---|---|")
    for t, us in zip(A8W4_TOKENS, A8W4_US):
        b = Batch.make(prefill_tokens=np.array([float(t)]))
        sc = pool_step_cost(
            model,
            pricer,
            dep,
            lay,
            b,
        )
        moe = sum(r["time_s"] for r in sc.op_rows(0) if r["op"] == "moe.experts") / LAYERS
        print(f"| {t} | {us:.1f} | {moe * 1e6:.1f} | {moe * 1e6 / us:.2f} |")


def whatif() -> dict[str, tuple[float, float]]:
    """Part 2: per row, the TPOT with aiter's MoE in place of the model's; returns {id: (int err before, after)}."""
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from tpot_split import _decode_only

    from jalapeno.serve.point import serve_at_concurrency

    print("\n2. Rows: decode-step MoE (ms, 36 layers) and TPOT with the table's MoE (other ops, prompt steps kept)")
    print(
        "| row | ISL | C | decode batch | MoE model / aiter | TPOT meas / model / with aiter (ms) | "
        "interactivity error model / with aiter |"
    )
    print("|---|---|---|---|---|---|---|")
    out = {}
    for p, model, pricer, dep, wl in _rows():
        run = serve_at_concurrency(model, pricer, dep, wl, [int(p.concurrency)])
        b = float(run.decode_batch[0])
        _, moe = _decode_only(model, pricer, dep, wl, b)
        inter = padded(model.moe.expert_intermediate // dep.decode.layout.tp)
        tab = LAYERS * a16w4_layer_s(b, inter)[0]
        tpot, meas = float(run.tpot_s[0]), p.measured["tpot_s"]
        new = tpot - moe + tab
        e0, e1 = meas / tpot - 1, meas / new - 1  # interactivity = 1 / TPOT: error = pred / meas - 1
        out[p.id] = (e0, e1)
        print(
            f"| {p.id.split(':')[1]} | {p.isl} | {int(p.concurrency)} | {b:.1f} | {moe * 1e3:.2f} / {tab * 1e3:.2f} | "
            f"{meas * 1e3:.2f} / {tpot * 1e3:.2f} / {new * 1e3:.2f} | {e0:+.1%} / {e1:+.1%} |"
        )
    return out


def goals(path: str, moved: dict[str, tuple[float, float]]) -> None:
    """Part 3: held-out InferenceX MI355X interactivity median / p90 / bias (%), before and after."""
    errs = []
    for r in csv.DictReader(open(path)):
        if r["source"] == "inferencex" and r["system"] == "mi355x" and r["metric"] == "interactivity":
            errs.append((r["id"], float(r["error"])))
    if not errs:
        raise ValueError(f"{path}: no InferenceX MI355X interactivity rows; pass a `jalapeno validate --held-out` CSV")

    def stat(v):
        a = np.abs(v)
        return f"{np.median(a) * 100:.1f} / {np.percentile(a, 90) * 100:.1f} / {np.median(v) * 100:+.1f}"

    before = np.array([e for _, e in errs])
    after = np.array([moved[i][1] if i in moved else e for i, e in errs])
    print(
        f"\n3. Held-out InferenceX MI355X interactivity (n {len(errs)}) median / p90 / bias %: "
        f"{stat(before)} -> {stat(after)}"
    )


def main(argv: list[str]) -> None:
    per_layer_table()
    prefill_table()
    moved = whatif()
    if argv:
        goals(argv[0], moved)


if __name__ == "__main__":
    main(sys.argv[1:])
