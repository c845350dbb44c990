"""Issue 18's accuracy goals on the InferenceX rows no end-to-end fit saw, and which groups miss them.

The goals (issue 18, "calibration & fidelity round 2"; docs/validation.md, "Results against the goals"):
on held-out InferenceX points, throughput per chip and interactivity within a median absolute error of
8%, a p90 of 25% and a median signed error (bias) of ±5%; TTFT within a median of 20%; overall and on
every system with data (:data:`MIN_POINTS` held-out points of the metric or more). The error is
predicted / measured − 1 (fit/validate.predict_points).

:func:`goal_misses` judges the rows ``jalapeno validate --held-out`` reports, and ``validate --held-out``
prints them (:func:`goals_text`): its table gives each (source, system, model, mode) group's figures, not
the goal verdict, so a reader had to judge 40-odd rows by hand. ``scripts/validation_issue18_section.py``
writes the same misses into docs/validation.md.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jalapeno.fit.heldout import JUDGED

#: issue 18's goals on InferenceX held-out rows, per metric: (median, p90, |bias|) of the error
#: predicted/measured − 1 (fractions); TTFT has a median goal only (None: no goal stated).
GOALS = {"throughput_per_chip": (0.08, 0.25, 0.05), "interactivity": (0.08, 0.25, 0.05), "ttft_s": (0.20, None, None)}
#: fewest held-out points of a system's metric for a per-system verdict (as docs/validation.md's goals section)
MIN_POINTS = 3


def _judged(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows the goals judge: InferenceX, a JUDGED split, an error, and not in the flagged group (``quality``
    empty or absent; review47: ``validate --held-out`` passed its rows with the flagged group, its table and
    docs/validation.md without it)."""
    keep = (rows.source == "inferencex") & rows["split"].isin(JUDGED)
    if "quality" in rows:
        keep &= rows["quality"].fillna("").eq("")
    return rows[keep].dropna(subset=["error"])


def goal_misses(rows: pd.DataFrame) -> dict[str, list[str]]:
    """Issue 18's InferenceX goals on the held-out rows: per metric, the misses (empty: met).

    Args:
        rows: fit/validate.predict_points rows (columns source, system, metric, error, split; ``quality`` where
            fit/validation_run.run_validation sets it); rows whose ``split`` is not in fit/heldout.JUDGED (fitted
            on), rows of other sources and rows of the data-quality flagged group (a non-empty ``quality``: the
            figures of ``validate``'s table and docs/validation.md leave them out) are not judged.

    Returns:
        ``{metric: ["overall median 8.4%", "mi325x bias -8.4%", ...]}`` for each metric of :data:`GOALS`;
        a system needs :data:`MIN_POINTS` held-out points of the metric to be judged.

    >>> r = pd.DataFrame({"source": "inferencex", "system": "x", "metric": "ttft_s",
    ...                   "error": [0.1, 0.3, 0.5], "split": "held_out"})
    >>> goal_misses(r)["ttft_s"]
    ['overall median 30.0%', 'x median 30.0%']
    """
    ix = _judged(rows)
    out = {}
    for metric, (med, p90, bias) in GOALS.items():
        e = ix[ix.metric == metric]
        groups = [("overall", e.error.to_numpy())]
        groups += [(str(s), g.error.to_numpy()) for s, g in e.groupby("system") if len(g) >= MIN_POINTS]
        miss = []
        for name, err in groups:
            if not len(err):
                continue
            a = np.abs(err)
            if np.median(a) > med:
                miss.append(f"{name} median {np.median(a):.1%}")
            if p90 is not None and np.percentile(a, 90) > p90:
                miss.append(f"{name} p90 {np.percentile(a, 90):.1%}")
            if bias is not None and abs(np.median(err)) > bias:
                miss.append(f"{name} bias {np.median(err):+.1%}")
        out[metric] = miss
    return out


def goals_text(rows: pd.DataFrame) -> str:
    """One line for ``validate --held-out``: the goals, then per metric 'met' or the groups that miss.

    '' when no held-out InferenceX row has an error (another source alone, or every row fitted on).

    >>> r = pd.DataFrame({"source": "inferencex", "system": "x", "metric": "ttft_s",
    ...                   "error": [0.1, 0.12, 0.15], "split": "none"})
    >>> goals_text(r).rsplit("): ", 1)[1]
    'throughput_per_chip: no held-out row; interactivity: no held-out row; ttft_s met'
    """
    ix = _judged(rows)
    if ix.empty:
        return ""
    parts = []
    for metric, miss in goal_misses(rows).items():
        if not (ix.metric == metric).any():
            parts.append(f"{metric}: no held-out row")
        else:
            parts.append(f"{metric} met" if not miss else f"{metric} missed: {', '.join(miss)}")
    return (
        f"issue 18's goals on the held-out InferenceX rows (throughput_per_chip and interactivity: median "
        f"|err| <= 8%, p90 <= 25%, |bias| <= 5%; ttft_s: median <= 20%; overall and per system with >= "
        f"{MIN_POINTS} points; docs/validation.md, 'Results against the goals'): " + "; ".join(parts)
    )
