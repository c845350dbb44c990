"""Shared set-up of the diagnosis scripts: one validated row served at its own concurrency, as validate prices it.

review50 found the same six lines in amd_1k8k_pairs45.py, atom_gptoss_floor43.py, mi355x_ix_rows42.py,
mi3xx_pair_stall50.py and tpot_split.py (the row's stack, its calibrated roofline pricer, workload, model, deployment
with the stack's MTP, then serve/point.serve_at_concurrency). :func:`served_point` is that; scripts that need the set-up
without the serve call fit/mlperf_scenarios.priced_point, which it wraps.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.serve.point import serve_at_concurrency


class ServedPoint(NamedTuple):
    """A row as served: ``model`` (specs/model.Model), ``pricer`` (the calibrated roofline pricer), ``dep``
    (specs/deployment.Deployment with the stack's MTP), ``wl`` (specs/workload.Workload) and ``run`` (the
    serve/point.serve_at_concurrency result: arrays of length 1, s and tokens/s)."""

    model: Any
    pricer: Any
    dep: Any
    wl: Any
    run: Any


def served_point(p, *, system: str | None = None, stack=None) -> ServedPoint:
    """Row ``p`` (fit/validate.MeasuredPoint) served at ``int(p.concurrency)`` users, priced as
    fit/mlperf_scenarios.priced_point prices it: on ``system`` (a catalog name; None: the row's own) under ``stack``
    (a specs/stack profile; None: the row's own).

    Raises:
        SpecError: a row without a declared deployment (priced_point).
    """
    model, pricer, dep, wl = priced_point(p, system=system, stack=stack)
    return ServedPoint(model, pricer, dep, wl, serve_at_concurrency(model, pricer, dep, wl, [int(p.concurrency)]))
