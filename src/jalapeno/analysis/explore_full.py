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

from jalapeno.analysis.explore import CaseResult, case_result
from jalapeno.analysis.sweep import SweepOptions, sweep
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

    parts, why = [], f"{model.name}: no precision"
    for name in compare_precisions(model, pricer.system, pinned):
        try:
            parts.append(sweep(model, pricer, workload, get_precision(name), options or SweepOptions()).points)
        except JalapenoError as e:
            why = f"{model.name} {name}: {e.problem}"
    return case_result(space, pricer, model, workload, parts, why)


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


def compare_block(ev, meta: dict, rows: list[dict]) -> dict:
    """``compare``'s figure for the base and the best design (the first of the Pareto set with several
    objectives), per case, beside the coarse figures the scores are made of (analysis/explore_full.compare_figures):
    the coarse sweep ranks designs well (Spearman 0.94-0.96 over 20 designs of each shipped space, round 45,
    scripts/explore_fidelity.py) but its figure is not compare's: Jalapeño's DeepSeek-R1 8K/1K at 100 tok/s/user
    is 1,113 tok/s/kW coarse against compare's 2,471 (FP4 2.03x, disagg +7.3%; docs/explore.md §4.1).

    Args:
        ev: the study's Evaluator; meta: the run's meta (``pareto``: trial numbers, ``metrics``: objective
            metrics); rows: the study's trial rows (results_store.trial_rows: ``trial``, ``param:KEY`` columns).

    Returns:
        ``{"trial", "metric", "cases", "score"}``: ``cases`` as :func:`compare_figures`, ``score`` the best design's
        :func:`compare_score` on the first metric (None without a feasible trial or where a case has no figure).
    """
    best = meta["pareto"][0] if meta["pareto"] else None
    row = next((r for r in rows if r["trial"] == best), None)
    params = None if row is None else {k[len("param:") :]: v for k, v in row.items() if k.startswith("param:")}
    figs = compare_figures(ev, params)
    metric = meta["metrics"][0]
    score = compare_score(figs, [c.weight for c in ev.space.cases], metric) if params is not None else None
    if score is not None and score != score:  # a case without compare's figure: no score (JSON has no NaN)
        score = None
    return {"trial": best if params is not None else None, "metric": metric, "cases": figs, "score": score}


def figure_text(x: float) -> str:
    """A figure of compare_lines: whole and thousands-separated from 1,000 up, four significant digits below
    (``,.4g`` printed 10,130 tok/s per kW as 1.013e+04 beside a coarse 2,501). Also the band ends of
    analysis/spec_bands.spec_band_line.

    >>> figure_text(10130.4), figure_text(2500.6), figure_text(474.23)
    ('10,130', '2,501', '474.2')
    >>> figure_text(13360.0), figure_text(172.8), figure_text(0.75)  # band ends: Jalapeño's BF16 peak, usable GiB
    ('13,360', '172.8', '0.75')
    """
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def compare_lines(out: dict) -> list[str]:
    """The lines under explore's table that put the coarse figures beside ``compare``'s (:func:`compare_block`);
    none for a run stored before round 45 (no ``compare`` in its meta.json).

    Args:
        out: the CLI's summary: ``base`` (name), ``objective`` (``min_interactivity``, ``power``) and ``compare``
            (:func:`compare_block`'s dict, or absent).

    Returns:
        Text lines, figures in the metric's unit (:func:`figure_text`)."""
    blk = out.get("compare")
    if not blk:
        return []
    m, obj = blk["metric"], out.get("objective") or {}
    lines = [
        f"compare's figure ({m} at {obj.get('min_interactivity', 0):g} tok/s/user, power "
        f"{obj.get('power', 'chip')}: every native precision, agg and disagg, the full batch grid, TBO, EPLB; "
        "what `jalapeno compare` prints) beside the coarse one the scores are made of:"
    ]
    for c in blk["cases"]:
        for who in ("base", "design"):
            if who not in c:
                continue
            co, fu = c[who]["coarse"].get(m), c[who]["compare"].get(m)
            label = f"base {out['base']}" if who == "base" else f"best design (trial {blk['trial']})"
            if fu is None:
                lines.append(
                    f"  {label} on {c['model']} {c['workload']}: coarse {figure_text(co)}; compare's: none ({c['reason']})"
                )
            else:
                lines.append(
                    f"  {label} on {c['model']} {c['workload']}: compare {figure_text(fu)}, coarse {figure_text(co)} "
                    f"(compare / coarse {fu / co:.2f})"
                )
    if blk.get("score") is not None:
        lines.append(f"  best design on compare's figures: {blk['score']:.3g} x base (its coarse score: the table's)")
    return lines
