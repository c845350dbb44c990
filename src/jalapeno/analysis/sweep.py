"""Sweep valid deployments x operating points of one model on one system.

Enumerated (like the InferenceX sweeps; all restrictable by :class:`SweepOptions`):
- aggregated instances of S chips per stage, S in {1, 2, 4, ...} up to 4x the scale-up domain
  (crossing it over scale-out or global links) plus the domain size itself (72 on NVL72);
  attention TP t in {1, 2, 4, 8} dividing S and the head count, attention DP S/t; MoE EP = S
  (wide EP), and EP = 1 (TP-only experts) for S <= 8; dense models use TP only;
- disaggregated: prefill instances (TP/TEP of 1-8 chips) x decode instances (TEP of <= 8 or
  DP-attention + wide EP of 8 chips up to the domain) x prefill workers {1, 2, 3, 4, 6, 8, 12,
  16} x decode workers {1, 2, 4};
- the decode batch per instance doubling 1 ... 16384 (each clipped to the instance's KV / budget
  cap) — the closed-loop concurrency of each point is derived from it (serve/analytic.py), or,
  with ``concurrency`` given, solved for those concurrencies (aggregated only).
Layouts whose weights do not fit are skipped; points that do not fit are kept, marked infeasible.

Two-batch overlap (``SweepOptions.overlap``): ``auto`` (default) evaluates every layout with an EP
all-to-all (attention DP + EP > 1, the only ones it applies to) with and without it and keeps, at
each operating point (decode batch or concurrency), the faster of the two — the option is used
only where it wins, as a recipe author would set it; ``none`` never uses it, ``tbo`` always where
it applies. On the batch grid point counts do not grow (one deployment per point either way); with
fixed concurrencies both variants keep every concurrency (one block of len(concurrency) points
per deployment, as callers expect).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from jalapeno.deploy.deployment import DEFAULT_TOKEN_BUDGET, MTP, Deployment, Pool, pool_overlap
from jalapeno.deploy.layout import Layout, validate_layout
from jalapeno.deploy.memory_fit import weight_bytes_per_chip
from jalapeno.deploy.sharding import has_ep_all_to_all
from jalapeno.errors import JalapenoError, SpecError
from jalapeno.serve.analytic import (
    ServingPoints,
    aggregated_by_batch,
    solve_concurrency,
)
from jalapeno.serve.disagg import decode_curve, disaggregated_points, prefill_perf
from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import Precision
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

DEFAULT_BATCHES = tuple(2.0**i for i in range(15))  # 1 ... 16384
PREFILL_WORKERS = (1, 2, 3, 4, 6, 8, 12, 16)
DECODE_WORKERS = (1, 2, 4)
#: Overlap choices of a sweep: the faster per point, never, or always (where it applies).
SWEEP_OVERLAP = ("auto", "none", "tbo")


@dataclass(frozen=True, slots=True)
class SweepOptions:
    """What the sweep may use.

    Attributes:
        serving: ``both``, ``agg`` or ``disagg``.
        mtp: MTP settings applied to every deployment (None = off).
        concurrency: closed-loop concurrencies to solve for (aggregated); None = batch grid.
        batches: decode batches per instance for the grid.
        token_budget: chunked-prefill budget per step.
        max_stage_factor: largest stage as a multiple of the scale-up domain.
        overlap: ``auto`` (per point, the faster of with and without two-batch overlap where a
            layout has an EP all-to-all), ``none`` or ``tbo`` (module docstring).
    """

    serving: str = "both"
    mtp: MTP | None = None
    concurrency: tuple[float, ...] | None = None
    batches: tuple[float, ...] = DEFAULT_BATCHES
    token_budget: int = DEFAULT_TOKEN_BUDGET
    max_stage_factor: int = 4
    overlap: str = "auto"

    def __post_init__(self) -> None:
        if self.overlap not in SWEEP_OVERLAP:
            raise SpecError("overlap", f"unknown overlap choice {self.overlap!r}",
                            f"use one of {', '.join(SWEEP_OVERLAP)} (auto: the faster of none and tbo)")
        if self.serving not in ("both", "agg", "disagg"):
            raise SpecError("serving", f"unknown serving mode {self.serving!r}", "use agg, disagg or both")
        if self.concurrency is not None and any(c <= 0 for c in self.concurrency):
            raise SpecError("concurrency", "must be positive", "give concurrencies >= 1")
        if self.concurrency is not None and self.serving == "disagg":
            raise SpecError("concurrency", "fixed concurrencies apply to aggregated serving only",
                            "drop --concurrency (disaggregated points span the batch grid) or use --serving agg")


@dataclass(frozen=True)
class SweepResult:
    """All points of a sweep: ``points`` (N,) and the deployment of each (``dep_index``)."""

    model: str
    system: str
    workload: Workload
    precision: str
    points: ServingPoints
    deployments: list[Deployment] = field(repr=False)
    dep_index: np.ndarray = field(repr=False)


def _fits(model: ModelSpec, system: System, layout: Layout, precision: Precision, eff: Efficiency) -> bool:
    try:
        validate_layout(layout, model, system)
    except JalapenoError:
        return False
    usable = system.chip.hbm_usable_bytes * (1 - eff.memory_reserve_fraction)
    return weight_bytes_per_chip(model, layout, precision) < 0.95 * usable


def stage_sizes(system: System, factor: int) -> list[int]:
    """Stage sizes to try: powers of two up to factor x scale-up (and the domain size)."""
    su = system.scale_up_chips
    top = min(system.max_chips, factor * su)
    sizes = {2**i for i in range(0, 16) if 2**i <= top}
    sizes.add(min(su, top))
    return sorted(sizes)


def aggregated_layouts(model: ModelSpec, system: System, precision: Precision, eff: Efficiency,
                       factor: int = 4) -> list[Layout]:
    """Valid aggregated layouts whose weights fit."""
    out = []
    heads = model.attention.num_heads
    for s in stage_sizes(system, factor):
        for tp in (1, 2, 4, 8):
            if s % tp or heads % tp:
                continue
            if model.moe is None:
                if tp == s:
                    out.append(Layout(tp=tp))
                continue
            eps = {s} | ({1} if s <= 8 else set())
            for ep in sorted(eps):
                out.append(Layout(tp=tp, dp=s // tp, ep=ep))
        if model.moe is None and s > 8 and heads % s == 0 and s <= 64:
            out.append(Layout(tp=s))
    return [lay for lay in out if _fits(model, system, lay, precision, eff)]


def disaggregated_layouts(model: ModelSpec, system: System, precision: Precision, eff: Efficiency,
                          factor: int = 4) -> tuple[list[Layout], list[Layout]]:
    """(prefill layouts, decode layouts) whose weights fit."""
    moe = model.moe is not None
    pre = []
    for s in (1, 2, 4, 8):
        pre.append(Layout(tp=s, ep=s if moe else 1))
    dec = []
    for s in stage_sizes(system, factor):
        if s <= 8:
            dec.append(Layout(tp=s, ep=s if moe else 1))
        if moe and s >= 8:
            dec.append(Layout(tp=1, dp=s, ep=s))
    keep = lambda ls: [lay for lay in dict.fromkeys(ls) if _fits(model, system, lay, precision, eff)]  # noqa: E731
    return keep(pre), keep(dec)


def concat_points(parts: list[ServingPoints]) -> ServingPoints:
    """Concatenate point sets."""
    return ServingPoints(**{f.name: np.concatenate([getattr(p, f.name) for p in parts])
                            for f in fields(ServingPoints)})


def sweep(model: ModelSpec, pricer: Pricer, wl: Workload, precision: Precision,
          options: SweepOptions | None = None) -> SweepResult:
    """Evaluate every enumerated deployment at every operating point.

    Raises:
        InfeasibleDeployment: no layout of the model fits on the system.
        SpecError: MTP asked for on a model without an MTP module.
    """
    from jalapeno.deploy.deployment import check_mtp
    from jalapeno.errors import InfeasibleDeployment

    opt = options or SweepOptions()
    check_mtp(opt.mtp, model)
    check_pricer(pricer, "sweep")
    system, eff = pricer.system, pricer.efficiency
    parts: list[ServingPoints] = []
    deps: list[Deployment] = []
    idx: list[np.ndarray] = []
    batches = np.asarray(opt.batches, dtype=float)

    def add(dep: Deployment, pts: ServingPoints) -> None:
        idx.append(np.full(len(pts), len(deps)))
        deps.append(dep)
        parts.append(pts)

    if opt.serving in ("both", "agg"):
        for lay in aggregated_layouts(model, system, precision, eff, opt.max_stage_factor):
            dep = Deployment(precision, Pool(lay), mtp=opt.mtp, token_budget=opt.token_budget)
            variants = [dep]
            if opt.overlap != "none" and has_ep_all_to_all(model, lay):
                variants = [replace(dep, overlap="tbo")] if opt.overlap == "tbo" else [dep, replace(dep, overlap="tbo")]
            sets = []
            for d in variants:
                if opt.concurrency is not None:
                    sets.append(solve_concurrency(model, pricer, d, wl, np.asarray(opt.concurrency)))
                else:
                    sets.append(aggregated_by_batch(model, pricer, d, wl, batches))
            if opt.concurrency is None:  # the same batch grid for every variant (same memory fit)
                _, first = np.unique(sets[0].decode_batch, return_index=True)
                sets = [p.take(np.sort(first)) for p in sets]
            if len(sets) == 1 or opt.concurrency is not None:  # fixed concurrencies: every
                for d, p in zip(variants, sets):                 # deployment keeps all of them
                    add(d, p)
                continue
            off, on = sets
            use = on.feasible & (~off.feasible | (on.throughput_per_chip > off.throughput_per_chip))
            for d, p, sel in ((variants[0], off, ~use), (variants[1], on, use)):
                if sel.any():
                    add(d, p.take(np.flatnonzero(sel)))
    if opt.serving in ("both", "disagg") and opt.concurrency is None:
        pre_layouts, dec_layouts = disaggregated_layouts(model, system, precision, eff, opt.max_stage_factor)
        pre_ov = "tbo" if opt.overlap == "tbo" else "none"  # enumerated prefill pools have no all-to-all
        pres = [prefill_perf(model, pricer, lay, precision, wl, opt.token_budget, pool_overlap(pre_ov, model, lay))
                for lay in pre_layouts]
        pairs = [(x, y) for x in PREFILL_WORKERS for y in DECODE_WORKERS]
        xs = np.array([p[0] for p in pairs])
        ys = np.array([p[1] for p in pairs])
        for dlay in dec_layouts:
            curves = {"none": decode_curve(model, pricer, dlay, precision, wl, batches, opt.mtp)}
            if opt.overlap != "none" and has_ep_all_to_all(model, dlay):
                curves["tbo"] = decode_curve(model, pricer, dlay, precision, wl, batches, opt.mtp, "tbo")
                if opt.overlap == "tbo":
                    del curves["none"]
            dec0 = next(iter(curves.values()))
            keep = np.sort(np.unique(dec0.batch, return_index=True)[1])
            # per decode batch, the overlap mode it runs (the faster where both are evaluated)
            mode = np.full(dec0.batch.shape[0], next(iter(curves)), dtype=object)
            if len(curves) == 2:
                off, on = curves["none"], curves["tbo"]
                mode = np.where(on.feasible & (~off.feasible | (on.tau_s < off.tau_s)), "tbo", "none")
            for pre in pres:
                if not pre.feasible:
                    continue
                k = dec0.batch.shape[0]
                for ov, dec in curves.items():
                    kv = keep[mode[keep] == ov]
                    if not kv.size:
                        continue
                    pts = disaggregated_points(model, pricer, precision, wl, pre, dec, xs, ys, opt.mtp)
                    sel, owner = [], []
                    for m, (x, y) in enumerate(pairs):
                        dep = Deployment(precision, Pool(dlay, y), prefill=Pool(pre.layout, x), mtp=opt.mtp,
                                         token_budget=opt.token_budget, overlap=ov)
                        if dep.chips > system.max_chips:
                            continue
                        sel.append(m * k + kv)
                        owner.append(np.full(kv.size, len(deps)))
                        deps.append(dep)
                    if sel:  # one block for every worker pair of this (prefill, decode) layout pair
                        parts.append(pts.take(np.concatenate(sel)))
                        idx.append(np.concatenate(owner))
    if not parts:
        raise InfeasibleDeployment(
            "deployment", f"no layout of {model.name} ({precision.name}) fits on {system.name} "
            f"within {opt.max_stage_factor}x its scale-up domain",
            "use a smaller precision, allow wider stages (max_stage_factor) or a bigger system")
    return SweepResult(model.name, system.name, wl, precision.name, concat_points(parts), deps,
                       np.concatenate(idx))
