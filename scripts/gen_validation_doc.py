"""Generate docs/validation.md: predictions against measured end-to-end results.

Runs ``jalapeno.fit.validation_run.run_validation`` twice — with the calibrated efficiency
sets (fitted on kernels only) and with the spec-only defaults — on the InferenceX points shipped in
src/jalapeno/data/validation and, when ``aiconfigurator-core`` is installed, on its end-to-end rows.
Run: python scripts/gen_validation_doc.py [--out FILE]   (several minutes: two full validation runs)
     python scripts/gen_validation_doc.py --check   (exit 1 when docs/validation.md is not what it writes today;
                                                    the "Generated ... on DATE" line is not compared)
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from gen_doc_toc import with_contents
from validation_goals_section import goals_section
from validation_group_sections import group_sections
from validation_issue18_section import issue18_section
from validation_mlperf_section import mlperf_section
from validation_quality_section import quality_section
from validation_kernel_sections import (
    fp4_blackwell_ultra_section,
    kernel_crosscheck_section,
    pricer_and_loso_section,
)

from jalapeno.fit.validation_run import (
    DEFAULT_POINTS,
    calibrated_systems,
    run_validation,
)

OUT = Path(__file__).resolve().parent.parent / "docs" / "validation.md"
#: aiconfigurator's own predictions of a stratified sample of its rows (scripts/aic_own_error.py)
AIC_OWN = OUT.parent / "data" / "aiconfigurator_own_predictions.csv"


def _pct(x: float) -> str:
    return "-" if x is None or np.isnan(x) else f"{x:+.0%}" if x < 0 or x > 0 else "0%"


def _mla_fit_table() -> list[str]:
    """Fitted MLA kernel parameters per measured system with fit and held-out errors
    (fit/mla_kernels.py; read from the shipped calibration sets)."""
    from jalapeno.specs.calibration import load_calibration

    lines = [
        "Fitted `mla_decode[f]` (peak / HBM fraction) and `mla_prefill[f]` (peak fraction) per system; "
        "errors are median / p90 of |predicted/measured − 1| on the fit rows and, in brackets, on the "
        "held-out largest context (decode step 131,071; prefill isl 32,768). Unset in a set, MLA ops "
        "take the generic attention values.",
        "",
        "| system | decode bf16 | decode fp8 | prefill bf16 | prefill fp8 | decode bf16 err | decode fp8 err "
        "| prefill bf16 err | prefill fp8 err |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in sorted(calibrated_systems(("measured",))):
        cal = load_calibration(name)
        rep = (cal or {}).get("report", {}).get("mla", {})
        if "decode" not in rep:
            continue
        p = cal["parameters"]
        # a format the chip has no MLA table for (A100: no FP8) is shown as "-"
        cells = [
            f"{p['mla_decode'][f]['peak_fraction']:.3f} / {p['mla_decode'][f]['hbm_fraction']:.2f}"
            if f in p["mla_decode"]
            else "-"
            for f in ("bf16", "fp8")
        ]
        cells += [
            f"{p['mla_prefill'][f]['peak_fraction']:.3f}" if f in p["mla_prefill"] else "-" for f in ("bf16", "fp8")
        ]
        for ph in ("decode", "prefill"):
            for f in ("bf16", "fp8"):
                if f not in rep[ph]:
                    cells.append("-")
                    continue
                r = rep[ph][f]
                h = r["held_out_largest_context"]
                cells.append(
                    f"{r['fit']['median_ape']:.0%} / {r['fit']['p90_ape']:.0%} "
                    f"({h['median_ape']:.0%} / {h['p90_ape']:.0%})"
                )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _overall_table(res_cal: dict, res_spec: dict) -> list[str]:
    lines = [
        "Without the data-quality flagged group (its points, and the figures with them: the data-quality "
        "section below; fit/data_quality.py).",
        "",
        "| source | metric | n | median abs. error (calibrated) | bias (calibrated) | "
        "median abs. error (spec-only) | bias (spec-only) | calibrated with the flagged group (n, median, bias) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for src, mets in res_cal["overall"].items():
        for m, d in sorted(mets.items()):
            s = res_spec["overall"].get(src, {}).get(m, {})
            a = res_cal["overall_all"].get(src, {}).get(m, d)
            lines.append(
                f"| {src} | {m} | {d['n']} | {d['median_ape']:.1%} | {d['bias']:+.1%} | "
                f"{s.get('median_ape', float('nan')):.1%} | {s.get('bias', float('nan')):+.1%} | "
                f"{a['n']}, {a['median_ape']:.1%}, {a['bias']:+.1%} |"
            )
    return lines


def _group_table(summary: pd.DataFrame, source: str) -> list[str]:
    s = summary[summary.source == source]
    lines = [
        "| system | model | mode | metric | n | median abs. error | p90 abs. error | bias |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in s.itertuples(index=False):
        lines.append(
            f"| {r.system} | {r.model} | {r.mode} | {r.metric} | {r.n} | {r.median_ape:.1%} | "
            f"{r.p90_ape:.1%} | {r.bias:+.1%} |"
        )
    return lines


def _group_stat(rows: pd.DataFrame, metric: str, mask) -> tuple[int, float, float]:
    d = rows[mask & (rows.metric == metric)].dropna(subset=["error"])
    if d.empty:
        return 0, float("nan"), float("nan")
    return len(d), float(np.median(np.abs(d.error))), float(np.median(d.error))


def _aic_own(rows: pd.DataFrame) -> tuple[str, list[str]]:
    """aiconfigurator's TPOT/TTFT error beside ours on the rows both predicted (verdict, table)."""
    if not AIC_OWN.is_file():
        return "aiconfigurator's own error was not computed (no docs/data/aiconfigurator_own_predictions.csv).", []
    own = pd.read_csv(AIC_OWN)
    own = own[own.status == "ok"].assign(id="aic:" + own.id)
    lines = [
        "| metric | rows | aiconfigurator median abs. error | aiconfigurator bias | jalapeno median abs. error "
        "| jalapeno bias |",
        "|---|---|---|---|---|---|",
    ]
    tpot = None
    for metric, col in (("tpot_s", "aic_tpot_ms"), ("ttft_s", "aic_ttft_ms")):
        m = (
            rows[(rows.source == "aiconfigurator") & (rows.metric == metric)]
            .dropna(subset=["error"])
            .merge(own[["id", col]], on="id")
        )
        if m.empty:
            continue
        e_aic = m[col] / 1e3 / m.measured - 1
        stats = (
            float(np.median(np.abs(e_aic))),
            float(np.median(e_aic)),
            float(np.median(np.abs(m.error))),
            float(np.median(m.error)),
        )
        lines.append(f"| {metric} | {len(m)} | {stats[0]:.1%} | {stats[1]:+.1%} | {stats[2]:.1%} | {stats[3]:+.1%} |")
        if metric == "tpot_s":
            tpot = (len(m), *stats)
    if tpot is None:
        return "aiconfigurator's own predictions share no row with ours.", lines
    n, a, ab, j, jb = tpot
    verdict = (
        f"On the {n} rows of a stratified sample that aiconfigurator 0.12 itself predicts "
        f"(`scripts/aic_own_error.py`, `{AIC_OWN.relative_to(OUT.parent.parent)}`), its own TPOT error is "
        f"{a:.1%} median ({ab:+.1%} bias), ours {j:.1%} ({jb:+.1%})."
    )
    return verdict, lines


