"""Design search: which chip and rack parameters maximise the objectives within the constraints.

One *trial* is a design: values for the space's parameters (specs/design_space.py), applied to the
base system as a variant (specs/variants.with_overrides: every schema check applies, and power
and cost follow the components). A trial is

1. *checked*: each hard constraint (chip TDP, rack power, $/chip-hour, HBM stacks, FP8 peak) on the
   variant — a violating design is pruned with the reason, never evaluated, never reported;
2. *evaluated*: for every case (model x workload) the vectorised sweep (analysis/sweep.py, the
   coarse settings of the space's ``[sweep]``; at the case's precision or the model's default one, or with
   ``precisions = "native"`` at every precision the chip computes natively, their points together) gives the
   system's feasible points; each metric is
   read at the interactivity floor (``tok_s_per_kw``, ``tok_s_per_chip``, ``usd_per_mtok``: the
   better of the best point at or above it and the frontier interpolated at it, :func:`throughput_at_floor`;
   ``[sweep] at_floor = "point"``: the point only) or over all points (``max_interactivity``). A case that
   never reaches the floor prunes the design with the reason;
3. *scored*: per metric, the weighted geometric mean over cases of the design's value relative to
   the base system's — a design-wide "x base" figure (1.0 = the base; > 1 better for maximised
   metrics), so models whose absolute throughputs differ by 10x weigh by their case weights.

The search itself (Optuna: TPE for one objective, NSGA-II for several; batches of trials asked
together, evaluated serially or on Ray, told back in order, so results depend on the seed and
the batch size only, not on the number of workers) is ``run_search``; storage and results are
``analysis/results_store.py``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jalapeno.analysis.power_cost import power_w_per_chip
from jalapeno.analysis.sweep import SweepOptions, sweep
from jalapeno.cost.pricer import RooflinePricer
from jalapeno.errors import JalapenoError, SpecError
from jalapeno.specs.design_space import DesignSpace
from jalapeno.specs.hardware import System


@dataclass(frozen=True)
class CaseResult:
    """One case of one design: the metrics (NaN where unreachable) and the reason if pruned."""

    model: str
    workload: str
    metrics: dict[str, float]
    reason: str = ""


@dataclass(frozen=True)
class TrialResult:
    """A design's evaluation: feasible (scores) or pruned (reason).

    Attributes:
        params: the design's parameter values.
        system: the variant's name; chip_power_w, allin_kw, usd_per_chip_hour of the variant.
        cases: per-case metrics; scores: per objective metric, the weighted geometric mean of the
            case values relative to the base (empty if pruned).
    """

    params: dict[str, Any]
    system: str
    chip_power_w: float
    allin_kw: float
    usd_per_chip_hour: float
    cases: tuple[CaseResult, ...] = ()
    scores: dict[str, float] = field(default_factory=dict)
    reason: str = ""

    @property
    def feasible(self) -> bool:
        """Whether the design served every case (no refusal reason)."""
        return not self.reason


def rack_chips(system: System) -> int:
    """Chips of one rack: the link level named ``rack``, else the scale-up domain."""
    for lv in system.levels:
        if lv.name == "rack":
            return lv.chips
    return system.scale_up_chips


def constraint_values(system: System) -> dict[str, float]:
    """The quantities the space's constraints bound (specs/design_space.CONSTRAINTS)."""
    c = system.chip
    return {
        "chip_power_w": c.tdp_w,
        "rack_power_kw": system.allin_power_w_per_chip * rack_chips(system) / 1e3,
        "usd_per_chip_hour": system.usd_per_chip_hour,
        "hbm_stacks": float(c.hbm_stacks),
        "fp8_pflops": c.peak_flop_per_s.get("fp8", c.peak_flop_per_s.get("bf16", 0.0) * 2) / 1e15,
    }


def violated(system: System, limits: dict[str, float]) -> str:
    """The first violated constraint as a reason ("" when none)."""
    vals = constraint_values(system)
    for k, lim in limits.items():
        if vals[k] > lim * (1 + 1e-12):
            return f"{k} {vals[k]:.4g} > {lim:.4g}"
    return ""


