"""Bootstrap stability of the stack fits' client front ends and burst shares (fit/stack_fit.py steps 2 and 4).

A client's entry (``clients.<src>`` of data/stack_fits.toml) is fitted in two steps on its fit rows: the front end
``a + b·ISL`` (``request_overhead_s``, ``prompt_overhead_s_per_token``) on the TTFT at concurrency <=
``FRONTEND_MAX_CONCURRENCY``, then each burst share (``prefill_burst_fraction`` on disaggregated rows,
``agg_burst_fraction`` on aggregated ones) on the TTFT at every concurrency, each the grid argmin of the mean
|log(predicted / measured)|. To refit it many times on resampled rows without pricing each replicate, the
TTFT of every row of the client is priced once per burst share of ``BURST_GRID`` (and once with no share: the
front-end step's profile) at three front ends, (0, 0), (PROBE a, 0), (0, PROBE b): the TTFT is taken as linear in
a and b at a fixed share (the front end adds a + b·ISL to each request's first token; :func:`surfaces` states how
far that holds, ``linearity``). A replicate weighs each row by how often the resample drew it and redoes both
argmins (:func:`refit`) exactly as fit/stack_fit.py does them (same grids, bounds, ``MIN_POINTS`` and bound rules).

The step costs (step 1) are held at their fitted values: a client's TTFT moves little with them, and the
bootstrap measures the client entries, the values round 28 saw jump (TensorRT-LLM inferencex-db 25 -> 12.5 ms,
6.875 -> 10.625 µs/token, agg burst 0.10 -> 0.15 on a small upstream data change).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from jalapeno.fit import stack_fit as sf
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.stacks import Stack

A, B = "request_overhead_s", "prompt_overhead_s_per_token"
#: The front-end grid of fit/stack_fit._linear_fit (81 values per parameter over its bounds).
GRID_A = np.linspace(*sf.BOUNDS[A], 81)
GRID_B = np.linspace(*sf.BOUNDS[B], 81)
#: Burst rows of a surface: row 0 has no share (the client's default, the front-end step's profile), row k
#: ``BURST_GRID[k - 1]``.
SHARES = (None, *map(float, sf.BURST_GRID))


@dataclass(frozen=True)
class Surface:
    """One client's rows of one profile and their TTFT surfaces (n rows; k = len(SHARES) burst rows).

    ``t0``, ``sa``, ``sb``: (k, n) TTFT (s) at a = b = 0, and its slopes in a (s/s) and b (s per s/token);
    ``meas``: measured TTFT (s); ``fit``: in the declared fit half; ``front``: enters the front-end step
    (fit, concurrency <= FRONTEND_MAX_CONCURRENCY, TTFT not flagged); ``ok``: TTFT not flagged (fit/aic_quality.py);
    ``mode``: "agg" / "disagg"; ``family``: the row's (system, model, ISL, OSL, mode) group index;
    ``profile_front``: the profile's own (a, b), kept when the client's front end is not fitted."""

    stack: str
    src: str
    ids: tuple
    t0: np.ndarray
    sa: np.ndarray
    sb: np.ndarray
    meas: np.ndarray
    fit: np.ndarray
    front: np.ndarray
    ok: np.ndarray
    mode: np.ndarray
    family: np.ndarray
    profile_front: tuple[float, float]


def _client_stack(stack: Stack, a: float, b: float, share: float | None) -> Stack:
    entry = (
        {A: a, B: b} if share is None else {A: a, B: b, "prefill_burst_fraction": share, "agg_burst_fraction": share}
    )
    return replace(stack, clients=MappingProxyType({s: MappingProxyType(dict(entry)) for s in sf.CLIENT_SOURCES}))


def surfaces(
    name: str, points, sp: dict[str, str], fitted: Stack, ttft_flagged: frozenset = frozenset()
) -> list[Surface]:
    """The :class:`Surface` of each client of ``sf.CLIENT_SOURCES`` with TTFT rows in profile ``name``, priced with
    ``fitted`` (its step costs and own front end; its client entries replaced). 3 · len(SHARES) pricings of the
    profile's client rows (TensorRT-LLM's ~840: a few minutes)."""
    from jalapeno.specs.stacks import stack_for_framework

    rows = [
        p
        for p in points
        if stack_for_framework(p.framework, p.system).name == name
        and p.timed_by in sf.CLIENT_SOURCES
        and p.measured.get("ttft_s")
    ]
    if not rows:
        return []
    base = replace(fitted, clients=MappingProxyType({}))
    ids = [p.id for p in rows]
    grids = []
    for share in SHARES:
        cube = []
        for a, b in ((0.0, 0.0), (sf.PROBE[A], 0.0), (0.0, sf.PROBE[B])):
            t = sf._predict(rows, _client_stack(base, a, b, share))
            cube.append(t[t.metric == "ttft_s"].set_index("id").predicted.reindex(ids).to_numpy(float))
        grids.append((cube[0], (cube[1] - cube[0]) / sf.PROBE[A], (cube[2] - cube[0]) / sf.PROBE[B]))
    pf = tuple(
        float(getattr(base, f) if getattr(base, f) is not None else getattr(DEFAULT_EFFICIENCY, f)) for f in (A, B)
    )
    fam_keys = [(p.system, p.model, p.isl, p.osl, p.mode) for p in rows]
    index = {k: i for i, k in enumerate(sorted(set(fam_keys), key=str))}
    out = []
    for src in sf.CLIENT_SOURCES:
        m = np.array([p.timed_by == src for p in rows])
        if not m.any():
            continue
        sel = lambda x: x[:, m]  # noqa: E731
        fit = np.array([sp[p.id] == "fit" for p in rows])[m]
        ok = np.array([p.id not in ttft_flagged for p in rows])[m]
        low = np.array([(p.concurrency or 0) <= sf.FRONTEND_MAX_CONCURRENCY for p in rows])[m]
        out.append(
            Surface(
                name,
                src,
                tuple(np.array(ids)[m]),
                sel(np.array([g[0] for g in grids])),
                sel(np.array([g[1] for g in grids])),
                sel(np.array([g[2] for g in grids])),
                np.array([p.measured["ttft_s"] for p in rows])[m],
                fit,
                fit & ok & low,
                ok,
                np.array([p.mode for p in rows])[m],
                np.array([index[k] for k in fam_keys])[m],
                pf,
            )
        )
    return out


def _mean_abs_log(pred: np.ndarray, meas: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted mean |log(pred / meas)| along the last axis (rows weighted ``w``; NaN predictions left out)."""
    r = np.abs(np.log(np.maximum(pred, 1e-30) / meas))
    ww = np.where(np.isfinite(r), w, 0.0)
    return (np.where(np.isfinite(r), r, 0.0) * ww).sum(axis=-1) / np.maximum(ww.sum(axis=-1), 1e-30)