def _causes(rows: pd.DataFrame) -> list[str]:
    """The likely causes of the large disagreements, each with its figure from this run."""
    ix = rows.source == "inferencex"
    amd = ix & rows.system.str.startswith("mi")
    nv = ix & ~rows.system.str.startswith("mi")
    n_a, m_a, b_a = _group_stat(rows, "throughput_per_chip", amd)
    n_n, m_n, b_n = _group_stat(rows, "throughput_per_chip", nv)
    _, m_t, b_t = _group_stat(rows, "ttft_s", ix)
    sat = ix & (rows.concurrency >= 800) & (rows["mode"] == "disagg") & (rows.framework == "dynamo-trt")
    n_s, _, b_s = _group_stat(rows, "throughput_per_chip", sat)
    mid = ix & (rows["mode"] == "disagg") & (rows.framework == "dynamo-trt") & rows.concurrency.between(48, 180)
    n_m, _, b_m = _group_stat(rows, "throughput_per_chip", mid)
    _, _, b_mt = _group_stat(rows, "tpot_s", mid)
    n_sg, _, b_sg = _group_stat(rows, "throughput_per_chip", ix & (rows.framework == "dynamo-sglang"))
    agg_ds = (rows.source == "aiconfigurator") & (rows["mode"] == "disagg")
    n_d, m_d, b_d = _group_stat(rows, "tpot_s", agg_ds)
    n_at, m_at, b_at = _group_stat(rows, "ttft_s", rows.source == "aiconfigurator")
    return [
        f"- **Kernel-calibrated NVIDIA systems** land at {m_n:.1%} median / {b_n:+.1%} bias on InferenceX "
        f"throughput per chip (n = {n_n}); **AMD** (GEMM and MoE parameters from amd-aiter's tuned-kernel "
        f"tables, the rest borrowed) at {m_a:.1%} / {b_a:+.1%} (n = {n_a}). The AMD residual is largest for "
        "DeepSeek-R1 FP8 (ATOM on MI355X, SGLang on MI300X), where attention, collectives and BF16 kernels "
        "are still NVIDIA-derived, and gpt-oss on MI355X is under-predicted (its many small kernels pay the "
        "ROCm kernel floor).",
        f"- **TTFT: median {m_t:.0%}, bias {b_t:+.0%}.** The front end is the engine profile's (SGLang's fitted "
        "on InferenceX TTFT at concurrency <= 4; the others keep 0.15 s + 6.4 µs per prompt token: "
        "docs/stacks.md); under load the prefill queue, InferenceX's idle start (its 10·C counted requests "
        "begin with C at once in an idle server) and the scheduler's poll for new requests (SGLang "
        "`--scheduler-recv-interval`, 10 or 30 decode steps in InferenceX's B200 scripts) are modelled "
        "(docs/model.md §8.7; within 10% of the simulator on a 48-point grid, the poll within 5%), and so is "
        "SGLang's KV pool and admission (docs/model.md §7.2: H200 8k1k at concurrency 64 queues for "
        "admission, -41% -> -8%; the simulator's exact rule puts it at +80%, a knife edge of 1-2 GiB). What "
        "remains: two H200 1k1k sweeps of different SGLang versions disagree by up to 2x at the same load, "
        "MI325X misses 0.32-0.48 s at every load (not GPU work of its 8k prefill: the TPOT rules that out, "
        "docs/model.md §12), B200 1k1k at concurrency 64 (FP4: "
        "a flagged 5.7 s run) and the saturated GB200 Dynamo point (where the excess users of a "
        "disaggregated deployment wait).",
        f"- **aiconfigurator TTFT: median {m_at:.0%}, bias {b_at:+.0%}** (n = {n_at}). Its rows are timed by "
        "another benchmark client (NVIDIA's genai-perf runs, fixed lengths), whose front end is fitted per "
        "engine on its own low-load rows (`clients.aiconfigurator`, docs/stacks.md). A share of its counted "
        "requests meets the idle-start prefill burst (the client's `prefill_burst_fraction` and "
        "`agg_burst_fraction`, fitted per engine and mode on the declared split: docs/model.md §8.7 (7)); the "
        "full recurring wave of a fixed-length closed loop (the simulator at range ratio 1) over-predicts it "
        "(docs/model.md §12). Many rows repeat one measurement under several deployments or carry "
        "multi-second outliers.",
        f"- **Prefill-bound disaggregated runs** (Dynamo-TRT at concurrency >= 800, n = {n_s}): throughput "
        f"{b_s:+.0%} median. With one prefill worker per 8-40 decode GPUs the prefill pool sets the "
        "admission rate; users beyond it queue (`prefill_capacity (queueing)`). FP4 prefill depends on the "
        "MoE token-pass term fitted on the kernel tables (docs/model.md §11.1).",
        "- **MTP** acceptance is not reported by the sources: Dynamo-TRT rows take the recipes' draft length "
        "(MTP3 light load, MTP1-2 heavy) at the `dynamo-trtllm` profile's fitted per-token acceptance "
        "(data/stack_fits.toml, docs/stacks.md), Dynamo-SGLang's B200 FP4 rows their recipes' EAGLE chain "
        f"(k = 2 at 0.75; throughput {b_sg:+.0%} median, n = {n_sg}: the rows at 32-64 users would match at 0.6 per token, "
        "those at 256-512 users stay 17-36% over even then, so most of the residual is not the draft mapping), "
        "aiconfigurator's TRT-LLM DeepSeek-R1 rows of InferenceX MTP sweeps (identified by their measured time, "
        "data/validation/aic_sweeps.toml: B200 1.2.0rc6.post3 and 1.1.0rc2.post2 of 2026-01-14, H200 "
        "1.1.0rc2.post2 of 2026-01-14) their launch scripts' MTP3 (MTP1 with attention DP) at the `trtllm` "
        "profile's fitted acceptance, other MTP rows k = 1 at 0.85 (labelled per row). Their "
        "decode pools' MoE layers are priced by the kernels of the backend the recipe names (CUTLASS, "
        "TRT-LLM-gen; CuteDSL unmeasured: docs/model.md §8.6). Mid-load Dynamo-TRT points (concurrency "
        f"48-180, n = {n_m}) are over-predicted (throughput {b_m:+.0%}) with TPOT {b_mt:+.0%}: B200's TEP8 "
        "entry at 18-32 sequences per worker and GB200's CuteDSL DEP32 entry at 180 users.",
        f"- **aiconfigurator disaggregated rows** (n = {n_d} with worker counts; TPOT {m_d:.1%} median, "
        f"{b_d:+.1%} bias): rows without prefill/decode worker counts are skipped (the batch per decode "
        "worker, hence TPOT, is unknown); MTP is not recorded there and, outside the identified sweeps, not assumed.",
        "- **Spec-only defaults** are reported beside the calibrated sets: they were chosen from public kernel "
        "figures, not fitted.",
    ]


