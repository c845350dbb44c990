"""Sections of docs/validation.md grouping the errors (issue 18): per system, and per (precision,
serving mode, MTP), for throughput per chip, interactivity and TTFT — n, median and p90 absolute
error, bias (median signed error). scripts/gen_validation_doc.py calls :func:`group_sections`
with one line. Also the fidelity guard's figures beside their thresholds (fit/fidelity.py).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from jalapeno.fit.fidelity import check, guard_figures, guard_rows, load_thresholds
from jalapeno.fit.heldout import JUDGED

METRICS = (("throughput_per_chip", "throughput/chip"), ("interactivity", "interactivity"), ("ttft_s", "TTFT"))


def _mtp(notes: str, deployment: str) -> str:
    m = re.search(r"MTP(\d+)@", deployment or "") or re.search(r"MTP assumed k=(\d+)", notes or "")
    return f"MTP{m.group(1)}" if m else "no MTP"


def _cells(g: pd.DataFrame) -> list[str]:
    out = []
    for m, _ in METRICS:
        e = g[g.metric == m].error.dropna()
        if e.empty:
            out += ["-"] * 4
            continue
        a = np.abs(e)
        out += [str(len(e)), f"{np.median(a):.1%}", f"{np.percentile(a, 90):.1%}", f"{np.median(e):+.1%}"]
    return out


def _held_cells(g: pd.DataFrame) -> list[str]:
    """Per metric n and median |error| of the rows no end-to-end fit saw (split held_out / none, fit/heldout.py)."""
    h = g[g["split"].isin(JUDGED)]
    out = []
    for m, _ in METRICS:
        e = h[h.metric == m].error.dropna()
        out += ["0", "-"] if e.empty else [str(len(e)), f"{np.median(np.abs(e)):.1%}"]
    return out


def _table(rows: pd.DataFrame, keys: list[str], held_out: bool = False) -> list[str]:
    head = (
        "| "
        + " | ".join(keys)
        + " | "
        + " | ".join(f"{lab} n | {lab} median | {lab} p90 | {lab} bias" for _, lab in METRICS)
    )
    if held_out:
        head += " | " + " | ".join(f"{lab} held-out n | {lab} held-out median" for _, lab in METRICS)
    lines = [head + " |", "|" + "---|" * (len(keys) + (6 if held_out else 4) * len(METRICS))]
    for k, g in rows.groupby(keys, sort=True):
        k = k if isinstance(k, tuple) else (k,)
        cells = _cells(g) + (_held_cells(g) if held_out else [])
        lines.append("| " + " | ".join(map(str, k)) + " | " + " | ".join(cells) + " |")
    return lines


def group_sections(rows: pd.DataFrame) -> list[str]:
    """Markdown lines: the per-system and per-(precision, mode, MTP) tables of ``rows``
    (fit/validate.predict_points rows of every source), then the fidelity guard's figures."""
    d = rows.dropna(subset=["error"]).copy()
    d["mtp"] = [_mtp(n, dep) for n, dep in zip(d.notes, d.deployment)]
    out = [
        "## Errors per system (calibrated)",
        "",
        (
            "Every predicted point of each source; absolute error |predicted/measured − 1| (median, p90) "
            "and bias (median signed error). TTFT only where the source measured it on a matched deployment "
            "(InferenceX: mean TTFT of the run, with the idle-start wave, docs/model.md §8.7). The held-out columns "
            "count only the rows no end-to-end fit saw (`split` held_out / none, fit/heldout.py; `jalapeno validate "
            "--held-out`)."
        ),
        "",
        *_table(d, ["source", "system"], held_out=True),
        "",
        "## Errors per precision, serving mode and MTP (calibrated)",
        "",
        (
            "MTP as the row was predicted (the deployment's draft length, or the draft length assumed for "
            "a row the source marks as measured with MTP)."
        ),
        "",
        *_table(d, ["source", "precision", "mode", "mtp"]),
        "",
        "## Errors per mapping (calibrated)",
        "",
        (
            "How each row was mapped to a prediction (fit/validate.py's docstring): a deployment the source "
            "gives (`matched`), the best of the published entries or of the benchmark's search-space runs "
            "(`best_entry@concurrency`, `searched_best[@concurrency]`, fit/searched.py), or, for rows no "
            "search space covers, a sweep or the model's own frontier."
        ),
        "",
        *_table(d, ["source", "mapping"]),
        "",
    ]
    fig = guard_figures(guard_rows())
    th = load_thresholds()
    out += [
        "## Fidelity guard (CI)",
        "",
        (
            "`tests/unit/test_fidelity_guard.py` predicts the shipped InferenceX points that map to a deployment "
            "or a frontier and fails when a median error exceeds its threshold in "
            "`src/jalapeno/data/validation/fidelity_thresholds.toml` (a ratchet: thresholds only move down; "
            "`python scripts/fidelity_ratchet.py`). It ratchets the **all-rows** figure of those points: the fit half "
            "of the stack fits' split and the front-end calibration points are in it (the guard's points are the "
            "shipped InferenceX file's, mapped or not; a held-out-only median would rest on about half as many "
            "points per system). The held-out figures are in 'Results against the goals' above."
        ),
        "",
        "| group | metric | n | median abs. error | threshold |",
        "|---|---|---|---|---|",
    ]
    for m, f in fig["overall"].items():
        t = th["overall"].get(m, {}).get("median_ape")
        out.append(f"| overall | {m} | {f['n']} | {f['median_ape']:.1%} | {'-' if t is None else f'{t:.1%}'} |")
    for s in sorted(fig["system"]):
        for m, f in fig["system"][s].items():
            t = th.get("system", {}).get(s, {}).get(m, {}).get("median_ape")
            out.append(f"| {s} | {m} | {f['n']} | {f['median_ape']:.1%} | {'-' if t is None else f'{t:.1%}'} |")
    bad = check(fig, th)
    out += ["", f"Guard: **{'passes' if not bad else 'breached: ' + '; '.join(bad)}**.", ""]
    return out
