"""Validation: predictions against measured serving results, with error statistics.

Sources:
- InferenceX points (CSV, the shipped ``data/validation/inferencex_points.csv`` format).
- aiconfigurator's ``silicon_sample.csv`` (optional ``aiconfigurator-core``): TTFT/TPOT, full deployments.
Each measured point is mapped to a prediction, labelled by how:
- ``matched``: the source gives the deployment (layout, worker counts) and the concurrency;
  the model serves exactly that (serve/point.py).
- ``searched_best`` / ``searched_best@concurrency``: no deployment given, and the benchmark's search
  space (fit/searched.py) names the runs the row is the best of: the best throughput per chip over
  those runs (at the row's concurrency, when it gives one).
- Rows no search space covers: ``best@concurrency`` (an aggregated "best configuration" row, or
  one with no interactivity: the best at that concurrency over its recipe's layouts,
  fit/search_space.py, else every one); ``frontier@interactivity`` (the predicted frontier at the
  measured interactivity); ``frontier_peak@concurrency`` (neither, with a concurrency: the highest
  throughput per chip of the predicted sweep's points at a concurrency no higher than the row's, so
  the prediction is bounded by the load the run had); ``frontier_peak`` (no concurrency either: the
  predicted frontier's peak, unbounded); ``frontier@tpot_limit`` (a latency-bounded benchmark result,
  MLPerf Server / Interactive: the highest throughput per chip of the predicted sweep's points whose
  mean TPOT is within the rules' p99 TPOT limit, ``MeasuredPoint.tpot_limit_s``); ``frontier@limits``
  (the same, and its p99 TTFT under Poisson arrivals within ``MeasuredPoint.ttft_limit_s``:
  fit/latency_limits.py); ``matched@limits`` (the same two limits over one declared deployment's
  concurrency, up to ``MeasuredPoint.concurrency`` slots: a submission whose engine config is read,
  fit/latency_limits.engine_within_limits).
- ``best_entry@concurrency``: a best-configuration point whose concurrency several published recipe
  entries ran; the highest throughput per chip over those entries (fit/entries.py), a point silent on
  MTP over those without MTP where any ran it (the search-space rule, fit/entries.silent_mtp_entries).
A row whose system, model, framework, precision, lengths, concurrency (and MTP use, when stated)
identify one published recipe entry (``[[identified]]`` in data/engines.toml, with its source) is
``matched`` with its deployment, MTP, prefill budget and decode ``max_batch`` (the slots beyond which
users queue); a stated topology must agree on the GPU count, else it is read instead.
Dynamo + TRT-LLM disaggregated rows carry the recipe's prefill budget per rank (:func:`recipe_budget`).
Rows that cannot be mapped are skipped with the reason. MTP rows take the draft length and acceptance
of their launch recipe (data/engines.toml: Dynamo + TRT-LLM's by load, :func:`recipe_mtp`; another
engine's recipe, deploy/engines.launch_mtp: Dynamo + SGLang's EAGLE chain of 2 drafts on B200 FP4;
aiconfigurator rows of an InferenceX MTP sweep, fit/aic_sweeps.py), else :data:`VALIDATION_MTP`.
Errors: signed % error = predicted/measured − 1; per group n, median and p90 absolute % error and
the median signed error (bias). A row whose TTFT is the runs' median (``ttft_stat``) is compared with
the predicted median (p50, which the idle start's first wave skews far less), the others with the mean.
The InferenceX rows are read and mapped by fit/ix_points.py (:func:`load_inferencex`, re-exported here since its
split in round 53), aiconfigurator's by fit/aic_rows.py; this module predicts them (:func:`predict_points`).
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from jalapeno.errors import JalapenoError
from jalapeno.fit.entries import best_entry, stack_mtp_note, with_stack_mtp
from jalapeno.fit.ix_topology import DYNAMO_TRT_RECIPE, TEP_MAX_SEQS_PER_WORKER, parse_topology  # noqa: F401 (re-exported)
from jalapeno.fit.latency_limits import peak_within_tpot  # noqa: F401  (re-exported; it lived here)
from jalapeno.fit.measured_point import (  # noqa: F401
    MeasuredPoint,
    point_release,
    point_stack,
    point_workload,
    with_clock_cap,
    with_harness_step,
)  # (re-exported: they lived here until round 46)
from jalapeno.fit.ix_points import (  # noqa: F401 (re-exported: the InferenceX reader, split from here in round 53)
    CHAIN_ACCEPTANCE,
    HARDWARE,
    IX_MODELS,
    MTP_DRAFT_BY_SEQS_PER_RANK,
    VALIDATION_MTP,
    load_inferencex,
    recipe_budget,
    recipe_mtp,
)
from jalapeno.fit.search_space import searched_layouts, searched_mask
from jalapeno.fit.searched import best_searched
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import INFERENCEX_RANGE_RATIO, PRESETS  # noqa: F401 (INFERENCEX_RANGE_RATIO re-exported)

METRICS = ("throughput_per_chip", "interactivity", "ttft_s", "tpot_s")


# ---- aiconfigurator end-to-end rows -------------------------------------------------------


def load_aiconfigurator(frame: pd.DataFrame | None = None) -> tuple[list[MeasuredPoint], list[tuple[str, str]]]:
    """Measured points of aiconfigurator's ``silicon_sample.csv`` and the skipped rows (fit/aic_rows.py).

    Raises:
        SpecError: the package is not installed and no frame was given.
    """
    from jalapeno.fit.aic_rows import load_aiconfigurator as load

    return load(frame)


# ---- predictions and errors ---------------------------------------------------------------


def predict_points(
    points: list[MeasuredPoint],
    calibrated_systems: frozenset = frozenset(),
    on_progress=None,
    efficiency: str = "calibrated",
    overlap: str = "none",
    stack_of=point_stack,
    pricer: str = "roofline",
    recurring_waves: bool = False,
) -> pd.DataFrame:
    """Predict every point; one row per (point, metric) with measured, predicted and % error.

    Each point is priced with its software stack's fixed costs and MTP acceptance
    (``stack_of(point)`` → a specs/stacks.Stack; default: its framework's profile, :func:`point_stack`).

    ``pricer``: ``roofline`` (every system), ``table`` (fit/table_lookup.py: the table-lookup
    pricer on systems with kernel tables, the roofline pricer on the others) or ``auto`` (per
    system the one with the lower shipped end-to-end error); each row's ``pricer`` column says
    which priced it. ``recurring_waves``: fixed-length matched points take the periodic regime of
    a synchronised closed loop (serve/point.serve_at_concurrency; off by default: docs/model.md §12).

    Matched points of one deployment and workload are solved in one vectorised call. Points
    mapped to a sweep (best at a concurrency, a frontier) sweep with ``overlap`` (``none``: the
    engines' recipes do not set two-batch overlap unless a recipe says so; ``auto``/``tbo``:
    analysis/sweep.py), so a recipe-less point is not credited with an option its run lacked.
    """
    from jalapeno.analysis.comparison import system_frontier
    from jalapeno.analysis.frontier import interp_frontier, peak_at_concurrency
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS
    from jalapeno.fit.latency_limits import engine_within_limits, peak_within_limits
    from jalapeno.fit.table_lookup import load_any_pricer, resolve_pricer
    from jalapeno.serve.finite_run import finite_run_factor
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    resolve_pricer("", "roofline" if pricer == "auto" else pricer)  # refuse an unknown name up front

    out = []
    groups: dict[tuple, list[MeasuredPoint]] = {}
    stack_by_id = {}
    for pt in points:
        st = stack_of(pt)
        stack_by_id[pt.id] = st
        dep = with_stack_mtp(pt.deployment, st, pt.model)
        key = (
            pt.system,
            pt.model,
            pt.isl,
            pt.osl,
            pt.fixed_lengths,
            pt.mapping,
            id(pt.workload),
            pt.serving,
            repr(dep) if dep else pt.precision,
            id(st),
            pt.eager_prompt_call_s,
            pt.harness_step_s,
            pt.clock_cap,
        )  # every field: limits, the pools' MoE/attention backends
        groups.setdefault(key, []).append(pt)
    frontiers: dict[tuple, object] = {}
    for n, (key, pts) in enumerate(groups.items()):
        if on_progress:
            on_progress(n, len(groups))
        pt0 = pts[0]
        st = stack_by_id[pt0.id]
        used = resolve_pricer(pt0.system, pricer) if pt0.system in AIC_SYSTEM_DIRS else "roofline"
        model, system = load_model(pt0.model), load_any_pricer(pt0.system, efficiency, pricer=used, stack=st)
        system = with_clock_cap(with_harness_step(system, pt0.harness_step_s), pt0.clock_cap)
        dep0 = with_stack_mtp(pt0.deployment, st, pt0.model)
        wl = point_workload(pt0)
        try:
            if pt0.mapping == "matched":
                res = serve_at_concurrency(
                    model,
                    system,
                    dep0,
                    wl,
                    [p.concurrency for p in pts],
                    recurring_waves=recurring_waves and pt0.fixed_lengths,
                )
                drain = [finite_run_factor(model, system, dep0, wl, p.queries) if p.queries else 1.0 for p in pts]
                preds = [
                    {
                        "throughput_per_chip": res.throughput_per_chip[i] * drain[i] * p.delivered_share,
                        "interactivity": res.interactivity[i],
                        "ttft_s": (res.ttft_p50_s if p.ttft_median else res.ttft_s)[i],
                        "tpot_s": res.tpot_s[i],
                        "feasible": bool(res.feasible[i]),
                        "reason": str(res.reason[i]),
                    }
                    for i, p in enumerate(pts)
                ]
            elif pt0.mapping == "matched@limits":  # fit/latency_limits.py: the declared engine within the limits
                preds = [
                    engine_within_limits(
                        model, system, dep0, wl, p.concurrency, p.tpot_limit_s, p.ttft_limit_s, p.server_run
                    )
                    for p in pts
                ]
            elif pt0.mapping == "best_entry@concurrency":
                preds = [
                    best_entry(
                        model, system, tuple(with_stack_mtp(d, st, p.model) for d in p.candidates), wl, p.concurrency
                    )
                    for p in pts
                ]
            elif pt0.mapping.startswith("searched_best"):  # fit/searched.py
                preds = [
                    best_searched(model, system, p.candidates, wl, lambda d: with_stack_mtp(d, st, p.model))
                    for p in pts
                ]
            elif pt0.mapping == "best@concurrency":
                from jalapeno.analysis.sweep import sweep

                res = sweep(
                    model,
                    system,
                    wl,
                    get_precision(pt0.precision),
                    SweepOptions(serving="agg", concurrency=tuple(p.concurrency for p in pts), overlap=overlap),
                )
                k = len(pts)
                ok = res.points.feasible & searched_mask(res, searched_layouts(pt0, st))
                tp = np.where(ok, res.points.throughput_per_chip, 0.0).reshape(-1, k)
                preds = [
                    {
                        "throughput_per_chip": float(tp[:, i].max()),
                        "feasible": bool(tp[:, i].max() > 0),
                        "reason": "no aggregated layout fits",
                    }
                    for i in range(k)
                ]
            else:
                fk = (
                    pt0.system,
                    pt0.model,
                    pt0.precision,
                    pt0.isl,
                    pt0.osl,
                    id(st),
                    id(pt0.workload),
                    pt0.serving,
                    pt0.eager_prompt_call_s,
                )
                if fk not in frontiers:
                    frontiers[fk] = system_frontier(
                        model,
                        system,
                        wl,
                        get_precision(pt0.precision),
                        SweepOptions(serving=pt0.serving, overlap=overlap, eager_prompt_call_s=pt0.eager_prompt_call_s),
                    )
                sf = frontiers[fk]
                preds = []
                for p in pts:
                    if p.mapping == "frontier_peak":
                        y, st = float(sf.y.max()), "peak"
                    elif p.mapping == "frontier_peak@concurrency":
                        y = peak_at_concurrency(sf.sweep.points, p.concurrency)
                        st = "peak" if y > 0 else "unreachable"
                    elif p.mapping == "frontier@tpot_limit":
                        y = peak_within_tpot(sf.sweep.points, p.tpot_limit_s)
                        st = "peak" if y > 0 else "unreachable"
                    elif p.mapping == "frontier@limits":  # fit/latency_limits.py
                        y = peak_within_limits(
                            model, system, wl, sf.sweep, p.tpot_limit_s, p.ttft_limit_s, p.server_run, p.chips
                        )[0]
                        st = "peak" if y > 0 else "unreachable"
                    else:
                        yy, ss = interp_frontier(sf.x, sf.y, np.array([p.measured["interactivity"]]))
                        y, st = float(yy[0]), str(ss[0])
                    why = (
                        f"no feasible predicted point at concurrency <= {p.concurrency:g}"
                        if p.mapping == "frontier_peak@concurrency"
                        else f"no feasible predicted point with {'mean' if p.mapping == 'frontier@tpot_limit' else 'Poisson p99'}"
                        f" TPOT <= {p.tpot_limit_s:g} s"
                        + (f" and Poisson p99 TTFT <= {p.ttft_limit_s:g} s" if p.mapping == "frontier@limits" else "")
                        if p.mapping in ("frontier@tpot_limit", "frontier@limits")
                        else "measured interactivity beyond the predicted frontier"
                    )
                    preds.append(
                        {
                            "throughput_per_chip": y,
                            "feasible": st != "unreachable",
                            "reason": "" if st != "unreachable" else why,
                            "frontier_status": st,
                        }
                    )
        except JalapenoError as e:
            preds = [{"feasible": False, "reason": str(e)} for _ in pts]
        for p, pr in zip(pts, preds):
            for m in METRICS:
                meas = p.measured.get(m)
                if meas is None or (m != "throughput_per_chip" and p.mapping != "matched"):
                    continue
                val = pr.get(m)
                ok = pr.get("feasible", False) and val is not None and np.isfinite(val) and val > 0
                dep = with_stack_mtp(p.deployment, stack_by_id[p.id], p.model)  # the acceptance priced, not stated
                mtp_note = stack_mtp_note(p.deployment, stack_by_id[p.id], p.model)
                out.append(
                    {
                        "source": p.source,
                        "id": p.id,
                        "system": p.system,
                        "model": p.model,
                        "precision": p.precision,
                        "framework": p.framework,
                        "stack": stack_by_id[p.id].name,
                        "mode": p.mode,
                        "isl": p.isl,
                        "osl": p.osl,
                        "concurrency": p.concurrency,
                        "mapping": p.mapping,
                        "deployment": dep.for_model(model).label if dep else "",
                        "metric": m,
                        "measured": float(meas),
                        "predicted": float(val) if ok else float("nan"),
                        "error": float(val) / float(meas) - 1 if ok else float("nan"),
                        "kernels_calibrated": p.system in calibrated_systems,
                        "pricer": used,
                        "notes": "; ".join(
                            p.notes + ([mtp_note] if mtp_note else []) + ([] if ok else [pr.get("reason", "")])
                        ),
                    }
                )
    return pd.DataFrame(out)
