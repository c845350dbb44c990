"""Is InferenceX H200's held-out slowness a release term the fit split cannot see? (docs/gap_aic_itl.md, "round 31,
h200ix31"). Nothing here is shipped; nothing is fitted or written.

Part 1 (from a validate CSV). The DeepSeek-R1 FP8 SGLang TP8 EP1 aggregated H200 rows of one launch script
(InferenceX ``benchmarks/single_node/dsr1_fp8_h200.sh``, the same flags since 2026-03-06) at three engine releases:
InferenceX's v0.5.7 sweep (issue #870), aiconfigurator's rows of the 2026-03-25 v0.5.9-cu130 run (export client
``inferencex-db``) and InferenceX's v0.5.12-cu130 sweep (2026-05-17). The release of an InferenceX row is read from
its ``notes`` in the points CSV (``SGLang v0.5.7`` / ``sglang:v0.5.12-cu130``; the validate id is the CSV's line
number), of an aiconfigurator row from its ``framework``. Per (ISL, OSL, concurrency): measured TPOT by release, the
release ratios, the model's TPOT (one recipe, one stack: the same prediction for every release) and the
interactivity error (predicted / measured − 1; negative = the model too slow) with the row's split. Part 1b: at each
concurrency with both lengths, the 8k/1k − 1k/1k TPOT step measured per release and modelled (the context and prefill
work 8k prompts add at one decode batch), and the model's excess over each release at both lengths. Part 1c (round
48, sglgap48): a release step read as a cost per admitted prompt: in a closed loop of C requests of mean output
length L_out a prompt is admitted every L_out / C decode steps, so a cost P paid once per prompt (its step not shared
with another prompt) raises TPOT by P·C / L_out; P = ΔTPOT · L_out / C beside the same releases' mean TTFT step.
L_out is the mean of InferenceX's lengths, uniform on [0.8·OSL, OSL] (:data:`LENGTH_LOW`): 0.9·OSL.

Part 2 (same CSV). gpt-oss-120b MXFP4 TensorRT-LLM aggregated on H200: each InferenceX row beside its
aiconfigurator twin of the same image (``gpt-oss-dev``), ISL/OSL, concurrency and layout (measured and modelled TPOT,
each row's MoE pricing as its note names it), then the aiconfigurator rows' TPOT error (positive = too slow) by
release, layout and concurrency band.

Part 3 (same CSV). aiconfigurator GB300 interactivity error by the decode pool's attention sharding (``ADP`` /
``ATP``, scripts/gb300_twin_check.sharding), fit and held-out rows: what the held-out median is made of.

Usage: python scripts/h200_release_ladder.py [VALIDATE_CSV] [--points POINTS_CSV]
(default CSV: validate.csv in the working folder, written by `jalapeno validate -o validate.csv`; default points:
the shipped src/jalapeno/data/validation/inferencex_points.csv)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gb300_twin_check import sharding  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
POINTS = ROOT / "src" / "jalapeno" / "data" / "validation" / "inferencex_points.csv"
_REL = (re.compile(r"sglang:v(\d+\.\d+\.\d+)"), re.compile(r"SGLang v(\d+\.\d+\.\d+)"))
RELEASES = ("0.5.7", "0.5.9", "0.5.12")
#: InferenceX draws each length uniformly on [LENGTH_LOW x L, L] (its random-range-ratio; DESIGN.md 2.4)
LENGTH_LOW = 0.8


def release_of_note(note: str) -> str | None:
    """The SGLang release an InferenceX points-CSV note names, else None.

    >>> release_of_note("image lmsysorg/sglang:v0.5.12-cu130;  SemiAnalysisAI/InferenceX PR #3173")
    '0.5.12'
    >>> release_of_note("SGLang v0.5.7; e2el is mean;") , release_of_note("one row per GPU")
    ('0.5.7', None)
    """
    for pat in _REL:
        m = pat.search(str(note))
        if m:
            return m.group(1)
    return None


def point_releases(points_csv: str | Path) -> dict[str, str]:
    """validate id (``inferencex_points:LINE``, LINE the CSV's 1-based line, header = 1) → SGLang release."""
    p = pd.read_csv(points_csv)
    out = {}
    for i, note in enumerate(p["notes"]):
        rel = release_of_note(note)
        if rel:
            out[f"inferencex_points:{i + 2}"] = rel
    return out


def _clean(d: pd.DataFrame) -> pd.DataFrame:
    return d[d.quality.isna() & d.error.notna()]


def sglang_ladder(d: pd.DataFrame, rel_of_id: dict[str, str]) -> pd.DataFrame:
    """One row per (ISL, OSL, concurrency) of the H200 DeepSeek-R1 SGLang TP8 EP1 aggregated rows: measured TPOT (ms)
    per release, the model's TPOT, the interactivity error (%) and split per release."""
    d = _clean(d)
    d = d[
        (d.system == "h200")
        & (d.model == "deepseek-r1")
        & d.framework.str.contains("sglang")
        & (d["mode"] == "agg")
        & d.deployment.str.contains("attn TP8 DP1 · MoE TP8 EP1", regex=False)
    ].copy()
    fw = d.framework.str.extract(r"sglang (\d+\.\d+\.\d+)")[0]
    d["rel"] = np.where(d.source == "aiconfigurator", fw, d.id.map(rel_of_id))
    d = d[d.rel.isin(RELEASES)]
    rows = []
    for (isl, osl, c), g in d.groupby(["isl", "osl", "concurrency"]):
        r = {"isl": int(isl), "osl": int(osl), "C": int(c)}
        t = g[g.metric == "tpot_s"]
        i = g[g.metric == "interactivity"]
        f = g[g.metric == "ttft_s"]
        for rel in RELEASES:
            tr, ir, fr = t[t.rel == rel], i[i.rel == rel], f[f.rel == rel]
            r[f"tpot {rel}"] = tr.measured.mean() * 1e3 if len(tr) else np.nan
            r[f"ttft {rel}"] = fr.measured.mean() * 1e3 if len(fr) else np.nan
            r[f"int err {rel}"] = ir.error.mean() * 100 if len(ir) else np.nan
            r[f"split {rel}"] = ",".join(sorted(set(ir.split.astype(str)))) if len(ir) else ""
        r["model tpot"] = t.predicted.mean() * 1e3
        r["0.5.12/0.5.9"] = r["tpot 0.5.12"] / r["tpot 0.5.9"]
        r["0.5.7/0.5.9"] = r["tpot 0.5.7"] / r["tpot 0.5.9"]
        rows.append(r)
    return pd.DataFrame(rows)


def isl_increments(ladder: pd.DataFrame) -> pd.DataFrame:
    """Per concurrency with both 1k/1k and 8k/1k rows: TPOT(8k/1k) − TPOT(1k/1k) in ms, measured per release and
    modelled, and the model's excess over each release's measured TPOT (model − measured, ms) at both lengths."""
    one = ladder[(ladder.isl == 1024) & (ladder.osl == 1024)].set_index("C")
    eight = ladder[(ladder.isl == 8192) & (ladder.osl == 1024)].set_index("C")
    rows = []
    for c in sorted(set(one.index) & set(eight.index)):
        r = {"C": int(c), "model 8k-1k": eight.at[c, "model tpot"] - one.at[c, "model tpot"]}
        for rel in ("0.5.9", "0.5.12"):
            r[f"{rel} 8k-1k"] = eight.at[c, f"tpot {rel}"] - one.at[c, f"tpot {rel}"]
            r[f"{rel} excess 1k"] = one.at[c, "model tpot"] - one.at[c, f"tpot {rel}"]
            r[f"{rel} excess 8k"] = eight.at[c, "model tpot"] - eight.at[c, f"tpot {rel}"]
        rows.append(r)
    return pd.DataFrame(rows)


def per_prompt_step(ladder: pd.DataFrame, slow: str, fast: str) -> pd.DataFrame:
    """Per (ISL, OSL, C) with both releases: the TPOT step ``slow`` − ``fast`` (ms), the cost per admitted prompt it
    implies, P = ΔTPOT × 0.9·OSL / C (ms; module docstring, Part 1c), and the mean TTFT step (ms)."""
    rows = []
    for _, r in ladder.iterrows():
        d_tpot = r[f"tpot {slow}"] - r[f"tpot {fast}"]
        if np.isnan(d_tpot):
            continue
        out_mean = (1 + LENGTH_LOW) / 2 * r["osl"]
        rows.append(
            {
                "isl": r["isl"],
                "osl": r["osl"],
                "C": r["C"],
                f"tpot {slow}-{fast}": d_tpot,
                "per prompt": d_tpot * out_mean / r["C"],
                f"ttft {slow}-{fast}": r[f"ttft {slow}"] - r[f"ttft {fast}"],
            }
        )
    return pd.DataFrame(rows)


def _layout(dep: str) -> str:
    m = re.search(r"attn TP(\d+) DP\d+ · MoE TP(\d+) EP(\d+)", str(dep))
    return "" if not m else "TP{} MoE TP{} EP{}".format(*m.groups())


def gptoss_twins(d: pd.DataFrame) -> pd.DataFrame:
    """Each InferenceX H200 gpt-oss-120b TensorRT-LLM TPOT row with the aiconfigurator ``gpt-oss-dev`` rows of the same
    ISL/OSL, concurrency and layout: measured and modelled TPOT (ms) of both, and their errors (%)."""
    d = _clean(d)
    d = d[
        (d.system == "h200")
        & (d.model == "gpt-oss-120b")
        & d.framework.str.contains("trt")
        & (d["mode"] == "agg")
        & (d.metric == "tpot_s")
    ].copy()
    d["layout"] = d.deployment.map(_layout)
    ix = d[d.source == "inferencex"]
    aic = d[(d.source == "aiconfigurator") & (d.framework == "trtllm gpt-oss-dev")]
    rows = []
    for _, r in ix.iterrows():
        tw = aic[
            (aic.isl == r.isl) & (aic.osl == r.osl) & (aic.concurrency == r.concurrency) & (aic.layout == r.layout)
        ]
        if tw.empty:
            continue
        rows.append(
            {
                "isl": int(r.isl),
                "osl": int(r.osl),
                "C": int(r.concurrency),
                "layout": r.layout,
                "IX meas": r.measured * 1e3,
                "IX model": r.predicted * 1e3,
                "IX err %": r.error * 100,
                "IX triton": "MoE backend triton" in str(r.notes),
                "aic meas": tw.measured.mean() * 1e3,
                "aic model": tw.predicted.mean() * 1e3,
                "aic err %": tw.error.mean() * 100,
                "aic triton": bool(tw.notes.astype(str).str.contains("MoE backend triton").all()),
                "meas IX/aic": r.measured / tw.measured.mean(),
            }
        )
    return pd.DataFrame(rows)


def gptoss_by_layout(d: pd.DataFrame) -> pd.DataFrame:
    """aiconfigurator H200 gpt-oss-120b TensorRT-LLM aggregated TPOT error (median, %) by release, layout and
    concurrency band, with counts."""
    d = _clean(d)
    d = d[
        (d.system == "h200")
        & (d.model == "gpt-oss-120b")
        & (d.source == "aiconfigurator")
        & d.framework.str.contains("trt")
        & (d["mode"] == "agg")
        & (d.metric == "tpot_s")
    ].copy()
    d["layout"] = d.deployment.map(_layout)
    d["band"] = pd.cut(d.concurrency, [0, 8, 32, np.inf], labels=["C<=8", "C16-32", "C>=64"])
    med = (
        d.pivot_table(index=["framework", "layout"], columns="band", values="error", aggfunc="median", observed=False)
        * 100
    )
    n = d.pivot_table(index=["framework", "layout"], columns="band", values="error", aggfunc="count", observed=False)
    return med.round(1).astype(str) + " (" + n.fillna(0).astype(int).astype(str) + ")"


def gb300_sharding(d: pd.DataFrame) -> pd.DataFrame:
    """aiconfigurator GB300 interactivity error by decode-pool attention sharding and split: n and median (%)."""
    d = _clean(d)
    d = d[(d.system == "gb300-nvl72") & (d.source == "aiconfigurator") & (d.metric == "interactivity")].copy()
    d["pool"] = d.deployment.map(sharding)
    d["set"] = np.where(d.split == "fit", "fit", "held out")
    rows = [
        {"set": s, "pool": p, "n": len(g), "median %": round(g.error.median() * 100, 1)}
        for (s, p), g in d.groupby(["set", "pool"])
    ]
    rows += [
        {"set": s, "pool": "all", "n": len(g), "median %": round(g.error.median() * 100, 1)}
        for s, g in d.groupby("set")
    ]
    return pd.DataFrame(rows).sort_values(["set", "pool"]).reset_index(drop=True)


def main(argv: list[str]) -> None:
    args = [a for a in argv if not a.startswith("--")]
    points = argv[argv.index("--points") + 1] if "--points" in argv else POINTS
    if "--points" in argv:
        args.remove(str(points))
    csv = Path(args[0] if args else "validate.csv")
    if not csv.is_file():
        raise SystemExit(f"validate CSV not found: {csv}. Fix: write one with `jalapeno validate -o {csv}`")
    d = pd.read_csv(csv)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 200)
    print("Part 1: H200 DeepSeek-R1 FP8 SGLang TP8 EP1 agg, one script at three releases (TPOT ms; error %)")
    ladder = sglang_ladder(d, point_releases(points))
    print(ladder.round(3).to_string(index=False))
    print("\nPart 1b: TPOT(8k/1k) - TPOT(1k/1k) at one concurrency, and the model's excess (model - measured), ms")
    print(isl_increments(ladder).round(2).to_string(index=False))
    print("\nPart 1c: a release step as a cost per admitted prompt, P = dTPOT x 0.9 OSL / C, beside the TTFT step, ms")
    for slow, fast in (("0.5.9", "0.5.12"), ("0.5.7", "0.5.9")):
        print(per_prompt_step(ladder, slow, fast).round(2).to_string(index=False))
    print("\nPart 2a: H200 gpt-oss-120b TensorRT-LLM, InferenceX rows and their aiconfigurator gpt-oss-dev twins")
    print(gptoss_twins(d).round(3).to_string(index=False))
    print("\nPart 2b: aiconfigurator H200 gpt-oss-120b TensorRT-LLM agg TPOT error, median % (n)")
    print(gptoss_by_layout(d).to_string())
    print("\nPart 3: aiconfigurator GB300 interactivity error by decode-pool attention sharding")
    print(gb300_sharding(d).to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1:])
