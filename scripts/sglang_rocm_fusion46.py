"""SGLang DeepSeek-R1 FP8 TP8 small-batch decode priced slow on H200 and MI325X: the shape of the misses over the
concurrency sweep, and SGLang's fused shared expert on both stacks priced at the rows' batch (issue 18, round 46,
sgldsr46; docs/gap_aic_itl.md "round 46, sgldsr46"). Nothing is fitted into data/ or written there.

Part 1 (VALIDATE_CSV: ``jalapeno validate --json -o VALIDATE_CSV``). Every InferenceX DeepSeek-R1 SGLang agg TP8 sweep
(H200 by engine release, as scripts/h200_release_ladder.point_releases reads the points file; MI300X / MI325X /
MI355X by the stack's ``@VERSION``): per concurrency the measured and predicted mean TPOT, ms, the gap (model −
measured) and the TPOT error, %, with the row's split (``*`` held out, ``~`` none).

Part 2 (no CSV; seconds). The model's decode step (``cost/step.step_cost``, DeepSeek-R1 FP8, attention TP8, MoE TP8
EP1) on H200 (``sglang``, 1k/1k and 8k/1k mean contexts) and MI325X (``sglang-rocm@0.5.19``, 8k/1k) at C = 4 … 64:
the shared expert's own ops (cost/ops.py ``moe.shared_expert.*``), their per-kernel share, and the step with
SGLang's fused shared expert priced (cost/shared_fusion.py: the CUDA half, ``FUSED_SHARED_ON``, on H200; the ROCm
half, ``ROCM_FUSED_SHARED_ON``, sglang PR #12201, on MI325X), switched on for the call only. A term constant in C.

Part 3 (``--refit``; about a minute). ``sglang-rocm`` refitted (fit/stack_fit.fit_stack, the shipped plan, its twin's
front end) with the ROCm half off and on: the fitted per-kernel cost. The profile's one fitted step value is the
per-kernel cost, so a per-step saving constant in C is taken back by the refit (the fit's MI325X rows are one sweep).

Usage: python scripts/sglang_rocm_fusion46.py VALIDATE_CSV [--refit]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jalapeno.cost.shared_fusion as shared_fusion
from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack
from h200_release_ladder import POINTS, point_releases  # noqa: E402

#: the decode batches of InferenceX's DeepSeek-R1 sweeps
CONCURRENCIES = (4, 8, 16, 32, 64)
#: (system, stack, mean decode context) of Part 2: a 1k/1k or 8k/1k request halfway through its 1,024 outputs
STEP_CASES = (
    ("h200", "sglang", 1024 + 512),
    ("h200", "sglang", 8192 + 512),
    ("mi325x", "sglang-rocm@0.5.19", 8192 + 512),
)


def sweep_key(row: dict, releases: dict[str, str]) -> tuple[str, str, int] | None:
    """(system, engine release, ISL) of a DeepSeek-R1 SGLang agg TP8 InferenceX row, None for any other row.

    The release: ``releases[id]`` (H200 points, scripts/h200_release_ladder.point_releases) as ``vX.Y.Z``, else the
    stack's ``@VERSION``, else the stack name."""
    if row["source"] != "inferencex" or row["model"] != "deepseek-r1" or row["framework"] != "sglang":
        return None
    if row["mode"] != "agg" or "TP8 DP1 · MoE TP8 EP1" not in row["deployment"] or row["quality"]:
        return None
    stack = row["stack"]
    release = f"v{releases[row['id']]}" if row["id"] in releases else (stack.split("@")[1] if "@" in stack else stack)
    return row["system"], release, int(row["isl"])


def sweeps(rows: list[dict], releases: dict[str, str]) -> dict[tuple, list[dict]]:
    """Part 1: {(system, release, ISL): [{conc, split, measured_ms, model_ms, gap_ms, error_pct}, ...] by C}."""
    out: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        key = sweep_key(r, releases) if r["metric"] == "tpot_s" else None
        if key is None:
            continue
        m, p = 1e3 * float(r["measured"]), 1e3 * float(r["predicted"])
        out[key].append(
            {
                "conc": int(float(r["concurrency"])),
                "split": r["split"],
                "measured_ms": m,
                "model_ms": p,
                "gap_ms": p - m,
                "error_pct": 100.0 * (p / m - 1.0),
            }
        )
    return {k: sorted(v, key=lambda d: d["conc"]) for k, v in sorted(out.items())}


def per_user_slopes(sweep: list[dict], field: str) -> list[float]:
    """ms a user between successive concurrencies of one sweep, ``field`` ``measured_ms`` or ``model_ms``.

    Raises:
        SpecError: two points at one concurrency (two images mixed: pass one release's sweep)."""
    out = []
    for a, b in zip(sweep, sweep[1:]):
        if b["conc"] == a["conc"]:
            raise SpecError("sweep", f"two points at C = {a['conc']}", "pass one engine release's sweep")
        out.append((b[field] - a[field]) / (b["conc"] - a["conc"]))
    return out