def _repeats_table(cal: dict) -> list[str]:
    """The repeated aiconfigurator runs the loader counted once, per group (fit/aic_duplicates.py)."""
    from jalapeno.fit.aic_duplicates import SAME_VALUE_MS, repeats_per_group

    kept = cal["rows"][cal["rows"].source == "aiconfigurator"].drop_duplicates("id")
    table = repeats_per_group(cal["skipped"], list(kept.itertuples()))
    return [
        "### Repeated runs counted once",
        "",
        "aiconfigurator-core 0.12.0's sample holds many runs two or three times (dated source files, the "
        "database dump's `cfgNNN` ids, gap-analysis copies rounded to 0.01 ms, DeepSeek-R1 and -V3 twins). Rows "
        "of one system, model, engine release, precision, mode, ISL/OSL and concurrency whose measured TTFT and "
        f"TPOT both agree within {SAME_VALUE_MS} ms are one measurement: one is kept (the one whose id names its "
        "layout, then the unrounded one), the others are skipped as repeats (fit/aic_duplicates.py). "
        f"{sum(t[3] for t in table)} rows dropped, {sum(t[4] for t in table)} measurements kept.",
        "",
        "| system | model | mode | repeats dropped | measurements kept |",
        "|---|---|---|---|---|",
        *[f"| {s} | {m} | {mode} | {n} | {k} |" for s, m, mode, n, k in table],
        "",
    ]


