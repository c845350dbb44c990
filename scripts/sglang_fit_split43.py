"""The ``sglang`` stack fit, pooled or split, with SGLang's fused shared expert off and on: does a release rule for
the H200 MoE retune (sgl-project/sglang PR #17965) or a declared split by hardware family let
cost/shared_fusion.FUSED_SHARED_ON be turned on without moving Blackwell and ROCm fixed costs? (issue 18, round 43,
sglrel43; docs/gap_aic_itl.md "round 43, sglrel43"). A what-if: nothing is shipped, fitted into data/ or written
there.

Part 1 (no data; instant, ``--geometry``). PR #17965's configuration change for DeepSeek-V3/R1's fused routed call on
H200 (E = 257, N = 256: TP8 slices of 2,048, FP8 128x128 blocks), per decode batch: the gate/up GEMM's tiles per
touched expert (N = 2 x 256 = 512 over BLOCK_SIZE_N), the weight bytes one tile streams (BLOCK_SIZE_N x 7,168 FP8),
the shared memory of one CTA's pipeline (num_stages x (BLOCK_SIZE_M + BLOCK_SIZE_N) x BLOCK_SIZE_K bytes) and the
CTAs one SM holds by that alone (Hopper's 228 KB per SM, NVIDIA Hopper tuning guide), before (``triton_3_3_1/`` file,
read by v0.5.7 on Triton 3.5.1) and after (``triton_3_5_1/`` file); :data:`CONFIG_BEFORE` / :data:`CONFIG_AFTER`.

Part 2 (BASE_CSV: ``jalapeno validate --json -o BASE_CSV``; minutes: two to four stack fits per switch state).
``EXPERIMENT``:

- ``pooled``: the shipped plan (fit/stack_fit.fit_stack on every ``sglang`` point, front end and burst shares
  included; ``sglang-rocm`` refitted with it as its twin, fit/stack_fit.SAME_SERVER), as the chain refits it;
- ``no-vRELEASE`` (e.g. ``no-v0.5.7``): the same, the InferenceX points run at RELEASE left out of the ``sglang``
  fit (they are still priced): the most a release rule confined to those rows can move the held-out rows through
  the refit;
- ``family``: ``sglang`` fitted twice on the one declared split (fit/stack_fit.split): on its Hopper rows only
  (:data:`HOPPER`) and on its other (Blackwell) rows only; ``sglang-rocm`` takes the Blackwell fit as its twin.

Each point is priced with its fit (fit/validate.predict_points ``stack_of``) with the fusion off and on; every other
row keeps BASE_CSV's prediction (every point of the two profiles is repriced, the fit pool's and the
rest, whose ``split`` is ``none``). Writes OUT_PREFIX_off.csv / OUT_PREFIX_on.csv (BASE_CSV's columns, prediction and
error replaced; ``pooled`` off reproduces ``validate``'s CSV exactly) for the goals table, and prints the fitted values.

Usage: python scripts/sglang_fit_split43.py --geometry
       python scripts/sglang_fit_split43.py BASE_CSV OUT_PREFIX [pooled|no-vRELEASE|family]
"""

from __future__ import annotations

import math
import sys

