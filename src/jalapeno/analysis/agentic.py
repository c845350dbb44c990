"""Agentic comparisons: tasks per hour per chip (per kW, per $) against task completion time.

Each system sweeps its aggregated layouts (analysis/sweep_layouts.aggregated_layouts, each precision it
can run, two-batch overlap where it wins) × decode batches through the session model
(serve/sessions.py). The frontier is the Pareto set of tasks/hour/chip against task speed
= 3600 / mean task time (tasks per hour per session, higher is faster), so the generic
frontier, ratio and tier functions of analysis/compare.py apply unchanged: peak ratio,
iso-task-time ratio (at the same task time, interpolated on both frontiers), and tiers whose
floors are task-time ceilings (Batch = peak; Fast: task time ≤ 10 min, Ultra-fast ≤ 5 min by
default — parameters, assumptions of this module).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from jalapeno.analysis import compare as cmp
from jalapeno.analysis.power_cost import power_w_per_chip
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.analysis.sweep_layouts import aggregated_layouts, check_sweep_eplb
from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.sharding import has_ep_all_to_all
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.serve.sessions import SessionPoints, sessions_by_batch
from jalapeno.specs.agentic import AgenticSpec
from jalapeno.specs.formats import get_precision
from jalapeno.specs.kv_tiers import tier_status
from jalapeno.specs.model import ModelSpec

#: Task-time ceilings of the operating tiers, minutes (assumptions: an agent task a developer
#: waits for within a coffee break / within a few minutes).
DEFAULT_TASK_TIERS_MIN = {"fast": 10.0, "ultra_fast": 5.0}
#: Task times (minutes) at which iso-task-time ratios are reported by default.
DEFAULT_ISO_TASK_MIN = (5.0, 10.0, 20.0)
BATCHES = tuple(2.0**i for i in range(14))


@dataclass(frozen=True)
class AgenticSweep:
    """All points of one system: ``points`` (N,) and the deployment of each (``dep_index``)."""

    system: str
    points: SessionPoints
    deployments: list[Deployment] = field(repr=False)
    dep_index: np.ndarray = field(repr=False)


def sweep_agentic(
    model: ModelSpec,
    pricer: Pricer,
    spec: AgenticSpec,
    precisions: list[str],
    options: SweepOptions | None = None,
    use_tiers: bool = True,
) -> AgenticSweep:
    """Every aggregated layout of every precision × decode batches, through the session model.

    Layouts up to ``options.max_stage_factor`` × the scale-up domain; where none fits there (an
    8-GPU HGX node and a model larger than its HBM) the default factor of the fixed-length sweep.

    Raises:
        InfeasibleDeployment: no layout fits.
    """
    check_pricer(pricer, "sweep_agentic")
    opt = options or SweepOptions(serving="agg")
    check_sweep_eplb(opt.eplb, model)  # --eplb 100000 was accepted here without a word
    parts, deps, idx = [], [], []
    batches = np.asarray(BATCHES)
    factor = opt.max_stage_factor

    def fits(f: int) -> bool:
        return any(
            aggregated_layouts(
                model,
                pricer.system,
                get_precision(p) if isinstance(p, str) else p,
                pricer.efficiency,
                f,
                opt.eplb,
                opt.memory_fraction,
            )
            for p in precisions
        )

    if not fits(factor) and factor < SweepOptions().max_stage_factor:
        factor = SweepOptions().max_stage_factor  # nothing fits in the scale-up domain: span it, as compare does
    for pname in precisions:
        prec = get_precision(pname) if isinstance(pname, str) else pname
        for lay in aggregated_layouts(
            model, pricer.system, prec, pricer.efficiency, factor, opt.eplb, opt.memory_fraction
        ):
            dep = opt.deployment(prec, Pool(lay))
            variants = [dep]
            if opt.overlap != "none" and has_ep_all_to_all(model, lay):
                variants = [replace(dep, overlap="tbo")] if opt.overlap == "tbo" else [dep, replace(dep, overlap="tbo")]
            sets = [sessions_by_batch(model, pricer, d, spec, batches, use_tiers) for d in variants]
            _, first = np.unique(sets[0].decode_batch, return_index=True)
            sets = [s.take(np.sort(first)) for s in sets]
            if len(sets) == 2:
                off, on = sets
                use = on.feasible & (~off.feasible | (on.tasks_per_s > off.tasks_per_s))
                pick = [(variants[0], off.take(np.flatnonzero(~use))), (variants[1], on.take(np.flatnonzero(use)))]
            else:
                pick = [(variants[0], sets[0])]
            for d, p in pick:
                if len(p):
                    idx.append(np.full(len(p), len(deps)))
                    deps.append(d)
                    parts.append(p)
    if not parts:  # a --memory-fraction that fits nothing is named (break53)
        frac = "" if opt.memory_fraction is None else f" in the engine's memory fraction {opt.memory_fraction:g}"
        raise InfeasibleDeployment(
            "deployment",
            f"no aggregated layout of {model.name} fits on {pricer.system.name}{frac}",
            ("raise the memory fraction, " if frac else "") + "use a smaller precision or a bigger system",
        )
    from dataclasses import fields

    pts = SessionPoints(**{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(SessionPoints)})
    return AgenticSweep(pricer.system.name, pts, deps, np.concatenate(idx))


def _point(sw: AgenticSweep, i: int, pricer: Pricer, convention: str) -> dict:
    p = sw.points
    tph = float(p.tasks_per_hour_per_chip[i])
    kw = power_w_per_chip(pricer.system, convention)[0] / 1000
    ttft = p.ttft_turn_s[i]
    return {
        "deployment": sw.deployments[int(sw.dep_index[i])].label,
        "precision": sw.deployments[int(sw.dep_index[i])].precision.name,
        "sessions": float(p.sessions[i]),
        "decode_batch": float(p.decode_batch[i]),
        "tasks_per_hour_per_chip": tph,
        "tasks_per_hour_per_kw": tph / kw,
        "usd_per_task": pricer.system.usd_per_chip_hour / tph if tph > 0 else float("nan"),
        "task_time_s": float(p.task_time_s[i]),
        "task_time_p90_s": float(p.task_time_p90_s[i]),
        "ttft_first_turn_s": float(ttft[0]),
        "ttft_mean_s": float(ttft.mean()),
        "ttft_last_turn_s": float(ttft[-1]),
        "tpot_s": float(p.tpot_s[i]),
        "hit_rate": float(p.hit_rate[i]),
        "kv_tier": str(p.kv_tier[i]),
        "kv_tier_share": float(p.kv_tier_share[i]),
        "reload_s_per_task": float(p.reload_s_per_task[i]),
        "link_utilisation": float(p.link_utilisation[i]),
        "bound": str(p.bound[i]),
        "kv_bound": str(p.kv_bound[i]),
        "kv_bound_share": float(p.kv_bound_share[i]),
        "limit": str(p.limit[i]),
    }


@dataclass(frozen=True)
class AgenticFrontier:
    """One system's sweep, pricer and frontier (indices into the sweep, by task speed)."""

    pricer: Pricer
    sweep: AgenticSweep
    frontier: np.ndarray

    def as_frontier(self, scale: float = 1.0) -> cmp.Frontier:
        """The frontier as a comparison curve: x tasks per hour per user (3600 / task time in s), y tasks per hour per chip times ``scale``."""
        p = self.sweep.points
        return cmp.Frontier(3600.0 / p.task_time_s[self.frontier], p.tasks_per_hour_per_chip[self.frontier] * scale)

    def points(self, convention: str) -> list[dict]:
        """The frontier's points as JSON dicts (analysis/agentic._point), tokens counted by ``convention``."""
        return [_point(self.sweep, int(i), self.pricer, convention) for i in self.frontier]