def front_loss(s: Surface, w: np.ndarray) -> np.ndarray:
    """(81, 81) mean |log| of the front-end step over (GRID_A, GRID_B), rows weighted ``w`` (0 outside it)."""
    m = s.front & (w > 0)
    t = s.t0[0, m][None, None, :] + GRID_A[:, None, None] * s.sa[0, m] + GRID_B[None, :, None] * s.sb[0, m]
    return _mean_abs_log(t, s.meas[m][None, None, :], np.broadcast_to(w[m], t.shape))


def refit(s: Surface, w: np.ndarray | None = None, loss=None) -> dict:
    """fit/stack_fit.py steps 2 and 4 for client ``s.src`` on its fit rows weighted ``w`` (default 1; a row drawn
    k times weighs k): ``{"a", "b", "front_fitted", "prefill_burst_fraction", "agg_burst_fraction"}`` (a share None:
    not fitted) and ``"held_out_ttft"``, the median |error| of the client's unflagged held-out TTFT at those values.
    ``loss``: the front-end step's (81, 81) loss when the caller has it (:func:`front_loss`)."""
    w = np.ones(len(s.ids)) if w is None else np.asarray(w, float)
    w = np.where(s.fit, w, 0.0)
    a, b = s.profile_front
    fitted = False
    if np.count_nonzero(s.front & (w > 0)) >= sf.MIN_POINTS:
        lf = front_loss(s, w) if loss is None else loss
        i, j = np.unravel_index(int(np.argmin(lf)), lf.shape)
        if i < len(GRID_A) - 1 and j < len(GRID_B) - 1:  # on its upper bound: not identified (stack_fit)
            a, b, fitted = float(GRID_A[i]), float(GRID_B[j]), True
    pred = s.t0 + a * s.sa + b * s.sb  # (k, n) at the client's front end
    out = {"a": a, "b": b, "front_fitted": fitted}
    row = np.zeros(len(s.ids), int)
    for field, mode in sf.BURST_MODES.items():
        m = (s.mode == mode) & s.ok & (w > 0) & np.isfinite(pred[1:]).all(axis=0)
        share = None
        if np.count_nonzero(m) >= sf.MIN_POINTS:
            lb = _mean_abs_log(pred[1:, m], s.meas[m][None, :], np.broadcast_to(w[m], pred[1:, m].shape))
            k = int(np.argmin(lb))
            if k < len(SHARES) - 2 and np.ptp(lb) >= 1e-12:
                share = SHARES[k + 1]
                row[s.mode == mode] = k + 1
        out[field] = share
    ttft = pred[row, np.arange(len(s.ids))]
    ho = ~s.fit & s.ok & np.isfinite(ttft)
    out["held_out_ttft"] = float(np.median(np.abs(ttft[ho] / s.meas[ho] - 1))) if ho.any() else float("nan")
    return out


def replicate_weights(s: Surface, n: int, seed: int, unit: str = "row") -> np.ndarray:
    """(n, rows) bootstrap weights over ``s``'s fit rows: ``unit="row"`` draws fit rows with replacement,
    ``"family"`` draws whole (system, model, ISL, OSL, mode) groups (rows of one sweep are not independent)."""
    rng = np.random.default_rng(seed)
    fit = np.flatnonzero(s.fit)
    w = np.zeros((n, len(s.ids)))
    for r in range(n):
        if unit == "row":
            np.add.at(w[r], rng.choice(fit, size=len(fit), replace=True), 1.0)
        else:
            fams = np.unique(s.family[fit])
            for f in rng.choice(fams, size=len(fams), replace=True):
                w[r, fit[s.family[fit] == f]] += 1.0
    return w


def bootstrap(s: Surface, n: int = 50, seed: int = 0, unit: str = "row") -> list[dict]:
    """:func:`refit` on ``n`` resamples (:func:`replicate_weights`)."""
    return [refit(s, w) for w in replicate_weights(s, n, seed, unit)]