#: the declared family split: Hopper systems (SGLang's Triton fused MoE; cost/shared_fusion.py fuses there only)
HOPPER = frozenset({"h100", "h200"})
#: the profiles refitted (the chain refits both: fit/stack_fit.PLAN)
PROFILES = ("sglang", "sglang-rocm")
#: gate/up configuration (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_stages) by batch bucket before PR #17965:
#: sgl-project/sglang @a30914814 python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_3_1/
#: E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json (num_warps 4 in every bucket;
#: the down GEMM read the same file: no ``_down`` file there)
CONFIG_BEFORE = {
    1: (16, 128, 128, 4),
    2: (16, 128, 128, 4),
    4: (16, 128, 128, 4),
    8: (16, 128, 128, 4),
    16: (16, 128, 128, 3),
    24: (16, 128, 128, 4),
    32: (16, 128, 128, 5),
    48: (16, 128, 128, 3),
    64: (16, 128, 128, 3),
    96: (16, 128, 128, 3),
    128: (16, 128, 128, 3),
    256: (16, 128, 128, 3),
    512: (16, 128, 128, 3),
}
#: the same after PR #17965: configs/triton_3_5_1/ file of the same name as stored at xbfs/sglang @c72ed544 (a fork
#: snapshot; num_warps 4 in every bucket)
CONFIG_AFTER = {
    1: (16, 64, 128, 5),
    2: (16, 64, 128, 5),
    4: (16, 64, 128, 5),
    8: (16, 64, 128, 5),
    16: (16, 64, 128, 3),
    24: (16, 128, 128, 3),
    32: (16, 64, 128, 5),
    48: (16, 64, 128, 5),
    64: (16, 64, 128, 4),
    96: (16, 64, 128, 5),
    128: (16, 64, 128, 3),
    256: (16, 128, 128, 4),
    512: (32, 128, 128, 5),
}
#: gate/up output width of one rank: gate and up, 2 x DeepSeek-R1's expert intermediate 2,048 / TP8
GATE_UP_N = 2 * 2048 // 8
#: DeepSeek-R1's hidden size (the gate/up GEMM's K)
HIDDEN = 7168
#: shared memory of one Hopper SM, bytes (NVIDIA Hopper tuning guide: 228 KB per SM, 227 KB to one block)
SMEM_PER_SM = 228 * 1024


def bucket(batch: int, buckets) -> int:
    """The configuration key SGLang picks for ``batch`` tokens: the nearest bucket (ties to the smaller), as
    ``get_config`` does (``min(keys, key=lambda x: abs(x - M))``).

    >>> bucket(3, CONFIG_BEFORE), bucket(40, CONFIG_BEFORE), bucket(1000, CONFIG_BEFORE)
    (2, 32, 512)
    """
    return min(sorted(buckets), key=lambda k: abs(k - batch))


def tile_geometry(cfg: tuple[int, int, int, int]) -> dict[str, float]:
    """One gate/up configuration (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_stages) as launch geometry: tiles per
    touched expert (GATE_UP_N / BLOCK_SIZE_N), FP8 weight bytes one tile streams (BLOCK_SIZE_N x HIDDEN), pipeline
    shared memory of one CTA (num_stages x (BLOCK_SIZE_M + BLOCK_SIZE_N) x BLOCK_SIZE_K FP8 bytes, scales left out)
    and CTAs per SM by shared memory alone (floor of SMEM_PER_SM over it).

    >>> tile_geometry((16, 128, 128, 4))
    {'tiles_per_expert': 4, 'tile_bytes': 917504, 'cta_smem': 73728, 'ctas_per_sm': 3, 'inflight_per_sm': 196608}
    """
    bm, bn, bk, stages = cfg
    smem = stages * (bm + bn) * bk
    per_sm = SMEM_PER_SM // smem
    return {
        "tiles_per_expert": math.ceil(GATE_UP_N / bn),
        "tile_bytes": bn * HIDDEN,
        "cta_smem": smem,
        "ctas_per_sm": per_sm,
        "inflight_per_sm": per_sm * stages * bn * bk,
    }


def geometry_rows(batches=(4, 8, 16, 32, 64)) -> list[tuple]:
    """(batch, before geometry, after geometry) at each decode batch (:func:`tile_geometry` of the bucket each file
    gives that batch)."""
    return [
        (
            b,
            tile_geometry(CONFIG_BEFORE[bucket(b, CONFIG_BEFORE)]),
            tile_geometry(CONFIG_AFTER[bucket(b, CONFIG_AFTER)]),
        )
        for b in batches
    ]


def without_release(points, release: str, release_of) -> list:
    """``points`` less the InferenceX points whose ``release_of(point)`` is ``release`` ("" keeps every point)."""
    return [p for p in points if not (release and p.source == "inferencex" and release_of(p) == release)]