#: the page's one line that changes with the day it is generated (left out of --check)
_DATE = re.compile(r"^(Generated by `python scripts/gen_validation_doc.py` on )\d{4}-\d{2}-\d{2}")


def stale_lines(shipped: str, fresh: str) -> list[str]:
    """Where the shipped page differs from a fresh one, the generation date left out: one line per
    difference ("line N: shipped ... / fresh ..."), the first 20, then a count; empty when current."""
    a = [_DATE.sub(r"\1DATE", x) for x in shipped.splitlines()]
    b = [_DATE.sub(r"\1DATE", x) for x in fresh.splitlines()]
    diffs = [f"line {i + 1}: shipped {x[:120]!r} / fresh {y[:120]!r}" for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if len(a) != len(b):
        diffs.append(f"length: shipped {len(a)} lines, fresh {len(b)}")
    return diffs[:20] + ([f"... {len(diffs) - 20} more"] if len(diffs) > 20 else [])


def page() -> str:
    """The page's text as generated from this checkout (two validation runs, the guard's, the LOSO file), with a
    contents list of its sections under the title."""
    cal = run_validation(None, True, "calibrated")
    spec = run_validation(None, True, "spec")
    rows = cal["rows"][cal["rows"].quality == ""]  # the flagged group has its own section (quality_section)
    n_pts = cal["rows"].drop_duplicates("id").groupby("source").size().to_dict()  # flagged ones included
    skipped = pd.DataFrame(cal["skipped"], columns=["id", "reason"])
    top_skips = skipped.reason.str.slice(0, 70).value_counts().head(8)
    own_verdict, own_table = _aic_own(rows)
    worst = (
        rows.dropna(subset=["error"])
        .assign(abs_err=lambda d: d.error.abs())
        .sort_values(["abs_err", "id"], ascending=[False, True], kind="stable")
        .drop_duplicates(["system", "model", "metric"])
        .head(12)
    )
    lines = [
        "# Validation: predictions against measured end-to-end results",
        "",
        f"Generated by `python scripts/gen_validation_doc.py` on {datetime.date.today()} "
        "(`jalapeno validate` prints the same tables). Error = predicted / measured − 1; bias is the median "
        "signed error.",
        "",
        "## Data and split",
        "",
        f"- **Judged on (end-to-end):** {n_pts.get('inferencex', 0)} InferenceX points "
        f"(`{DEFAULT_POINTS.name}`, shipped in src/jalapeno/data/validation) and {n_pts.get('aiconfigurator', 0)} rows of "
        "aiconfigurator-core 0.12.0's `silicon_sample.csv` (measured TTFT/TPOT with full deployments; "
        "models and systems in the catalog only).",
        "- **Calibrated on (kernels only):** aiconfigurator-core's per-kernel tables (GEMM, attention, MLA "
        "attention, MoE, NCCL, "
        f"custom all-reduce) for {', '.join(sorted(calibrated_systems(('measured',))))} (`jalapeno calibrate`, "
        "fit/calibrate.py), and for MI300X/MI325X/MI355X amd-aiter's tuned GEMM and fused-MoE tables "
        '(fit/amd.py; their other parameters borrowed, `kind = "partial"`); sets in '
        "`src/jalapeno/data/calibration/`. No end-to-end point enters a fit; rows on those systems are marked "
        "`kernels_calibrated` in `jalapeno validate --out`. DeepSeek-R1's MoE shape is held out of the MoE fits.",
        "- **Fitted on end-to-end data** (four fits): the default front-end TTFT cost (a + b·ISL, outside the "
        "accelerator) on 5 InferenceX H200 SGLang TP8 points at concurrency <= 8 "
        "(`scripts/fit_frontend.py`, fit/heldout.frontend_calibration); the software stacks' fixed costs "
        "(below) on the fit half of a declared split of the matched points; TensorRT-LLM's eager host time per "
        "call (24 µs, fit/trt_prompt_graphs.TRTLLM_EAGER_CALL_S; round 26, `scripts/trt_eager_host_calls.py`) on "
        "the even half (by id) of the unflagged B200 TensorRT-LLM aggregated gpt-oss-120b / Llama-3.3-70B / "
        "DeepSeek-R1 rows at concurrency <= 8, DeepSeek-R1's only when measured warm "
        "(fit/trt_prompt_graphs.eager_call_split); sa-bench's disaggregated floor and burst share per engine "
        "(fit/client_floor.DISAGG_TERMS, round 47, `scripts/aic_gb_ttft_terms47.py`) on the stack fits' fit half "
        "of the disaggregated `inferencex-db` rows (it adds no `fit` row). Those points are `fit` in the `split` column of `jalapeno "
        "validate --out`; the goals below are judged on the other rows (`jalapeno validate --held-out`), the "
        "other tables count every row.",
        "- **Derived systems** (no kernel tables: Jalapeño, Vera Rubin) borrow their nearest family's set.",
        "- **Mapping:** `matched` (the deployment and concurrency given by the source); `best_entry@concurrency` "
        "(the best of the published recipe entries that ran the row's concurrency); `searched_best` / "
        '`searched_best@concurrency` (fit/searched.py): a "best configuration" row (InferenceX '
        "`max_throughput_per_gpu`, or a row without interactivity) is the best of the runs its benchmark's "
        "search space made — per config key of InferenceX's nvidia-master.yaml / amd-master.yaml, the layouts "
        "(TP, EP, attention DP; disaggregated: prefill and decode workers) and the concurrencies each ran, in "
        "force at the row's date (`src/jalapeno/data/validation/inferencex_search.toml`, written by "
        "`scripts/inferencex_search_space.py`); a row with a concurrency takes the runs at it, one without "
        "every run up to each entry's conc-end, so a peak is no longer the model's unbounded frontier peak. "
        "MTP runs only for MTP rows, or for a row silent on MTP whose concurrency only MTP entries ran. "
        "Where those runs at the row's concurrency are one layout — or one layout is the only one whose GPU "
        "count the closed-loop identity of the row's own throughput, TTFT and TPOT admits — the row's run is "
        "read: it is `matched` with that run and judged on every metric it gives (fit/run_identity.py; 25 "
        "blog rows; such rows stay out of the stack fits and are guarded on throughput only). "
        "Rows no search space covers: `best@concurrency` (the best of the layouts its recipe states), "
        "`frontier@interactivity`, `frontier_peak@concurrency` (a throughput-only row with a concurrency: the "
        "predicted sweep's best at a concurrency no higher than the row's), `frontier_peak` (neither; "
        "fit/validate.py). Dynamo-TRT disaggregated rows read "
        "the InferenceX recipes (SemiAnalysisAI/InferenceX nvidia-master.yaml): prefill attention "
        "data-parallel, decode TEP at <= 64 sequences per worker else DEP, MTP draft length by sequences per "
        "attention rank (3 / 2 / 1 at <= 48 / <= 100 / more) at 0.75 acceptance per token; Dynamo-SGLang "
        "B200 FP4 rows the recipes' EAGLE chain of 2 drafts (speculative-num-steps 2, topk 1) at the same "
        "0.75; other MTP rows without a recipe assume one draft token accepted 85% of the time (DeepSeek-V3 "
        "report). Labelled per row. "
        "aiconfigurator disaggregated rows without worker counts are skipped.",
        f"- **Skipped:** {len(skipped)} rows, mostly models outside the catalog or disaggregated rows "
        "without worker counts:",
        "",
        *[f"  - {n} x {r}" for r, n in top_skips.items()],
        "",
        "## Results against the goals",
        "",
        *goals_section(cal, rows, own_verdict),
        "## Overall",
        "",
        *_overall_table(cal, spec),
        "",
        *quality_section(cal),
        "## Kernel fits: MLA attention (TRT-LLM `generation_mla_perf` / `context_mla_perf`)",
        "",
        *_mla_fit_table(),
        "",
        *group_sections(rows),
        "## Kernel fits: FP4 on Blackwell Ultra",
        "",
        *fp4_blackwell_ultra_section(),
        "",
        "## Kernel fits against measured bests and published figures",
        "",
        *kernel_crosscheck_section(),
        "",
        *__import__("jalapeno.report.stack_fits", fromlist=["markdown"]).markdown(),  # engine fixed-cost fits
        "## Pricers: roofline vs table lookup, and leave-one-system-out",
        "",
        *pricer_and_loso_section(),
        "",
        "## InferenceX, per system / model / mode (calibrated)",
        "",
        *_group_table(cal["summary"], "inferencex"),
        "",
        *mlperf_section(),
    ]
    if "aiconfigurator" in cal["overall"]:
        lines += [
            "## aiconfigurator end-to-end rows, per system / model / mode (calibrated)",
            "",
            *_group_table(cal["summary"], "aiconfigurator"),
            "",
            *_repeats_table(cal),
        ]
    if own_table:
        lines += [
            "## aiconfigurator's own error beside ours (same rows)",
            "",
            "A stratified sample of 150 of the mappable rows (seed 0; every system / model / mode group "
            "represented) was predicted with aiconfigurator 0.12's own estimator (`cli_estimate`, default "
            "SILICON database, its current backend versions, no MTP); rows it could not predict "
            "(cross-node workers, out-of-memory verdicts, head counts its TP does not divide, missing tables) "
            "are left out. `python scripts/aic_own_error.py --aic-path DIR` reproduces the file "
            "(about 8 minutes; the upper `aiconfigurator` package installed into DIR as its docstring says).",
            "",
            *own_table,
            "",
        ]
    lines += [
        "## Where it disagrees, and the likely cause",
        "",
        "| system | model | metric | id | measured | predicted | error | deployment / mapping |",
        "|---|---|---|---|---|---|---|---|",
        *[
            f"| {r.system} | {r.model} | {r.metric} | {r.id} | {r.measured:.4g} | {r.predicted:.4g} | {r.error:+.0%} | "
            f"{r.deployment or r.mapping} |"
            for r in worst.itertuples()
        ],
        "",
        *_causes(rows),
        "",
    ]
    at = lines.index("## Overall")  # issue 18's audit right after the goals; it checks the page's headings
    lines[at:at] = ["## Issue 18 status", "", *issue18_section(rows, cal["rows"], lines)]
    return with_contents("\n".join(lines))  # the contents list under the title (scripts/gen_doc_toc.py)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT, help="the page to write or check (default docs/validation.md)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when the page is not current")
    a = ap.parse_args(argv)
    text = page()
    if a.check:
        if not a.out.is_file():
            print(f"{a.out}: not found; run python scripts/gen_validation_doc.py")
            return 1
        diffs = stale_lines(a.out.read_text(), text)
        print("\n".join(diffs + ["stale: run python scripts/gen_validation_doc.py"]) if diffs else f"{a.out}: current")
        return 1 if diffs else 0
    a.out.write_text(text)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
