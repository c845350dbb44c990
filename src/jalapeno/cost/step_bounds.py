"""A step's binding constraint: which of its attributed times is largest, by how much, and on which link level.

cost/step.step_cost attributes a step's time to compute, HBM bandwidth, scale-up link, scale-out link, overhead
and the on-die network (:data:`BOUNDS`; the shares sum to the step time). The largest share is the step's bound
and ``bound_margin`` = largest / second largest (:func:`rank_bounds`); where the bound is a link, the link level
whose collectives cost most is named (:func:`_link_level`). Pure: no I/O.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.step_rows import SCOPES


BOUNDS = ("compute", "hbm_bandwidth", "scale_up_link", "scale_out_link", "overhead", "on_die_network")
_BOUND_NAMES = np.asarray(BOUNDS, dtype=object)  # read-only use: indexed by rank_bounds


def rank_bounds(stack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Binding constraint and margin from attributed times ``stack`` (len(BOUNDS), N).

    Returns:
        (bound, margin): the name of the largest share per point and largest / second largest.
    """
    order = (-stack).argsort(axis=0)  # np.argsort's own call, without its wrapper
    cols = np.arange(stack.shape[1])
    return _BOUND_NAMES[order[0]], stack[order[0], cols] / np.maximum(stack[order[1], cols], 1e-30)


def _link_level(bound: np.ndarray, ct: np.ndarray, cw, scope_arr: np.ndarray, levels: list[str], n: int) -> np.ndarray:
    """Name of the link level whose collectives cost most, where the bound is a link ('' else); an exact tie goes
    to the level that comes first in ``levels`` (the step's collective rows), the same name on every run."""
    out = np.full(n, "", dtype=object)
    present = set(bound.tolist())  # the bounds named (a link-bound point is rare: the rest is skipped)
    if not len(levels) or not any(f"{scope}_link" in present for scope in SCOPES):
        return out
    weighted = ct * cw
    lv = np.asarray(levels, dtype=object)
    for scope in ("scale_up", "scale_out"):
        if f"{scope}_link" not in present:
            continue
        sel = bound == f"{scope}_link"
        rows = scope_arr == scope
        per_level = {
            name: np.add.reduce(weighted[rows & (lv == name)], axis=0)  # row order: not set()'s, which
            for name in dict.fromkeys(lv[rows].tolist())
        }  # the hash seed sets (ties would flip per run)
        names = list(per_level)
        best = np.argmax(np.stack([per_level[k] for k in names]), axis=0)
        out[sel] = np.asarray(names, dtype=object)[best][sel]
    return out
