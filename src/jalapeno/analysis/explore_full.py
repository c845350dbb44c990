"""A design's figure as ``compare`` prices it, beside ``explore``'s coarse ranking figure.

``explore`` scores every trial on a coarse sweep (analysis/explore.case_metrics: the case's precision or the
model's default one, aggregated serving, a few decode batches, no TBO, stages of one scale-up domain). ``compare``
reads its Fast tier from the full frontier: every released precision the chip computes natively
(deploy/checkpoints.available_precisions), aggregated and disaggregated serving, the default decode-batch grid
(1 ... 16,384), TBO where a layout has an all-to-all, EPLB, stages up to 4 scale-up domains
(analysis/sweep.SweepOptions defaults). On the catalogued Jalapeño, DeepSeek-R1 8K/1K at 100 tok/s/user (chip
power): coarse 779 tok/s/chip (1,113 tok/s/kW), compare's 1,730 (2,471 tok/s/kW); FP4 alone is 2.03x of it (779 ->
1,583), the full batch grid +1.8% (1,612), disaggregated serving +7.3% (1,730); TBO, EPLB and larger stages add
nothing there (scripts/explore_fidelity.py prints the chain; docs/explore.md §4.1).

:func:`full_case_metrics` prices one design on one case the way ``compare`` does, with the same metric names as
the coarse figure, so the CLI can print the compare figure of the base and of the best design (:func:`compare_figures`,
:func:`compare_score`). ``[sweep] precisions = "native"`` (specs/design_space.SweepSettings) brings the precisions
into the coarse sweep itself.
"""

from __future__ import annotations

import numpy as np

from jalapeno.analysis.explore import CaseResult, throughput_at_floor
from jalapeno.analysis.power_cost import power_w_per_chip
from jalapeno.analysis.sweep import SweepOptions, concat_points, sweep
from jalapeno.errors import JalapenoError


def compare_precisions(model, system, pinned: str | None) -> tuple[str, ...]:
    """The precisions ``compare`` sweeps a model at on a system: the pinned one, else every released
    precision the chip computes natively (deploy/checkpoints.available_precisions, as ``compare`` without -p).

    Args:
        model: ModelSpec; system: System; pinned: a case's precision name, or None.

    Returns:
        Preset names, at least one (the model's default when the chip computes none natively).
    """
    if pinned:
        return (pinned,)
    from jalapeno.deploy.checkpoints import available_precisions

    got = available_precisions(model.name, model.default_precision, system.chip.formats, model, system.chip)
    return tuple(got) or (model.default_precision,)


def full_case_metrics(
    space, pricer, model, workload, pinned: str | None = None, options: SweepOptions | None = None
) -> CaseResult:
    """One design on one case as ``compare`` prices it (module docstring): the same metrics as
    analysis/explore.case_metrics, read on the union of every precision's points at the space's floor.

    Args:
        space: the DesignSpace (its objective's floor, power convention and ``at_floor`` rule).
        pricer: the design's pricer; model: ModelSpec; workload: Workload; pinned: the case's precision or None.
        options: the sweep of each precision (default ``SweepOptions()``, compare's; the space's coarse one,
            analysis/explore.sweep_options, gives the coarse sweep at every native precision).

    Returns:
        A :class:`CaseResult`; ``reason`` set (metrics empty) when no precision fits or none reaches the floor.
    """
    from jalapeno.specs.formats import get_precision

    obj = space.objective
    parts, why = [], ""
    for name in compare_precisions(model, pricer.system, pinned):
        try:
            parts.append(sweep(model, pricer, workload, get_precision(name), options or SweepOptions()).points)
        except JalapenoError as e:
            why = f"{model.name} {name}: {e.problem}"
    if not parts:
        return CaseResult(model.name, workload.name, {}, why or f"{model.name}: no precision")
    p = concat_points(parts)
    ok = p.feasible & (p.throughput_per_chip > 0) & np.isfinite(p.interactivity)
    if not (ok & (p.interactivity >= obj.min_interactivity)).any():
        return CaseResult(
            model.name,
            workload.name,
            {},
            f"{model.name} {workload.name}: never reaches {obj.min_interactivity:g} tok/s/user",
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


def compare_figures(ev, params: dict | None) -> list[dict]:
    """Per case, a design's coarse figure (the one its score is made of) beside ``compare``'s, for the base and for
    one design: what ``explore`` prints under its table and stores in meta.json (``compare``).

    Args:
        ev: analysis/explore.Evaluator with its ``base_metrics``.
        params: the design's parameter values (a trial's), or None for the base only.

    Returns:
        One dict per case: ``model``, ``workload``, ``base`` and ``design`` (each {"coarse": metrics,
        "compare": metrics}, metrics as analysis/explore.case_metrics names them; ``design`` absent without
        ``params``), and ``reason`` ("" or why compare's figure is missing, e.g. the design never reaches the
        floor on the full sweep either).
    """
    from jalapeno.cost.pricer import load_pricer

    b = load_pricer(ev.space.base)
    pricers = {"base": ev.pricer(b.system, b.efficiency)}
    coarse = {}
    if params is not None:
        system, eff = ev.design(params)
        pricers["design"] = ev.pricer(system, eff)
        coarse = {"design": ev.evaluate(params).cases}
    out = []
    for i, (case, m, wl, _) in enumerate(ev.cases()):
        row = {"model": m.name, "workload": wl.name, "reason": ""}
        for who, pr in pricers.items():
            full = full_case_metrics(ev.space, pr, m, wl, case.precision)
            cm = ev.base_metrics[i] if who == "base" else coarse[who][i].metrics
            row[who] = {"coarse": dict(cm), "compare": dict(full.metrics)}
            row["reason"] = row["reason"] or full.reason
        out.append(row)
    return out


def compare_score(figs: list[dict], weights, metric: str) -> float:
    """A design's score on ``compare``'s figures: the weighted geometric mean over cases of design / base (the rule
    of analysis/explore.Evaluator.scores); NaN where a case lacks either figure.

    >>> figs = [{"base": {"compare": {"m": 100.0}}, "design": {"compare": {"m": 400.0}}},
    ...         {"base": {"compare": {"m": 10.0}}, "design": {"compare": {"m": 10.0}}}]
    >>> compare_score(figs, [1.0, 1.0], "m")
    2.0
    """
    w = np.asarray(weights, dtype=float)
    try:
        r = np.array([f["design"]["compare"][metric] / f["base"]["compare"][metric] for f in figs])
    except KeyError:
        return float("nan")
    return float(np.exp(np.sum(w * np.log(r)) / w.sum()))
