"""Pareto frontier of throughput against interactivity, and monotone interpolation on it.

InferenceX compares systems on the frontier of *throughput* (tokens/s per chip, per kW or
per $, higher is better) against *interactivity* (tokens/s/user = 1/TPOT, higher is better).
Every swept configuration (parallelism, batch/concurrency, ...) is one point ``(x, y)``; the
frontier is the set of points no other point beats on both axes.

Definitions used throughout (``x`` = interactivity in tok/s/user, ``y`` = throughput):

- point ``j`` *dominates* point ``i`` when ``x[j] >= x[i]`` and ``y[j] >= y[i]`` with at least
  one inequality strict;
- a point is *valid* when both coordinates are finite and strictly positive; invalid points
  (NaN, inf, zero, negative: failed or empty runs) are never on the frontier and never
  dominate anything;
- of exact duplicates ``(x, y)`` only the first index is kept, so the frontier has distinct
  ``x`` and, sorted by ``x`` ascending, strictly decreasing ``y``.

Pure functions on NumPy arrays; no I/O.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from jalapeno.errors import SpecError

#: Default relative distance to the frontier's largest interactivity within which a queried
#: point is labelled ``"at_frontier_end"`` (ratios taken there explode).
DEFAULT_END_RTOL = 0.02

STATUSES = ("at_point", "interpolated", "at_frontier_end", "below_frontier_start", "unreachable")
"""Every status :func:`interp_frontier` can return."""


def _as_1d_float(name: str, values: ArrayLike) -> np.ndarray:
    """``values`` as a 1-D float64 array, or :class:`SpecError` naming ``name``."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise SpecError(name, f"is not numeric ({exc})", "pass an array of numbers") from exc
    if arr.ndim != 1:
        raise SpecError(name, f"has shape {arr.shape}, expected 1-D (N,)", "pass a flat array")
    return arr


def _check_pair(x: np.ndarray, y: np.ndarray, x_name: str, y_name: str) -> None:
    if x.shape != y.shape:
        raise SpecError(
            y_name,
            f"has {y.size} values but {x_name} has {x.size}",
            f"pass one {y_name} value per {x_name} value",
        )


