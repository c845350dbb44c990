"""MI325X's measured DeepSeek-R1 decode TPOT is linear in concurrency; the model's step is concave (mi325dec42).

Question (issue 18, round 42): held out, InferenceX MI325X TPOT is priced slow (bias +9.2%; interactivity 9.8 / -8.4%,
throughput bias -6.3%). Round 41 (``scripts/mi3xx_step_ledger41.py``) found the model's step rising too fast at C = 8-32.
Which priced term has the wrong shape in the batch, and which gfx942 kernel figures say so?

Part 1 (:func:`decompose`): the v0.5.19 MI325X 8k/1k sweep (rows 76-80, C = 4 .. 64, mean TPOT, one image) by least
squares on three shapes: a fixed cost F, a per-user cost u (interleaved prefill, attention over the user's context: both
linear in C) and the routed experts' weight bytes B(C), the expected distinct experts a step touches
(:func:`touched_experts`) x 58 MoE layers x one TP8 expert slice (:data:`EXPERT_SLICE_BYTES`). The same for the model's
own TPOT (its decode step plus C x P / OSL of interleaved prefill, as round 41's ledger). Uniform routing and DeepSeek's
measured popularity (specs/routing.py, sigma 1.03) both.

Part 2 (:func:`per_touched_expert_us`): what one touched TP8 expert slice costs in gfx942's own fused-MoE rows and what
the model prices: aiter ``tuned_fmoe`` at ``cu_num`` 80 (gfx942, DeepSeek's TP8 slice 7168 x 256, 256 experts, top-8,
FP8 per_1x128; read from the installed amd-aiter when present), aiter PR #3951's MI325X-timed EP8 slice (7168 x 2048,
33 experts, top-9; data/kernels/aiter_gfx942_fmoe_ds_v3.csv) as the HBM rate it reaches, against the model's
``moe.experts`` on MI325X (max of its HBM and compute prices) per touched expert and layer.

Nothing is fitted into the model and no prediction moves. Run: python scripts/mi325x_decode_linear42.py
"""

from __future__ import annotations

import csv
from importlib.resources import files

import numpy as np
import pandas as pd

from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.errors import SpecError
from jalapeno.fit import amd
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.routing import MEASURED_ROUTING_SIGMA, expert_popularity
from jalapeno.specs.stacks import get_stack

#: the v0.5.19 MI325X DeepSeek-R1 8k/1k sweep (id = line of data/validation/inferencex_points.csv)
SWEEP_ROWS = (76, 77, 78, 79, 80)
#: DeepSeek-R1 (models/deepseek-r1.toml): 256 routed experts, top-8, 58 MoE layers, hidden 7168, expert width 2048
EXPERTS, TOP_K, MOE_LAYERS = 256, 8, 58
#: one expert's weights on one of 8 TP ranks, FP8 (1 B per element; the 1x128 block scales left out):
#: gate + up + down = 3 x 7168 x 2048 / 8
EXPERT_SLICE_BYTES = 3 * 7168 * 2048 / 8
#: MI325X HBM3E, TB/s (AMD datasheet; catalog mi325x.toml)
MI325X_HBM_TBS = 6.0
#: InferenceX draws each prompt's length uniformly from [0.8 ISL, ISL] (DESIGN.md §2.4): the mean is 0.9 ISL
MEAN_ISL_FRACTION = 0.9


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


def touched_experts(tokens: float, experts: int = EXPERTS, top_k: int = TOP_K, sigma: float = 0.0) -> float:
    """Expected distinct routed experts ``tokens`` tokens touch in one layer: sum over experts of
    1 - (1 - min(k p_e, 1))^T, p_e the popularity share (uniform 1/E at ``sigma`` 0: E (1 - (1 - k/E)^T), exact for
    top-k without replacement; else specs/routing.expert_popularity).

    Raises:
        SpecError: negative tokens, or top_k not in 1 .. experts.
    """
    if tokens < 0:
        raise SpecError("tokens", f"{tokens} tokens", "pass a token count >= 0")
    if not 1 <= top_k <= experts:
        raise SpecError("top_k", f"{top_k} of {experts} experts", "pass 1 <= top_k <= experts")
    p = np.full(experts, 1.0 / experts) if sigma == 0.0 else expert_popularity(experts, sigma)
    return float(np.sum(1.0 - (1.0 - np.minimum(top_k * p, 1.0)) ** tokens))


def expert_gb(conc: np.ndarray, sigma: float = 0.0) -> np.ndarray:
    """Routed-expert weight bytes one decode step of ``conc`` sequences reads on one TP8 rank, GB (1e9 B)."""
    d = np.array([touched_experts(float(c), sigma=sigma) for c in conc])
    return d * MOE_LAYERS * EXPERT_SLICE_BYTES / 1e9