def sweep_options(space: DesignSpace) -> SweepOptions:
    """The coarse sweep every trial uses (the space's ``[sweep]``)."""
    s = space.sweep
    return SweepOptions(
        serving=s.serving,
        batches=tuple(float(b) for b in s.batches),
        max_stage_factor=s.max_stage_factor,
        eplb=None,
        overlap="none",
    )


#: The rules of :func:`throughput_at_floor` (specs/design_space ``[sweep] at_floor``).
AT_FLOOR_RULES = ("interpolated", "point")


def throughput_at_floor(x: np.ndarray, y: np.ndarray, floor: float, rule: str = "interpolated") -> float:
    """Throughput at an interactivity floor from a coarse sweep's feasible points.

    ``point``: the best ``y`` among points with ``x >= floor``. ``interpolated``: the larger of that and the
    frontier (analysis/frontier.frontier_indices) log-log interpolated at exactly ``floor`` where the frontier
    brackets it (analysis/frontier.interp_frontier; the rule of ``compare``'s tiers, analysis/compare.tiers): the
    point just below the floor stands for the decode batches between the grid's, so the score moves continuously
    as a design's point crosses the floor instead of a whole batch step (docs/explore.md §3).

    Args:
        x: interactivity (tok/s/user) of the feasible points, shape (N,), finite, > 0.
        y: their throughput (any unit), shape (N,), > 0.
        floor: tok/s/user, >= 0 (0: the peak).
        rule: ``interpolated`` or ``point``.

    Returns:
        The throughput (unit of ``y``); NaN where no point reaches the floor.

    Raises:
        SpecError: ``rule`` not one of the two (``"Point"`` or a typo was read as ``interpolated``), or ``floor``
            negative or not finite (NaN was read as "no point reaches it"; break42).

    >>> round(throughput_at_floor(np.array([50.0, 200.0]), np.array([1000.0, 250.0]), 100.0), 1)
    500.0
    >>> throughput_at_floor(np.array([50.0, 200.0]), np.array([1000.0, 250.0]), 100.0, "point")
    250.0
    """
    from jalapeno.analysis.frontier import frontier_indices, interp_frontier

    if rule not in AT_FLOOR_RULES:
        raise SpecError(
            "at_floor",
            f"{rule!r} is not one of {', '.join(AT_FLOOR_RULES)}",
            "give interpolated (the frontier at the floor) or point (the best point at or above it)",
        )
    if not (isinstance(floor, numbers.Real) and math.isfinite(floor) and floor >= 0):
        raise SpecError(
            "min_interactivity",
            f"the floor must be a finite number of tok/s/user >= 0, got {floor!r}",
            "give the interactivity floor in tok/s/user (0: the peak)",
        )
    fast = x >= floor
    best = float(y[fast].max()) if fast.any() else float("nan")
    if rule == "point" or not fast.any():
        return best
    idx = frontier_indices(x, y)
    fx, fy = x[idx], y[idx]
    if fx[0] < floor <= fx[-1]:
        return max(best, float(interp_frontier(fx, fy, [floor])[0][0]))
    return best


def case_metrics(space: DesignSpace, pricer, model, workload, precision, native: bool = False) -> CaseResult:
    """The objective metrics of one design on one case (module docstring, step 2).

    ``native``: sweep every released precision the chip computes natively instead of ``precision``
    (analysis/explore_full.compare_precisions; ``[sweep] precisions = "native"`` for a case that names none) and read
    the metrics on the points of all of them.
    """
    from jalapeno.specs.formats import get_precision

    if native:
        from jalapeno.analysis.explore_full import compare_precisions

        precs = [get_precision(n) for n in compare_precisions(model, pricer.system, None)]
    else:
        precs = [precision]
    parts, why = [], ""
    for prec in precs:
        try:
            parts.append(sweep(model, pricer, workload, prec, sweep_options(space)).points)
        except JalapenoError as e:
            why = f"{model.name}: {e.problem}"
    return case_result(space, pricer, model, workload, parts, why)


