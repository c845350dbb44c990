"""InferenceX H200's held-out interactivity bias read against InferenceX's own v0.5.9 sweep of the same launch script
(the aiconfigurator rows of 2026-03-25): the decode step's excess is the same in SGLang 0.5.9 and v0.5.12 where prompts
are rare, and 0.5.9's 1k/1k sweep hides it behind a per-prompt cost the model does not price (issue 18, round 52,
h200sgl52; docs/gap_aic_itl.md "round 52, h200sgl52"). Nothing is fitted, shipped or written; every figure is read from
one validate CSV.

Rows: the DeepSeek-R1 FP8 SGLang aggregated TP8 EP1 rows on H200 (attention TP8, MoE TP8, BF16 KV; InferenceX v0.5.7 and
v0.5.12; aiconfigurator-core 0.12.0's ``source_file=2026-03-25.csv`` rows at 1k/1k, 1k/8k and 8k/1k, which are InferenceX's
v0.5.9-cu130 sweep of its PR #943, timed by InferenceX's own client: fit/aic_rows.aic_client gives ``inferencex-db``,
data/validation/aic_sweeps.toml the sweep), TPOT only (interactivity is its inverse).

Part 1. The TPOT gap, model − measured (ms and %), by sweep and concurrency (``*`` held out).

Part 1b. The same gap on B200's DeepSeek-R1 SGLang aggregated sweeps (every layout, FP8 and NVFP4; their scripts force
FlashInfer's TensorRT-LLM MoE runner, not Triton's ``fused_moe``), one line per (source, release, ISL/OSL, layout).

Part 2. The per-prompt cost the model leaves out of the 0.5.9 1k/1k sweep, read against the 1k/8k sweep of the same
release, launch, client and day: in a closed loop of C users each admitting a prompt every L̄ decode steps (L̄ the mean
output length, :data:`MEAN_OUTPUT_FRACTION` × OSL), a cost P paid once per prompt adds P·C/L̄ to the mean TPOT, so the
part of the 1k/1k − 1k/8k gap difference the model does not price is P = (gap_1k8k − gap_1k1k) / (C·(1/L̄_1k − 1/L̄_8k))
(the model's own prompt share and context difference are inside each gap). ASSUMPTION: the TTFT is negligible against
L̄ decode steps.

Part 3. The release step where both releases run the prompt eagerly (8k/1k: above SGLang's 2,048-token piecewise-graph
cap under MLA, fit/sglang_prompt_graphs.py): measured 0.5.9 − v0.5.12 (ms, %), same script and client, beside the model's
own difference.

Part 4. Arithmetic what-if (not a mechanism): the held-out InferenceX H200 interactivity (n 8, median |error| / p90 /
bias) with each v0.5.12 DeepSeek-R1 row's predicted TPOT lowered by the 0.5.9 1k/8k sweep's gap at the same C.

Part 5 (the model's step, in-process, a few seconds). If every other term of the step is right, what the v0.5.9 1k/8k
sweep (the decode step nearly alone) and the v0.5.12 1k/1k sweep imply for the routed experts: the model's step at the
sweep's mean context (``cost/step.step_cost``, DeepSeek-R1 ``fp8,kv=bf16``, attention TP8, MoE TP8 EP1, ``sglang``;
context 0.9 × (ISL + OSL / 2), the client's mean lengths: 4,608 and 1,382), its prompt share (predicted TPOT − step), the implied step (measured
TPOT − that share), the implied routed-expert time (implied step − the model's other terms) and the HBM bandwidth the
experts' weight bytes then stream at, beside the model's (its ``moe.experts`` memory time) and H200's 4.8 TB/s.

Usage: python scripts/h200_decode_hump52.py VALIDATE_CSV   (VALIDATE_CSV: ``jalapeno validate --json -o X.csv``)
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

import numpy as np

from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack

#: Concurrencies of the sweeps (both sources ran 4-64).
CONCURRENCIES = (4, 8, 16, 32, 64)
#: Mean output length as a share of OSL under InferenceX's client (lengths uniform in [0.8 L, L]: fit/aic_rows.py
#: INFERENCEX_EXPORTS, vLLM benchmark_serving's ``random_range_ratio`` 0.8).
MEAN_OUTPUT_FRACTION = 0.9
#: (label, source, stack, isl, osl) of each sweep Part 1 lists.
SWEEPS = (
    ("InferenceX v0.5.7 1k/1k", "inferencex", "sglang@0.5.7", 1024, 1024),
    ("InferenceX v0.5.9 1k/1k (aic)", "aiconfigurator", "sglang@0.5.9", 1024, 1024),
    ("InferenceX v0.5.9 1k/8k (aic)", "aiconfigurator", "sglang@0.5.9", 1024, 8192),
    ("InferenceX v0.5.9 8k/1k (aic)", "aiconfigurator", "sglang@0.5.9", 8192, 1024),
    ("InferenceX v0.5.12 1k/1k", "inferencex", "sglang@0.5.12", 1024, 1024),
    ("InferenceX v0.5.12 8k/1k", "inferencex", "sglang@0.5.12", 8192, 1024),
)


def prompt_cost_ms(gap_short_ms: float, gap_long_ms: float, c: int, osl_short: float, osl_long: float) -> float:
    """Part 2: the per-prompt cost P (ms) the model leaves out of the short-output sweep, from the TPOT gaps (model −
    measured, ms) of two sweeps of one release and client that differ only in the output length (``osl_*``: the mean
    output lengths, tokens): P = (gap_long − gap_short) / (C·(1/osl_short − 1/osl_long)). Raises SpecError unless
    0 < osl_short < osl_long and c > 0.
    """
    if c <= 0:
        raise SpecError("c", f"concurrency {c}", "pass a positive concurrency")
    if not 0 < osl_short < osl_long:
        raise SpecError("osl", f"osl_short {osl_short}, osl_long {osl_long}", "pass 0 < osl_short < osl_long")
    return (gap_long_ms - gap_short_ms) / (c * (1.0 / osl_short - 1.0 / osl_long))


def goal_figures(errors: list[float]) -> tuple[float, float, float]:
    """Median |error|, p90 |error| and bias (median signed error) as goals.py computes them (numpy's linear
    interpolation), in the errors' own unit. Raises SpecError when empty."""
    if not errors:
        raise SpecError("errors", "no rows", "pass a group with at least one row")
    e = np.asarray(errors, dtype=float)
    return float(np.median(abs(e))), float(np.quantile(abs(e), 0.9)), float(np.median(e))


