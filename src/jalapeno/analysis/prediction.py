"""One operating point: a given deployment at a given concurrency (``jalapeno predict``)."""

from __future__ import annotations

import math

from jalapeno.analysis.power_cost import power_w_per_chip
from jalapeno.analysis.records import point_record
from jalapeno.deploy.deployment import Deployment
from jalapeno.deploy.layout import validate_layout
from jalapeno.errors import SpecError
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload


def predict_point(model: ModelSpec, system: System, dep: Deployment, wl: Workload, concurrency: float,
                  convention: str = "all-in", eff: Efficiency | None = None) -> dict:
    """The JSON record (analysis/records.py) of ``dep`` serving ``wl`` at ``concurrency``.

    Raises:
        SpecError: non-positive concurrency or unknown power convention.
        InfeasibleDeployment: a layout that cannot run the model on the system, or a
            deployment larger than the system.
    """
    if not (math.isfinite(concurrency) and concurrency > 0):
        raise SpecError("--concurrency", f"must be a finite number > 0, got {concurrency}",
                        "give a concurrency >= 1")
    power_w_per_chip(system, convention)
    for pool in filter(None, (dep.prefill, dep.decode)):
        validate_layout(pool.layout, model, system)
    if dep.chips > system.max_chips:
        from jalapeno.errors import InfeasibleDeployment

        raise InfeasibleDeployment("deployment", f"{dep.chips} chips exceed {system.name}'s {system.max_chips}",
                                   "use fewer workers or smaller pools")
    pts = serve_at_concurrency(model, system, dep, wl, [concurrency], eff)
    rec = point_record(pts, 0, dep, system, convention)
    rec.update({"model": model.name, "workload": wl.as_dict()})
    return rec
