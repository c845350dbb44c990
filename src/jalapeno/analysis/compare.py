"""Comparisons between systems on their frontiers: headline numbers, ratios, operating tiers.

A :class:`Frontier` is generic: ``x`` is interactivity (tok/s/user) and ``y`` any
higher-is-better throughput (tok/s per chip, per kW, per $/hour); the unit of ``y`` carries
through to every throughput a function here returns. The measures follow DESIGN §3:

- peak ratio: ``max(y_a) / max(y_b)``;
- iso-interactivity ratio: ``y_a(x) / y_b(x)`` at the same tok/s/user, each side interpolated
  monotonically (log-log, :func:`jalapeno.analysis.frontier.interp_frontier`), flagged at or
  past the end of either frontier;
- operating tiers: Batch = peak throughput; Fast / Ultra-fast = best throughput at or above a
  per-user speed floor (:data:`DEFAULT_TIER_FLOORS`, parameters).

Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike

from jalapeno.analysis.frontier import (
    DEFAULT_END_RTOL,
    frontier_indices,
    interp_frontier,
)
from jalapeno.errors import InfeasibleDeployment, SpecError

DEFAULT_TIER_FLOORS: Mapping[str, float] = MappingProxyType({"fast": 100.0, "ultra_fast": 300.0})
"""Default per-user speed floors of the operating tiers, tok/s/user.

