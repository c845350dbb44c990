"""The data-quality section of docs/validation.md (fit/data_quality.py): the rules, the flagged group
with its errors and reasons, the headline with and without it, and the closed-loop identity on
every row of the shipped InferenceX points whose cells allow it. scripts/gen_validation_doc.py
calls :func:`quality_section` with the calibrated run.
"""

from __future__ import annotations

import numpy as np

from jalapeno.fit.aic_consistency import REPEAT_TPOT_FACTOR
from jalapeno.fit.aic_quality import LOAD_TTFT_FACTOR, REPEAT_TTFT_FACTOR, SAME_TPOT, SIBLING_TPOT_FACTOR
from jalapeno.fit.data_quality import (
    IDENTITY_NOISE,
    RATIO_MAX,
    RESIDUAL_BAND,
    SWEEP_TTFT_FACTOR,
    quality_table,
)
from jalapeno.fit.validation_run import DEFAULT_POINTS


def _fig(d: dict | None) -> str:
    return "-" if not d else f"{d['median_ape']:.1%} / {d['p90_ape']:.1%} / {d['bias']:+.1%} (n = {d['n']})"


def _aic_lines(res: dict) -> list[str]:
    """The aiconfigurator data-quality rules (fit/aic_quality.py: A, B on TTFT; C, the source's correction, on every
    metric; D on TPOT; G, H on a deployment's TPOT sweep: fit/aic_consistency.py), the headline both ways and the flags per group."""
    aic, aic_all = res["overall"].get("aiconfigurator", {}), res["overall_all"].get("aiconfigurator", {})
    if not aic_all:
        return []
    rows = res["rows"]
    t = rows[(rows.source == "aiconfigurator") & (rows.metric == "ttft_s")].dropna(subset=["error"])
    out = [
        "",
        "aiconfigurator's `silicon_sample.csv` gives no throughput, so the identity above cannot be written "
        "for its rows; each names the deployment it ran, and two identities of one deployment hold its **TTFT** "
        "(`fit/aic_quality.py`; the model is never consulted). **A. The queue only grows with load:** a row's "
        f"TTFT must not exceed {LOAD_TTFT_FACTOR:g}x that of the same deployment (system, model, engine release, "
        "precision, lengths, layout, workers, MTP) at a higher concurrency whose TPOT is no lower (within "
        f"{SAME_TPOT:.0%}: at least the same load). **B. A repeat must reproduce:** two rows of one deployment at "
        f"one concurrency with TPOT within {SAME_TPOT:.0%} must agree on TTFT within {REPEAT_TTFT_FACTOR:g}x "
        "(both are flagged otherwise). Only the flagged rows' TTFT leaves the figures (their TPOT passes), "
        "and the aiconfigurator client's front-end and burst fits (`scripts/fit_stacks.py`) leave it out. "
        "**C. The source's own correction:** a row of an InferenceX run that InferenceX itself states its "
        "benchmark harness mis-measured, and re-ran, is flagged in every metric and enters no stack fit "
        "(`data/validation/aic_source_flags.toml`: each entry with the source's words and where it says so). "
        "**D. A chip no slower in any resource does not decode slower:** a row's TPOT, less the most its own "
        "prefills can stall it (C · TTFT / (OSL − 1)), must not exceed "
        f"{SIBLING_TPOT_FACTOR:g}x the TPOT (scaled by the batch ratio) of a row of the same model, release, "
        "precision and decode layout on a chip of the same compute and no more HBM bandwidth at no more "
        "context; when every matched row of a campaign (system, model, release, precision, mode) is slower "
        "than its sibling, the whole campaign is flagged. Its TPOT and interactivity leave the figures and the "
        "step-cost fits (`scripts/aic_sibling_check.py` prints the pairs). Within one deployment's sweep "
        "(`fit/aic_consistency.py`): **G. A higher load does not decode faster:** a row's TPOT must not exceed "
        f"{REPEAT_TPOT_FACTOR:g}x that of a row at a higher concurrency; **H. A repeat must reproduce its TPOT:** "
        f"two rows at one concurrency must agree on TPOT within {REPEAT_TPOT_FACTOR:g}x (Tukey's far-out fence of "
        "the repeats' own spread, rounded up). Of the rows in conflict, the fewest whose removal leaves the sweep "
        "consistent are flagged (every row of any such set where several exist), in TPOT and interactivity as "
        "rule D's (`scripts/aic_tpot_consistency.py`).",
        "",
        "| aiconfigurator metric | median / p90 / bias without the flagged rows (headline) | with them |",
        "|---|---|---|",
        *(f"| {m} | {_fig(aic.get(m))} | {_fig(aic_all.get(m))} |" for m in ("ttft_s", "tpot_s")),
        "",
        "TTFT rows flagged per group (predicted rows; groups without a flag not shown):",
        "",
        "| system | model | mode | flagged | of | rule A | rule B | rule C |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (sy, mo, md), g in t.groupby(["system", "model", "mode"]):
        f = g[g.quality != ""]
        if len(f):
            a = int(f.quality.str.contains("rule A").sum())
            b = int(f.quality.str.contains("rule B").sum())
            c = int(f.quality.str.contains("rule C").sum())
            out.append(f"| {sy} | {mo} | {md} | {len(f)} | {len(g)} | {a} | {b} | {c} |")
    d = rows[(rows.source == "aiconfigurator") & (rows.metric == "tpot_s")].dropna(subset=["error"])
    d = d[d.quality.str.contains("rule D|rule G|rule H")]
    if len(d):
        out += [
            "",
            "TPOT rows flagged by rules D, G and H per group:",
            "",
            "| system | model | mode | framework | rule D | rule G | rule H |",
            "|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {sy} | {mo} | {md} | {fw} | "
            + " | ".join(str(int(g.quality.str.contains(f"rule {r}").sum())) for r in "DGH")
            + " |"
            for (sy, mo, md, fw), g in d.groupby(["system", "model", "mode", "framework"])
        ]
    return out


def shared_notes(reasons: list[str]) -> tuple[list[str], list[str]]:
    """Each reason given to two or more rows written once: (the table's reason cells, the note lines).

    ``reasons`` is one string per table row, in table order. A reason that occurs once stays in its cell; one
    that occurs k >= 2 times becomes note [n] (numbered by first occurrence from 1) and each of its cells reads
    ``see note [n]``. The note lines are markdown list items ``n. <reason> (k rows)``, so every fact of the
    reason survives once. Returns two lists: cells (same length as ``reasons``) and notes (empty when no reason
    repeats).
    """
    counts: dict[str, int] = {}
    for r in reasons:
        counts[r] = counts.get(r, 0) + 1
    number: dict[str, int] = {}
    cells, notes = [], []
    for r in reasons:
        if counts[r] < 2:
            cells.append(r)
            continue
        if r not in number:
            number[r] = len(number) + 1
            notes.append(f"{number[r]}. {r} ({counts[r]} rows)")
        cells.append(f"see note [{number[r]}]")
    return cells, notes


def quality_section(res: dict) -> list[str]:
    """Markdown lines of the section, from a fit/validation_run.run_validation result."""
    t = quality_table(DEFAULT_POINTS)
    rows = res["rows"]
    ix, ix_all = res["overall"].get("inferencex", {}), res["overall_all"].get("inferencex", {})
    out = [
        "## Data quality: the closed-loop identity and the flagged group",
        "",
        "Every row of the shipped InferenceX points is held to two stated rules (`fit/data_quality.py`; the "
        "model is never consulted). **1. The closed-loop identity** (Little's law): with C requests always in "
        "flight, tput_per_gpu · GPUs = C · (ISL + OSL) / E2E, E2E = TTFT + (OSL_mean − 1) · TPOT "
        "(OSL_mean = 0.9 · OSL: lengths uniform in [0.8·L, L]). The file's `check_ratio` column is its TTFT-free "
        "form, tput_per_gpu · GPUs / (C · interactivity · (ISL + OSL) / OSL) (≤ 1 by the share of the request "
        f"spent before its first token). Where TTFT is measured, check_ratio over its expected value must lie in "
        f"{RESIDUAL_BAND[0]}-{RESIDUAL_BAND[1]}; where it is not, check_ratio must be ≤ {RATIO_MAX} and the TTFT it "
        f"implies must not exceed {SWEEP_TTFT_FACTOR:g}x that of the same sweep's next-higher concurrency (each "
        f"± {IDENTITY_NOISE:.0%} of E2E, the identity's observed noise): the prefill queue only grows with load. "
        "**2. The source's own flag:** a value its publication calls anomalous "
        "(`src/jalapeno/data/validation/source_flags.toml`, each with where the source says so).",
        "",
        "A flagged point is not dropped: `jalapeno validate` lists it in its own group with the reason, and "
        "the figures of this page (and `validate`'s table) leave it out. They are stated both ways here; the "
        "fidelity guard (CI) still judges every point, flagged ones included.",
        "",
        "| InferenceX metric | median / p90 / bias without the flagged group (headline) | with it |",
        "|---|---|---|",
    ]
    for m in ("throughput_per_chip", "interactivity", "tpot_s", "ttft_s"):
        out.append(f"| {m} | {_fig(ix.get(m))} | {_fig(ix_all.get(m))} |")
    out += _aic_lines(res)
    out += [
        "",
        "**The flagged group** (predicted points):",
        "",
        "| id | system | framework | concurrency | error per metric | reason |",
        "|---|---|---|---|---|---|",
    ]
    fl = rows[rows.quality != ""].dropna(subset=["error"])
    groups = list(fl.groupby("id", sort=False))
    cells, notes = shared_notes([g.quality.iloc[0] for _, g in groups])
    for (rid, g), reason in zip(groups, cells):
        errs = ", ".join(f"{m} {e:+.0%}" for m, e in zip(g.metric, g.error))
        out.append(
            f"| {rid} | {g.system.iloc[0]} | {g.framework.iloc[0]} | {g.concurrency.iloc[0]:g} | {errs} | {reason} |"
        )
    if notes:
        out += ["", "Reasons shared by several flagged points (cited as [n] in the table above):", "", *notes]
    chk = t[t.checked]
    out += [
        "",
        f"**The identity on every row whose cells allow it** ({len(chk)} of {len(t)} rows; the others lack "
        "the GPU count, the concurrency or TPOT/interactivity). TTFT is the measured one, else the one the ratio "
        "implies (*italic*).",
        "",
        "| id | hardware | framework | ISL/OSL | concurrency | check ratio | expected (TTFT measured) | residual "
        "| TTFT s | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in chk.itertuples(index=False):
        exp = "-" if np.isnan(r.expected_ratio) else f"{r.expected_ratio:.3f}"
        resid = "-" if np.isnan(r.residual) else f"{r.residual:.3f}"
        tt = f"{r.ttft_s:.2f}" if r.ttft_measured else f"*{r.ttft_s:.2f}*"
        verdict = "flagged" if r.flag else "ok"
        out.append(
            f"| {r.id} | {r.hardware} | {r.framework} | {r.isl}/{r.osl} | {r.concurrency:g} | "
            f"{r.check_ratio:.3f} | {exp} | {resid} | {tt} | {verdict} |"
        )
    src = t[(t.flag != "") & ~t.checked]
    if len(src):
        out += [
            "",
            "Flagged rows the identity cannot check: "
            + "; ".join(f"{r.id} ({r.flag})" for r in src.itertuples(index=False))
            + ".",
        ]
    return out + [""]
