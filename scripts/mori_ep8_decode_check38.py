"""MI355X MoRI-SGLang rows 24/31: the DEP8 decode step's all-to-all and routed experts against MoRI's and aiter's own timings (issue 18, round 38).

Question (amd38): rows 24 / 31 (MI355X DeepSeek-R1 MXFP4, SGLang 0.5.9 + MoRI, DEP8 decode) decode ~150 sequences per
attention-DP rank at a measured step 10 ms (row 24) to 15 ms (row 31) longer than the model's
(``scripts/mori_disagg_release.py``; at the Little's-law batch this script prices, decode step alone: 13.7 / 17.0
ms). Is the MoRI expert-parallel dispatch / combine, or the EP8 MXFP4 fused MoE,
priced too fast at that batch?

Sources: (1) ROCm/mori ``docs/ep8_mi350x_tuning_results.md`` @1084b514c0b3 (2026-07-06): MoRI EP8 intra-node
dispatch / combine latency on 8x MI350X (gfx950, 256 CUs — MI355X's die at a lower board power), hidden 7,168, by
tokens per rank (:data:`MORI_DISPATCH_FP8_US`: FP8 dispatch, the rows' ``SGLANG_MORI_FP8_DISP=True``;
:data:`MORI_COMBINE_US`: BF16 combine, P2P and non-P2P, and the FP8 direct-cast combine); the shipped MI355X configs
measured on the same MI350X are within 0-9% of the tuned ones (same file, §2). (2) ROCm/aiter
``aiter/configs/model_configs/dsv3_fp4_tuned_fmoe.csv`` @e4048607a535 (vendored in src/jalapeno/data/kernels/, round
36): the MI355X (``cu_num`` 256) MXFP4 fused MoE on DeepSeek's EP8 slice, 32 whole experts (7,168 x 2,048), top-8,
stage 1 + stage 2 time (:data:`AITER_EP8_FP4_US`); a rank holding 32 of 256 experts receives C_rank x 8 assignments
on average at uniform routing, the table's T = C_rank rows (T x 8 assignments over 32 experts).

Printed per row: decoding sequences per rank (Little's law on the measured row, as mori_disagg_release.py), the
model's ``moe.dispatch`` / ``moe.combine`` per layer and its ``moe.experts`` per layer at that batch (``jalapeno
step`` machinery, the row's deployment and release), against the two sources interpolated linearly in tokens.
Nothing is fitted or written. Run: python scripts/mori_ep8_decode_check38.py
"""

from __future__ import annotations

import argparse
import sys
from importlib.resources import files
from pathlib import Path

import numpy as np

#: ROCm/mori@1084b514c0b3 docs/ep8_mi350x_tuning_results.md §4: EP8 intra-node dispatch, fp8_e4m3, hidden 7168 (µs)
MORI_DISPATCH_FP8_US = {64: 32.1, 128: 39.9, 256: 58.1, 512: 87.9, 1024: 142.6}
#: the same file §3: EP8 intra-node combine, hidden 7168 (µs) by mode
MORI_COMBINE_US = {
    "bf16 P2P": {64: 28.5, 128: 39.7, 256: 62.2, 512: 105.5, 1024: 193.3},
    "bf16 non-P2P": {64: 30.8, 128: 43.9, 256: 67.6, 512: 119.8, 1024: 225.0},
    "fp8 direct-cast non-P2P": {64: 32.7, 128: 34.1, 256: 46.3, 512: 73.5, 1024: 143.1},
}
#: ROCm/aiter@e4048607a535 dsv3_fp4_tuned_fmoe.csv, cu_num 256, 7168 x 2048, 32 experts, top-8, per_1x32 (µs)
AITER_EP8_FP4_US = {64: 129.1159, 128: 141.8778, 256: 161.2901, 512: 221.0672}
ROWS = ("24", "31")


def interp(table: dict[int, float], x: float) -> float:
    """Linear interpolation of ``table`` (tokens → µs) at ``x`` tokens; refuses to extrapolate.

    >>> round(interp({128: 39.9, 256: 58.1}, 143.0), 2)
    42.03
    """
    ks = sorted(table)
    if not ks[0] <= x <= ks[-1]:
        raise ValueError(f"{x} tokens is outside the table's {ks[0]}..{ks[-1]}")
    return float(np.interp(x, ks, [table[k] for k in ks]))


def _release_module():
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import mori_disagg_release

    return mori_disagg_release


def model_decode_parts(row: str, per_rank: float) -> dict:
    """The model's per-layer dispatch, combine and routed-expert times (µs) of the row's decode step at
    ``per_rank`` sequences per attention-DP rank, mean context ISL·0.9 + OSL·0.9/2."""
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.fit.mlperf_scenarios import priced_point
    from jalapeno.fit.ix_points import load_inferencex

    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    p = next(q for q in points if q.id == f"inferencex_points:{row}")
    m, pr, dep, wl = priced_point(p)
    lay = dep.decode.layout
    sc = step_cost(
        m,
        pr,
        lay,
        dep.precision,
        Batch.make(
            decode_seqs=per_rank * lay.dp, decode_ctx=wl.mean_isl + wl.mean_osl / 2, prefill_tokens=0, prefill_ctx=0
        ),
    )
    coll = {c["collective"]: c["time_s"] / c["calls"] * 1e6 for c in sc.collective_rows(0)}
    moe_layers = m.num_moe_layers
    experts = sum(r["time_s"] for r in sc.op_rows(0) if r["op"] == "moe.experts") / moe_layers * 1e6
    return {
        "dispatch": coll["moe.dispatch"],
        "combine": coll["moe.combine"],
        "experts": experts,
        "step_ms": float(np.atleast_1d(sc.step_time_s)[0]) * 1e3,
        "ep": lay.ep,
        "layers": moe_layers,
    }


def main() -> None:
    rel = _release_module()
    for row in ROWS:
        f = rel.row_figures(row)
        c = f["per_rank"]
        mp = model_decode_parts(row, c)
        disp = interp(MORI_DISPATCH_FP8_US, c)
        tpot = f["measured"]["tpot_s"] * 1e3
        print(
            f"row {row}: {c:.0f} sequences per DEP{mp['ep']} rank; measured TPOT {tpot:.1f} ms, model step at that "
            f"batch {mp['step_ms']:.1f} ms: {tpot - mp['step_ms']:.1f} ms unpriced"
        )
        print(f"  dispatch per layer: model {mp['dispatch']:.1f} us, MoRI MI350X FP8 {disp:.1f} us")
        for mode, t in MORI_COMBINE_US.items():
            print(f"  combine per layer: model {mp['combine']:.1f} us, MoRI MI350X {mode} {interp(t, c):.1f} us")
        lo = disp + min(interp(t, c) for t in MORI_COMBINE_US.values())
        hi = disp + max(interp(t, c) for t in MORI_COMBINE_US.values())
        a2a_model = mp["dispatch"] + mp["combine"]
        print(
            f"  all-to-all per step ({mp['layers']} MoE layers): model {a2a_model * mp['layers'] / 1e3:.2f} ms, "
            f"MoRI {lo * mp['layers'] / 1e3:.2f}-{hi * mp['layers'] / 1e3:.2f} ms"
        )
        fmoe = interp(AITER_EP8_FP4_US, c)
        print(
            f"  routed experts per layer: model {mp['experts']:.1f} us, aiter MI355X EP8 MXFP4 (stages 1+2) "
            f"{fmoe:.1f} us; per step {mp['experts'] * mp['layers'] / 1e3:.2f} vs {fmoe * mp['layers'] / 1e3:.2f} ms"
        )


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # no arguments: --help only
    main()
