"""Compare systems on one model and workload: frontiers, headline figures, ratios, tiers.

Pipeline: sweep each system (analysis/sweep.py) → Pareto frontier of throughput per chip vs
interactivity over feasible points (analysis/frontier.py) → per-system headline → ratios against
a baseline (peak, iso-interactivity, tiers; analysis/compare.py). Tokens/s per kW and per $ are
throughput per chip divided by a per-system constant, so the same frontier serves all three.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from jalapeno.analysis import compare as cmp
from jalapeno.analysis.power_cost import CONVENTIONS, power_w_per_chip
from jalapeno.analysis.records import (Band, Bands, ComparisonRecord, FrontierRecord, Headline, PointRecord, Ratios,
                                      prefill_chip_share)
from jalapeno.analysis.deployed import one_sweep, recipe_options, sweep_plan, sweep_precisions
from jalapeno.analysis.measured_bands import headline_bands, scale_frontier, without_efficiency_band
from jalapeno.analysis.ratio_bands import END_RTOL, band_ratios, check_bands, flag_tails
from jalapeno.analysis.sweep import SweepOptions, SweepResult
from jalapeno.analysis.workers import in_workers
from jalapeno.deploy.engines import Recipe
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.specs.formats import Precision
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: Interactivity values (tok/s/user) at which ratios are reported by default (parameters, ``--at``): the levels
#: InferenceX compares systems at, inside every shipped frontier. 35: the InferenceX dashboard's default target
#: interactivity (SemiAnalysisAI/InferenceX-app, packages/app/src/components/calculator/
#: ThroughputCalculatorDisplay.tsx and trends/HistoricalTrendsDisplay.tsx, ``useState(35)``; its InferenceX v2
#: blog: the middle-of-the-pack OpenRouter provider of DeepSeek-R1 serves "around 35 tok/s/user"); 60: the
#: blog's fixed-level cost comparison of GB200 NVL72 and B200 ("at a fixed interactivity level of 60
#: tok/s/user"); 100: the ``fast`` tier's floor (cli TIERS_DEFAULT), so the two tables read the same speed.
#: Every shipped DeepSeek-R1 and Kimi K2.5 frontier of the default systems (1k1k, 8k1k, 1k8k; native, fp8,
#: fp4) starts at or below 30.3 tok/s/user and ends at or above 127.9 (round 29, compare29), so all three
#: columns are numbers there; the old 10 tok/s/user column sat below the baseline's start (the default
#: compare's GB300 frontier starts at its 12 tok/s/user disaggregated batch peak) and read n/a on every row.
#: gpt-oss-120b's frontiers start at 13-58 tok/s/user: its 35 column can read a peak (flagged;
#: report/tables._ratio).
DEFAULT_ISO_INTERACTIVITY = (35.0, 60.0, 100.0)


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
        return (f"SystemFrontier({s.system}: {s.model} · {s.workload.name} · {s.precision}, {n} frontier points "
                f"of {len(s.points.interactivity):,} swept, {self.x.min():,.1f}-{self.x.max():,.1f} tok/s/user, "
                f"peak {self.y.max():,.0f} in+out tok/s/chip)")

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
        keep = [i[cmp.build_frontier(p.interactivity[i], p.throughput_per_chip[i]).source_indices]
                for c in np.unique(chips[ok]) for i in [np.flatnonzero(ok & (chips == c))]]
        idx = np.concatenate(keep) if keep else np.array([], dtype=int)
        idx = idx[np.argsort(p.interactivity[idx], kind="stable")]
        s = self.sweep
        return FrontierRecord(s.system, s.model, s.workload, s.precision, tuple(self.point(int(i)) for i in idx))

    def record(self, headline: Headline | None = None) -> FrontierRecord:
        """The frontier points as a record (with ``headline``, as a comparison carries it)."""
        s = self.sweep
        return FrontierRecord(s.system, s.model, s.workload, s.precision,
                              tuple(self.point(int(i)) for i in self.frontier), headline)

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
        raise SpecError(f"{where}: model", f"expected a ModelSpec, got {type(model).__name__}",
                        "pass load_model(name) (a catalog name or a config.json path)")


def system_frontier(model: ModelSpec, pricer: Pricer, wl: Workload, precision: Precision | None,
                    options: SweepOptions | None = None, convention: str = "all-in", *,
                    precisions: list[str] | None = None, recipe: Recipe | None = None,
                    swept: list[Callable[[], SweepResult]] | None = None) -> SystemFrontier:
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
        raise SpecError("precision", "no precision to sweep", "pass a Precision (get_precision(name)) or precisions=[...]")
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
        raise InfeasibleDeployment("deployment", f"no feasible point for {model.name} on {system.name}: "
                                   + (reasons[0] if reasons else "unknown"),
                                   "use a smaller precision or a bigger system")
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
    )


def _share(p, i: int) -> float:
    """Point ``i``'s prefill chips over its chips (0 aggregated): records.prefill_chip_share."""
    return prefill_chip_share(p.prefill_chips[i], p.chips[i])


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_systems`: the sweeps behind it and its :meth:`record`."""

    model: str
    workload: Workload
    precision: str
    convention: str
    baseline: str
    frontiers: dict[str, SystemFrontier]
    headlines: dict[str, Headline]
    comparisons: dict[str, Ratios]
    options: dict = field(default_factory=dict)
    #: system → {"low", "high"} FrontierRecords of its efficiency band (``bands=``; None = the calibrated one)
    band_frontiers: dict = field(default_factory=dict)
    infeasible: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        """Short: model, workload, precision, power convention, baseline, and each system's peak
        throughput per chip with its ratio to the baseline's (the generated repr printed every sweep)."""
        per = "; ".join(f"{n} peak {h.peak_throughput_per_chip:,.0f} in+out tok/s/chip"
                        + (f" ({self.comparisons[n].peak_ratio['throughput_per_chip']:.2f}x)" if n in self.comparisons else "")
                        for n, h in self.headlines.items())
        return (f"Comparison({self.model} · {self.workload.name} · {self.precision} · {self.convention}, "
                f"baseline {self.baseline}: {per})")

    def to_frame(self):
        """Every system's frontier points, one row each (``system`` tells them apart):
        :meth:`ComparisonRecord.to_frame` of :meth:`record`."""
        return self.record().to_frame()

    def ratios_frame(self):
        """One row per system and iso-interactivity value: the ratio to the baseline in throughput
        per chip, per kW and per $ (tokens per $: throughput per $/chip-hour), with the flags (``at_frontier_end``, each frontier's status)."""
        import pandas as pd

        rows = []
        for n, c in self.comparisons.items():
            iso = c.iso_interactivity
            for rt, rk, ru in zip(iso["throughput_per_chip"], iso["tok_s_per_kw"], iso["tokens_per_usd"]):
                rows.append({"system": n, "vs": c.vs, "interactivity": rt["x"], "ratio_per_chip": rt["ratio"],
                             "ratio_per_kw": rk["ratio"], "ratio_per_usd": ru["ratio"],
                             "at_frontier_end": bool(rt["at_frontier_end"]),
                             "status": rt["status_a"], "status_baseline": rt["status_b"],
                             "peak_ratio_per_chip": c.peak_ratio["throughput_per_chip"]})
        return pd.DataFrame(rows)

    def record(self) -> ComparisonRecord:
        """The comparison as a record (analysis/records.py): frontiers, headlines, ratios."""
        return ComparisonRecord(self.model, self.workload, self.precision, self.convention, self.baseline,
                                self.options, {n: sf.record(self.headlines[n]) for n, sf in self.frontiers.items()},
                                self.comparisons, self.infeasible)

    def as_dict(self) -> dict:
        """``record().as_dict()``: the JSON of ``jalapeno compare --json``."""
        return self.record().as_dict()


def efficiency_bands(model: ModelSpec, band: dict[str, Pricer], wl: Workload, precision: Precision,
                     options: SweepOptions | None, convention: str, mid: Headline,
                     mid_pricer: Pricer | None = None, precisions: list[str] | None = None,
                     recipe: Recipe | None = None, keep: dict | None = None) -> Bands:
    """Headline figures under a system's low / mid / high pricers (``band`` has ``low`` and ``high``).

    A band is just other pricers of the same system (cost/pricer.band_pricers builds them from
    the calibration file: measured systems have the same set for all three unless their file
    carries a band; derived ones (Jalapeño, Vera Rubin, AMD) carry one; a user file has none).
    Where a band pricer is ``mid_pricer`` itself, its headline is ``mid`` (no second sweep).
    With ``keep`` (a dict), the low and high frontiers are stored there as FrontierRecords under
    ``"low"``/``"high"`` (None where the band pricer is ``mid_pricer``): the charts shade them.
    """
    out = {}
    for which in ("low", "high"):
        pr = band[which]
        if pr is mid_pricer:
            out[which] = mid
            if keep is not None:
                keep[which] = None
            continue
        sf = system_frontier(model, pr, wl, precision, options, convention, precisions=precisions, recipe=recipe)
        out[which] = headline(sf)
        if keep is not None:
            keep[which] = sf.record()
    out["mid"] = mid
    keys = ("peak_throughput_per_chip", "max_interactivity", "min_e2e_s")
    return Bands(**{k: Band(*(getattr(out[w], k) for w in ("low", "mid", "high"))) for k in keys},
                 peak_tok_s_per_kw={w: {c: out[w].peak_tok_s_per_kw[c] for c in CONVENTIONS}
                                    for w in ("low", "mid", "high")})


def compare_systems(model: ModelSpec, systems: list[Pricer], wl: Workload, precision: Precision,
                    baseline: str | None = None, convention: str = "all-in",
                    options: SweepOptions | None = None, iso_interactivity=DEFAULT_ISO_INTERACTIVITY,
                    floors=None, bands: dict[str, dict[str, Pricer]] | None = None,
                    precisions: dict[str, list[str]] | None = None,
                    recipes: dict[str, Recipe] | None = None, strict_baseline: bool = True) -> Comparison:
    """Frontiers of every system (one pricer each) and their ratios against ``baseline``.

    A system on which no deployment of the model fits is listed in ``infeasible`` (name → the
    reason) and the others are compared; when ``baseline`` is such a system, the last feasible one
    stands in unless ``strict_baseline`` (then it is an error).

    With ``bands`` (system name → {"low", "calibrated", "high"} pricers, e.g. from
    cost/pricer.band_pricers) each headline also carries low/mid/high values (up to three sweeps
    per system). With ``precisions`` (system name → preset names) a system sweeps each of them
    instead of ``precision`` (which may then be None); with ``recipes`` (system name → engine
    recipe) a system runs "as deployed": the recipe's precision (unless ``precisions`` names
    some), serving mode, limits and MTP by load; the others run ``options`` as stated. Every
    frontier point's deployment says which (``config``). Ratios: ``peak`` (throughput per chip, tok/s/kW under
    ``convention``, tokens per $), and the same three at
    each ``iso_interactivity`` value (interpolated on both frontiers; unreachable → null ratio;
    values at/past a frontier's end flagged), plus the operating tiers of each system.

    Raises:
        SpecError: systems not a list or tuple of pricers (one pricer, a generator), baseline not among the
            systems, an empty system list, or iso_interactivity values that are
            not numbers > 0.
        InfeasibleDeployment: no system can run the model, or (``strict_baseline``) the baseline cannot.
    """
    check_model(model, "compare_systems")
    if not isinstance(systems, (list, tuple)):  # one pricer raised TypeError (not iterable); a generator was
        # consumed by the type check below and compared nothing
        raise SpecError("compare_systems: systems", f"expected a list of pricers, got {type(systems).__name__}",
                        "pass a list, e.g. [load_pricer('h100'), load_pricer('b200')] (one system: [pricer])")
    if not systems:
        raise SpecError("systems", "no system given", "pass at least one system")
    for s in systems:
        check_pricer(s, "compare_systems: systems")
    names = [s.system.name for s in systems]
    baseline = baseline or names[-1]
    if baseline not in names:
        raise SpecError("baseline", f"{baseline!r} is not among the compared systems {names}",
                        "pick one of the systems passed with --systems")
    iso = list(iso_interactivity) if isinstance(iso_interactivity, (list, tuple, np.ndarray)) else [iso_interactivity]
    if any(isinstance(x, (str, bool)) or not isinstance(x, (int, float, np.number)) or not (np.isfinite(x) and x > 0)
           for x in iso):  # ('a',) raised numpy's ValueError after every sweep had run
        raise SpecError("iso_interactivity", f"must be numbers > 0 (tok/s/user), got {iso_interactivity!r:.60}",
                        "pass e.g. (35.0, 60.0, 100.0)")
    opts0 = options or SweepOptions()
    recipes, precisions = recipes or {}, precisions or {}
    per_sys: dict[str, tuple] = {}
    for s in systems:
        n, rec = s.system.name, recipes.get(s.system.name)
        if rec is not None:
            per_sys[n] = (recipe_options(rec, opts0, f"as deployed: {rec.label}"), precisions.get(n) or [rec.precision], rec)
        else:
            per_sys[n] = (options, precisions.get(n), None)
    check_bands(bands, names)
    fr, infeasible = {}, {}
    tasks = [(s, name) for s in systems for name in sweep_plan(precision, *per_sys[s.system.name][1:])]

    def sweep_task(task: tuple[Pricer, str | None]) -> SweepResult:  # one system at one precision
        (opts, _, rec), name = per_sys[task[0].system.name], task[1]
        return one_sweep(model, task[0], wl, precision, opts, rec, name)

    swept = in_workers(sweep_task, tasks)  # independent sweeps: a worker process each, where there are CPUs
    for s in systems:
        n = s.system.name
        try:
            fr[n] = system_frontier(model, s, wl, precision, per_sys[n][0], convention, precisions=per_sys[n][1],
                                    recipe=per_sys[n][2], swept=[f for (p, _), f in zip(tasks, swept) if p is s])
        except InfeasibleDeployment as e:  # this system cannot run the model: say why, compare the rest
            infeasible[n] = e.problem
    baseline = cmp.feasible_baseline(model.name, fr, infeasible, baseline, strict_baseline)
    heads = {n: headline(sf) for n, sf in fr.items()}
    band_fronts: dict[str, dict] = {}
    measured: set[str] = set()  # systems banded by their own measured error (analysis/measured_bands.py)
    for n, band in (bands or {}).items():
        if n in infeasible:
            continue
        mb = without_efficiency_band(fr[n].pricer, band, model.name)
        if mb is not None:  # no efficiency band: the system's validated error instead (no sweep)
            measured.add(n)
            band_fronts[n] = {w: scale_frontier(fr[n].record(), mb, w) for w in ("low", "high")}
            heads[n] = replace(heads[n], bands=headline_bands(heads[n], mb))
            continue
        band_fronts[n] = {}
        heads[n] = replace(heads[n], bands=efficiency_bands(model, band, wl, precision, per_sys[n][0], convention,
                                                            heads[n], fr[n].pricer, per_sys[n][1], per_sys[n][2],
                                                            keep=band_fronts[n]))
    base = fr[baseline]
    bp, _ = power_w_per_chip(base.system, convention)
    comps: dict[str, Ratios] = {}
    scales = {"throughput_per_chip": {n: 1.0 for n in fr},
              "tok_s_per_kw": {n: 1000 / power_w_per_chip(sf.system, convention)[0] for n, sf in fr.items()},
              "tokens_per_usd": {n: 1 / sf.system.usd_per_chip_hour for n, sf in fr.items()}}
    banded = bool(band_fronts) or any(h.bands is not None for h in heads.values())
    for n, sf in fr.items():
        p, _ = power_w_per_chip(sf.system, convention)
        a_t, b_t = sf.as_frontier(), base.as_frontier()
        a_kw, b_kw = sf.as_frontier(1000 / p), base.as_frontier(1000 / bp)
        a_usd, b_usd = sf.as_frontier(1 / sf.system.usd_per_chip_hour), base.as_frontier(1 / base.system.usd_per_chip_hour)
        comps[n] = Ratios(
            vs=baseline,
            peak_ratio={"throughput_per_chip": cmp.peak_ratio(a_t, b_t),
                        "tok_s_per_kw": cmp.peak_ratio(a_kw, b_kw),
                        "tokens_per_usd": cmp.peak_ratio(a_usd, b_usd)},
            max_interactivity_ratio=heads[n].max_interactivity / heads[baseline].max_interactivity,
            min_e2e_ratio=heads[n].min_e2e_s / heads[baseline].min_e2e_s,
            iso_interactivity={
                "throughput_per_chip": flag_tails(cmp.iso_interactivity_ratio(a_t, b_t, list(iso_interactivity),
                                                                               END_RTOL), a_t, b_t),
                "tok_s_per_kw": flag_tails(cmp.iso_interactivity_ratio(a_kw, b_kw, list(iso_interactivity),
                                                                        END_RTOL), a_kw, b_kw),
                "tokens_per_usd": flag_tails(cmp.iso_interactivity_ratio(a_usd, b_usd, list(iso_interactivity),
                                                                          END_RTOL), a_usd, b_usd),
            },
            tiers=cmp.tiers(a_t, floors),
            tiers_tok_s_per_kw=cmp.tiers(a_kw, floors),
            bands=band_ratios(n, baseline, fr, band_fronts, heads, list(iso_interactivity), scales,
                               n != baseline and bool({n, baseline} & measured)) if banded else None,
        )
    opts = opts0
    swept = {n: sf.sweep.precision for n, sf in fr.items()}
    if precision is not None and not precisions:
        prec_label = precision.name
    elif len(set(swept.values())) == 1:  # every system swept the same presets: say it once
        prec_label = f"{next(iter(swept.values()))} (each system)"
    else:
        prec_label = "per system: " + "; ".join(f"{n} {p}" for n, p in swept.items())
    extra = {"as_deployed": {n: r.label for n, r in recipes.items()}} if recipes else {}
    return Comparison(model.name, wl, prec_label, convention, baseline, fr, heads, comps,
                      {"serving": opts.serving, "mtp": opts.mtp.as_dict() if opts.mtp else None,
                       "token_budget": opts.token_budget, "overlap": opts.overlap, **extra},
                      band_fronts, infeasible)