def _fits(experiment: str, pts, sp, flags) -> tuple[dict, dict]:
    """(fits for Hopper points, fits for the others), each {profile: fit} for specs/stacks.build_stacks."""
    from jalapeno.fit.stack_fit import fit_stack, server_front_end
    from jalapeno.fit.validate import point_release
    from jalapeno.specs.stacks import build_stacks

    kw = dict(front_end=True, ttft_flagged=flags[0], tpot_flagged=flags[1])
    start = build_stacks({})["sglang"]

    def with_rocm(f_cuda: dict) -> dict:
        twin = build_stacks({"sglang": f_cuda})["sglang"]
        rocm = fit_stack(
            "sglang-rocm",
            pts,
            sp,
            build_stacks({"sglang": f_cuda})["sglang-rocm"],
            server_front=server_front_end(twin),
            **kw,
        )
        return {"sglang": f_cuda, "sglang-rocm": rocm}

    if experiment == "family":
        other = with_rocm(fit_stack("sglang", [p for p in pts if p.system not in HOPPER], sp, start, **kw))
        return {"sglang": fit_stack("sglang", [p for p in pts if p.system in HOPPER], sp, start, **kw)}, other
    if experiment != "pooled" and not experiment.startswith("no-v"):
        raise SystemExit(f"experiment {experiment!r}: use pooled, no-vRELEASE (e.g. no-v0.5.7) or family")
    drop = experiment.removeprefix("no-v") if experiment != "pooled" else ""
    fits = with_rocm(fit_stack("sglang", without_release(pts, drop, point_release), sp, start, **kw))
    return fits, fits


def run(base_csv: str, out_prefix: str, experiment: str = "pooled") -> None:
    """Part 2 (module docstring): fit, price, write both CSVs."""
    import pandas as pd

    import jalapeno.cost.shared_fusion as shared_fusion
    from jalapeno.fit.aic_quality import aic_decode_flags, aic_ttft_flags
    from jalapeno.fit.stack_fit import load_points, split
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, predict_points
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS
    from jalapeno.specs.stacks import build_stacks, stack_for_framework

    base = pd.read_csv(base_csv)
    pts = load_points()
    sp = split(pts)
    flags = (frozenset(aic_ttft_flags(pts)), frozenset(aic_decode_flags(pts)))
    every = load_inferencex(DEFAULT_POINTS)[0] + load_aiconfigurator()[0]  # priced: the pool and the rest (split none)
    mine = [p for p in every if stack_for_framework(p.framework, p.system).name in PROFILES]
    for on in (False, True):
        shared_fusion.FUSED_SHARED_ON = on
        fh, fo = _fits(experiment, pts, sp, flags)
        for fam, f in (("hopper", fh), ("other", fo)) if experiment == "family" else (("all", fo),):
            for n, v in f.items():
                print(f"fusion {'on' if on else 'off'} {fam} {n}: values {v['values']} clients {v['clients']}")
        ph, po = build_stacks(fh), build_stacks(fo)
        rows = predict_points(mine, stack_of=lambda p: point_stack(p, ph if p.system in HOPPER else po))
        new = rows.set_index(["id", "metric"])[["predicted", "error"]]
        out = base.set_index(["id", "metric"])
        hit = out.index.intersection(new.index)
        out.loc[hit, ["predicted", "error"]] = new.loc[hit, ["predicted", "error"]]
        path = f"{out_prefix}_{'on' if on else 'off'}.csv"
        out.reset_index().to_csv(path, index=False)
        print(f"wrote {path}: {len(hit)} (id, metric) rows repriced")


def print_geometry() -> None:
    """Part 1 (module docstring)."""
    print("batch | tiles/expert before -> after | tile MB | CTA smem KB | CTAs/SM | in flight per SM KB")
    for b, x, y in geometry_rows():
        print(
            f"{b} | {x['tiles_per_expert']} -> {y['tiles_per_expert']} | {x['tile_bytes'] / 1e6:.3f} -> "
            f"{y['tile_bytes'] / 1e6:.3f} | {x['cta_smem'] / 1024:.0f} -> {y['cta_smem'] / 1024:.0f} | "
            f"{x['ctas_per_sm']} -> {y['ctas_per_sm']} | {x['inflight_per_sm'] / 1024:.0f} -> "
            f"{y['inflight_per_sm'] / 1024:.0f}"
        )


if __name__ == "__main__":
    if sys.argv[1:] == ["--geometry"]:
        print_geometry()
    elif len(sys.argv) in (3, 4):
        run(*sys.argv[1:])
    else:
        sys.exit(__doc__)