def decompose(
    conc: np.ndarray, tpot_ms: np.ndarray, gb: np.ndarray | None = None, hbm_tbs: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Least squares of TPOT (ms) on F + u C (+ b GB when ``gb`` is given; with ``hbm_tbs`` the experts' time
    GB / hbm_tbs is taken out first and only F, u are solved): (coefficients [F ms, (b ms/GB,) u ms/user],
    residuals ms).

    Raises:
        SpecError: fewer points than unknowns, or ``hbm_tbs`` without ``gb``.
    """
    conc, y = np.asarray(conc, float), np.asarray(tpot_ms, float)
    if hbm_tbs is not None and gb is None:
        raise SpecError("gb", "hbm_tbs given without the experts' bytes", "pass gb with hbm_tbs")
    if hbm_tbs is not None:
        y = y - np.asarray(gb) / hbm_tbs
        cols = [np.ones_like(conc), conc]
    else:
        cols = [np.ones_like(conc), conc] if gb is None else [np.ones_like(conc), np.asarray(gb), conc]
    a = np.column_stack(cols)
    if len(y) <= a.shape[1]:
        raise SpecError("tpot_ms", f"{len(y)} points for {a.shape[1]} unknowns", "pass more points than unknowns")
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return coef, y - a @ coef


def per_touched_expert_us(rows: pd.DataFrame, slice_bytes: float) -> pd.DataFrame:
    """aiter ``tuned_fmoe`` rows (token, expert, topk, us) → µs per touched expert (uniform routing, the tuner's
    random top-k) and the HBM rate that implies for ``slice_bytes`` per expert, TB/s."""
    out = rows[["token", "expert", "topk", "us"]].copy()
    out["touched"] = [touched_experts(t, int(e), int(k)) for t, e, k in zip(out.token, out.expert, out.topk)]
    out["us_per_expert"] = out.us / out.touched
    out["tb_s"] = slice_bytes / (out.us_per_expert * 1e-6) / 1e12
    return out


def model_tpot_ms(conc: int, isl: int, osl: int, stack: str, prompt_ms: float) -> tuple[float, dict]:
    """The model's MI325X DeepSeek-R1 FP8 TP8 decode step at ``conc`` sequences of mean context ISL + OSL / 2
    plus C x P / OSL of interleaved prefill, ms; and moe.experts' op row."""
    model = load_model("deepseek-r1")
    pricer = system_pricer("mi325x", "calibrated", [], get_stack(stack), "roofline")
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=8, dp=1, ep=1), model),
        get_precision("fp8"),
        Batch.make(decode_seqs=conc, decode_ctx=isl + osl // 2),
    )
    moe = next(r for r in sc.op_rows(0) if r["op"] == "moe.experts")
    return float(sc.step_time_s[0]) * 1e3 + conc * prompt_ms / osl, moe


def prompt_ms(tokens: int, stack: str) -> float:
    """The model's price of one DeepSeek-R1 prompt of ``tokens`` alone in a step on MI325X (TP8), ms."""
    model = load_model("deepseek-r1")
    pricer = system_pricer("mi325x", "calibrated", [], get_stack(stack), "roofline")
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=8, dp=1, ep=1), model),
        get_precision("fp8"),
        Batch.make(decode_seqs=0, decode_ctx=0, prefill_tokens=tokens),
    )
    return float(sc.step_time_s[0]) * 1e3


def _fmt(v: np.ndarray) -> str:
    return " / ".join(f"{x:+.2f}" for x in v)