def read_rows(path: Path) -> list[dict]:
    """The validate CSV's rows (``quality`` flagged rows dropped, as goals.py does). Raises SpecError when absent."""
    if not path.is_file():
        raise SpecError("VALIDATE_CSV", str(path), "run `jalapeno validate --json -o X.csv` and pass X.csv")
    with path.open(newline="") as fh:
        return [r for r in csv.DictReader(fh) if not (r.get("quality") or "").strip()]


def sweep_rows(rows: list[dict], system: str = "h200", by_layout: bool = False) -> dict[tuple, dict[int, dict]]:
    """{(source, stack, isl, osl[, deployment]): {concurrency: row}} of ``system``'s DeepSeek-R1 SGLang aggregated
    TPOT rows (the deployment string in the key with ``by_layout``); where a sweep repeats a cell (two aiconfigurator
    configurations of one layout), the first row in file order."""
    out: dict[tuple, dict[int, dict]] = {}
    for r in rows:
        if (r["system"], r["model"], r["metric"], r.get("mode")) != (system, "deepseek-r1", "tpot_s", "agg"):
            continue
        if not r["stack"].startswith("sglang@") or not r.get("measured") or not r.get("predicted"):
            continue
        key = (r["source"], r["stack"], int(r["isl"]), int(r["osl"]))
        if by_layout:
            key += (r.get("deployment", ""),)
        out.setdefault(key, {}).setdefault(int(float(r["concurrency"])), r)
    return out


def gap_ms(row: dict) -> float:
    """Model − measured TPOT, ms."""
    return (float(row["predicted"]) - float(row["measured"])) * 1e3


def gap_line(label: str, cells: dict[int, dict], width: int = 30) -> str:
    """One sweep's gaps by concurrency, ``*`` on held-out rows, ``-`` where the sweep has no row."""
    line = label.ljust(width)
    for c in CONCURRENCIES:
        r = cells.get(c)
        if r is None:
            line += "-".rjust(17)
            continue
        mark = "*" if r.get("split") == "held_out" else " "
        line += f"{gap_ms(r):+.2f} ({100 * float(r['error']):+.1f}%){mark}".rjust(17)
    return line


