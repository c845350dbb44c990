"""GB300's aiconfigurator TPOT bias split by row attribute and as a per-step gap by engine release (round 51, gb300aic51).

Diagnosis only: nothing is fitted into the package, nothing written (docs/gap_aic_itl.md, "GB300's TPOT bias,
round 51 (gb300aic51)").

Input: a ``jalapeno validate --json -o FILE.csv`` (every row, with the ``split`` column: ``fit`` / ``held_out`` /
``none``); flagged rows (a ``quality`` note) are left out, as goals.py does. Rows: aiconfigurator TPOT on GB300 NVL72 (all
DeepSeek-R1) and, for the comparison, GB200 NVL72 (Parts 1-2: DeepSeek-R1 only; Part 3's goal figures: every model). TPOT error = predicted / measured − 1 (positive: the model too slow).

Part 1. GB300 held-out (split not ``fit``) TPOT error by one attribute at a time: engine release (the ``stack``
column), precision, the decode pool's attention sharding (``ATP``: attention tensor parallel; ``ADP``: attention data
parallel; gb300_twin_check.sharding), decode TP, sequences per decode worker (the row's concurrency over the decode
workers and attention-DP ranks, capped at the recipe's ``decode max_batch_size`` the row's note quotes) and ISL/OSL:
n, median signed error (the goal's bias), median |error|.

Part 2. On TensorRT-LLM FP4 attention-TP decode pools, the per-step gap g = predicted − measured TPOT (ms; one
token a sequence a step, no MTP on these rows), per (system, release, split): n, median g, and the least-squares
line g = a + s·b in the sequences per worker b. A gap flat in b is a per-step constant; one that grows is a
per-sequence term.

Part 3 (arithmetic, not a model change). Every TensorRT-LLM 1.2.0rc6.post2 FP4 attention-TP row's predicted TPOT
lowered by the median gap of the ``fit``-split rows of that kind (both racks; never a held-out row), and the
GB300 / GB200 held-out TPOT median / p90 / bias before and after. It sizes what a release-level step term would do;
it is not one (no source names the saving: see the docs section).

Run: python scripts/gb300_tpot_split51.py VALIDATE_CSV   (about 1 s)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gb300_twin_check import sharding  # noqa: E402

SYSTEMS = ("gb300-nvl72", "gb200-nvl72")
#: The release whose attention-TP rows carry the gap (Dynamo 0.8.1.post2's TensorRT-LLM runtime).
RELEASE = "trtllm@1.2.0rc6.post2"
_POOL = re.compile(r"D (\d+)x\(attn TP(\d+) DP(\d+)")
_CAP = re.compile(r"decode max_batch_size (\d+) per")
#: the columns of a ``validate --json -o`` CSV the three parts read (``quality`` is optional)
COLUMNS = "source system model precision stack isl osl concurrency deployment metric measured predicted error notes split".split()


def decode_shape(deployment: str) -> tuple[int, int, int]:
    """(decode workers, attention TP, attention DP) of a disaggregated deployment label; (1, 0, 1) when none.

    >>> decode_shape("disagg P 1x(attn TP1 DP2 · MoE TP1 EP2) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]")
    (4, 8, 1)
    >>> decode_shape("agg attn TP8 DP1 · MoE TP1 EP8 [fp4]")
    (1, 0, 1)
    """
    m = _POOL.search(deployment)
    return (int(m[1]), int(m[2]), int(m[3])) if m else (1, 0, 1)


def per_worker(concurrency: float, deployment: str, notes: str | float) -> float:
    """Sequences a decode worker's attention rank holds: concurrency / (workers × attention DP), capped at the
    recipe's ``decode max_batch_size`` quoted in the row's note (fit/aic_decode_caps.py) when there is one.

    >>> per_worker(96.0, "D 4x(attn TP8 DP1 · MoE TP1 EP8)", "")
    24.0
    >>> per_worker(192.0, "D 4x(attn TP8 DP1 · MoE TP1 EP8)", "decode max_batch_size 32 per attention-DP rank")
    32.0
    """
    workers, _, dp = decode_shape(deployment)
    b = concurrency / (workers * dp)
    m = _CAP.search(notes) if isinstance(notes, str) else None
    return min(b, float(m[1])) if m else b


def rows(csv: str) -> pd.DataFrame:
    """The aiconfigurator TPOT rows of :data:`SYSTEMS` (every model: Part 3's goal figures), unflagged, with the
    decode shape, sequences per worker and per-step gap added."""
    d = pd.read_csv(csv)
    d = d[(d.source == "aiconfigurator") & (d.metric == "tpot_s") & d.system.isin(SYSTEMS) & d.error.notna()]
    if "quality" in d:
        d = d[d["quality"].fillna("").eq("")]
    d = d.copy()
    shape = d.deployment.map(decode_shape)
    d["tp"] = [s[1] for s in shape]
    d["attn"] = d.deployment.map(sharding)
    d["b"] = [per_worker(c, dep, n) for c, dep, n in zip(d.concurrency, d.deployment, d.notes)]
    d["gap_ms"] = (d.predicted - d.measured) * 1e3
    d["held_out"] = d["split"].fillna("") != "fit"
    return d


def _stats(e: pd.Series) -> dict:
    return {
        "n": len(e),
        "bias_pct": round(100 * float(np.median(e)), 1),
        "median_abs_pct": round(100 * float(np.median(np.abs(e))), 1),
    }


def by_attribute(d: pd.DataFrame) -> pd.DataFrame:
    """Part 1: GB300 held-out TPOT error by one attribute at a time."""
    g = d[(d.system == "gb300-nvl72") & d.held_out & (d.model == "deepseek-r1")].copy()
    g["b_band"] = pd.cut(g.b, [0, 4, 16, 64, np.inf], labels=["1-4", "5-16", "17-64", ">64"])
    g["isl_osl"] = g.isl.astype(int).astype(str) + "/" + g.osl.astype(int).astype(str)
    out = [{"attribute": "all", "value": "", **_stats(g.error)}]
    for col in ("stack", "precision", "attn", "tp", "b_band", "isl_osl"):
        for v, s in g.groupby(col, observed=True):
            out.append({"attribute": col, "value": str(v), **_stats(s.error)})
    return pd.DataFrame(out)


def trt_atp(d: pd.DataFrame) -> pd.DataFrame:
    """The DeepSeek-R1 TensorRT-LLM FP4 attention-TP rows (Part 2's and Part 3's set)."""
    return d[
        d["stack"].str.startswith("trtllm@") & (d.precision == "fp4") & (d.attn == "ATP") & (d.model == "deepseek-r1")
    ]


def gap_lines(d: pd.DataFrame) -> pd.DataFrame:
    """Part 2: per (system, release, split), the median per-step gap and its line in the sequences per worker."""
    out = []
    for (system, release, split), g in trt_atp(d).groupby(["system", "stack", "split"]):
        a, s = np.polyfit(g.b, g.gap_ms, 1)[::-1] if g.b.nunique() > 1 else (np.nan, np.nan)
        out.append(
            {
                "system": system,
                "release": release,
                "split": split,
                "n": len(g),
                "median_gap_ms": round(float(g.gap_ms.median()), 3),
                "intercept_ms": round(float(a), 3),
                "slope_ms_per_seq": round(float(s), 4),
                "b_range": f"{g.b.min():g}-{g.b.max():g}",
            }
        )
    return pd.DataFrame(out)


def release_offset(d: pd.DataFrame) -> float:
    """The median per-step gap (ms) of the ``fit``-split :data:`RELEASE` FP4 attention-TP rows, both racks."""
    t = trt_atp(d)
    return float(t[(t["stack"] == RELEASE) & ~t.held_out].gap_ms.median())


def what_if(d: pd.DataFrame, offset_ms: float) -> pd.DataFrame:
    """Part 3: held-out TPOT goal figures per system with the :data:`RELEASE` attention-TP rows' predicted TPOT
    lowered by ``offset_ms`` (arithmetic on the CSV; nothing re-priced)."""
    hit = d.index.isin(trt_atp(d)[lambda t: t["stack"] == RELEASE].index)
    after = d.error.where(~hit, (d.predicted - offset_ms * 1e-3) / d.measured - 1)
    out = []
    for system in SYSTEMS:
        m = (d.system == system) & d.held_out
        if not m.any():
            continue
        for label, e in (("as priced", d.error[m]), (f"-{offset_ms:.3f} ms", after[m])):
            e = e.to_numpy()
            out.append(
                {
                    "system": system,
                    "case": label,
                    "n": len(e),
                    "rows_moved": int((hit & m).sum()),
                    "median": round(100 * float(np.median(np.abs(e))), 1),
                    "p90": round(100 * float(np.quantile(np.abs(e), 0.9)), 1),
                    "bias": round(100 * float(np.median(e)), 1),
                }
            )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python scripts/gb300_tpot_split51.py VALIDATE_CSV", file=sys.stderr)
        return 2
    path = Path(argv[0])
    if not path.is_file():
        print(f"error: {path}: no such file (write one with `jalapeno validate --json -o FILE.csv`)", file=sys.stderr)
        return 1
    try:
        header = pd.read_csv(path, nrows=0).columns
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as e:
        print(f"error: {path}: not a CSV ({e}); write one with `jalapeno validate --json -o FILE.csv`", file=sys.stderr)
        return 1
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        print(
            f"error: {path}: missing column(s) {', '.join(missing)} (write the CSV with `jalapeno validate --json -o FILE.csv`)",
            file=sys.stderr,
        )
        return 1
    d = rows(str(path))
    if d.empty:
        print(
            f"error: {path}: no aiconfigurator GB300/GB200 TPOT rows "
            "(write it with `jalapeno validate --json -o FILE.csv`)",
            file=sys.stderr,
        )
        return 1
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print("== 1. GB300 held-out TPOT error (%) by attribute")
        print(by_attribute(d).to_string(index=False))
        print("\n== 2. TensorRT-LLM FP4 attention-TP decode pools: per-step gap predicted - measured TPOT (ms)")
        print(gap_lines(d).to_string(index=False))
        off = release_offset(d)
        if np.isnan(off):
            print(
                f"\n== 3. skipped: no fit-split {RELEASE} attention-TP rows in {path} (a `validate --held-out` CSV "
                "has none; pass `validate --json -o FILE.csv`)"
            )
            return 0
        print(
            f"\n== 3. What-if (arithmetic): {RELEASE} attention-TP rows' TPOT lowered by the fit rows' median "
            f"gap {off:.3f} ms"
        )
        print(what_if(d, off).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
