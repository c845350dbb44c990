"""Distinct experts a small decode batch touches, uniform against skewed routing, and why no expert popularity
closes the SGLang DeepSeek-R1 small-batch TPOT hump (issue 18, round 46, routeskew46; docs/gap_aic_itl.md
"round 46, routeskew46"). Nothing is fitted into data/ or written there.

Part 1 (no CSV). Per MoE model of the catalog (E routed experts, top-k): the distinct experts one layer's step of
B decode tokens touches, uniform E·(1 − (1 − k/E)^B) and at DeepSeek-R1's measured popularity σ = 1.03
(specs/routing.py, TensorRT-LLM tech blog 4 Table 1; the exact sum of cost/moe.touched_fraction), the experts skew saves, and the
batch where that saving peaks: numerically at σ = 1.03, and in the small-skew limit 1/B + 1/(B − 1) = −ln(1 − k/E)
(:func:`peak_batch_small_skew`). Any popularity touches no more experts than uniform at every B (Jensen: x ↦ (1 − x)^B
is convex), so skew only ever lowers the weight-read term; the saving rises with B up to the peak.

Part 2 (no CSV; ms). The model's decode step (cost/step.step_cost, DeepSeek-R1 FP8, attention TP8, MoE TP8 EP1) on
H200 ``sglang`` (1k/1k, 8k/1k mean contexts) and MI325X ``sglang-rocm@0.5.19`` (8k/1k) at C = 4 … 64: the step, the
routed-expert op ``moe.experts`` and the experts it touches, uniform and under ``--routing generated`` (the
decode tokens at σ = 1.03); the routed op's share of the model's per-user slope.

Part 3 (VALIDATE_CSV: ``jalapeno validate --json -o VALIDATE_CSV``). Per InferenceX DeepSeek-R1 SGLang TP8 sweep
(scripts/sglang_rocm_fusion46.sweeps): the TPOT gap (model − measured, ms), the step saving of ``generated``
routing at that C and context, what is left (gap − saving), and the experts a step would have to leave untouched
for a weight read linear in touched experts to close the gap (:func:`implied_saved_experts`). A popularity can
remove a gap that grows with C up to the peak of Part 1, not one that turns down before it.

Part 4 (``--moe-table PARQUET``, repeatable: aiconfigurator-core's H200 SGLang ``moe_perf.parquet``, e.g.
``systems/data/h200_sxm/moe/sglang/0.5.14/``). The measured ``sglang_fused_moe_triton`` kernel at DeepSeek-R1's
shape (hidden 7168, intermediate 2048, 256 experts, top-8, MoE TP8 EP1, ``fp8_block``), ``balanced`` rows (T tokens
touch min(8·T, 256) experts, one row each), read at the load of the experts a step touches (u/8 tokens, log-log
interpolation as cost/moe_backend.MoeCurve reads a curve), uniform and σ = 1.03, beside the model's ``moe.experts``
op per MoE layer on H200 (Part 2); and the ``power_law_1.01`` rows at the step's own tokens. Per-user slopes ×
the MoE layers give ms a user of the step.

Usage: python scripts/route_distinct46.py [VALIDATE_CSV] [--moe-table PARQUET ...]
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.specs.catalog import list_models, load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.routing import MEASURED_ROUTING_SIGMA, expert_popularity, with_routing
from jalapeno.specs.stacks import get_stack
from h200_release_ladder import POINTS, point_releases  # noqa: E402
from sglang_rocm_fusion46 import CONCURRENCIES, STEP_CASES, sweeps  # noqa: E402

#: decode batches of Part 1 (tokens in one layer's step)
BATCHES = (1, 4, 8, 16, 32, 64, 128, 256)
#: the largest batch :func:`peak_batch` searches (tokens)
PEAK_SEARCH = 1 << 13


def distinct_experts(batch, num_experts: int, top_k: int, sigma: float = 0.0) -> np.ndarray:
    """Expected distinct experts (of E) one layer's step of ``batch`` tokens touches at popularity σ:
    Σ_e (1 − (1 − min(k·p_e, 1))^B), p_e of specs/routing.expert_popularity, summed exactly (the model's
    cost/moe.touched_fraction interpolates the same sum on a log grid, too coarse for the small differences
    :func:`peak_batch` compares). Shape (N,) → (N,)."""
    b = np.asarray(batch, dtype=float)
    miss = np.log1p(-np.minimum(top_k * expert_popularity(num_experts, sigma), 1.0 - 1e-15))
    return num_experts - np.exp(np.multiply.outer(b, miss)).sum(axis=-1)


def skew_saving(batch, num_experts: int, top_k: int, sigma: float) -> np.ndarray:
    """Experts uniform routing touches that popularity σ does not, per layer and step: ≥ 0 for every σ and B
    (Jensen: Σ_e (1 − k·p_e)^B ≥ E·(1 − k/E)^B since x ↦ (1 − x)^B is convex). Shape (N,) → (N,)."""
    return distinct_experts(batch, num_experts, top_k) - distinct_experts(batch, num_experts, top_k, sigma)


def peak_batch(num_experts: int, top_k: int, sigma: float) -> int:
    """Integer batch B in 1 … :data:`PEAK_SEARCH` where :func:`skew_saving` is largest (tokens)."""
    b = np.arange(1, PEAK_SEARCH + 1, dtype=float)
    return int(b[np.argmax(skew_saving(b, num_experts, top_k, sigma))])


def peak_batch_small_skew(num_experts: int, top_k: int) -> float:
    """Where the saving of a small popularity skew peaks (tokens): p_e = (1 + ε_e)/E, Σ ε_e = 0, to second order in ε
    the saving is ∝ B·(B − 1)·q^B, q = 1 − k/E, largest where 1/B + 1/(B − 1) = −ln q (solved here; ≈ 2/(−ln q) + ½).

    >>> round(peak_batch_small_skew(256, 8), 1)  # DeepSeek-V3/R1: top-8 of 256
    63.5

    Raises:
        ValueError: top_k not in 1 … E − 1 (no saving to peak).
    """
    if not 0 < top_k < num_experts:
        raise ValueError(f"top_k must be in 1 … {num_experts - 1}, got {top_k}")
    c = -math.log(1.0 - top_k / num_experts)
    # c·B² − (2 + c)·B + 1 = 0 from 1/B + 1/(B − 1) = c; the root above 1
    return ((2.0 + c) + math.sqrt((2.0 + c) ** 2 - 4.0 * c)) / (2.0 * c)


def implied_saved_experts(gap_ms: float, saving_ms: float, conc: int, num_experts: int = 256, top_k: int = 8) -> float:
    """Experts per layer a step of ``conc`` tokens would have to leave untouched, against uniform routing, for the
    routed-expert op to close a TPOT gap of ``gap_ms`` (model − measured), reading the op as linear in the experts it
    touches: gap / saving × (uniform − σ 1.03 touched), ``saving_ms`` the step saving of ``generated`` routing (Part 2).
    A diagnosis, not a fit: nothing is priced from it. NaN where the saving is not positive.

    >>> round(implied_saved_experts(1.0, 2.0, 16), 1)  # half of DeepSeek-R1's 19.4 saved experts at 16 tokens
    9.7
    """
    if not saving_ms > 0:
        return math.nan
    return gap_ms / saving_ms * float(skew_saving(conc, num_experts, top_k, MEASURED_ROUTING_SIGMA))


def _print_part1() -> None:
    print(f"Part 1: distinct experts of one layer's step of B tokens: uniform / σ = {MEASURED_ROUTING_SIGMA} (saved)")
    print("model            E   k  " + "  ".join(f"B={b:<14d}" for b in BATCHES) + "  peak B: σ 1.03 / small skew")
    for name in list_models():
        moe = load_model(name).moe
        if moe is None or moe.num_experts <= moe.top_k:
            continue
        e, k = moe.num_experts, moe.top_k
        u = distinct_experts(BATCHES, e, k)
        s = distinct_experts(BATCHES, e, k, MEASURED_ROUTING_SIGMA)
        cells = "  ".join(f"{a:5.1f}/{b:5.1f} ({a - b:4.1f})" for a, b in zip(u, s))
        print(
            f"{name:15s} {e:3d} {k:3d}  {cells}  {peak_batch(e, k, MEASURED_ROUTING_SIGMA)} / "
            f"{peak_batch_small_skew(e, k):.1f}"
        )


def step_routed(system: str, stack: str, conc: int, ctx: int, routing: str) -> dict[str, float]:
    """Part 2: {step, routed, touched} of one decode step (s, s, experts per layer on a rank) at ``routing``
    (``uniform`` or ``generated``, specs/routing.with_routing)."""
    model = with_routing(load_model("deepseek-r1"), routing)
    pricer = system_pricer(system, "calibrated", [], get_stack(stack), "roofline")
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=8, dp=1, ep=1), model),
        get_precision("fp8"),
        Batch.make(decode_seqs=conc, decode_ctx=ctx),
    )
    rows = {r["op"]: r for r in sc.op_rows(0)}
    routed = [r for op, r in rows.items() if op.startswith("moe.experts")]
    return {
        "step": float(sc.step_time_s[0]),
        "routed": sum(r["time_s"] for r in routed),
        "touched": float(distinct_experts(conc, 256, 8, MEASURED_ROUTING_SIGMA if routing != "uniform" else 0.0)),
    }


def _print_part2() -> dict[tuple, dict[int, float]]:
    print(
        "\nPart 2: decode step / moe.experts (ms) and experts touched, uniform | generated; "
        "per-user slope (ms) of step and moe.experts, uniform"
    )
    savings: dict[tuple, dict[int, float]] = {}
    for system, stack, ctx in STEP_CASES:
        u = {c: step_routed(system, stack, c, ctx, "uniform") for c in CONCURRENCIES}
        g = {c: step_routed(system, stack, c, ctx, "generated") for c in CONCURRENCIES}
        savings[(system, ctx)] = {c: u[c]["step"] - g[c]["step"] for c in CONCURRENCIES}
        print(f"{system} {stack} ctx {ctx}")
        for c in CONCURRENCIES:
            print(
                f"  C {c:2d}: {1e3 * u[c]['step']:6.2f} / {1e3 * u[c]['routed']:5.2f} ({u[c]['touched']:5.1f}) | "
                f"{1e3 * g[c]['step']:6.2f} / {1e3 * g[c]['routed']:5.2f} ({g[c]['touched']:5.1f})  "
                f"saving {1e3 * savings[(system, ctx)][c]:.2f}"
            )
        cs = CONCURRENCIES
        print(
            "  ms a user (step / moe.experts): "
            + "  ".join(
                f"{1e3 * (u[b]['step'] - u[a]['step']) / (b - a):.3f}/{1e3 * (u[b]['routed'] - u[a]['routed']) / (b - a):.3f}"
                for a, b in zip(cs, cs[1:])
            )
        )
    return savings


def _print_part3(csv_path: Path, savings: dict[tuple, dict[int, float]]) -> None:
    with csv_path.open() as fh:
        rows = list(csv.DictReader(fh))
    print(
        "\nPart 3: TPOT gap (model − measured, ms) | generated-routing step saving | left (gap − saving) | "
        "experts a linear weight read would need saved"
    )
    for (system, release, isl), sw in sweeps(rows, point_releases(POINTS)).items():
        key = (system, isl + 512)
        if key not in savings:
            continue
        cells = []
        for d in sw:
            save = 1e3 * savings[key].get(d["conc"], math.nan)
            need = implied_saved_experts(d["gap_ms"], save, d["conc"])
            cells.append(f"C{d['conc']} {d['gap_ms']:+.2f}|{save:.2f}|{d['gap_ms'] - save:+.2f}|{need:.1f}")
        print(f"{system} {release} ISL {isl}: " + "  ".join(cells))


def kernel_rows(table, distribution: str = "balanced") -> tuple[np.ndarray, np.ndarray]:
    """(tokens, latency s) of one routing's rows of an aiconfigurator ``moe_perf`` table (a DataFrame) at DeepSeek-R1's
    SGLang TP8 EP1 FP8 block-scale shape, the median of repeated rows, tokens ascending.

    Raises:
        ValueError: no row of that shape and routing (names the table's shape fields to check).
    """
    q = table[
        (table.moe_dtype == "fp8_block")
        & (table.hidden_size == 7168)
        & (table.inter_size == 2048)
        & (table.num_experts == 256)
        & (table.topk == 8)
        & (table.moe_tp_size == 8)
        & (table.moe_ep_size == 1)
        & (table.distribution == distribution)
    ]
    if q.empty:
        raise ValueError(
            f"no {distribution} fp8_block row at hidden 7168, inter 2048, 256x8, TP8 EP1: "
            "pass an H200 SGLang moe_perf.parquet"
        )
    g = q.groupby("num_tokens").latency.median()
    return g.index.to_numpy(dtype=float), 1e-3 * g.to_numpy(dtype=float)


def read_at(tokens: np.ndarray, latency: np.ndarray, x) -> np.ndarray:
    """Latency (s) at ``x`` tokens, log-log interpolated between rows (clamped at the ends). Shape (N,) → (N,)."""
    return np.exp(np.interp(np.log(np.asarray(x, dtype=float)), np.log(tokens), np.log(latency)))


def _print_part4(paths: list[Path]) -> None:
    import pandas as pd

    layers = load_model("deepseek-r1").num_moe_layers
    cs = np.array(CONCURRENCIES, dtype=float)
    model = np.array([step_routed("h200", "sglang", int(c), 1536, "uniform")["routed"] for c in cs]) / layers
    print(
        f"\nPart 4: H200 SGLang fused_moe_triton, DeepSeek-R1 TP8 EP1 fp8_block, ms per MoE layer at C = "
        f"{', '.join(str(c) for c in CONCURRENCIES)}; per-user ms of the step (× {layers} layers) after '|'"
    )

    def line(label: str, t: np.ndarray) -> None:
        slope = np.diff(t) * layers / np.diff(cs)
        print(
            f"  {label:34s} "
            + " ".join(f"{1e3 * v:6.3f}" for v in t)
            + "  | "
            + " ".join(f"{1e3 * v:.3f}" for v in slope)
        )

    line("model moe.experts (uniform)", model)
    for path in paths:
        table = pd.read_parquet(path)
        tok, lat = kernel_rows(table)
        line(f"{path.parent.name} balanced at uniform touched", read_at(tok, lat, distinct_experts(cs, 256, 8) / 8))
        line(
            f"{path.parent.name} balanced at σ 1.03 touched",
            read_at(tok, lat, distinct_experts(cs, 256, 8, MEASURED_ROUTING_SIGMA) / 8),
        )
        tok_p, lat_p = kernel_rows(table, "power_law_1.01")
        line(f"{path.parent.name} power_law_1.01 at C tokens", read_at(tok_p, lat_p, cs))


def main() -> None:
    args = sys.argv[1:]
    tables = [Path(args[i + 1]) for i, a in enumerate(args) if a == "--moe-table"]
    rest = [a for i, a in enumerate(args) if a != "--moe-table" and (i == 0 or args[i - 1] != "--moe-table")]
    _print_part1()
    savings = _print_part2()
    if rest:
        _print_part3(Path(rest[0]), savings)
    if tables:
        _print_part4(tables)


if __name__ == "__main__":
    main()