Assumptions, not measurements: Fast = 100 tok/s/user and Ultra-fast = 300 tok/s/user, round
numbers in the range InferenceX-style comparisons use for "interactive" and "very fast" serving.
They are parameters: pass your own ``floors`` to :func:`tiers`.
"""

_END_STATUSES = ("at_frontier_end", "below_frontier_start")


@dataclass(frozen=True, slots=True, eq=False)
class Frontier:
    """A Pareto frontier of one system, sorted by interactivity ascending.

    Attributes:
        x: interactivity, tok/s/user, shape (K,), K >= 1, finite, > 0, strictly increasing.
        y: throughput (unit chosen by the caller: tok/s per chip, per kW, ...), shape (K,),
            finite, > 0, non-increasing. ``y[0]`` is the peak, at the lowest interactivity.
        labels: one label per frontier point (e.g. the configuration's name), or None.
        source_indices: index of each frontier point in the arrays it was built from, shape
            (K,), or None when built directly.

    Arrays are stored as read-only copies. Build from all swept points with
    :func:`build_frontier`.

    Raises:
        SpecError: the arrays break the conditions above.
    """

    x: np.ndarray
    y: np.ndarray
    labels: tuple[str, ...] | None = None
    source_indices: np.ndarray | None = None

    def __post_init__(self) -> None:
        x = _frozen_copy(self.x, np.float64)
        y = _frozen_copy(self.y, np.float64)
        if x.ndim != 1 or x.shape != y.shape or x.size == 0:
            raise SpecError(
                "Frontier.x/y", f"have shapes {x.shape} and {y.shape}", "pass two non-empty 1-D arrays of equal length"
            )
        try:  # interp_frontier validates finiteness, positivity and ordering.
            interp_frontier(x, y, x[:1])
        except SpecError as exc:
            raise SpecError("Frontier.x/y", exc.problem, exc.fix) from exc
        if self.labels is not None and len(self.labels) != x.size:
            raise SpecError(
                "Frontier.labels",
                f"has {len(self.labels)} labels for {x.size} points",
                "pass one label per frontier point, or None",
            )
        src = None
        if self.source_indices is not None:
            src = _frozen_copy(self.source_indices, np.intp)
            if src.shape != x.shape:
                raise SpecError(
                    "Frontier.source_indices",
                    f"has shape {src.shape}",
                    f"pass one index per frontier point, shape {x.shape}",
                )
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "labels", None if self.labels is None else tuple(self.labels))
        object.__setattr__(self, "source_indices", src)


def _frozen_copy(values: ArrayLike, dtype: type) -> np.ndarray:
    arr = np.array(values, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


def build_frontier(x: ArrayLike, y: ArrayLike, labels: ArrayLike | None = None) -> Frontier:
    """The frontier of all swept points: Pareto filter, then sort by ``x`` ascending.

    Args:
        x: interactivity of every point, tok/s/user, shape (N,), N >= 1.
        y: throughput of every point, shape (N,).
        labels: one label per point, length N, or None.

    Returns:
        :class:`Frontier` of the non-dominated valid points (finite, > 0), with their labels
        and their indices into ``x``.

    Raises:
        SpecError: empty input, mismatched lengths, or no valid point.

    >>> f = build_frontier([10, 20, 15, 30], [100, 80, 70, 10], ["a", "b", "c", "d"])
    >>> f.x.tolist(), f.y.tolist(), f.labels
    ([10.0, 20.0, 30.0], [100.0, 80.0, 10.0], ('a', 'b', 'd'))
    """
    if np.size(x) == 0:
        raise SpecError("x", "is empty", "pass at least one swept point")
    idx = frontier_indices(x, y)
    if idx.size == 0:
        raise SpecError(
            "x/y",
            "have no point with finite, positive interactivity and throughput",
            "check the sweep: every run failed or produced zero throughput",
        )
    lab = None
    if labels is not None:
        all_labels = [str(s) for s in labels]
        if len(all_labels) != np.size(x):
            raise SpecError(
                "labels", f"has {len(all_labels)} labels for {np.size(x)} points", "pass one label per point, or None"
            )
        lab = tuple(all_labels[i] for i in idx)
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    return Frontier(xs[idx], ys[idx], lab, idx)


def iso_interactivity_ratio(
    a: Frontier, b: Frontier, x_values: ArrayLike, end_rtol: float = DEFAULT_END_RTOL
) -> list[dict]:
    """Ratio ``y_a(x) / y_b(x)`` of two frontiers at the same interactivities.

    Args:
        a: frontier of system A (numerator).
        b: frontier of system B (denominator), ``y`` in the same unit as ``a``.
        x_values: interactivities, tok/s/user, shape (M,), finite and > 0.
        end_rtol: relative tolerance of ``"at_frontier_end"`` (see ``interp_frontier``).

    Returns:
        One dict per x: ``x`` (tok/s/user), ``y_a``, ``y_b``, ``status_a``, ``status_b``,
        ``ratio`` (NaN when either side is ``"unreachable"``) and ``at_frontier_end`` (True when
        either status is ``"at_frontier_end"`` or ``"below_frontier_start"``).

    Raises:
        SpecError: invalid ``x_values`` or ``end_rtol``.

    >>> a = Frontier(np.array([10.0, 20.0]), np.array([200.0, 100.0]))
    >>> b = Frontier(np.array([10.0, 40.0]), np.array([100.0, 25.0]))
    >>> [(r["ratio"], r["status_a"]) for r in iso_interactivity_ratio(a, b, [10.0, 30.0])]
    [(2.0, 'at_point'), (nan, 'unreachable')]
    """
    xq = np.atleast_1d(np.asarray(x_values, dtype=np.float64))
    if xq.ndim != 1 or xq.size == 0:
        raise SpecError("x_values", f"has shape {xq.shape}", "pass a non-empty 1-D array")
    ya, sa = interp_frontier(a.x, a.y, xq, end_rtol)
    yb, sb = interp_frontier(b.x, b.y, xq, end_rtol)
    rows = []
    for i, x in enumerate(xq):
        reachable = sa[i] != "unreachable" and sb[i] != "unreachable"
        rows.append(
            {
                "x": float(x),
                "y_a": float(ya[i]),
                "y_b": float(yb[i]),
                "status_a": str(sa[i]),
                "status_b": str(sb[i]),
                "ratio": float(ya[i] / yb[i]) if reachable else math.nan,
                "at_frontier_end": bool(sa[i] in _END_STATUSES or sb[i] in _END_STATUSES),
            }
        )
    return rows


def peak_ratio(a: Frontier, b: Frontier) -> float:
    """Peak ratio ``max(y_a) / max(y_b)`` (best throughput of A over best of B), dimensionless.

    >>> a = Frontier(np.array([5.0]), np.array([300.0]))
    >>> peak_ratio(a, Frontier(np.array([9.0]), np.array([200.0])))
    1.5
    """
    return float(a.y.max() / b.y.max())


def tiers(
    frontier: Frontier,
    floors: Mapping[str, float] | None = None,
    end_rtol: float = DEFAULT_END_RTOL,
) -> dict[str, dict]:
    """Operating tiers: Batch = peak throughput; each named floor = best throughput at x >= floor.

    For a floor ``f`` (tok/s/user) the candidates are (i) the frontier point of highest ``y``
    with ``x >= f``, i.e. the first point at or past ``f`` since ``y`` falls with ``x``, and
    (ii) when ``fx[0] < f <= fx[-1]``, the log-log interpolated throughput at exactly ``f``;
    the tier takes the larger (the interpolated value wins only when strictly larger).

    Args:
        frontier: the system's frontier.
        floors: tier name -> per-user speed floor, tok/s/user, finite and >= 0; default
            :data:`DEFAULT_TIER_FLOORS`. The name ``"batch"`` is reserved.
        end_rtol: relative tolerance of the ``"at_frontier_end"`` label.

    Returns:
        ``{"batch": {...}, <floor name>: {...}, ...}``, each with ``throughput`` (unit of
        ``frontier.y``), ``interactivity`` (tok/s/user), ``frontier_index`` (int, or None when
        interpolated or unreachable), ``floor_tok_per_s_per_user`` (None for batch) and
        ``status``: ``"at_point"``, ``"interpolated"``, ``"at_frontier_end"`` (floor within
        ``end_rtol`` of the frontier's largest x) or ``"unreachable"`` (no point reaches the
        floor; throughput and interactivity NaN).

    Raises:
        SpecError: a floor is negative or not finite, or a name is ``"batch"``.

    >>> f = build_frontier([10, 20, 30], [100, 80, 10])
    >>> t = tiers(f, {"fast": 20.0, "ultra_fast": 50.0})
    >>> t["batch"]["throughput"], t["fast"]["frontier_index"], t["ultra_fast"]["status"]
    (100.0, 1, 'unreachable')
    """
    floors = DEFAULT_TIER_FLOORS if floors is None else floors
    out: dict[str, dict] = {"batch": _tier(float(frontier.y[0]), float(frontier.x[0]), 0, None, "at_point")}
    fx, fy = frontier.x, frontier.y
    for name, floor in floors.items():
        if name == "batch":
            raise SpecError("floors", "uses the reserved tier name 'batch'", "name floor tiers otherwise, e.g. 'fast'")
        f = float(floor)
        if not (math.isfinite(f) and f >= 0):
            raise SpecError(
                f"floors.{name}", f"is {floor}, not a finite value >= 0", "give the floor in tokens/s/user, e.g. 100.0"
            )
        if f > fx[-1]:
            out[name] = _tier(math.nan, math.nan, None, f, "unreachable")
            continue
        j = int(np.searchsorted(fx, f, side="left"))  # first point with x >= f
        near_end = f >= fx[-1] * (1.0 - end_rtol)
        status = "at_frontier_end" if near_end else "at_point"
        best = _tier(float(fy[j]), float(fx[j]), j, f, status)
        if f > fx[0]:
            y_f, s_f = interp_frontier(fx, fy, [f], end_rtol)
            if y_f[0] > fy[j]:
                best = _tier(float(y_f[0]), f, None, f, str(s_f[0]))
        out[name] = best
    return out


def _tier(y: float, x: float, index: int | None, floor: float | None, status: str) -> dict:
    return {
        "throughput": y,
        "interactivity": x,
        "frontier_index": index,
        "floor_tok_per_s_per_user": floor,
        "status": status,
    }


def feasible_baseline(
    model_name: str, kept: Mapping, infeasible: Mapping[str, str], baseline: str | None, strict_baseline: bool
) -> str | None:
    """The baseline of a comparison after the systems that cannot run the model are set aside: ``baseline`` if it
    ran, else (with ``strict_baseline`` False) the last system that did. ``kept``: system name -> its result;
    ``infeasible``: system name -> why it cannot run ``model_name``.

    Raises InfeasibleDeployment naming ``--systems`` when no system can run the model, or ``--baseline`` when the
    baseline cannot and ``strict_baseline`` is set.

    >>> feasible_baseline("m", {"a": 1, "b": 2}, {"c": "too big"}, "c", False)
    'b'
    """
    if not kept:
        raise InfeasibleDeployment(
            "--systems",
            f"no compared system can run {model_name}: " + "; ".join(f"{n}: {why}" for n, why in infeasible.items()),
            "use a smaller precision, a smaller model or bigger systems",
        )
    if baseline in infeasible:
        if strict_baseline:
            raise InfeasibleDeployment(
                "--baseline",
                f"{baseline} cannot run {model_name} ({infeasible[baseline]})",
                "pick a system that can as --baseline",
            )
        return list(kept)[-1]
    return baseline
