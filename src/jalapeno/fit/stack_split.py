"""The stack fits' points and their declared split: which end-to-end points the fits draw on, which half each is in,
and the error summary of each half (fit/stack_fit.py fits on the fit half; docs/stacks.md).

Pool (:func:`fit_pool`, :func:`load_points`): the matched points with a deployment, less the rows their source
corrected (fit/aic_quality.py rule C), the rows of :data:`HELD_OUT_MODELS` and the best rows whose run was identified
(fit/run_identity.py). ``validate``'s ``split`` column (fit/heldout.py) reads this same pool and split.

Declared split (:func:`split`): the points of one (stack, source, system, model, ISL, OSL, mode)
group sorted by concurrency (then id) alternate fit / held out, starting with fit — both halves
span the load range, every group is on both sides. Nothing of the held-out half enters a fit.

Split out of fit/stack_fit.py (round 48) for the module budget; every name is re-exported there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from jalapeno.fit.aic_quality import aic_source_flags
from jalapeno.fit.validate import MeasuredPoint, load_aiconfigurator
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.specs.stacks import stack_for_framework

#: Models whose measured rows never enter the stack fits: a leave-one-model-out check of the fitted engine
#: costs. MiniMax-M2.5 joined the catalog (and its 403 aiconfigurator rows the validation) after the fits
#: were declared (issue 18, round 12); its rows are reported by `validate`, never fitted on.
HELD_OUT_MODELS = ("minimax-m2.5",)
SPLIT_TEXT = (
    "declared split: per (stack, source, system, model, ISL, OSL, mode) group sorted by concurrency, "
    "alternate points fit / held out (fit/stack_fit.split)"
)


def load_points(withheld_systems: frozenset = frozenset()) -> list[MeasuredPoint]:
    """The matched end-to-end points: shipped InferenceX rows and aiconfigurator rows (if installed),
    less the aiconfigurator rows their source corrected (fit/aic_quality.py rule C: they measure a
    benchmark-harness fault, not the deployment, in every metric), the rows of
    :data:`HELD_OUT_MODELS` (held out of every fit, reported only) and those of ``withheld_systems``
    (a leave-one-system-out refit, fit/loso.py)."""
    from jalapeno.errors import SpecError
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    pts, _ = load_inferencex(DEFAULT_POINTS)
    try:
        pts += load_aiconfigurator()[0]
    except SpecError:
        pass
    return fit_pool([p for p in pts if p.system not in withheld_systems])


def fit_pool(points: Sequence[MeasuredPoint]) -> list[MeasuredPoint]:
    """The points of ``points`` the stack fits draw their split over (:func:`load_points`' rule, kept here once so
    that ``validate``'s ``split`` column, fit/heldout.py, reads the same pool): matched, with a deployment, not
    corrected by their source (fit/aic_quality.py rule C), not of :data:`HELD_OUT_MODELS`, not a best row whose run
    was identified (``identified_from``, fit/run_identity.py: kept out so the declared split stays as it was)."""
    corrected = aic_source_flags(list(points))
    return [
        p
        for p in points
        if p.mapping == "matched"
        and p.deployment is not None
        and p.id not in corrected
        and p.model not in HELD_OUT_MODELS
        and not p.identified_from
    ]


def split(points: Sequence[MeasuredPoint]) -> dict[str, str]:
    """Point id → ``"fit"`` or ``"held_out"`` (the declared split of the module docstring)."""
    groups: dict[tuple, list[MeasuredPoint]] = {}
    for p in points:
        key = (stack_for_framework(p.framework, p.system).name, p.source, p.system, p.model, p.isl, p.osl, p.mode)
        groups.setdefault(key, []).append(p)
    out = {}
    for g in groups.values():
        for i, p in enumerate(sorted(g, key=lambda q: (q.concurrency or 0.0, q.id))):
            out[p.id] = "fit" if i % 2 == 0 else "held_out"
    return out


def errors(
    rows: pd.DataFrame, ids: set[str], ttft_flagged: frozenset = frozenset(), tpot_flagged: frozenset = frozenset()
) -> dict[str, dict[str, float]]:
    """Per metric over ``ids``: n, median |error|, p90 |error|, bias (median signed error); the TTFT of
    ``ttft_flagged`` and the TPOT of ``tpot_flagged`` points (fit/aic_quality.py) left out."""
    d = rows[
        rows.id.isin(ids)
        & ~((rows.metric == "ttft_s") & rows.id.isin(ttft_flagged))
        & ~((rows.metric == "tpot_s") & rows.id.isin(tpot_flagged))
    ].dropna(subset=["error"])
    return {
        m: {
            "n": len(g),
            "median_ape": float(np.median(np.abs(g.error))),
            "p90_ape": float(np.percentile(np.abs(g.error), 90)),
            "bias": float(np.median(g.error)),
        }
        for m, g in d.groupby("metric")
        if m != "interactivity"
    }
