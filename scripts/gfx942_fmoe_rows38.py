"""gfx942's own fused-MoE timings (aiter, MI325X) against the MoE price MI300X/MI325X borrow from MI355X (issue 18, round 38).

Question (amd38): the held-out MI325X SGLang-ROCm DeepSeek-R1 FP8 rows run too slow at C8-C32 and too fast at C64
(round 33, ``scripts/mi325x_sglang_decode_shape.py``), which left open whether gfx942's routed-expert block streams
near the chip's bandwidth (not MI355X's 0.456, which MI300X/MI325X borrow: ``[report.moe] rows = 0`` in
data/calibration/mi325x.toml). Round 33 said a gfx942 fused-MoE timing would decide it.

Source: ROCm/aiter commit 84493f0e5b (PR #3951, 2026-07-23, "gfx942 MI325X: tuned a8w8 blockscale GEMM + FMoE
configs for DSv3.2 TP8"), ``aiter/configs/model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv``: 15 rows at
``cu_num`` 304 (MI325X per the commit message), DeepSeek-V3's expert-parallel slice (hidden 7,168, intermediate
2,048, 32 local routed experts + the shared one = 33, top-9), FP8 with 1x128 block scales (per_1x128), tokens
1-16,384, the tuned kernel's time ``us``. The amd-aiter version pinned for ``jalapeno calibrate``
(0.1.7.post2.dev18) predates the commit, so the rows are quoted here (:data:`GFX942_FMOE_US`) as data.

Printed: (1) the rows against the MoE price the shipped MI325X / MI300X sets give them (the same op table
fit/kernels.moe_table builds for ``jalapeno calibrate``); (2) fit/kernels.fit_moe on the rows (the ``tokens`` split
MI355X's own fit uses: odd powers of two held out) and its held-out error; (3) the MI325X sglang-rocm@0.5.19 8k/1k
series (C4-C64) split as round 33 splits it, with the routed-expert parameters of (2) put in by ``--set``: the
implied measured decode step against the model's, and an intercept (a fixed cost a stack refit would move) plus
the MLA decode multiplier k refitted on the series, as round 33's what-if; (4) the 0.5.9 C64 context pairs.
Nothing is written. Run: python scripts/gfx942_fmoe_rows38.py

Round 39 built the package (fit/amd.py: MI300X/MI325X's ``moe[fp8_block]`` from these rows, now vendored in
data/kernels/aiter_gfx942_fmoe_ds_v3.csv, and the padded MLA decode; behind ``fit/amd.GFX942_PACKAGE``, off as
shipped): "shipped" here is round 38's tree, restored by :func:`before_sets` on top of the calibrated set whichever
way the switch stands, so the figures are those of the round-38 section.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

#: ROCm/aiter@84493f0e5b aiter/configs/model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv, cu_num 304:
#: tokens → tuned fused-MoE time (µs); model_dim 7168, inter_dim 2048, expert 33, topk 9, QuantType.per_1x128
GFX942_FMOE_US = {
    1: 99.2100,
    2: 169.6815,
    4: 220.8912,
    8: 327.9080,
    16: 354.3030,
    32: 355.3431,
    64: 363.4635,
    128: 407.8101,
    256: 470.7513,
    512: 671.5514,
    1024: 1091.0448,
    2048: 1857.1914,
    4096: 3549.0971,
    8192: 6928.7099,
    16384: 13796.9001,
}
SHAPE = {"hidden_size": 7168, "inter_size": 2048, "num_experts": 33, "topk": 9}
#: aiter ``cu_num`` of the rows (MI300X/MI325X have 304 CUs; AMD datasheets)
CU_NUM = 304


def shape_module():
    """scripts/mi325x_sglang_decode_shape.py (round 33), loaded by path: its measured series and split."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import mi325x_sglang_decode_shape

    return mi325x_sglang_decode_shape


def before_sets(system: str = "mi325x") -> list[str]:
    """``--set`` overrides that price ``system`` as round 38's tree did: ``moe[fp8_block]`` at the borrowed
    ``moe[fp8]`` price and floor, and an MLA decode tile of 16 rows (no padding at 16 heads per rank)."""
    from jalapeno.cli.system_opts import system_pricer

    e = system_pricer(system, "calibrated", [], None, "roofline").efficiency
    vals = {
        "peak_fraction": e.moe_peak("fp8"),
        "half_rows": e.moe_half("fp8"),
        "hbm_fraction": e.moe_hbm("fp8"),
        "floor_s": e.moe_floor_s,
    }
    return [f"efficiency.moe.fp8_block.{k}={v!r}" for k, v in vals.items() if v is not None] + [
        "efficiency.mla_decode_tile_rows=16.0"
    ]


def with_before(system: str, sets: list[str]) -> list[str]:
    """:func:`before_sets` of ``system`` with ``sets`` on top (a key in both takes ``sets``' value)."""
    out = {x.split("=", 1)[0]: x for x in before_sets(system)}
    out.update({x.split("=", 1)[0]: x for x in sets})
    return list(out.values())