def _step(system: str, stack: str, conc: int, ctx: int):
    model = load_model("deepseek-r1")
    pricer = system_pricer(system, "calibrated", [], get_stack(stack), "roofline")
    batch = Batch.make(decode_seqs=conc, decode_ctx=ctx)
    return step_cost(model, pricer, for_model(Layout(tp=8, dp=1, ep=1), model), get_precision("fp8"), batch)


def step_split(system: str, stack: str, conc: int, ctx: int) -> dict[str, float]:
    """Part 2: {step, shared_ops, shared_per_kernel, fused_step} in s: the step at the shipped switches, the shared
    expert's ops and their per-kernel time, and the step with both halves of cost/shared_fusion on for this call
    only (the stack decides which applies)."""
    ops = {r["op"]: r for r in _step(system, stack, conc, ctx).op_rows(0)}
    shared = [r for k, r in ops.items() if k.startswith("moe.shared_expert.")]
    before = shared_fusion.FUSED_SHARED_ON, shared_fusion.ROCM_FUSED_SHARED_ON
    shared_fusion.FUSED_SHARED_ON = shared_fusion.ROCM_FUSED_SHARED_ON = True
    try:
        fused = float(_step(system, stack, conc, ctx).step_time_s[0])
    finally:
        shared_fusion.FUSED_SHARED_ON, shared_fusion.ROCM_FUSED_SHARED_ON = before
    return {
        "step": float(_step(system, stack, conc, ctx).step_time_s[0]),
        "shared_ops": sum(r["time_s"] for r in shared),
        "shared_per_kernel": sum(r["overhead_s"] for r in shared),
        "fused_step": fused,
    }


def refit_kernel_launch() -> dict[bool, float]:
    """Part 3: {ROCm half on: sglang-rocm's fitted kernel_launch_s} (the shipped plan, every other fit as shipped)."""
    import tomllib
    from importlib import resources

    from jalapeno.fit.aic_quality import aic_decode_flags, aic_ttft_flags
    from jalapeno.fit.stack_fit import fit_stack, load_points, server_front_end, split
    from jalapeno.specs.stacks import build_stacks

    with resources.files("jalapeno").joinpath("data", "stack_fits.toml").open("rb") as f:
        fits = tomllib.load(f)["fits"]
    pts = load_points()
    sp = split(pts)
    kw = dict(
        front_end=True, ttft_flagged=frozenset(aic_ttft_flags(pts)), tpot_flagged=frozenset(aic_decode_flags(pts))
    )
    stacks = build_stacks(fits)
    before = shared_fusion.ROCM_FUSED_SHARED_ON
    out = {}
    try:
        for on in (False, True):
            shared_fusion.ROCM_FUSED_SHARED_ON = on
            r = fit_stack(
                "sglang-rocm", pts, sp, stacks["sglang-rocm"], server_front=server_front_end(stacks["sglang"]), **kw
            )
            out[on] = r["values"]["kernel_launch_s"]
    finally:
        shared_fusion.ROCM_FUSED_SHARED_ON = before
    return out


def _print_part1(table: dict[tuple, list[dict]]) -> None:
    print("Part 1: TPOT by sweep (C, split: * held out, ~ none): measured / model ms, gap ms, error %")
    for (system, release, isl), sw in table.items():
        print(f"{system} {release} ISL {isl}")
        for d in sw:
            mark = {"held_out": "*", "none": "~"}.get(d["split"], " ")
            print(
                f"  C {d['conc']:3d}{mark} {d['measured_ms']:7.2f} / {d['model_ms']:7.2f}  gap {d['gap_ms']:+6.2f}  "
                f"{d['error_pct']:+6.1f}%"
            )
        if len({d["conc"] for d in sw}) == len(sw) > 1:
            ms, mm = per_user_slopes(sw, "measured_ms"), per_user_slopes(sw, "model_ms")
            print("  ms a user, measured / model: " + "  ".join(f"{a:.3f}/{b:.3f}" for a, b in zip(ms, mm)))


def _print_part2() -> None:
    print("\nPart 2: decode step (ms): step, shared-expert ops (per-kernel share), fused step, saving")
    for system, stack, ctx in STEP_CASES:
        for c in CONCURRENCIES:
            s = step_split(system, stack, c, ctx)
            print(
                f"{system} {stack} ctx {ctx} C {c:2d}: {1e3 * s['step']:6.2f}  shared {1e3 * s['shared_ops']:.2f} "
                f"({1e3 * s['shared_per_kernel']:.2f})  fused {1e3 * s['fused_step']:6.2f}  "
                f"saving {1e3 * (s['step'] - s['fused_step']):.2f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", type=Path, help="jalapeno validate --json -o CSV (every row, with split and quality)")
    ap.add_argument("--refit", action="store_true", help="part 3: refit sglang-rocm with the ROCm half off and on")
    args = ap.parse_args()
    with args.csv.open() as fh:
        rows = list(csv.DictReader(fh))
    _print_part1(sweeps(rows, point_releases(POINTS)))
    _print_part2()
    if args.refit:
        k = refit_kernel_launch()
        print(
            f"\nPart 3: sglang-rocm kernel_launch_s fitted: off {1e6 * k[False]:.2f} us, "
            f"ROCm half on {1e6 * k[True]:.2f} us"
        )


if __name__ == "__main__":
    main()