def case_result(space: DesignSpace, pricer, model, workload, parts: list, why: str) -> CaseResult:
    """The objective metrics read on a case's swept points (module docstring, step 2): the throughput per chip at
    the space's floor (:func:`throughput_at_floor`), per kW of its power convention, $ per M tokens and the fastest
    speed. Shared by :func:`case_metrics` (the coarse sweep) and analysis/explore_full.full_case_metrics
    (compare's sweep).

    Args:
        parts: ServingPoints of each precision swept (may be empty); why: the reason to give when ``parts`` is.

    Returns:
        A :class:`CaseResult`; ``reason`` set (metrics empty) when nothing was swept, no point is feasible or
        none reaches the floor.
    """
    from jalapeno.analysis.sweep import concat_points

    obj = space.objective
    if not parts:
        return CaseResult(model.name, workload.name, {}, why)
    p = parts[0] if len(parts) == 1 else concat_points(parts)
    ok = p.feasible & (p.throughput_per_chip > 0) & np.isfinite(p.interactivity)
    if not ok.any():
        return CaseResult(model.name, workload.name, {}, f"{model.name} {workload.name}: no feasible point")
    fast = ok & (p.interactivity >= obj.min_interactivity)
    if obj.min_interactivity and not fast.any():
        return CaseResult(
            model.name,
            workload.name,
            {},
            f"{model.name} {workload.name}: never reaches {obj.min_interactivity:g} tok/s/user "
            f"(max {float(p.interactivity[ok].max()):.1f})",
        )
    tput = throughput_at_floor(
        p.interactivity[ok], p.throughput_per_chip[ok], obj.min_interactivity, space.sweep.at_floor
    )
    watts, _ = power_w_per_chip(pricer.system, obj.power)
    return CaseResult(
        model.name,
        workload.name,
        {
            "tok_s_per_chip": tput,
            "tok_s_per_kw": tput / (watts / 1e3),
            "usd_per_mtok": pricer.system.usd_per_chip_hour / (tput * 3600 / 1e6),
            "max_interactivity": float(p.interactivity[ok].max()),
        },
    )


@dataclass(frozen=True)
class Evaluator:
    """Evaluates designs of one space (picklable: Ray ships it to workers once per batch).

    ``base_metrics``: per case, the base system's metrics (the scores' reference), computed once.
    ``base_eval_s``: wall seconds that base evaluation took, all cases together: what one
    feasible trial costs on this machine (a design is priced as the base is), for the CLI's
    up-front estimate only (never stored with results).
    """

    space: DesignSpace
    base_metrics: tuple[dict[str, float], ...] = ()
    base_eval_s: float = 0.0

    def cases(self):
        """Yield (case, model, workload, precision) of each case of the design space, the precision the case's or the model's default.

        Raises:
            UnknownNameError: a case names a model, workload or precision that does not exist.
        """
        from jalapeno.specs.catalog import load_model
        from jalapeno.specs.formats import get_precision
        from jalapeno.specs.workload import get_workload

        for c in self.space.cases:
            m = load_model(c.model)
            yield c, m, get_workload(c.workload), get_precision(c.precision or m.default_precision)

    def design(self, params: dict[str, Any]):
        """(System, Efficiency) of a design: the base with the parameters as variant overrides, and what a search
        moves with them (specs/variants.moved_together: usable HBM with a searched capacity the space does not
        derive it from; a searched level's shared ports, their link power priced) — as audit's spec search does."""
        from jalapeno.specs.catalog import load_system
        from jalapeno.specs.variants import moved_together, with_overrides

        base = load_system(self.space.base)
        ov = dict(self.space.overrides(params))
        return with_overrides(base, sorted({**ov, **moved_together(base, ov)}.items()), where="design")

    def evaluate(self, params: dict[str, Any]) -> TrialResult:
        """Check, evaluate and score one design (module docstring)."""
        try:
            system, eff = self.design(params)
        except JalapenoError as e:
            return TrialResult(params, "", math.nan, math.nan, math.nan, reason=f"{e.field}: {e.problem}")
        except ValueError as e:  # a derived expression that cannot be evaluated for this design
            return TrialResult(params, "", math.nan, math.nan, math.nan, reason=str(e))
        head = (system.name, system.chip.tdp_w, system.allin_power_w_per_chip / 1e3, system.usd_per_chip_hour)
        why = violated(system, self.space.constraints)
        if why:
            return TrialResult(params, *head, reason=why)
        pricer = self.pricer(system, eff)
        cases = tuple(case_metrics(self.space, pricer, m, wl, prec, self.native(c)) for c, m, wl, prec in self.cases())
        bad = [c.reason for c in cases if c.reason]
        if bad:
            return TrialResult(params, *head, cases=cases, reason=bad[0])
        return TrialResult(params, *head, cases=cases, scores=self.scores(cases))

    def native(self, case) -> bool:
        """Whether ``case`` is swept at every native precision (``[sweep] precisions = "native"``, no case precision)."""
        return self.space.sweep.precisions == "native" and not case.precision

    def pricer(self, system: System, eff):
        """The pricer of a design: the space's chip model (flat, sliced with its placement, tiled)."""
        from jalapeno.cost.sliced import chip_model_pricer

        sw = self.space.sweep
        return chip_model_pricer(RooflinePricer(system, eff), sw.chip_model, sw.placement)

    def scores(self, cases: tuple[CaseResult, ...]) -> dict[str, float]:
        """Per metric, the weighted geometric mean of case value / base value."""
        w = np.array([c.weight for c in self.space.cases], dtype=float)
        out = {}
        for metric in self.space.objective.metrics:
            ratio = np.array([c.metrics[metric] / b[metric] for c, b in zip(cases, self.base_metrics)])
            out[metric] = float(np.exp(np.sum(w * np.log(ratio)) / w.sum()))
        return out