def main() -> None:
    stack = "sglang-rocm@0.5.19"
    rows = [points_row(i) for i in SWEEP_ROWS]
    conc = np.array([float(r["conc"]) for r in rows])
    meas = np.array([float(r["tpot_ms"]) for r in rows])
    p_ms = prompt_ms(int(MEAN_ISL_FRACTION * 8192), stack)
    priced = [model_tpot_ms(int(c), 8192, 1024, stack, p_ms) for c in conc]
    model = np.array([t for t, _ in priced])
    print(f"Part 1. v0.5.19 MI325X 8k/1k sweep, rows {SWEEP_ROWS[0]}-{SWEEP_ROWS[-1]}, C = {conc.astype(int).tolist()}")
    print(
        f"measured mean TPOT ms {meas.round(2).tolist()}; model (step + C x {p_ms:.1f} ms / 1024) "
        f"{model.round(2).tolist()}"
    )
    print(
        "added ms per added user, measured:",
        (np.diff(meas) / np.diff(conc)).round(3).tolist(),
        "model:",
        (np.diff(model) / np.diff(conc)).round(3).tolist(),
    )
    print("| TPOT | routing | form | F ms | b ms/GB | u ms/user | residuals ms (C = 4 .. 64) |")
    print("|---|---|---|---|---|---|---|")
    for name, y in (("measured", meas), ("model", model)):
        coef, res = decompose(conc, y)
        print(f"| {name} | - | F + u C | {coef[0]:.2f} | - | {coef[1]:.3f} | {_fmt(res)} |")
        for sigma in (0.0, MEASURED_ROUTING_SIGMA):
            gb = expert_gb(conc, sigma)
            label = "uniform" if sigma == 0.0 else f"sigma {sigma}"
            coef, res = decompose(conc, y, gb)
            tbs = f" ({1 / coef[1]:.2f} TB/s)" if coef[1] > 0 else " (negative)"
            print(
                f"| {name} | {label} | F + b B(C) + u C | {coef[0]:.2f} | {coef[1]:.3f}{tbs} | {coef[2]:.3f} | {_fmt(res)} |"
            )
            for frac in (0.456, amd.gfx942_block_moe()[0]["moe.fp8_block.hbm_fraction"]):
                coef, res = decompose(conc, y, gb, hbm_tbs=frac * MI325X_HBM_TBS)
                print(
                    f"| {name} | {label} | F + B(C) / ({frac:.3f} x 6.0 TB/s) + u C | {coef[0]:.2f} | fixed | "
                    f"{coef[1]:.3f} | {_fmt(res)} |"
                )

    print("\nPart 2. One touched expert and layer: gfx942's own fused-MoE rows against the model's MI325X price")
    ep8 = per_touched_expert_us(pd.read_csv(amd.GFX942_FMOE_TABLE), 3 * 7168 * 2048)
    print("aiter PR #3951, MI325X (cu_num 304), EP8 slice 7168 x 2048 (44.0 MB an expert):")
    print("| tokens | touched | us | us / expert | TB/s | of 6.0 |")
    print("|---|---|---|---|---|---|")
    for r in ep8[ep8.token <= 256].itertuples():
        print(
            f"| {r.token} | {r.touched:.1f} | {r.us:.1f} | {r.us_per_expert:.2f} | {r.tb_s:.2f} | "
            f"{r.tb_s / MI325X_HBM_TBS:.2f} |"
        )
    try:
        t = amd.read_table("tuned_fmoe")
    except Exception as e:  # noqa: BLE001 - the calibrate extra is optional for this part
        print(f"(amd-aiter not readable, cu_num 80 rows skipped: {e})")
    else:
        tp8 = t[(t.cu_num == 80) & (t.model_dim == 7168) & (t.inter_dim == 256) & (t.q_type == "QuantType.per_1x128")]
        tp8 = per_touched_expert_us(
            tp8.groupby("token", as_index=False).agg(
                expert=("expert", "first"), topk=("topk", "first"), us=("us", "median")
            ),
            EXPERT_SLICE_BYTES,
        )
        print(
            "\naiter tuned_fmoe, gfx942 at cu_num 80 (aiter's MI308), DeepSeek's TP8 slice 7168 x 256 "
            f"({EXPERT_SLICE_BYTES / 1e6:.2f} MB an expert; median of the duplicate rows):"
        )
        print("| tokens | touched | us | us / expert | TB/s |")
        print("|---|---|---|---|---|")
        for r in tp8.itertuples():
            print(f"| {r.token} | {r.touched:.1f} | {r.us:.1f} | {r.us_per_expert:.2f} | {r.tb_s:.2f} |")
    print("\nthe model's moe.experts on MI325X (TP8, v0.5.19), per touched expert and layer:")
    print("| C | touched | HBM-side us | compute-side us | priced us |")
    print("|---|---|---|---|---|")
    for c, (_, moe) in zip(conc, priced):
        n = touched_experts(float(c)) * MOE_LAYERS
        print(
            f"| {int(c)} | {n / MOE_LAYERS:.1f} | {moe['memory_s'] / n * 1e6:.2f} | {moe['compute_s'] / n * 1e6:.2f} | "
            f"{max(moe['memory_s'], moe['compute_s']) / n * 1e6:.2f} |"
        )
    print(
        f"HBM-bound at the MI325X rows' rate ({EXPERT_SLICE_BYTES / 1e6:.2f} MB at "
        f"{ep8[ep8.token.between(16, 64)].tb_s.median():.2f} TB/s, their 16-64-token median): "
        f"{EXPERT_SLICE_BYTES / (ep8[ep8.token.between(16, 64)].tb_s.median() * 1e12) * 1e6:.2f} us"
    )


if __name__ == "__main__":
    main()