def fmoe_frame() -> pd.DataFrame:
    """The quoted rows in aiter's ``tuned_fmoe`` columns (what fit/amd.moe_frame reads)."""
    toks = sorted(GFX942_FMOE_US)
    return pd.DataFrame(
        {
            "cu_num": CU_NUM,
            "token": toks,
            "model_dim": SHAPE["hidden_size"],
            "inter_dim": SHAPE["inter_size"],
            "expert": SHAPE["num_experts"],
            "topk": SHAPE["topk"],
            "q_type": "QuantType.per_1x128",
            "us": [GFX942_FMOE_US[t] for t in toks],
        }
    )


def rows_table() -> pd.DataFrame:
    """fit/kernels.moe_rows of the quoted rows (touched experts, bytes, FLOPs per row; time ``t`` in s)."""
    from jalapeno.fit.amd import moe_frame
    from jalapeno.fit.kernels import moe_rows

    return moe_rows(moe_frame(fmoe_frame(), CU_NUM))


def shipped_price_us(system: str, r: pd.DataFrame) -> np.ndarray:
    """Round 38's calibrated set's (:func:`before_sets`) routed-expert time (µs) of each row of ``r``."""
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.fit.kernels import moe_table

    pr = system_pricer(system, "calibrated", before_sets(system), None, "roofline")
    return np.asarray(pr.op_times(moe_table(r, "fp8")).time_s[0]) * 1e6


def own_fit(system: str = "mi325x") -> tuple[dict, dict]:
    """fit/kernels.fit_moe on the quoted rows, ``tokens`` split (fit/amd.MOE_SPLIT): (moe.fp8 parameters, report)."""
    from jalapeno.fit.amd import MOE_SPLIT, moe_frame
    from jalapeno.fit.kernels import fit_moe
    from jalapeno.specs.catalog import load_system

    params, report = fit_moe(moe_frame(fmoe_frame(), CU_NUM), load_system(system), split=MOE_SPLIT)
    return params["moe"]["fp8"], report


def fit_sets(p: dict, floor_s: float) -> list[str]:
    """``--set`` overrides that put a fused-MoE fit into a system's block-scale FP8 entry (``moe[fp8_block]``)."""
    return [f"efficiency.moe.fp8_block.{k}={v!r}" for k, v in p.items()] + [
        f"efficiency.moe.fp8_block.floor_s={floor_s!r}"
    ]


def model_step(
    b: int,
    ctx: float,
    sets: list[str],
    prefill_tokens: int = 0,
    system: str = "mi325x",
    stack: str = "sglang-rocm@0.5.19",
) -> tuple[dict, float]:
    """The model's op times (ms) and step time (ms) of DeepSeek-R1 FP8 TP8 EP1, ``sets`` applied on round 38's set."""
    from jalapeno.cli.common import resolve_precision
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.layout import Layout, for_model
    from jalapeno.specs.catalog import load_model

    m = load_model("deepseek-r1")
    pr = system_pricer(system, "calibrated", with_before(system, sets), stack, "roofline")
    sc = step_cost(
        m,
        pr,
        for_model(Layout(tp=8, dp=1, ep=1), m),
        resolve_precision(m, "fp8", "fp8"),
        Batch.make(decode_seqs=b, decode_ctx=ctx, prefill_tokens=prefill_tokens, prefill_ctx=0),
    )
    return {r["op"]: r["time_s"] * 1e3 for r in sc.op_rows(0)}, float(np.atleast_1d(sc.step_time_s)[0]) * 1e3


def series(sets: list[str]) -> list[dict]:
    """Round 33's split of the 0.5.19 8k/1k series under ``sets``: per C the model step, its routed-expert and
    MLA decode parts, and the implied measured step (measured TPOT less C · P / OSL, P the model's prompt)."""
    s33 = shape_module()
    ctx = s33.ISL + s33.OSL / 2
    out = []
    for c, tpot in s33.MEASURED_TPOT_MS.items():
        ops, step = model_step(c, ctx, sets)
        prompt = model_step(c, ctx, sets, s33.ISL)[1] - step
        moe, mla = ops.get("moe.experts", 0.0), ops.get("attn.mla_decode", 0.0)
        out.append(
            {
                "C": c,
                "step": step,
                "moe": moe,
                "mla": mla,
                "rest": step - moe - mla,
                "meas_step": tpot - c * prompt / s33.OSL,
            }
        )
    return out


def refit(rs: list[dict], with_k: bool) -> dict:
    """Least squares on the implied measured step: intercept a (and MLA multiplier k when ``with_k``); rms in ms."""
    y = np.array([r["meas_step"] for r in rs])
    moe, mla, rest = (np.array([r[k] for r in rs]) for k in ("moe", "mla", "rest"))
    if with_k:
        a = np.c_[np.ones_like(mla), mla]
        coef, *_ = np.linalg.lstsq(a, y - rest - moe, rcond=None)
        fit = coef[0] + rest + moe + coef[1] * mla
        return {
            "a": float(coef[0]),
            "k": float(coef[1]),
            "rms": float(np.sqrt(np.mean((fit - y) ** 2))),
            "err": fit / y - 1,
        }
    a = float(np.mean(y - rest - moe - mla))
    fit = a + rest + moe + mla
    return {"a": a, "k": 1.0, "rms": float(np.sqrt(np.mean((fit - y) ** 2))), "err": fit / y - 1}


