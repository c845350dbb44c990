"""One operating point: a given deployment at a given concurrency (``jalapeno predict``)."""

from __future__ import annotations

import math

from jalapeno.analysis.power_cost import power_w_per_chip
from jalapeno.analysis.records import PredictionRecord
from jalapeno.deploy.deployment import Deployment
from jalapeno.deploy.layout import validate_layout
from jalapeno.errors import SpecError, check_bool
from jalapeno.serve.point import serve_at_concurrency, serve_at_rate
from jalapeno.serve.ttft_parts import ttft_parts
from jalapeno.cost.pricer import Pricer
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import MAX_RATE_PER_S, Workload

#: Lowest open-loop rate predicted, requests/s (one request every 11.6 days): a plausibility
#: bound, not a measured one; below it the server is idle between requests and the open-loop
#: solver's per-instance batch (serve/analytic.py) would reach its numerical floor.
MIN_RATE_PER_S = 1e-6


def predict_point(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    concurrency: float | None,
    convention: str = "all-in",
    rate: float | None = None,
    recurring_waves: bool = False,
) -> PredictionRecord:
    """The record (analysis/records.py) of ``dep`` serving ``wl`` at ``concurrency`` (or open-loop ``rate``).

    ``recurring_waves``: a fixed-length closed loop whose users start together repeats its first
    wave's burst (serve/queueing.py effect 6; serve/point.serve_at_concurrency).

    Raises:
        SpecError: ``model``, ``pricer``, ``wl`` or ``dep`` not of its type (a name in their place), both a
            concurrency and a rate (the rate was served, the concurrency dropped), a ``recurring_waves`` that
            is not True/False, a concurrency or rate that is not a number, non-positive concurrency
            (or above MAX_CONCURRENCY, 1e6), a rate below :data:`MIN_RATE_PER_S` or above MAX_RATE_PER_S (1e6),
            or unknown power convention.
        InfeasibleDeployment: a layout that cannot run the model on the system, or a
            deployment larger than the system.
    """
    if not isinstance(
        dep, Deployment
    ):  # a layout label raised AttributeError: 'str' object has no attribute 'for_model'
        raise SpecError(
            "predict_point: dep",
            f"expected a Deployment, got {type(dep).__name__}",
            "pass Deployment(get_precision(name), Pool(Layout(...)))",
        )
    _check_inputs(model, pricer, wl, concurrency, rate, recurring_waves)
    load, value = ("--concurrency", concurrency) if rate is None else ("--rate", rate)
    if isinstance(value, (str, bool)):  # '4' raised TypeError: must be real number, not str
        raise SpecError(load, f"must be a number, got {value!r}", f"give {load} as a number > 0, e.g. 4")
    if value is None or not (math.isfinite(value) and value > 0):
        raise SpecError(load, f"must be a finite number > 0, got {value}", f"give {load} > 0")
    if rate is not None and rate < MIN_RATE_PER_S:
        raise SpecError(
            "--rate",
            f"{rate:g} requests/s is one request every {1 / rate / 86400:.3g} days: an idle "
            f"server, below the lowest rate predicted ({MIN_RATE_PER_S:g} requests/s)",
            f"give --rate {MIN_RATE_PER_S:g} or more (requests per second, not per hour)",
        )
    if rate is not None and rate > MAX_RATE_PER_S:  # 1e12 requests/s ran: a result that is only queueing
        raise SpecError(
            "--rate",
            f"{rate:g} requests/s is above {MAX_RATE_PER_S:g} (specs/workload.MAX_RATE_PER_S)",
            "give the rate in requests per second",
        )
    system = pricer.system
    dep = dep.for_model(model)
    power_w_per_chip(system, convention)
    for role, pool in (("prefill", dep.prefill), ("decode", dep.decode)):
        if pool is not None:
            validate_layout(pool.layout, model, system, role)
    if dep.chips > system.max_chips:
        from jalapeno.errors import InfeasibleDeployment

        raise InfeasibleDeployment(
            "deployment",
            f"{dep.chips} chips exceed {system.name}'s {system.max_chips}",
            "use fewer workers or smaller pools",
        )
    if rate is None:
        pts = serve_at_concurrency(model, pricer, dep, wl, [concurrency], recurring_waves=recurring_waves)
    else:
        pts = serve_at_rate(model, pricer, dep, wl, [rate])
    parts = ttft_parts(model, pricer, dep, wl, pts)
    return PredictionRecord.from_points(
        pts,
        0,
        dep,
        system,
        convention,
        model=model.name,
        workload=wl,
        efficiency_source=pricer.efficiency.source,
        ttft_parts={k: float(v[0]) for k, v in parts.items()},
    )


def _check_inputs(model, pricer, wl, concurrency, rate, recurring_waves) -> None:
    """:func:`predict_point`'s refusals of a name where an object goes, of two loads, and of a non-bool switch.

    Raises:
        SpecError: naming the argument and what to pass (before, a name raised AttributeError deep inside,
            and concurrency with rate served the rate and dropped the concurrency silently).
    """
    from jalapeno.cost.pricer import check_pricer

    if not isinstance(model, ModelSpec):  # 'deepseek-r1' raised AttributeError: 'str' object has no attribute 'moe'
        raise SpecError(
            "predict_point: model",
            f"expected a ModelSpec, got {type(model).__name__}",
            "pass load_model(name), e.g. load_model('deepseek-r1')",
        )
    check_pricer(pricer, "predict_point: pricer")  # 'b200' raised AttributeError: no attribute 'system'
    if not isinstance(wl, Workload):  # '1k1k' raised AttributeError: 'str' object has no attribute 'mean_osl'
        raise SpecError(
            "predict_point: wl",
            f"expected a Workload, got {type(wl).__name__}",
            "pass get_workload(name), e.g. get_workload('8k1k'), or get_workload(isl=..., osl=...)",
        )
    if concurrency is not None and rate is not None:
        raise SpecError(
            "predict_point: concurrency/rate",
            f"give exactly one: a closed loop's concurrency or an open loop's rate (got {concurrency!r} and {rate!r})",
            "pass concurrency=None with rate=...",
        )
    check_bool("predict_point: recurring_waves", recurring_waves, "pass recurring_waves=True or False")