def pareto_mask(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Which points are on the Pareto frontier (maximise both ``x`` and ``y``).

    Algorithm, O(N log N): keep valid points, sort them by ``x`` descending, then ``y``
    descending, then index ascending (stable sort). Walking that order, a point is on the
    frontier iff its ``y`` is strictly greater than the running maximum ``max(y)`` of all points
    before it: every earlier point has ``x' >= x``, so an earlier ``y' >= y`` dominates it (or
    is an earlier-index exact duplicate), and a strictly higher ``y`` cannot be dominated by a
    later point, whose ``x' <= x`` and (same ``x``) ``y' <= y``.

    Args:
        x: interactivity, tok/s/user, shape (N,). Higher is better.
        y: throughput (per chip, per kW, per $), shape (N,). Higher is better.

    Returns:
        Boolean array, shape (N,): True for non-dominated valid points. Empty for N = 0.

    Raises:
        SpecError: ``x`` or ``y`` is not numeric or not 1-D, or their lengths differ.

    >>> pareto_mask([10, 20, 15, 30], [100, 80, 70, 10]).tolist()
    [True, True, False, True]
    >>> pareto_mask([10, 10, -1, np.nan], [100, 100, 500, 9]).tolist()
    [True, False, False, False]
    """
    xs = _as_1d_float("x", x)
    ys = _as_1d_float("y", y)
    _check_pair(xs, ys, "x", "y")
    mask = np.zeros(xs.shape, dtype=bool)
    valid = np.flatnonzero(np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0))
    if valid.size == 0:
        return mask
    vx, vy = xs[valid], ys[valid]
    # lexsort: last key is primary, and the sort is stable, so equal (x, y) keep index order.
    order = np.lexsort((-vy, -vx))
    y_sorted = vy[order]
    prev_max = np.empty_like(y_sorted)
    prev_max[0] = -np.inf
    np.maximum.accumulate(y_sorted[:-1], out=prev_max[1:])
    mask[valid[order[y_sorted > prev_max]]] = True
    return mask


def frontier_indices(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Indices of the frontier points, sorted by ``x`` ascending.

    Along the result ``x`` is strictly increasing and ``y`` strictly decreasing (see the module
    docstring for why both are strict).

    Args:
        x: interactivity, tok/s/user, shape (N,).
        y: throughput, shape (N,).

    Returns:
        Integer array (intp), shape (K,), K <= N; empty when no point is valid.

    Raises:
        SpecError: as :func:`pareto_mask`.

    >>> frontier_indices([10, 20, 15, 30], [100, 80, 70, 10]).tolist()
    [0, 1, 3]
    """
    idx = np.flatnonzero(pareto_mask(x, y))
    xs = np.asarray(x, dtype=np.float64)
    return idx[np.argsort(xs[idx], kind="stable")]


def interp_frontier(
    fx: ArrayLike,
    fy: ArrayLike,
    x_query: ArrayLike,
    end_rtol: float = DEFAULT_END_RTOL,
) -> tuple[np.ndarray, np.ndarray]:
    """Throughput on a frontier at queried interactivities, with a status per query.

    Between neighbouring frontier points ``(x0, y0)`` and ``(x1, y1)`` the interpolation is
    linear in ``(log x, log y)``::

        log y = log y0 + (log x - log x0) / (log x1 - log x0) * (log y1 - log y0)
        i.e.  y = y0 * (x / x0) ** (log(y1 / y0) / log(x1 / x0))

    Why log-log: (i) it is monotone: each segment is a power law with exponent
    ``log(y1/y0)/log(x1/x0) <= 0`` because ``y`` is non-increasing, so interpolated values never
    leave ``[y1, y0]`` and the result is non-increasing in ``x``; (ii) it is scale-free: changing
    units of either axis, or multiplying one system's throughput by a constant, scales the
    result the same way, so ratios between systems do not depend on units; (iii) the
    throughput/interactivity trade-off spans decades on both axes (InferenceX plots it on log
    axes), where a power law between sweep points is a closer guess than a straight line.

    Status per query (first matching rule, with ``x_max = fx[-1]``):

    - ``"unreachable"``: ``x > x_max``; no configuration is that fast per user; ``y = NaN``.
    - ``"below_frontier_start"``: ``x < fx[0]``; ``y = fy[0]``, the throughput of the slowest
      frontier point (running slower per user is not assumed to raise throughput further).
    - ``"at_frontier_end"``: ``x >= x_max * (1 - end_rtol)``; the interpolated ``y``, but
      ratios taken here explode as the frontier drops steeply at its end.
    - ``"at_point"``: ``x`` equals a frontier ``fx[i]`` exactly; ``y = fy[i]``.
    - ``"interpolated"``: otherwise.

    Args:
        fx: frontier interactivity, tok/s/user, shape (K,), K >= 1, finite, > 0, strictly
            increasing (e.g. ``x[frontier_indices(x, y)]``).
        fy: frontier throughput, shape (K,), finite, > 0, non-increasing.
        x_query: interactivities to evaluate, tok/s/user, any shape, finite and > 0.
        end_rtol: relative tolerance of the ``"at_frontier_end"`` label, in [0, 1).

    Returns:
        ``(y, status)``: float64 throughput (unit of ``fy``) and str status arrays, both of
        the shape of ``x_query``.

    Raises:
        SpecError: an argument violates the conditions above.

    >>> y, status = interp_frontier([10, 20], [100, 50], [5, 10, 200 ** 0.5, 20, 25])
    >>> np.round(y, 2).tolist()
    [100.0, 100.0, 70.71, 50.0, nan]
    >>> status.tolist()
    ['below_frontier_start', 'at_point', 'interpolated', 'at_frontier_end', 'unreachable']
    """
    fxs = _as_1d_float("fx", fx)
    fys = _as_1d_float("fy", fy)
    _check_pair(fxs, fys, "fx", "fy")
    if fxs.size == 0:
        raise SpecError("fx", "is empty", "pass a frontier with at least one point")
    if not (np.all(np.isfinite(fxs)) and np.all(np.isfinite(fys)) and np.all(fxs > 0) and np.all(fys > 0)):
        raise SpecError(
            "fx/fy",
            "contain non-finite or non-positive values",
            "build the frontier with frontier_indices(), which drops such points",
        )
    if np.any(np.diff(fxs) <= 0) or np.any(np.diff(fys) > 0):
        raise SpecError(
            "fx/fy",
            "are not a frontier (x strictly increasing, y non-increasing)",
            "pass x[idx], y[idx] with idx = frontier_indices(x, y)",
        )
    if not (np.isfinite(end_rtol) and 0.0 <= end_rtol < 1.0):
        raise SpecError("end_rtol", f"is {end_rtol}, outside [0, 1)", "use e.g. 0.02 (2%)")
    try:
        xq = np.asarray(x_query, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise SpecError("x_query", f"is not numeric ({exc})", "pass numbers") from exc
    if not (np.all(np.isfinite(xq)) and np.all(xq > 0)):
        raise SpecError(
            "x_query", "contains non-finite or non-positive interactivity", "query tokens/s/user values > 0"
        )

    q = xq.ravel()
    y = np.exp(np.interp(np.log(q), np.log(fxs), np.log(fys)))
    status = np.full(q.shape, "interpolated", dtype="<U20")

    pos = np.minimum(np.searchsorted(fxs, q), fxs.size - 1)
    exact = fxs[pos] == q
    y[exact] = fys[pos[exact]]
    status[exact] = "at_point"

    x_max = fxs[-1]
    status[q >= x_max * (1.0 - end_rtol)] = "at_frontier_end"
    below = q < fxs[0]
    y[below] = fys[0]
    status[below] = "below_frontier_start"
    beyond = q > x_max
    y[beyond] = np.nan
    status[beyond] = "unreachable"
    return y.reshape(xq.shape), status.reshape(xq.shape)


def peak_at_concurrency(points, concurrency: float) -> float:
    """Highest throughput per chip (tok/s) among the feasible sweep ``points`` (ServingPoints, (N,))
    whose closed-loop concurrency is at most ``concurrency`` (whole deployment); 0 where none is.

    The bound of a throughput-only row that states its concurrency (``frontier_peak@concurrency``):
    along one deployment throughput per chip does not fall as the load rises, so the best of the
    points at or below C is the best at C up to the sweep's batch-grid spacing (the disaggregated
    sweep solves on a batch grid, not at a fixed concurrency), never the unbounded frontier peak.

    >>> from types import SimpleNamespace as N
    >>> pts = N(feasible=np.array([True, True, False, True]), concurrency=np.array([64., 512., 100., 600.]),
    ...         throughput_per_chip=np.array([900., 3000., 9000., 5000.]))
    >>> peak_at_concurrency(pts, 512)
    3000.0
    """
    ok = points.feasible & (points.throughput_per_chip > 0) & (points.concurrency <= concurrency * (1 + 1e-9))
    return float(points.throughput_per_chip[ok].max()) if ok.any() else 0.0
