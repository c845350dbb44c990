"""Sweeps "as deployed": an engine recipe's precision, serving mode, limits and MTP by load.

A recipe (deploy/engines.py) fixes what a measured system runs: one precision, aggregated or
disaggregated serving, its engine limits, and an MTP draft length that depends on the load
(e.g. Dynamo + TRT-LLM FP4: 3 drafts up to 71 decoding sequences per attention rank, 2 up to 76, 1
above) and, in some recipes, on the layout (deploy/recipe.DraftRule). A sweep as deployed runs once per
draft length and keeps, from each, the points whose layout and sequences per attention rank the rule gives
that length for, so every point runs the draft length its recipe would. Several precisions (``compare`` without ``--precision``) are swept one
after the other and merged; each point's deployment names its precision and its config.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from jalapeno.analysis.sweep import SweepOptions, SweepResult, concat_points, sweep
from jalapeno.cost.pricer import Pricer
from jalapeno.deploy.engines import Recipe
from jalapeno.errors import InfeasibleDeployment
from jalapeno.specs.formats import Precision, get_precision
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload


def recipe_options(recipe: Recipe, base: SweepOptions, label: str) -> SweepOptions:
    """``base`` with the recipe's serving mode, limits, overlap, scheduler poll interval and MoE backend
    (MTP: per band).

    ``label`` is recorded as every deployment's config (e.g. ``"as deployed: <recipe>"``).
    """
    kw = recipe.deployment_kwargs()
    return replace(
        base,
        serving=recipe.serving,
        mtp=None,
        recipe=label,
        budget_per=recipe.budget_per,
        prefill_attention_dp=recipe.prefill_attention_dp,
        overlap=recipe.overlap,
        moe_backend=recipe.moe_backend,
        **{
            k: v
            for k, v in kw.items()
            if k
            in (
                "max_running",
                "max_tokens_per_step",
                "cuda_graph_max_batch",
                "cuda_graph_batch_sizes",
                "cuda_graph_pad_routing",
                "token_budget",
                "recv_interval",
            )
        },
    )


def merge_sweeps(parts: list[SweepResult], precision_label: str) -> SweepResult:
    """One sweep result from several (points concatenated, deployment indices shifted)."""
    if len(parts) == 1:
        return parts[0]
    deps, idx, offset = [], [], 0
    for p in parts:
        deps.extend(p.deployments)
        idx.append(p.dep_index + offset)
        offset += len(p.deployments)
    p0 = parts[0]
    return SweepResult(
        p0.model,
        p0.system,
        p0.workload,
        precision_label,
        concat_points([p.points for p in parts]),
        deps,
        np.concatenate(idx),
    )


def _per_rank(res: SweepResult) -> np.ndarray:
    dp = np.array([d.decode.layout.dp * d.decode.layout.pp for d in res.deployments], dtype=float)
    return res.points.decode_batch / dp[res.dep_index]


def sweep_by_load(
    model: ModelSpec, pricer: Pricer, wl: Workload, precision: Precision, options: SweepOptions, recipe: Recipe | None
) -> SweepResult:
    """Sweep with ``options``; with a recipe that runs MTP, one sweep per draft length its rule gives.

    Each draft length keeps the points whose layout (attention-DP degree) and decoding sequences per
    attention rank the recipe's draft rule gives it for (``recipe.draft_rule``, deploy/recipe.DraftRule).

    Raises:
        InfeasibleDeployment: nothing fits (as :func:`analysis.sweep.sweep`).
    """
    rule = recipe.draft_rule if recipe is not None else None
    if rule is None or options.mtp is not None:
        return sweep(model, pricer, wl, precision, options)
    parts = []
    for k in rule.lengths:
        res = sweep(model, pricer, wl, precision, replace(options, mtp=recipe.mtp_for(k)))
        adp = [d.decode.layout.dp for d in res.deployments]
        ks = [rule.draft_at(float(r), adp[i]) for r, i in zip(_per_rank(res), res.dep_index, strict=True)]
        keep = np.flatnonzero(np.array(ks) == k)
        if keep.size:
            parts.append(
                SweepResult(
                    res.model,
                    res.system,
                    wl,
                    res.precision,
                    res.points.take(keep),
                    res.deployments,
                    res.dep_index[keep],
                )
            )
    return merge_sweeps(parts, precision.name)


def sweep_precisions(
    model: ModelSpec,
    pricer: Pricer,
    wl: Workload,
    precisions: list[str],
    options: SweepOptions,
    recipe: Recipe | None = None,
    swept: Sequence[Callable[[], SweepResult]] | None = None,
) -> SweepResult:
    """Sweep each precision (by load with ``recipe``) and merge; precisions that fit nowhere are skipped.

    ``swept`` (one per precision, in order): thunks that return that precision's :func:`sweep_by_load`
    or raise its error, e.g. run in worker processes beforehand (analysis/workers.in_workers).

    Raises:
        InfeasibleDeployment: no precision fits (the first one's error).
    """
    parts, first_err = [], None
    if swept is None:
        swept = [lambda n=name: one_sweep(model, pricer, wl, None, options, recipe, n) for name in precisions]
    for one in swept:
        try:
            parts.append(one())
        except InfeasibleDeployment as e:
            first_err = first_err or e
    if not parts:
        raise first_err
    return merge_sweeps(parts, ",".join(p.precision for p in parts))


def sweep_plan(precision: Precision | None, precisions: list[str] | None, recipe: Recipe | None) -> list[str | None]:
    """The sweeps ``analysis/system_frontier.system_frontier`` runs for these arguments, in order: one per
    precision name (:func:`sweep_precisions`), or ``[None]``, one plain sweep at ``precision``; ``[]``
    when there is no precision (system_frontier refuses that before sweeping)."""
    if precisions is not None or recipe is not None:
        return list(precisions or ([precision.name] if precision is not None else []))
    return [None] if precision is not None else []


def one_sweep(
    model: ModelSpec,
    pricer: Pricer,
    wl: Workload,
    precision: Precision | None,
    options: SweepOptions | None,
    recipe: Recipe | None,
    name: str | None,
) -> SweepResult:
    """The sweep :func:`sweep_plan` names ``name``: :func:`sweep_by_load` at that precision preset (options
    default), or with ``None`` the plain sweep at ``precision``.

    Raises:
        InfeasibleDeployment: nothing fits (as :func:`analysis.sweep.sweep`).
    """
    if name is None:
        return sweep(model, pricer, wl, precision, options)
    return sweep_by_load(model, pricer, wl, get_precision(name), options or SweepOptions(), recipe)