def context_pairs(sets_by_system: dict[str, list[str]]) -> list[dict]:
    """C64 sglang-rocm@0.5.9 at 1k/1k and 8k/1k per chip: model step, MLA part, prompt stall, measured TPOT (ms)."""
    s33 = shape_module()
    out = []
    for (system, isl), tpot in s33.PAIRS_TPOT_MS.items():
        sets, ctx, stack = sets_by_system[system], isl + s33.OSL / 2, "sglang-rocm@0.5.9"
        ops, step = model_step(64, ctx, sets, system=system, stack=stack)
        stall = 64 * (model_step(64, ctx, sets, isl, system=system, stack=stack)[1] - step) / s33.OSL
        out.append(
            {
                "system": system,
                "isl": isl,
                "step": step,
                "mla": ops.get("attn.mla_decode", 0.0),
                "stall": stall,
                "meas": tpot,
            }
        )
    return out


def main() -> None:
    r = rows_table()
    meas = r.t.to_numpy() * 1e6
    print(
        "(1) aiter@84493f0e5b gfx942 (cu_num 304, MI325X) fused MoE, DeepSeek EP8 slice 7168 x 2048, 33 experts "
        "top-9, FP8 1x128 blocks"
    )
    print(
        f"{'tokens':>6} {'touched':>7} {'meas_us':>8} {'TB/s':>5} {'mi325x_us':>9} {'err':>6} {'mi300x_us':>9} {'err':>6}"
    )
    p325, p300 = shipped_price_us("mi325x", r), shipped_price_us("mi300x", r)
    bytes_w = r.touched.to_numpy() * 3 * SHAPE["hidden_size"] * SHAPE["inter_size"]  # FP8 gate+up+down, 1 B/elem
    for i, t in enumerate(r.num_tokens):
        print(
            f"{t:>6} {r.touched.iloc[i]:>7.1f} {meas[i]:>8.1f} {bytes_w[i] / meas[i] / 1e6:>5.2f} {p325[i]:>9.1f} "
            f"{p325[i] / meas[i] - 1:>+6.0%} {p300[i]:>9.1f} {p300[i] / meas[i] - 1:>+6.0%}"
        )
    print(
        f"shipped price / measured, median: MI325X {np.median(p325 / meas):.2f}x, MI300X {np.median(p300 / meas):.2f}x"
    )
    p, rep = own_fit("mi325x")
    fr = rep["formats"]["fp8"]
    print(
        f"\n(2) fit_moe on the rows (MI325X, tokens split): { ({k: round(v, 4) for k, v in p.items()}) }, floor "
        f"{rep['kernel_floor_s'] * 1e6:.1f} us; fit median {fr['fit']['median_ape']:.1%} (n {fr['fit']['n']}), "
        f"held-out median {fr['held_out_tokens']['median_ape']:.1%} (n {fr['held_out_tokens']['n']})"
    )
    sets = fit_sets(p, rep["kernel_floor_s"])
    print("\n(3) MI325X sglang-rocm@0.5.19 8k/1k (TP8, MoE TP8 EP1): implied measured step vs the model's (ms)")
    for name, s in (("shipped", []), ("gfx942 MoE fit", sets)):
        rs = series(s)
        print(
            f"  {name}: "
            + ", ".join(
                f"C{x['C']} {x['step']:.1f}/{x['meas_step']:.1f} (moe {x['moe']:.1f}, mla {x['mla']:.1f})" for x in rs
            )
        )
        for with_k in (False, True):
            f = refit(rs, with_k)
            print(
                f"    refit {'a + k' if with_k else 'a only'}: a {f['a']:+.2f} ms, k {f['k']:.2f}, rms "
                f"{f['rms']:.2f} ms, step error by C " + " ".join(f"{e:+.1%}" for e in f["err"])
            )
    print("\n(4) C64 sglang-rocm@0.5.9, 1k/1k -> 8k/1k: TPOT rise, model (step + stall) vs measured (ms)")
    for name, sb in (
        ("shipped", {"mi325x": [], "mi300x": []}),
        ("gfx942 MoE fit", {"mi325x": sets, "mi300x": sets}),
    ):  # MI325X's fractions on MI300X
        ps = context_pairs(sb)
        for sysname in ("mi325x", "mi300x"):
            lo, hi = (next(x for x in ps if x["system"] == sysname and x["isl"] == i) for i in (1024, 8192))
            rise_m = hi["step"] + hi["stall"] - lo["step"] - lo["stall"]
            print(
                f"  {name:>14} {sysname}: model {rise_m:.1f} (MLA decode {hi['mla'] - lo['mla']:.1f}), measured "
                f"{hi['meas'] - lo['meas']:.1f}; C64 8k TPOT model {hi['step'] + hi['stall']:.1f} vs {hi['meas']:.1f}"
            )


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # no arguments: --help only
    main()
