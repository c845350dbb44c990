"""InferenceX H200 TPOT priced slow (held out: TPOT bias +6.5%, interactivity bias −6.1%): which rows make the bias,
by engine release; whether aiconfigurator's H200 TPOT is biased the same way; and the model's DeepSeek-R1 SGLang TP8
decode step term by term against the steps the two measured SGLang releases imply and SGLang's own H200 fused-MoE
tables (issue 18, round 42, h200tpot42; docs/gap_aic_itl.md "round 42, h200tpot42"). Nothing is fitted, shipped or
written.

Part 1 (VALIDATE_CSV: ``jalapeno validate --json -o VALIDATE_CSV``, every row with ``split`` and ``quality``). Every
InferenceX H200 row (fit and held out) with its engine release as the row's notes record it (the points file's
``image lmsysorg/sglang:v0.5.12-cu130`` / ``SGLang v0.5.7``), its TPOT and interactivity error, and which held-out rows
set the bias (median signed error, numpy's linear interpolation). Then the DeepSeek-R1 SGLang TP8 rows by release and
split: the model prices both releases alike (the recipe's ``version = "0.5.7"`` pins nothing; the ``sglang`` profile
has no version rules), so the fit's v0.5.7 rows and v0.5.12 rows sit on either side of one price.

Part 2 (same CSV). aiconfigurator's H200 TPOT rows (quality unflagged) by model, engine release, mode and split:
n, median |error|, bias (median signed error), %.

Part 3 (no CSV; under a second). The model's decode step (``cost/step.step_cost``, DeepSeek-R1 FP8, BF16 KV, attention
TP8, MoE TP8 EP1, ``sglang`` profile, 1k/1k mean context 1,536) split into routed experts, other HBM-bound ops,
compute, per-kernel costs, the step's fixed cost and the all-reduces; beside it the decode step each release's mean
TPOT implies once its prompts are taken out, TPOT − C × P / OSL (P the model's own price of one 1,024-token prompt
alone in a step: SGLang runs a prompt as its own step, no mixed chunk), the model's step less that, and the two
releases' gap as a multiple of the model's routed-expert time; and the step with SGLang's fused shared expert priced
(cost/shared_fusion.py, shipped off; switched on here only) less v0.5.12's implied step.

Part 4 (``--tables DIR``, aiconfigurator-core's ``systems/data/h200_sxm`` folder). SGLang's own H200
``sglang_fused_moe_triton`` FP8-block table at DeepSeek-R1's shape (hidden 7,168, inter 2,048, 256 experts, top 8, MoE
TP8 EP1), releases 0.5.10 and 0.5.14, ms a layer at 4-64 tokens (balanced and power_law_1.01 routing), beside the
model's ``moe.experts`` a layer (58 MoE layers) at the same batch under uniform routing; and the HBM bandwidth each
implies for the bytes it must read: every expert's TP8 slice (256 × 3 × 7,168 × 256 B = 1.409 GB) where balanced
routing touches all 256 experts (tokens × 8 ≥ 256), the model's own expected distinct experts otherwise.

Usage: python scripts/h200_tpot42.py VALIDATE_CSV [--tables DIR]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

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

#: DeepSeek-R1's routed experts per rank at MoE TP8: 256 experts x (gate, up, down) x 7,168 x 2,048/8 FP8 bytes.
EXPERT_BYTES_TP8 = 256 * 3 * 7168 * (2048 // 8)
#: DeepSeek-R1's MoE layers (61 layers, the first 3 dense: config.json first_k_dense_replace).
MOE_LAYERS = 58
#: The measured SGLang DeepSeek-R1 FP8 TP8 1k/1k mean TPOTs, ms, by release (data/validation/inferencex_points.csv:
#: v0.5.7 issue #870 rows 79-82, v0.5.12 PR #3173 rows 54-58), keyed by concurrency.
MEASURED_TPOT_MS = {
    "v0.5.7": {8: 12.80, 16: 17.20, 32: 25.60, 64: 34.60},
    "v0.5.12": {4: 9.70, 8: 11.73, 16: 15.28, 32: 21.80, 64: 29.77},
}
CONCURRENCIES = (4, 8, 16, 32, 64)


def median_signed(errors: list[float]) -> float:
    """Median of signed errors (the goals' bias), %; numpy's linear interpolation. Raises SpecError when empty."""
    if not errors:
        raise SpecError("errors", "no rows", "pass a group with at least one row")
    return float(np.percentile(errors, 50))


def ix_rows(rows: list[dict], releases: dict[str, str]) -> list[dict]:
    """Part 1: the InferenceX H200 rows, one dict a row id with release ("v0.5.12" from ``releases``: {id: "0.5.12"},
    scripts/h200_release_ladder.point_releases; else the framework), split and TPOT / interactivity error (%)."""
    out: dict[str, dict] = {}
    for r in rows:
        if r["source"] != "inferencex" or r["system"] != "h200" or r["quality"]:
            continue
        if r["metric"] not in ("tpot_s", "interactivity"):
            continue
        d = out.setdefault(
            r["id"],
            {
                "row": int(r["id"].split(":")[1]),
                "model": r["model"],
                "release": f"v{releases[r['id']]}" if r["id"] in releases else r["framework"],
                "split": r["split"],
                "isl": int(r["isl"]),
                "conc": int(float(r["concurrency"])),
            },
        )
        d[r["metric"]] = 100.0 * float(r["error"])
    return sorted(out.values(), key=lambda d: (d["model"], d["release"], d["isl"], d["conc"]))


def release_groups(table: list[dict]) -> dict[tuple, list[float]]:
    """DeepSeek-R1 SGLang TPOT errors (%) by (release, split kind: fit / held out)."""
    g: dict[tuple, list[float]] = defaultdict(list)
    for d in table:
        if d["release"].startswith("v0.5") and "tpot_s" in d:
            g[(d["release"], "fit" if d["split"] == "fit" else "held out")].append(d["tpot_s"])
    return g


def aic_groups(rows: list[dict]) -> dict[tuple, list[float]]:
    """Part 2: aiconfigurator H200 TPOT errors (%) by (model, release, mode, split kind)."""
    g: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        if r["source"] == "aiconfigurator" and r["system"] == "h200" and r["metric"] == "tpot_s" and not r["quality"]:
            kind = "fit" if r["split"] == "fit" else "held out"
            g[(r["model"], r["framework"], r["mode"], kind)].append(100.0 * float(r["error"]))
    return g


def _step(conc: int, prefill: int = 0):
    model = load_model("deepseek-r1")
    pricer = system_pricer("h200", "calibrated", [], get_stack("sglang"), "roofline")
    return step_cost(
        model,
        pricer,
        for_model(Layout(tp=8, dp=1, ep=1), model),
        get_precision("fp8"),
        Batch.make(decode_seqs=conc, decode_ctx=1536 if conc else 0, prefill_tokens=prefill),
    )


def ledger(conc: int) -> dict[str, float]:
    """The model's H200 DeepSeek-R1 FP8 TP8 SGLang decode step at ``conc`` sequences, 1k/1k: {term: s}.

    Terms as scripts/mi3xx_step_ledger41.ledger: routed_experts (moe.experts where HBM binds it), other_hbm, compute,
    per_kernel, step_fixed, collectives; "step" the step time, "experts_s" moe.experts' whole time."""
    sc = _step(conc)
    att = sc.summary(0)["attribution_s"]
    ops = {r["op"]: r for r in sc.op_rows(0)}
    moe = ops["moe.experts"]
    moe_hbm = moe["memory_s"] if moe["memory_s"] >= moe["compute_s"] else 0.0
    per_kernel = sum(r["overhead_s"] for r in ops.values())
    return {
        "routed_experts": moe_hbm,
        "other_hbm": att["hbm_bandwidth"] - moe_hbm,
        "compute": att["compute"],
        "per_kernel": per_kernel,
        "step_fixed": att["overhead"] - per_kernel,
        "collectives": att["scale_up_link"] + att["scale_out_link"],
        "step": float(sc.step_time_s[0]),
        "experts_s": float(moe["time_s"]),
        "experts_bytes": float(moe["weight_bytes"]),
    }


def fused_step_s(conc: int) -> float:
    """The model's decode step as :func:`ledger`'s with SGLang's fused shared expert priced (cost/shared_fusion.py,
    switched on for this call only), s."""
    before = shared_fusion.FUSED_SHARED_ON
    shared_fusion.FUSED_SHARED_ON = True
    try:
        return float(_step(conc).step_time_s[0])
    finally:
        shared_fusion.FUSED_SHARED_ON = before


def prompt_s(tokens: int = 1024) -> float:
    """The model's price of one ``tokens`` prompt alone in a step (H200, DeepSeek-R1 FP8 TP8, sglang), s."""
    return float(_step(0, tokens).step_time_s[0])


def implied_step_ms(tpot_ms: float, conc: int, prompt_ms: float, osl: int = 1024) -> float:
    """Decode step a closed-loop run's mean TPOT implies, TPOT − C × P / OSL, ms (each user's prompt stalls the decode
    stream once per OSL tokens). Raises SpecError for a non-positive OSL."""
    if osl <= 0:
        raise SpecError("osl", f"{osl} output tokens", "pass the run's output length (> 0)")
    return tpot_ms - conc * prompt_ms / osl


def moe_tables(folder: Path) -> dict[tuple, float]:
    """Part 4: {(release, distribution, tokens): ms a layer} of SGLang's H200 fused-MoE FP8-block table at
    DeepSeek-R1's TP8 EP1 shape. Raises SpecError if the folder has no SGLang MoE table."""
    import pandas as pd  # the calibrate extra (aiconfigurator-core's parquet tables)

    out: dict[tuple, float] = {}
    paths = sorted((folder / "moe" / "sglang").glob("*/moe_perf.parquet"))
    if not paths:
        raise SpecError(
            "--tables",
            f"{folder} has no moe/sglang/*/moe_perf.parquet",
            "pass aiconfigurator-core's systems/data/h200_sxm folder",
        )
    for p in paths:
        df = pd.read_parquet(p)
        d = df[
            (df.hidden_size == 7168)
            & (df.inter_size == 2048)
            & (df.num_experts == 256)
            & (df.topk == 8)
            & (df.moe_tp_size == 8)
            & (df.moe_ep_size == 1)
            & (df.moe_dtype == "fp8_block")
        ]
        for r in d.itertuples():
            out[(p.parent.name, r.distribution, int(r.num_tokens))] = float(r.latency)
    return out


def _print_part1(table: list[dict]) -> None:
    print("Part 1. InferenceX H200 rows (error %, predicted/measured - 1)")
    print(f"{'row':>4} {'model':13} {'release':10} {'split':9} {'ISL':>5} {'C':>5} {'TPOT':>7} {'interact.':>9}")
    for d in table:
        print(
            f"{d['row']:>4} {d['model'][:13]:13} {d['release'][:10]:10} {d['split']:9} {d['isl']:>5} {d['conc']:>5} "
            f"{d.get('tpot_s', float('nan')):>+7.1f} {d.get('interactivity', float('nan')):>+9.1f}"
        )
    ho = [d for d in table if d["split"] != "fit"]
    for metric in ("tpot_s", "interactivity"):
        errs = sorted((d[metric], d["row"]) for d in ho)
        b = median_signed([e for e, _ in errs])
        mid = errs[(len(errs) - 1) // 2 : len(errs) // 2 + 1]
        print(f"held out {metric}: n {len(errs)}, bias {b:+.1f} (rows {', '.join(str(r) for _, r in mid)})")
    print("DeepSeek-R1 SGLang TP8 TPOT error by release (n, median signed %):")
    for k, v in sorted(release_groups(table).items()):
        print(f"  {k[0]:8} {k[1]:9} n {len(v):>2}  {median_signed(v):+.1f}  ({', '.join(f'{x:+.1f}' for x in v)})")


def _print_part2(groups: dict[tuple, list[float]]) -> None:
    print("\nPart 2. aiconfigurator H200 TPOT (n, median |error|, bias), %")
    for k, v in sorted(groups.items()):
        print(
            f"  {k[0][:14]:14} {k[1][:24]:24} {k[2]:6} {k[3]:9} n {len(v):>3} "
            f"{statistics.median(abs(x) for x in v):5.1f} {median_signed(v):+6.1f}"
        )


def _print_part3() -> dict[int, dict]:
    p_ms = 1e3 * prompt_s()
    print(f"\nPart 3. Model decode step (ms), H200 DeepSeek-R1 FP8 TP8 sglang, 1k/1k; one 1k prompt P = {p_ms:.1f} ms")
    terms = ("routed_experts", "other_hbm", "compute", "per_kernel", "step_fixed", "collectives")
    print(
        f"{'C':>3} " + " ".join(f"{t:>14}" for t in terms) + f" {'step':>7} | implied v0.5.7 / v0.5.12 | "
        "model - implied"
    )
    ledgers = {}
    for c in CONCURRENCIES:
        led = ledger(c)
        ledgers[c] = led
        imp = {rel: implied_step_ms(t[c], c, p_ms) if c in t else None for rel, t in MEASURED_TPOT_MS.items()}
        step = 1e3 * led["step"]
        cells = " / ".join("  —  " if v is None else f"{v:5.2f}" for v in imp.values())
        diff = " / ".join("  —  " if v is None else f"{step - v:+5.2f}" for v in imp.values())
        fused = 1e3 * fused_step_s(c)
        share = f" | fused {fused:5.2f} ({fused - imp['v0.5.12']:+5.2f})"
        if all(v is not None for v in imp.values()):
            gap = imp["v0.5.7"] - imp["v0.5.12"]
            share += f" | v0.5.7 - v0.5.12 {gap:.2f} = {gap / (1e3 * led['routed_experts']):.2f} x routed experts"
        print(
            f"{c:>3} " + " ".join(f"{1e3 * led[t]:>14.2f}" for t in terms) + f" {step:>7.2f} | {cells} | {diff}" + share
        )
    return ledgers


def _print_part4(folder: Path, ledgers: dict[int, dict]) -> None:
    tab = moe_tables(folder)
    rels = sorted({k[0] for k in tab})
    print("\nPart 4. Routed experts a layer (ms) and the HBM bandwidth it implies (TB/s): SGLang tables vs the model")
    print(f"{'tokens':>6} " + " ".join(f"{r + ' bal / pl1.01':>24}" for r in rels) + f" {'model':>7} {'model GB':>8}")
    for c in CONCURRENCIES:
        led = ledgers[c]
        m_ms = 1e3 * led["experts_s"] / MOE_LAYERS
        m_gb = led["experts_bytes"] / MOE_LAYERS / 1e9
        cells = []
        for r in rels:
            bal, pl = tab.get((r, "balanced", c)), tab.get((r, "power_law_1.01", c))
            bal_gb = EXPERT_BYTES_TP8 / 1e9 if c * 8 >= 256 else m_gb
            bw = f"{bal_gb / bal:.2f}" if bal else "—"
            cells.append(f"{bal or float('nan'):.3f} / {pl or float('nan'):.3f} ({bw})")
        print(f"{c:>6} " + " ".join(f"{x:>24}" for x in cells) + f" {m_ms:>7.3f} {m_gb:>8.3f} ({m_gb / m_ms:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", type=Path, help="jalapeno validate --json -o CSV (every row, with split and quality)")
    ap.add_argument("--tables", type=Path, help="aiconfigurator-core systems/data/h200_sxm folder (part 4)")
    args = ap.parse_args()
    with args.csv.open() as fh:
        rows = list(csv.DictReader(fh))
    _print_part1(ix_rows(rows, point_releases(POINTS)))
    _print_part2(aic_groups(rows))
    ledgers = _print_part3()
    if args.tables:
        _print_part4(args.tables, ledgers)


if __name__ == "__main__":
    main()
