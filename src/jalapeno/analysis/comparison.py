"""Compare systems on one model and workload: frontiers, headline figures, ratios, tiers.

Pipeline: sweep each system (analysis/sweep.py) → Pareto frontier of throughput per chip vs
interactivity over feasible points (analysis/frontier.py) → per-system headline → ratios against
a baseline (peak, iso-interactivity, tiers; analysis/compare.py). Tokens/s per kW and per $ are
throughput per chip divided by a per-system constant, so the same frontier serves all three.
One system's frontier and headline: analysis/system_frontier.py; the ratios' efficiency bands:
analysis/ratio_bands.py (both split from here in round 45).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from jalapeno.analysis import compare as cmp
from jalapeno.analysis.deployed import one_sweep, recipe_options, sweep_plan
from jalapeno.analysis.measured_bands import headline_bands, scale_frontier, uncovered_source, without_efficiency_band
from jalapeno.analysis.power_cost import power_w_per_chip
from jalapeno.analysis.ratio_bands import (
    END_RTOL,
    TAIL_FRACTION,
    band_ratios,
    check_bands,
    efficiency_bands,
    flag_tails,
)
from jalapeno.analysis.records import ComparisonRecord, Headline, Ratios
from jalapeno.analysis.sweep import SweepOptions, SweepResult
from jalapeno.analysis.system_frontier import SystemFrontier, check_model, headline, system_frontier
from jalapeno.analysis.win_ranges import iso_bounds, win_ranges
from jalapeno.analysis.workers import in_workers
from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.deploy.engines import Recipe
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.specs.formats import Precision
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
#: report/compare_cells._ratio).
DEFAULT_ISO_INTERACTIVITY = (35.0, 60.0, 100.0)


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
        per = "; ".join(
            f"{n} peak {h.peak_throughput_per_chip:,.0f} in+out tok/s/chip"
            + (f" ({self.comparisons[n].peak_ratio['throughput_per_chip']:.2f}x)" if n in self.comparisons else "")
            for n, h in self.headlines.items()
        )
        return (
            f"Comparison({self.model} · {self.workload.name} · {self.precision} · {self.convention}, "
            f"baseline {self.baseline}: {per})"
        )

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
                rows.append(
                    {
                        "system": n,
                        "vs": c.vs,
                        "interactivity": rt["x"],
                        "ratio_per_chip": rt["ratio"],
                        "ratio_per_kw": rk["ratio"],
                        "ratio_per_usd": ru["ratio"],
                        "at_frontier_end": bool(rt["at_frontier_end"]),
                        "status": rt["status_a"],
                        "status_baseline": rt["status_b"],
                        "peak_ratio_per_chip": c.peak_ratio["throughput_per_chip"],
                    }
                )
        return pd.DataFrame(rows)

    def record(self) -> ComparisonRecord:
        """The comparison as a record (analysis/records.py): frontiers, headlines, ratios."""
        return ComparisonRecord(
            self.model,
            self.workload,
            self.precision,
            self.convention,
            self.baseline,
            self.options,
            {n: sf.record(self.headlines[n]) for n, sf in self.frontiers.items()},
            self.comparisons,
            self.infeasible,
        )

    def as_dict(self) -> dict:
        """``record().as_dict()``: the JSON of ``jalapeno compare --json``."""
        return self.record().as_dict()


def _check_floors(floors) -> None:
    """Refuse tier ``floors`` that are not a mapping of tier name to a number before any sweep: a list raised
    AttributeError: 'list' object has no attribute 'items' after every system had been swept (break52).
    Each floor's value is judged by analysis/compare.tiers.

    Raises:
        SpecError: naming ``floors`` or ``floors.<name>``.
    """
    if floors is None:
        return
    if not isinstance(floors, Mapping):
        raise SpecError(
            "compare_systems: floors",
            f"expected a mapping of tier name to tok/s/user, got {type(floors).__name__}",
            "pass e.g. {'fast': 100.0, 'ultra_fast': 300.0}, or None for the default tiers",
        )
    for name, floor in floors.items():
        if (
            not isinstance(name, str)
            or isinstance(floor, (str, bool))
            or not isinstance(floor, (int, float, np.number))
        ):
            raise SpecError(
                f"compare_systems: floors.{name}",
                f"expected a tier name mapped to a number, got {name!r}: {floor!r}",
                "pass e.g. {'fast': 100.0} (tok/s/user)",
            )


def compare_systems(
    model: ModelSpec,
    systems: list[Pricer],
    wl: Workload,
    precision: Precision,
    baseline: str | None = None,
    convention: str = "all-in",
    options: SweepOptions | None = None,
    iso_interactivity=DEFAULT_ISO_INTERACTIVITY,
    floors=None,
    bands: dict[str, dict[str, Pricer]] | None = None,
    precisions: dict[str, list[str]] | None = None,
    recipes: dict[str, Recipe] | None = None,
    strict_baseline: bool = True,
) -> Comparison:
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
        SpecError: systems not a list or tuple of pricers (one pricer, a generator), two systems of one name,
            baseline not among the systems, an empty system list, floors not a mapping of names to numbers,
            or iso_interactivity values that are not numbers > 0.
        InfeasibleDeployment: no system can run the model, or (``strict_baseline``) the baseline cannot.
    """
    check_model(model, "compare_systems")
    if not isinstance(systems, (list, tuple)):  # one pricer raised TypeError (not iterable); a generator was
        # consumed by the type check below and compared nothing
        raise SpecError(
            "compare_systems: systems",
            f"expected a list of pricers, got {type(systems).__name__}",
            "pass a list, e.g. [load_pricer('h100'), load_pricer('b200')] (one system: [pricer])",
        )
    if not systems:
        raise SpecError("systems", "no system given", "pass at least one system")
    for s in systems:
        check_pricer(s, "compare_systems: systems")
    names = [s.system.name for s in systems]
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:  # the frontiers are keyed by name: the second of two kept one, silently (break52)
        raise SpecError(
            "compare_systems: systems",
            f"two systems are named {dup!r} (their frontiers are keyed by name: one would be dropped, silently)",
            'compare each system once; give a user file its own name = "..."',
        )
    _check_floors(floors)
    baseline = baseline or names[-1]
    if baseline not in names:
        raise SpecError(
            "baseline",
            f"{baseline!r} is not among the compared systems {names}",
            "pick one of the systems passed with --systems",
        )
    iso = list(iso_interactivity) if isinstance(iso_interactivity, (list, tuple, np.ndarray)) else [iso_interactivity]
    if any(
        isinstance(x, (str, bool)) or not isinstance(x, (int, float, np.number)) or not (np.isfinite(x) and x > 0)
        for x in iso
    ):  # ('a',) raised numpy's ValueError after every sweep had run
        raise SpecError(
            "iso_interactivity",
            f"must be numbers > 0 (tok/s/user), got {iso_interactivity!r:.60}",
            "pass e.g. (35.0, 60.0, 100.0)",
        )
    iso_interactivity = tuple(iso)  # one number is one speed (5 passed the check, then raised TypeError: break55)
    opts0 = options or SweepOptions()
    recipes, precisions = recipes or {}, precisions or {}
    per_sys: dict[str, tuple] = {}
    for s in systems:
        n, rec = s.system.name, recipes.get(s.system.name)
        if rec is not None:
            per_sys[n] = (
                recipe_options(rec, opts0, f"as deployed: {rec.label}"),
                precisions.get(n) or [rec.precision],
                rec,
            )
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
            fr[n] = system_frontier(
                model,
                s,
                wl,
                precision,
                per_sys[n][0],
                convention,
                precisions=per_sys[n][1],
                recipe=per_sys[n][2],
                swept=[f for (p, _), f in zip(tasks, swept) if p is s],
            )
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
        heads[n] = replace(
            heads[n],
            bands=efficiency_bands(
                model,
                band,
                wl,
                precision,
                per_sys[n][0],
                convention,
                heads[n],
                fr[n].pricer,
                per_sys[n][1],
                per_sys[n][2],
                keep=band_fronts[n],
            ),
        )
        if (gap := without_efficiency_band(fr[n].pricer, band)) is not None:  # measured, not on this model: say so
            heads[n] = replace(heads[n], bands=replace(heads[n].bands, source=uncovered_source(n, model.name, gap)))
    base = fr[baseline]
    bp, _ = power_w_per_chip(base.system, convention)
    comps: dict[str, Ratios] = {}
    scales = {
        "throughput_per_chip": {n: 1.0 for n in fr},
        "tok_s_per_kw": {n: 1000 / power_w_per_chip(sf.system, convention)[0] for n, sf in fr.items()},
        "tokens_per_usd": {n: 1 / sf.system.usd_per_chip_hour for n, sf in fr.items()},
    }
    banded = bool(band_fronts) or any(h.bands is not None for h in heads.values())
    for n, sf in fr.items():
        p, _ = power_w_per_chip(sf.system, convention)
        a_t, b_t = sf.as_frontier(), base.as_frontier()
        a_kw, b_kw = sf.as_frontier(1000 / p), base.as_frontier(1000 / bp)
        a_usd, b_usd = (
            sf.as_frontier(1 / sf.system.usd_per_chip_hour),
            base.as_frontier(1 / base.system.usd_per_chip_hour),
        )
        iso_rows = {
            kind: flag_tails(cmp.iso_interactivity_ratio(fa, fb, list(iso_interactivity), END_RTOL), fa, fb)
            for kind, fa, fb in (
                ("throughput_per_chip", a_t, b_t),
                ("tok_s_per_kw", a_kw, b_kw),
                ("tokens_per_usd", a_usd, b_usd),
            )
        }
        iso_bounds(iso_rows, sf, base)  # why: the bound of each side's frontier point nearest each speed
        comps[n] = Ratios(
            vs=baseline,
            peak_ratio={
                "throughput_per_chip": cmp.peak_ratio(a_t, b_t),
                "tok_s_per_kw": cmp.peak_ratio(a_kw, b_kw),
                "tokens_per_usd": cmp.peak_ratio(a_usd, b_usd),
            },
            max_interactivity_ratio=heads[n].max_interactivity / heads[baseline].max_interactivity,
            min_e2e_ratio=heads[n].min_e2e_s / heads[baseline].min_e2e_s,
            iso_interactivity=iso_rows,
            tiers=cmp.tiers(a_t, floors),
            tiers_tok_s_per_kw=cmp.tiers(a_kw, floors),
            bands=band_ratios(
                n,
                baseline,
                fr,
                band_fronts,
                heads,
                list(iso_interactivity),
                scales,
                n != baseline and bool({n, baseline} & measured),
            )
            if banded
            else None,
            where_wins=None
            if n == baseline
            else win_ranges(a_t, b_t, {k: scales[k][n] / scales[k][baseline] for k in scales}, END_RTOL, TAIL_FRACTION),
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
    return Comparison(
        model.name,
        wl,
        prec_label,
        convention,
        baseline,
        fr,
        heads,
        comps,
        {
            "serving": opts.serving,
            "mtp": opts.mtp.as_dict() if opts.mtp else None,
            "token_budget": opts.token_budget,
            "overlap": opts.overlap,
            **extra,
        },
        band_fronts,
        infeasible,
    )
