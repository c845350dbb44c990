"""Best of the published recipe entries a measured "best configuration" point could have run.

InferenceX's ``max_throughput_per_gpu`` rows are the highest throughput per GPU the benchmark
measured at one concurrency, over the entries of its search space that ran it. When several
``[[identified]]`` entries (data/engines.toml, deploy/engines.identified_candidates) ran the
point's concurrency, the point is validated ``best_entry@concurrency``: each entry is served at
that concurrency (serve/point.py, with the point's engine profile) and the highest throughput per
chip is the prediction — the same maximum the measurement took, over the same deployments, rather
than the model's own frontier (which searches layouts the benchmark never ran).
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.cost.pricer import Pricer
from jalapeno.deploy.deployment import MTP, Deployment
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload


def best_entry(model: ModelSpec, pricer: Pricer, deployments: tuple[Deployment, ...], wl: Workload,
               concurrency: float) -> dict:
    """The highest predicted throughput per chip over ``deployments`` at ``concurrency``.

    Returns a prediction dict (fit/validate.predict_points): ``throughput_per_chip``, ``feasible``,
    ``reason`` and ``entry`` (the winning deployment's label); infeasible when no entry is.
    """
    best = {"feasible": False, "reason": "no published entry is feasible"}
    for dep in deployments:
        r = serve_at_concurrency(model, pricer, dep, wl, [concurrency])
        tp = float(r.throughput_per_chip[0])
        if bool(r.feasible[0]) and tp > best.get("throughput_per_chip", 0.0):
            best = {"throughput_per_chip": tp, "feasible": True, "reason": "", "entry": dep.label}
    return best


def with_stack_mtp(dep: Deployment | None, stack, model: str) -> Deployment | None:
    """``dep`` with its MTP acceptance replaced by the engine profile's (``stack``, specs/stacks.Stack)
    for ``model``, when it gives one; ``dep`` itself otherwise (also re-exported by fit/validate.py)."""
    if dep is None or dep.mtp is None:
        return dep
    a = stack.acceptance(model, dep.mtp.draft_tokens)
    if a is None or a == dep.mtp.acceptance:
        return dep
    return replace(dep, mtp=MTP(dep.mtp.draft_tokens, a))
