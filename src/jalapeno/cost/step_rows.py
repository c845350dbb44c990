"""Per-row selections of a step's collective table, worked out once per row layout (cost/step.py and cost/overlap.py read them).

A step's collective table has a handful of rows whose kinds, per-stage flags and link scopes and levels depend
on the layout and the system alone, while a fixed-concurrency solve (serve/lockstep.py) prices the same layout
thousands of times (``compare -c 64``: ~3,900 steps over ~34 layouts): :func:`coll_rows` keeps the masks and
weights the step assembly derives from those per-row fields, by their values. Pure: the same fields give the
same arrays (read-only: never written to), so results are unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jalapeno.cost.optable import CollectiveTable


class CollRows(NamedTuple):
    """Row selections of one collective table (n_coll,) and its row weights (n_coll, 1) at ``pp`` stages."""

    is_p2p: np.ndarray  # the pipeline hand-off (CollectiveTable.pipeline_p2p)
    stage: np.ndarray  # per-stage rows other than the hand-off
    edge: np.ndarray  # once-per-step rows other than the hand-off
    scope: np.ndarray  # link scope per row, object
    stage_scope: dict  # scope name -> stage & (scope == name)
    edge_scope: dict  # scope name -> ~stage & (scope == name)
    edge_weight: np.ndarray | None  # (pp − 1 for the hand-off, 1 else)[:, None]; None without rows
    step_weight: np.ndarray | None  # (pp − 1 for the hand-off, pp per stage, 1 else)[:, None]; None without rows
    at: tuple  # (is_p2p, stage, edge) as row indices (intp): ``a.take(i, axis=0)`` is ``a[mask]``, a third faster


#: :func:`coll_rows` answers by (kinds, per-stage bytes, scopes, pp); a sweep has a few dozen row layouts
_ROWS: dict[tuple, CollRows] = {}
_ROWS_KEEP = 512
SCOPES = ("scale_up", "scale_out")


def coll_rows(colls: CollectiveTable, scopes: tuple[str, ...], pp: int) -> CollRows:
    """The row selections cost/step._step_cost makes of ``colls`` (its collective table) with the link
    ``scopes`` its pricer gave each row, at ``pp`` pipeline stages."""
    key = (colls.kind, colls.per_stage.tobytes(), tuple(scopes), pp)
    hit = _ROWS.get(key)
    if hit is not None:
        return hit
    nc = len(colls.kind)
    is_p2p = colls.pipeline_p2p
    stage = colls.per_stage & ~is_p2p
    edge = ~colls.per_stage & ~is_p2p
    scope = np.array(scopes, dtype=object)
    out = CollRows(
        is_p2p,
        stage,
        edge,
        scope,
        {s: stage & (scope == s) for s in SCOPES},
        {s: ~stage & (scope == s) for s in SCOPES},
        np.where(is_p2p, pp - 1.0, 1.0)[:, None] if nc else None,
        np.where(is_p2p, pp - 1.0, np.where(colls.per_stage, float(pp), 1.0))[:, None] if nc else None,
        tuple(np.flatnonzero(m) for m in (is_p2p, stage, edge)),
    )
    for a in (out.is_p2p, out.stage, out.edge, out.scope, *out.stage_scope.values(), *out.edge_scope.values(), *out.at):
        a.flags.writeable = False
    if len(_ROWS) >= _ROWS_KEEP:
        del _ROWS[next(iter(_ROWS))]
    _ROWS[key] = out
    return out


#: :func:`op_stage_rows` answers by the per-stage flags' bytes (a sweep has a few dozen op-table row layouts)
_OPS: dict[bytes, tuple] = {}


def op_stage_rows(per_stage: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The row indices (intp) of an op table's per-stage ops and of its others (OpTable.per_stage, (n_ops,) bool):
    ``a.take(i, axis=0)`` gives ``a[per_stage]``'s and ``a[~per_stage]``'s rows, the same array, a third faster."""
    key = per_stage.tobytes()
    hit = _OPS.get(key)
    if hit is None:
        hit = (np.flatnonzero(per_stage), np.flatnonzero(~per_stage))
        for a in hit:
            a.flags.writeable = False
        if len(_OPS) >= _ROWS_KEEP:
            del _OPS[next(iter(_OPS))]
        _OPS[key] = hit
    return hit


class TboRows(NamedTuple):
    """Row selections of a two-batch-overlap micro-batch's collective table (n_coll,) (cost/overlap.tbo_layer)."""

    a2a: np.ndarray  # per-stage all-to-alls (the MoE dispatch and combine)
    blocking_scope: dict  # scope name -> per-stage rows other than those, on that scope
    a2a_scope: dict  # scope name -> the all-to-alls on that scope


_TBO: dict[tuple, TboRows] = {}


def tbo_rows(colls: CollectiveTable, scopes: tuple[str, ...]) -> TboRows:
    """The row selections cost/overlap.tbo_layer makes of a micro-batch's collective table ``colls`` with the
    link ``scopes`` its pricer gave each row."""
    key = (colls.kind, colls.per_stage.tobytes(), tuple(scopes))
    hit = _TBO.get(key)
    if hit is not None:
        return hit
    a2a = np.array([k == "all_to_all" for k in colls.kind], dtype=bool) & colls.per_stage
    blocking = colls.per_stage & ~a2a
    scope = np.array(scopes, dtype=object)
    out = TboRows(a2a, {s: blocking & (scope == s) for s in SCOPES}, {s: a2a & (scope == s) for s in SCOPES})
    for a in (out.a2a, *out.blocking_scope.values(), *out.a2a_scope.values()):
        a.flags.writeable = False
    if len(_TBO) >= _ROWS_KEEP:
        del _TBO[next(iter(_TBO))]
    _TBO[key] = out
    return out
