"""jalapeno: a first-principles performance model of LLM-inference systems.

The public API, imported lazily so that ``import jalapeno`` stays light::

    import jalapeno as jp
    model = jp.load_model("deepseek-r1")
    pricer = jp.load_pricer("jalapeno")          # system + calibrated efficiency set
    sc = jp.step_cost(model, pricer, jp.Layout(dp=8, ep=8), jp.get_precision("fp8"),
                      jp.Batch.make(decode_seqs=64, decode_ctx=8192))
    res = jp.compare_systems(model, [pricer, jp.load_pricer("gb300-nvl72")],
                             jp.get_workload("8k1k"), jp.get_precision("fp8"))
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_API = {
    "load_system": "jalapeno.specs.catalog",
    "load_model": "jalapeno.specs.catalog",
    "load_efficiency": "jalapeno.specs.catalog",
    "load_pricer": "jalapeno.cost.pricer",
    "Pricer": "jalapeno.cost.pricer",
    "RooflinePricer": "jalapeno.cost.pricer",
    "list_systems": "jalapeno.specs.catalog",
    "list_models": "jalapeno.specs.catalog",
    "get_precision": "jalapeno.specs.formats",
    "get_workload": "jalapeno.specs.workload",
    "Workload": "jalapeno.specs.workload",
    "Efficiency": "jalapeno.specs.efficiency",
    "Layout": "jalapeno.deploy.layout",
    "Deployment": "jalapeno.deploy.deployment",
    "Pool": "jalapeno.deploy.deployment",
    "MTP": "jalapeno.deploy.deployment",
    "Batch": "jalapeno.cost.step",
    "step_cost": "jalapeno.cost.step_api",
    "collective_time": "jalapeno.cost.collectives",
    "serve_at_concurrency": "jalapeno.serve.point",
    "simulate": "jalapeno.serve.sim.run",
    "sweep": "jalapeno.analysis.sweep",
    "SweepOptions": "jalapeno.analysis.sweep",
    "system_frontier": "jalapeno.analysis.comparison",
    "compare_systems": "jalapeno.analysis.comparison",
    "predict_point": "jalapeno.analysis.prediction",
    "run_validation": "jalapeno.fit.validation_run",
    "PointRecord": "jalapeno.analysis.records",
    "PredictionRecord": "jalapeno.analysis.records",
    "FrontierRecord": "jalapeno.analysis.records",
    "ComparisonRecord": "jalapeno.analysis.records",
    "JalapenoError": "jalapeno.errors",
    "plan_capacity": "jalapeno.analysis.capacity",
}
__all__ = sorted(_API) + ["__version__"]


def __getattr__(name: str):
    mod = _API.get(name)
    if mod is None:
        raise AttributeError(f"module 'jalapeno' has no attribute {name!r}")
    return getattr(importlib.import_module(mod), name)


def __dir__() -> list[str]:
    """The public API (resolved lazily), so notebooks can complete it."""
    return sorted(set(globals()) | set(_API))