def make_evaluator(space: DesignSpace) -> Evaluator:
    """An :class:`Evaluator` with the base system's metrics (the reference of every score).

    Raises:
        SpecError: a case's own ``precision`` that its model or the base system's chip cannot run (named
            ``cases.N.precision``, specs/precision_checks.check_precision: fp4 on a dense model was told to lower the
            floor).
        InfeasibleDeployment: the base system itself cannot run a case at the floor (then no
            design can be scored against it; lower min_interactivity or change the base).
    """
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.errors import InfeasibleDeployment

    import time

    ev = Evaluator(space)
    p = load_pricer(space.base)
    check_case_precisions(ev, p.system)
    base = ev.pricer(p.system, p.efficiency)
    metrics = []
    t0 = time.perf_counter()
    for i, (c, m, wl, prec) in enumerate(ev.cases()):
        r = case_metrics(space, base, m, wl, prec, ev.native(c))
        if r.reason:
            raise InfeasibleDeployment(
                "base",
                f"the base system {space.base!r} cannot be scored: {r.reason}",
                base_fix(r.reason, i, c.model),
            )
        metrics.append(r.metrics)
    return Evaluator(space, tuple(metrics), time.perf_counter() - t0)


def base_fix(reason: str, i: int, model: str) -> str:
    """The remedy for a base that cannot score case ``i`` for ``reason``: only a floor it never reaches is the
    floor's (a model that fits no layout was told to lower objective.min_interactivity, break46)."""
    if "never reaches" in reason:
        return "lower objective.min_interactivity or pick another base"
    wider = "; or let instances span more of it: raise [sweep] max_stage_factor" if "scale-up domain" in reason else ""
    return f"pick another base, or change or drop cases.{i} ({model}){wider}"


def check_case_precisions(ev: Evaluator, base: System) -> None:
    """Refuse a case's own ``precision`` that its model or ``base``'s chip cannot run, before the base is scored.

    Every score is relative to the base, so a precision the base cannot run leaves no design to score, whatever the
    parameters add; named as the case's key with specs/precision_checks.check_precision's reason, its fix in the
    file's words
    (a design search takes no --compute-fallback).

    Raises:
        SpecError: ``cases.N.precision``.
    """
    import re

    from jalapeno.specs.precision_checks import check_precision

    for i, (c, m, _, prec) in enumerate(ev.cases()):
        if not c.precision:
            continue
        try:
            check_precision(prec, m, base.chip)
        except SpecError as e:
            fix = re.sub(r"-p ([\w.-]+)", r'precision = "\1"', e.fix).split(", or pass --compute-fallback")[0]
            raise SpecError(
                f"cases.{i}.precision",
                f"{c.precision!r} on {m.name} and {base.name}: {e.problem}",
                f"{fix} in that case, or drop its precision (the model's default)",
            ) from None
