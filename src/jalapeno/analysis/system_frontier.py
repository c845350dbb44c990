"""One system's frontier: sweep a pricer's system (analysis/sweep.py, as deployed where a recipe says so,
analysis/deployed.py), keep the Pareto frontier of throughput per chip against interactivity over its feasible
points (analysis/compare.build_frontier), and its headline figures (``headline``: peak throughput per chip, tok/s per
kW per power convention, top speed, minimum E2E). Split from analysis/comparison.py (round 45, module budget), which
compares several of these; analysis/ratio_bands.efficiency_bands sweeps a system's band pricers through it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from jalapeno.analysis import compare as cmp
from jalapeno.analysis.deployed import one_sweep, sweep_plan, sweep_precisions
from jalapeno.analysis.power_cost import CONVENTIONS, power_w_per_chip
from jalapeno.analysis.records import FrontierRecord, Headline, PointRecord
from jalapeno.analysis.bound_words import prefill_chip_share
from jalapeno.analysis.sweep import SweepOptions, SweepResult
from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.deploy.engines import Recipe
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.specs.formats import Precision
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload


@dataclass(frozen=True)
class SystemFrontier:
    """One system's sweep and frontier (indices into the sweep's points, by interactivity)."""

    pricer: Pricer
    sweep: SweepResult
    frontier: np.ndarray
    convention: str

    @property
    def system(self) -> System:
        """The system the frontier was swept on (the pricer's)."""
        return self.pricer.system

    def __repr__(self) -> str:
        """Short (the generated one printed the whole sweep's arrays): the system, what was swept, the
        frontier and sweep sizes and the frontier's span."""
        s, n = self.sweep, len(self.frontier)
        if not n:
            return f"SystemFrontier({s.system}: {s.model} · {s.workload.name} · {s.precision}, no feasible point)"
        return (
            f"SystemFrontier({s.system}: {s.model} · {s.workload.name} · {s.precision}, {n} frontier points "
            f"of {len(s.points.interactivity):,} swept, {self.x.min():,.1f}-{self.x.max():,.1f} tok/s/user, "
            f"peak {self.y.max():,.0f} in+out tok/s/chip)"
        )

    def point(self, i: int) -> PointRecord:
        """Point ``i`` of the sweep as a record (analysis/records.py)."""
        dep = self.sweep.deployments[int(self.sweep.dep_index[i])]
        return PointRecord.from_points(self.sweep.points, i, dep, self.system, self.convention)

    def to_frame(self):
        """The frontier points, one row each (:meth:`FrontierRecord.to_frame`)."""
        return self.record().to_frame()

    def fleet_record(self, max_chips: int | None = None) -> FrontierRecord:
        """What ``plan --chips`` chooses from: for each instance size (chips; up to ``max_chips`` if given), the
        Pareto frontier (interactivity, throughput per chip) of that size's feasible points, as one
        record by interactivity ascending. The system's frontier drops a small instance that a larger
        one dominates, which a fleet too small for the larger one still runs (GB300 NVL72 8k/1k:
        every frontier point up to 72 chips is a 4-18-chip one, 167 output tok/s/chip at the most);
        and with whole instances packed into the fleet, only a size's own best point matters."""
        p, chips = self.sweep.points, np.array([d.chips for d in self.sweep.deployments])[self.sweep.dep_index]
        ok = p.feasible & (p.throughput_per_chip > 0) & np.isfinite(p.interactivity)
        if max_chips is not None:
            ok &= chips <= max_chips
        keep = [
            i[cmp.build_frontier(p.interactivity[i], p.throughput_per_chip[i]).source_indices]
            for c in np.unique(chips[ok])
            for i in [np.flatnonzero(ok & (chips == c))]
        ]
        idx = np.concatenate(keep) if keep else np.array([], dtype=int)
        idx = idx[np.argsort(p.interactivity[idx], kind="stable")]
        s = self.sweep
        return FrontierRecord(s.system, s.model, s.workload, s.precision, tuple(self.point(int(i)) for i in idx))

    def record(self, headline: Headline | None = None) -> FrontierRecord:
        """The frontier points as a record (with ``headline``, as a comparison carries it)."""
        s = self.sweep
        return FrontierRecord(
            s.system, s.model, s.workload, s.precision, tuple(self.point(int(i)) for i in self.frontier), headline
        )

    @property
    def x(self) -> np.ndarray:
        """Interactivity of the frontier points, tok/s per user, (K,)."""
        return self.sweep.points.interactivity[self.frontier]

    @property
    def y(self) -> np.ndarray:
        """Throughput of the frontier points, tok/s per chip, (K,)."""
        return self.sweep.points.throughput_per_chip[self.frontier]

    def as_frontier(self, scale: float = 1.0) -> cmp.Frontier:
        """The frontier as a comparison curve (analysis/compare.Frontier), throughput times ``scale`` (e.g. per kW)."""
        return cmp.Frontier(self.x, self.y * scale)


def check_model(model, where: str) -> None:
    """Refuse a model that is not a :class:`ModelSpec` (``system_frontier("deepseek-r1", ...)`` raised
    AttributeError: 'str' object has no attribute 'moe'), as step_cost and sweep refuse their arguments.

    Raises:
        SpecError: ``model`` is not a ModelSpec.
    """
    if not isinstance(model, ModelSpec):
        raise SpecError(
            f"{where}: model",
            f"expected a ModelSpec, got {type(model).__name__}",
            "pass load_model(name) (a catalog name or a config.json path)",
        )


def system_frontier(
    model: ModelSpec,
    pricer: Pricer,
    wl: Workload,
    precision: Precision | None,
    options: SweepOptions | None = None,
    convention: str = "all-in",
    *,
    precisions: list[str] | None = None,
    recipe: Recipe | None = None,
    swept: list[Callable[[], SweepResult]] | None = None,
) -> SystemFrontier:
    """Sweep the pricer's system and keep the Pareto frontier of its feasible points.

    With ``precisions`` (preset names) each is swept and the frontier is taken over all of them
    (every point's deployment names its precision); with ``recipe`` (an engine recipe whose
    limits/serving ``options`` already carry, analysis/deployed.recipe_options) MTP follows the
    recipe's draft length by load. Otherwise one sweep at ``precision``. ``swept``: one thunk per sweep
    analysis/deployed.sweep_plan names, returning it or raising its error (compare_systems runs them in
    worker processes first); without it the sweeps run here.

    Raises:
        InfeasibleDeployment: nothing fits, or no point is feasible.
        SpecError: neither ``precision`` nor ``precisions`` given.
    """
    check_pricer(pricer, "system_frontier")
    check_model(model, "system_frontier")
    system = pricer.system
    power_w_per_chip(system, convention)  # validates the convention early
    if precision is None and not precisions:
        raise SpecError(
            "precision", "no precision to sweep", "pass a Precision (get_precision(name)) or precisions=[...]"
        )
    names = sweep_plan(precision, precisions, recipe)
    if swept is None:
        swept = [lambda n=n: one_sweep(model, pricer, wl, precision, options, recipe, n) for n in names]
    if names == [None]:
        res = swept[0]()
    else:
        res = sweep_precisions(model, pricer, wl, names, options or SweepOptions(), recipe, swept)
    p = res.points
    ok = np.flatnonzero(p.feasible & (p.throughput_per_chip > 0) & np.isfinite(p.interactivity))
    if ok.size == 0:
        reasons = sorted({str(r) for r in p.reason if r})
        raise InfeasibleDeployment(
            "deployment",
            f"no feasible point for {model.name} on {system.name}: " + (reasons[0] if reasons else "unknown"),
            "use a smaller precision or a bigger system",
        )
    fi = ok[cmp.build_frontier(p.interactivity[ok], p.throughput_per_chip[ok]).source_indices]
    return SystemFrontier(pricer, res, fi, convention)


def headline(sf: SystemFrontier) -> Headline:
    """Per-system headline: peak throughput/chip, peak tok/s/kW per convention, top speed, min E2E."""
    p = sf.sweep.points
    ok = p.feasible
    i_peak = sf.frontier[int(np.argmax(sf.y))]
    i_fast = sf.frontier[int(np.argmax(sf.x))]
    e2e = np.where(ok, p.e2e_s, np.inf)
    i_lat = int(np.argmin(e2e))
    peak_tput = float(p.throughput_per_chip[i_peak])
    return Headline(
        peak_throughput_per_chip=peak_tput,
        peak_output_throughput_per_chip=float(p.output_throughput_per_chip[i_peak]),
        interactivity_at_peak=float(p.interactivity[i_peak]),
        bound_at_peak=str(p.bound[i_peak]),
        deployment_at_peak=sf.sweep.deployments[int(sf.sweep.dep_index[i_peak])].label,
        peak_tok_s_per_kw={c: peak_tput / (power_w_per_chip(sf.system, c)[0] / 1000) for c in CONVENTIONS},
        power_labels={c: power_w_per_chip(sf.system, c)[1] for c in CONVENTIONS},
        usd_per_mtok_at_peak=float(sf.system.usd_per_chip_hour / (peak_tput * 3600 / 1e6)),
        max_interactivity=float(p.interactivity[i_fast]),
        throughput_at_max_interactivity=float(p.throughput_per_chip[i_fast]),
        bound_at_max_interactivity=str(p.bound[i_fast]),
        deployment_at_max_interactivity=sf.sweep.deployments[int(sf.sweep.dep_index[i_fast])].label,
        min_e2e_s=float(e2e[i_lat]),
        min_ttft_s=float(np.min(np.where(ok, p.ttft_s, np.inf))),
        frontier_points=int(sf.frontier.size),
        efficiency_source=sf.pricer.efficiency.source,
        vendor_verified=sf.system.vendor_verified,
        points_evaluated=int(len(p)),
        prefill_bound_at_peak=str(p.prefill_bound[i_peak]),
        prefill_chip_share_at_peak=_share(p, i_peak),
        prefill_bound_at_max_interactivity=str(p.prefill_bound[i_fast]),
        prefill_chip_share_at_max_interactivity=_share(p, i_fast),
        limit_at_peak=str(p.limit[i_peak]),
        limit_at_max_interactivity=str(p.limit[i_fast]),
    )


def _share(p, i: int) -> float:
    """Point ``i``'s prefill chips over its chips (0 aggregated): bound_words.prefill_chip_share."""
    return prefill_chip_share(p.prefill_chips[i], p.chips[i])