def part1(sweeps: dict, b200: dict) -> None:
    print("Part 1. TPOT gap, model - measured, ms (error %); * held out")
    print("sweep".ljust(30) + "".join(f"C={c}".rjust(17) for c in CONCURRENCIES))
    for label, src, stack, isl, osl in SWEEPS:
        print(gap_line(label, sweeps.get((src, stack, isl, osl), {})))
    print("\nPart 1b. B200, same gap (FlashInfer TensorRT-LLM MoE runner)")
    for (src, stack, isl, osl, dep), cells in sorted(b200.items()):
        if any(c in cells for c in CONCURRENCIES):
            print(f"  {src} {stack} {isl // 1024}k/{osl // 1024}k {dep}")
            print(gap_line("", cells, 4))


def part2(sweeps: dict) -> None:
    short = sweeps.get(("aiconfigurator", "sglang@0.5.9", 1024, 1024), {})
    long_ = sweeps.get(("aiconfigurator", "sglang@0.5.9", 1024, 8192), {})
    print("\nPart 2. v0.5.9: per-prompt cost left out of 1k/1k, read against 1k/8k (ms; mean outputs 0.9 x OSL)")
    print(
        "C".rjust(4) + "gap 1k/1k".rjust(11) + "gap 1k/8k".rjust(11) + "difference".rjust(12) + "P per prompt".rjust(14)
    )
    ps = []
    for c in CONCURRENCIES:
        if c not in short or c not in long_:
            continue
        gs, gl = gap_ms(short[c]), gap_ms(long_[c])
        p = prompt_cost_ms(gs, gl, c, MEAN_OUTPUT_FRACTION * 1024, MEAN_OUTPUT_FRACTION * 8192)
        if c >= 8:
            ps.append(p)
        print(f"{c:4d}{gs:+11.2f}{gl:+11.2f}{gl - gs:+12.2f}{p:14.1f}")
    if ps:
        print(f"median P at C >= 8: {statistics.median(ps):.1f} ms (range {min(ps):.1f}-{max(ps):.1f})")


def part3(sweeps: dict) -> None:
    a = sweeps.get(("aiconfigurator", "sglang@0.5.9", 8192, 1024), {})
    x = sweeps.get(("inferencex", "sglang@0.5.12", 8192, 1024), {})
    print("\nPart 3. 8k/1k (prompts eager in both releases): v0.5.9 - v0.5.12, TPOT ms (same script and client)")
    print("C".rjust(4) + "measured".rjust(10) + "(%)".rjust(8) + "model".rjust(9))
    for c in CONCURRENCIES:
        if c not in a or c not in x:
            continue
        ma, mx = float(a[c]["measured"]) * 1e3, float(x[c]["measured"]) * 1e3
        pa, px = float(a[c]["predicted"]) * 1e3, float(x[c]["predicted"]) * 1e3
        print(f"{c:4d}{ma - mx:+10.2f}{100 * (ma / mx - 1):+7.1f}%{pa - px:+9.2f}")


def what_if_errors(rows: list[dict], hump_ms: dict[int, float]) -> tuple[list[float], list[float]]:
    """Part 4: the interactivity errors (measured TPOT / predicted TPOT − 1, interactivity being 1 / TPOT) of the
    InferenceX H200 TPOT rows goals.py --ho counts (split not ``fit``), as priced and with each DeepSeek-R1 v0.5.12
    row's predicted TPOT lowered by ``hump_ms`` at its concurrency ({C: ms}; 0 where absent)."""
    base, shifted = [], []
    for r in rows:
        if (r["source"], r["system"], r["metric"]) != ("inferencex", "h200", "tpot_s") or r.get("split") == "fit":
            continue
        m, p = float(r["measured"]), float(r["predicted"])
        on = r["stack"] == "sglang@0.5.12" and r["model"] == "deepseek-r1"
        shift = hump_ms.get(int(float(r["concurrency"])), 0.0) / 1e3 if on else 0.0
        base.append(m / p - 1.0)
        shifted.append(m / (p - shift) - 1.0)
    return base, shifted


def part4(rows: list[dict], sweeps: dict) -> None:
    hump = {c: gap_ms(r) for c, r in sweeps.get(("aiconfigurator", "sglang@0.5.9", 1024, 8192), {}).items()}
    base, shifted = what_if_errors(rows, hump)
    print("\nPart 4. What-if: held-out InferenceX H200 interactivity (median / p90 / bias, %), n", len(base))
    for name, errs in (("as priced", base), ("v0.5.12 rows less the 0.5.9 1k/8k gap", shifted)):
        med, p90, bias = goal_figures(errs)
        print(f"  {name:40s} {100 * med:5.1f} / {100 * p90:5.1f} / {100 * bias:+5.1f}")


