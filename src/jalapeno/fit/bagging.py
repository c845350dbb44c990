"""Bagged grid argmins for the stack fits' front ends and burst shares (fit/stack_fit.py steps 2 and 4).

A grid argmin of a mean |log ratio| (an L1 loss) sits on a kink of a piecewise-linear surface; where two parameters
trade off (a request cost against a per-token prompt cost, a front end against a burst share) the valley is flat
and a small change of the rows moves the argmin by whole grid steps (round 28: TensorRT-LLM's inferencex-db client
25 -> 12.5 ms, 6.875 -> 10.625 µs/token, agg burst 0.10 -> 0.15 on a small upstream data change; round 29's
bootstrap, scripts/stack_fit_bootstrap.py, found both optima in the replicates of one data set). Bagging
(Breiman 1996, "Bagging predictors", Machine Learning 24:123-140) takes the median of the argmins over bootstrap
resamples of the fit rows instead: the same loss and grid, a value that moves little when one family of rows
changes. The resampling unit is a row family, the rows of one (system, model, ISL, OSL, mode) sweep, since a
sweep's rows share their deployment and campaign and are not independent draws.

Declared before any held-out figure was read (round 29): :data:`REPLICATES` family resamples drawn with seed
:data:`SEED`; a parameter is fitted when at least half of the replicates fit it (an argmin on its upper search
bound, too few rows or a flat loss do not), and its value is the median over those that do.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

#: Bootstrap replicates per bagged fit (odd, so a median of grid values is a grid value when every replicate fits).
REPLICATES = 51
#: Seed of the replicates' draws (fixed: a refit on the same rows gives the same values).
SEED = 0


def family_weights(families: Sequence[Hashable], n: int = REPLICATES, seed: int = SEED) -> np.ndarray:
    """(n, len(families)) weights: each replicate draws the distinct families with replacement and weighs a row by
    how often its family was drawn. Rows are keyed by ``families`` (one hashable key per row)."""
    keys = sorted(set(families), key=repr)
    index = np.array([keys.index(f) for f in families]) if keys else np.zeros(0, int)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(keys), size=(n, len(keys))) if keys else np.zeros((n, 0), int)
    counts = np.stack([np.bincount(d, minlength=len(keys)) for d in draws]).astype(float)
    return counts[:, index] if len(index) else np.zeros((n, 0))


def weighted_losses(per_row: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(replicates, grid) weighted mean of ``per_row`` (grid, rows) under ``weights`` (replicates, rows); NaN
    entries (a row without a prediction at that grid value) are left out of their grid value's mean."""
    good = np.isfinite(per_row)
    r = np.where(good, per_row, 0.0)
    num = weights @ r.T
    den = weights @ good.T.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1e-30), np.inf)


def _fitted_values(values, fitted) -> np.ndarray | None:
    """``values`` of the replicates ``fitted`` marks, or None when fewer than half of them fit (module docstring)."""
    v = np.asarray(values, float)[np.asarray(fitted, bool)]
    return None if len(v) == 0 or 2 * len(v) < len(np.asarray(fitted)) else v


def bagged(values: np.ndarray | Sequence, fitted: np.ndarray | Sequence) -> float | None:
    """Median of ``values`` over the replicates that ``fitted`` marks, or None when fewer than half of them do."""
    v = _fitted_values(values, fitted)
    return None if v is None else float(np.median(v))


def spread_of(values: np.ndarray | Sequence, fitted: np.ndarray | Sequence) -> list[float] | None:
    """[5th, 95th] percentile of ``values`` over the replicates ``fitted`` marks (the bootstrap spread the stack
    fits report), or None when fewer than half of them fit it."""
    v = _fitted_values(values, fitted)
    return None if v is None else [float(np.percentile(v, 5)), float(np.percentile(v, 95))]