def agentic_frontier(
    model: ModelSpec,
    pricer: Pricer,
    spec: AgenticSpec,
    precisions: list[str],
    options: SweepOptions | None = None,
    use_tiers: bool = True,
) -> AgenticFrontier:
    """Sweep one system and keep the Pareto frontier of tasks/h/chip against task speed.

    Raises:
        InfeasibleDeployment: nothing fits, or no point is feasible.
    """
    sw = sweep_agentic(model, pricer, spec, precisions, options, use_tiers)
    p = sw.points
    ok = np.flatnonzero(p.feasible & (p.tasks_per_s > 0) & np.isfinite(p.task_time_s))
    if ok.size == 0:
        reasons = sorted({str(r) for r in p.reason if r})
        raise InfeasibleDeployment(
            "deployment",
            f"no feasible agentic point for {model.name} on {sw.system}: " + (reasons[0] if reasons else "unknown"),
            "use a smaller precision or a bigger system",
        )
    fi = ok[cmp.build_frontier(3600.0 / p.task_time_s[ok], p.tasks_per_hour_per_chip[ok]).source_indices]
    return AgenticFrontier(pricer, sw, fi)


@dataclass(frozen=True)
class AgenticComparison:
    """Result of :func:`compare_agentic`; :meth:`as_dict` is the JSON of ``compare --workload agentic:…``."""

    model: str
    workload: dict
    convention: str
    baseline: str
    systems: dict
    ratios: dict
    #: systems no aggregated deployment of the model fits on → why (compared without them, as compare_systems does)
    infeasible: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The JSON of ``compare --workload agentic:…``: model, workload, convention, baseline, systems, ratios, infeasible."""
        return {
            "model": self.model,
            "workload": self.workload,
            "convention": self.convention,
            "baseline": self.baseline,
            "systems": self.systems,
            "ratios": self.ratios,
            "infeasible": dict(self.infeasible),
        }


def _tier_rows(
    fr: cmp.Frontier,
    ceilings_min: dict[str, float],
    frontier_pts: list[dict],
    kw_per_chip: float,
    usd_per_chip_hour: float,
) -> dict:
    """Tiers of a frontier; each names its deployment (``deployment``, at a frontier point) or, when
    interpolated at its ceiling, the deployments of the two frontier points either side (``between``), and
    gives its tasks/h per kW (``kw_per_chip``: the convention's kW per chip) and $ per task (at
    ``usd_per_chip_hour``), as a fixed-length tier cell gives tok/s/kW and $/M tok."""
    floors = {k: 60.0 / v for k, v in ceilings_min.items()}
    out = {}
    for name, t in cmp.tiers(fr, floors).items():
        j = t["frontier_index"]
        row = {
            "tasks_per_hour_per_chip": t["throughput"],
            "tasks_per_hour_per_kw": t["throughput"] / kw_per_chip,
            "usd_per_task": usd_per_chip_hour / t["throughput"] if t["throughput"] > 0 else float("nan"),
            "task_time_s": 3600.0 / t["interactivity"] if t["interactivity"] == t["interactivity"] else float("nan"),
            "ceiling_min": ceilings_min.get(name),
            "status": t["status"],
            "deployment": frontier_pts[j]["deployment"] if j is not None else None,
        }
        f = t["floor_tok_per_s_per_user"]
        if j is None and f is not None and t["status"] != "unreachable":
            k = int(np.searchsorted(fr.x, f, side="left"))
            if 0 < k < len(frontier_pts):
                row["between"] = [frontier_pts[k - 1]["deployment"], frontier_pts[k]["deployment"]]
        out[name] = row
    return out


def compare_agentic(
    model: ModelSpec,
    systems: list[Pricer],
    spec: AgenticSpec,
    precisions: dict[str, list[str]],
    baseline: str | None = None,
    convention: str = "all-in",
    options: SweepOptions | None = None,
    iso_task_min=DEFAULT_ISO_TASK_MIN,
    tier_ceilings_min: dict | None = None,
    use_tiers: bool = True,
    strict_baseline: bool = True,
) -> AgenticComparison:
    """Frontiers of every system on the agentic workload and their ratios against ``baseline``.

    Per system: peak tasks/h/chip (and per kW under ``convention``, $ per task), the fastest mean
    and p90 task time, per-turn TTFT/TPOT and the binding constraints (step bound, KV bound,
    tier) at both points, the tiers, and the catalog's KV tiers. Ratios (system / baseline):
    peak tasks/h/chip, per kW and per $; iso-task-time tasks/h/chip, per kW and per $ at ``iso_task_min`` minutes;
    fastest task time.

    Raises:
        SpecError: no system, an unknown baseline, a bad convention, a tier ceiling that is not a
            finite number of minutes > 0 (named ``--tiers``, the flag that sets it). InfeasibleDeployment: no
            system has a feasible point, or (``strict_baseline``) the baseline has none; a system without one is
            compared without, listed in ``infeasible`` with its reason (without ``strict_baseline`` the last
            feasible system stands in for an infeasible baseline).
    """
    if not systems:
        raise SpecError("systems", "no system given", "pass at least one system")
    names = [s.system.name for s in systems]
    baseline = baseline or names[-1]
    if baseline not in names:
        raise SpecError(
            "baseline",
            f"{baseline!r} is not among the compared systems {names}",
            "pick one of the systems passed with --systems",
        )
    ceilings = dict(DEFAULT_TASK_TIERS_MIN if tier_ceilings_min is None else tier_ceilings_min)
    for name, v in ceilings.items():  # 0 minutes divided 60 / 0 (ZeroDivisionError traceback)
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            v = f"{v:g}" if isinstance(v, (int, float)) else repr(v)
            raise SpecError(
                "--tiers",
                f"{name}={v}: a task-time ceiling must be a finite number of minutes > 0",
                "write e.g. --tiers fast=10,ultra_fast=5 (minutes per agent task)",
            )
    frs, infeasible = {}, {}
    for s in systems:
        try:
            frs[s.system.name] = agentic_frontier(model, s, spec, precisions[s.system.name], options, use_tiers)
        except InfeasibleDeployment as e:  # this system cannot run the model: say why, compare the rest
            infeasible[s.system.name] = e.problem
    baseline = cmp.feasible_baseline(model.name, frs, infeasible, baseline, strict_baseline)
    out, fronts = {}, {}
    for n, af in frs.items():
        sysm = af.pricer.system
        kw = power_w_per_chip(sysm, convention)[0] / 1000
        pts = af.points(convention)
        fr = af.as_frontier()
        fronts[n] = (fr, af.as_frontier(1 / kw), af.as_frontier(1 / sysm.usd_per_chip_hour))
        peak = max(pts, key=lambda d: d["tasks_per_hour_per_chip"])
        fastest = min(pts, key=lambda d: d["task_time_s"])
        out[n] = {
            "peak": peak,
            "fastest": fastest,
            "frontier": pts,
            "tiers": _tier_rows(fr, ceilings, pts, kw, sysm.usd_per_chip_hour),
            "kv_tiers": tier_status(sysm),
            "efficiency_source": af.pricer.efficiency.source,
            "vendor_verified": sysm.vendor_verified,
            "points_evaluated": len(af.sweep.points),
            "power_w_per_chip": kw * 1000,
            "usd_per_chip_hour": sysm.usd_per_chip_hour,
        }
    ratios = {}
    b = fronts[baseline]
    xs = [60.0 / m for m in iso_task_min]
    for n, f in fronts.items():
        iso = cmp.iso_interactivity_ratio(f[0], b[0], xs)
        # per kW and per $ at the same task time (the frontiers scaled by 1 / kW and 1 / $ per chip-hour), as
        # compare's fixed-length cells give them at each --at speed: a planner at a task-time ceiling reads these
        iso_kw, iso_usd = (cmp.iso_interactivity_ratio(f[k], b[k], xs) for k in (1, 2))
        ratios[n] = {
            "vs": baseline,
            "peak_tasks_per_hour_per_chip": cmp.peak_ratio(f[0], b[0]),
            "peak_tasks_per_hour_per_kw": cmp.peak_ratio(f[1], b[1]),
            "peak_tasks_per_usd": cmp.peak_ratio(f[2], b[2]),
            "fastest_task_time": out[n]["fastest"]["task_time_s"] / out[baseline]["fastest"]["task_time_s"],
            "iso_task_time": [
                {
                    "task_time_min": m,
                    "ratio": r["ratio"],
                    "tasks_per_hour_per_chip": r["y_a"],
                    "baseline_tasks_per_hour_per_chip": r["y_b"],
                    "at_frontier_end": r["at_frontier_end"],
                    "ratio_per_kw": rk["ratio"],
                    "ratio_per_usd": ru["ratio"],
                    "status": r["status_a"],
                    "baseline_status": r["status_b"],
                }
                for m, r, rk, ru in zip(iso_task_min, iso, iso_kw, iso_usd)
            ],
        }
    return AgenticComparison(
        model.name, spec.as_dict() | {"source": spec.source}, convention, baseline, out, ratios, infeasible
    )