def implied_experts(meas_ms: float, pred_ms: float, step: dict) -> dict[str, float]:
    """Part 5: what a measured TPOT implies for the routed experts when every other term of the model's step is right.
    ``step``: the model's step (ms: ``step``, ``experts`` (moe.experts' whole time), ``experts_overhead`` (its per-kernel
    part); ``experts_bytes``, B). Returns {share, step, experts, tb_s}: the model's prompt share (pred − step), the
    implied step (meas − share), the implied expert time (implied step − (step − experts)), ms, and the bandwidth its
    weight bytes stream at outside the per-kernel part, TB/s. Raises SpecError when that time is not positive."""
    share = pred_ms - step["step"]
    implied_step = meas_ms - share
    experts = implied_step - (step["step"] - step["experts"])
    stream = experts - step["experts_overhead"]
    if stream <= 0:
        raise SpecError("experts", f"{stream:.3f} ms", "the measured TPOT leaves the routed experts no time")
    return {"share": share, "step": implied_step, "experts": experts, "tb_s": step["experts_bytes"] / stream / 1e9}


def model_step(conc: int, ctx: int) -> dict[str, float]:
    """The model's H200 DeepSeek-R1 FP8 (BF16 KV) TP8 EP1 ``sglang`` decode step at ``conc`` sequences of mean context
    ``ctx``: {step, experts, experts_memory, experts_overhead (ms), experts_bytes (B)}."""
    model = load_model("deepseek-r1")
    pricer = system_pricer("h200", "calibrated", [], get_stack("sglang"), "roofline")
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=8, dp=1, ep=1), model),
        get_precision("fp8,kv=bf16"),
        Batch.make(decode_seqs=conc, decode_ctx=ctx),
    )
    moe = {r["op"]: r for r in sc.op_rows(0)}["moe.experts"]
    return {
        "step": float(sc.step_time_s[0]) * 1e3,
        "experts": float(moe["time_s"]) * 1e3,
        "experts_memory": float(moe["memory_s"]) * 1e3,
        "experts_overhead": float(moe["overhead_s"]) * 1e3,
        "experts_bytes": float(moe["weight_bytes"]),
    }


#: Part 5's sweeps: (label, source, stack, isl, osl).
IMPLIED_SWEEPS = (
    ("v0.5.9 1k/8k", "aiconfigurator", "sglang@0.5.9", 1024, 8192),
    ("v0.5.12 1k/1k", "inferencex", "sglang@0.5.12", 1024, 1024),
)


def part5(sweeps: dict) -> None:
    peak = load_system("h200").chip.hbm_bandwidth_bytes_per_s / 1e12
    for label, src, stack, isl, osl in IMPLIED_SWEEPS:
        cells = sweeps.get((src, stack, isl, osl), {})
        ctx = round(MEAN_OUTPUT_FRACTION * (isl + osl / 2))
        print(
            f"\nPart 5. {label} (context {ctx}): the routed experts' implied time (ms), stream rate (TB/s; peak {peak})"
        )
        print(
            "C".rjust(4)
            + "model step".rjust(12)
            + "share".rjust(7)
            + "implied".rjust(9)
            + "experts".rjust(9)
            + "implied".rjust(9)
            + "model TB/s".rjust(14)
            + "implied TB/s".rjust(16)
        )
        for c in CONCURRENCIES:
            if c not in cells:
                continue
            st = model_step(c, ctx)
            r = implied_experts(float(cells[c]["measured"]) * 1e3, float(cells[c]["predicted"]) * 1e3, st)
            model_tb = st["experts_bytes"] / st["experts_memory"] / 1e9
            print(
                f"{c:4d}{st['step']:12.2f}{r['share']:7.2f}{r['step']:9.2f}{st['experts']:9.2f}{r['experts']:9.2f}"
                f"{model_tb:8.2f} ({model_tb / peak:.2f}){r['tb_s']:10.2f} ({r['tb_s'] / peak:.2f})"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("validate_csv", type=Path)
    args = ap.parse_args(argv)
    try:
        rows = read_rows(args.validate_csv)
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sweeps = sweep_rows(rows)
    part1(sweeps, sweep_rows(rows, "b200", by_layout=True))
    part2(sweeps)
    part3(sweeps)
    part4(rows, sweeps)
    part5(sweeps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
