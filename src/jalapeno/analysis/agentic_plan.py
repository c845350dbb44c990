"""Capacity planning for an agentic workload (``jalapeno plan --workload agentic:PRESET``).

The fleet is sized on the same frontier ``compare --workload agentic:…`` reads
(analysis/agentic.agentic_frontier: every aggregated layout × precision × decode batch through the
session model, serve/sessions.py), so a plan and a comparison of one system agree point for point.
From the frontier points whose mean task time is within ``max_task_min`` (all points without one) the
plan takes the one that finishes the target with the FEWEST CHIPS (ties: the more tasks per hour per chip;
the rule of analysis/capacity.py, round 49: power and $/hour are per chip, so it is also the fewest watts and
the lowest $/hour; it took the most tasks/h per chip, and whole instances can make that one need more chips),
and names the most-tasks/h-per-chip point when it is another, then:

    tasks/h target  = given, or output tok/s × 3600 / (turns × reply_tokens)   (mean output tokens per task)
    instances       = ceil(tasks/h target / (tasks/h/chip × chips_per_instance))
    chips           = instances × chips_per_instance
    sessions        = instances × sessions in flight per instance              (Little's law, serve/sessions.py)
    power_w, $/hour = chips × power per chip (each convention), chips × $/chip-hour

A fleet given in chips (``--chips``, ``--racks``, ``--power-mw``) holds the most whole instances of each
frontier point with each worker's group whole in its boxes (analysis/fleet.fleet_instances); the plan takes
the point that finishes the most tasks per hour on it. Prompt tokens are not a target kind: most of an
agentic prompt is the cached prefix re-read every turn, so a "total tokens" rate counts the same context
tens of times. Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from jalapeno.analysis.agentic import AgenticFrontier
from jalapeno.analysis.capacity import estimate_mark, factor_text, is_price_estimate, n_chips, power_lines, rate_text
from jalapeno.analysis.plan_text import n_instances, packaging_lines, per_kw_line, provisioned_lines
from jalapeno.analysis.plan_inputs import MAX_TARGET_TOK_PER_S
from jalapeno.analysis.fleet import MAX_FLEET_CHIPS, fleet_instances
from jalapeno.analysis.packing import instance_groups, packed_boxes
from jalapeno.analysis.power_cost import CONVENTIONS, power_w_per_chip, usd_text
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.specs.agentic import AgenticSpec
from jalapeno.specs.catalog import hardware_show_command

#: What an agentic ``--target`` counts: tasks per hour, or output tokens per second (converted by the
#: workload's mean output tokens per task).
AGENTIC_TARGET_KINDS = ("tasks", "output")


def output_tokens_per_task(spec: AgenticSpec) -> int:
    """Mean output tokens of one task: turns × reply tokens per turn.

    >>> from jalapeno.specs.agentic import AgenticSpec
    >>> output_tokens_per_task(AgenticSpec("x", 40, 6000, 2500, 350, 2.0))
    14000
    """
    return spec.turns * spec.reply_tokens


def tasks_text(tasks_per_hour: float) -> str:
    """A tasks/h target as the agentic plan prints it: whole as given (``--target 20000`` printed '20,000.0'), one
    decimal where converted from output tok/s (1e6 tok/s x 3,600 / 14,000 = 257,142.9), as the fixed-length plan
    prints its target whole (plan_text.format_rate).

    >>> tasks_text(20000.0), tasks_text(3600e6 / 14000)
    ('20,000', '257,142.9')
    """
    x = tasks_per_hour
    return f"{x:,.0f}" if x == round(x) else f"{x:,.1f}"


def target_tasks_per_hour(target: float, kind: str, spec: AgenticSpec) -> float:
    """The target as tasks per hour: ``kind`` ``tasks`` is tasks/h already; ``output`` is output tok/s, × 3600 /
    output tokens per task.

    Raises:
        SpecError: ``--target`` not positive and finite or above the fixed-length plan's plausibility bound
            (plan_inputs.MAX_TARGET_TOK_PER_S output tok/s; a tasks/h target by its output tokens: ``--target 1e30``
            planned 7e27 H200s, break48), or ``--target-kind`` not one of AGENTIC_TARGET_KINDS.
    """
    if kind not in AGENTIC_TARGET_KINDS:
        raise SpecError(
            "--target-kind",
            f"{kind!r} does not apply to an agentic workload (its prompts are mostly a "
            "cached prefix re-read every turn, so input tokens count the same context many times)",
            "use --target-kind tasks (agent tasks per hour) or output (output tok/s)",
        )
    if isinstance(target, bool) or not (isinstance(target, (int, float)) and math.isfinite(target) and target > 0):
        raise SpecError(
            "--target",
            f"must be a positive number, got {target!r}",
            "write e.g. --target 10000 --target-kind tasks (tasks per hour)",
        )
    per_task = output_tokens_per_task(spec)
    tok_s = float(target) * per_task / 3600.0 if kind == "tasks" else float(target)
    if tok_s > MAX_TARGET_TOK_PER_S:
        given = (
            f"{target:.3g} output tok/s"
            if kind == "output"
            else f"{target:.3g} tasks/h ({tok_s:.3g} output tok/s at {per_task:,} output tokens per task)"
        )
        raise SpecError(
            "--target",
            f"{given} is above the {MAX_TARGET_TOK_PER_S:.0e} tok/s plausibility bound (~2,000x all of Google's "
            "served tokens in 2025)",
            "give one fleet's rate: tasks per HOUR (--target-kind tasks) or output tokens per SECOND, "
            "e.g. --target 10000 --target-kind tasks",
        )
    return float(target) if kind == "tasks" else float(target) * 3600.0 / per_task


@dataclass(frozen=True)
class AgenticPlan:
    """An agentic fleet and the numbers behind it (SI units; ``*_w`` watts).

    Attributes:
        point: the frontier point (analysis/agentic._point dict: deployment, tasks_per_hour_per_chip,
            task_time_s, sessions per instance, ...).
        chips_per_instance: chips of one aggregated instance.
        instances, chips: whole instances and their chips.
        target_tasks_per_hour: the demand (None for a fleet given in chips).
        packaging: (level name, chips per level, boxes) per packaging level, innermost first.
        power_w: convention → (W per chip, its label, fleet W).
        usd_per_chip_hour, usd_per_hour: the system's price and the fleet's.
    """

    system: str
    workload: str
    max_task_min: float | None
    point: dict
    chips_per_instance: int
    instances: int
    chips: int
    target_tasks_per_hour: float | None
    packaging: tuple[tuple[str, int, int], ...]
    power_w: dict
    usd_per_chip_hour: float
    usd_per_hour: float
    output_tokens_per_task: int
    fleet_chips: int | None = None  #: the fleet given in chips (``--chips``/``--racks``/``--power-mw``), else None
    #: a target plan's most-tasks/h-per-chip point when it is not the lead (it needs more chips): its point dict,
    #: chips per instance and chips for the target; else None
    highest_rate: tuple[dict, int, int] | None = None
    #: the system's $/chip-hour is a derived estimate (its file's ``estimate = true``), marked on the cost line as the
    #: fixed-length plan marks it (plan_text.estimate_mark; newuser53: Jalapeño's agent plan priced unmarked)
    usd_estimate: bool = False
    #: the ``jalapeno hardware show`` command that shows the system as priced (specs/catalog.hardware_show_command)
    show_as: str = ""
    usd_source: str = ""  #: the file's cost.usd_per_chip_hour source, which estimate_mark words an estimate from
    #: one instance's worker groups, (chips, count) (packing.instance_groups): the packaging lines' untiled case and
    #: the how-sure line's boxes (analysis/plan_costs.agentic_sure_line)
    groups: tuple[tuple[int, int], ...] = ()

    @property
    def tasks_per_hour(self) -> float:
        """Tasks the fleet finishes per hour: chips × tasks/h/chip."""
        return self.chips * self.point["tasks_per_hour_per_chip"]

    @property
    def usd_per_m_output_tokens(self) -> float:
        """$ per million output tokens at the plan's point: $/chip-hour over the output tokens one chip finishes in
        that hour (tasks/h/chip × output tokens per task / 1e6), as the fixed-length plan's 'cost per M output
        tokens' (a planner compares the two; newuser53: the agentic plan gave $ per task alone)."""
        return self.usd_per_chip_hour / (self.point["tasks_per_hour_per_chip"] * self.output_tokens_per_task / 1e6)

    @property
    def sessions(self) -> float:
        """Agent sessions in flight across the fleet: instances × sessions per instance."""
        return self.instances * self.point["sessions"]

    def arithmetic(self, target_line: str | None = None) -> list[str]:
        """The plan's arithmetic, one line per step (``target_line``: how the target became tasks/h, if converted)."""
        p, cpi = self.point, self.chips_per_instance
        tph = p["tasks_per_hour_per_chip"]
        # one text per figure on every line (it printed 36.83 on one line and 36.8 or 36.834 on the next): the rate
        # to sensible figures (rate_text: 96.69, not the 96.6876 its products needed, round 49), the products carried
        # by one instance's tasks/h to the decimal they need; the price as the cost line prints it
        rate = rate_text(tph)
        per_inst = tph * cpi
        inst = factor_text(per_inst, self.instances, 1, 1)
        usd = factor_text(self.usd_per_chip_hour, self.chips, 2, 2)
        ceiling = "" if self.max_task_min is None else f" with mean task time <= {self.max_task_min:g} min"
        lines = [target_line] if target_line and self.target_tasks_per_hour is not None else []
        lead = (
            "the fewest chips that finish the target" + ceiling + " (ties: the more tasks/h per chip)"
            if self.fleet_chips is None
            else f"the most tasks/h the fleet's whole instances finish{ceiling}"
        )
        lines += [
            f"operating point: {lead}: {rate} tasks/h/chip, mean task "
            f"{p['task_time_s'] / 60:,.1f} min (p90 {p['task_time_p90_s'] / 60:,.1f} min), {p['sessions']:,.1f} "
            f"sessions per instance at decode batch {p['decode_batch']:,.1f}, bound {p['bound']}"
            + (f", KV {p['kv_bound']}" if p["kv_bound"] else "")
        ]
        lines.append(f"one instance: {inst} tasks/h ({n_chips(cpi)} at {rate} tasks/h/chip; exact figures: --json)")
        if self.target_tasks_per_hour is not None:
            lines.append(f"instances: ceil({tasks_text(self.target_tasks_per_hour)} / {inst}) = {self.instances:,}")
        else:
            lines.append(
                f"instances: {self.instances:,} whole instances of {n_chips(cpi)} in the fleet's "
                f"{self.fleet_chips:,} (each worker's group whole in its boxes)"
            )
        lines.append(f"chips: {self.instances:,} x {cpi:,} = {self.chips:,}")
        # the fixed-length plan's packaging lines, 'racks: ceil(152 / 72) = 3', not 'racks: 3 of 72 chips' (newuser55)
        lines += packaging_lines(self.chips, self.packaging, dict(self.groups))
        lines += power_lines(self.chips, self.power_w)
        lines.append(
            f"cost: {self.chips:,} x ${usd}/chip-hour"
            f"{estimate_mark(self.system, self.show_as, self.usd_estimate, self.usd_source)} = "
            f"${self.usd_per_hour:,.2f}/hour; per task ${usd} / {rate} = "
            f"${self.usd_per_chip_hour / tph:,.4f}; per M output tokens ${usd} / ({rate} tasks/h/chip x "
            f"{self.output_tokens_per_task:,} output tokens per task / 1e6) = ${usd_text(self.usd_per_m_output_tokens)}"
        )
        # and its per-kW, provisioned and basis lines, on the output tokens a chip finishes (newuser55)
        out_rate = tph * self.output_tokens_per_task / 3600
        lines.append(per_kw_line(out_rate, self.power_w, "output", shown=rate_text(out_rate)))
        lines += provisioned_lines(self.chips, self.packaging, self.power_w, self.usd_per_chip_hour)
        lines.append(
            f"delivered: {n_instances(self.instances)} x {inst} = {self.tasks_per_hour:,.1f} tasks/h "
            f"({self.tasks_per_hour * self.output_tokens_per_task / 3600:,.0f} output tok/s at "
            f"{self.output_tokens_per_task:,} output tokens per task)"
            + (
                ""
                if self.target_tasks_per_hour is None
                else f" >= target {tasks_text(self.target_tasks_per_hour)} tasks/h"
            )
        )
        lines.append(
            f"sessions in flight: {self.instances:,} x {p['sessions']:,.1f} = {self.sessions:,.0f} agent "
            "sessions (Little's law: tasks/s x task time)"
        )
        if self.highest_rate is not None:
            q, q_cpi, q_chips = self.highest_rate
            lines.append(
                f"most tasks/h per chip: {q['deployment']} ({n_chips(q_cpi)} per instance), "
                f"{rate_text(q['tasks_per_hour_per_chip'])} tasks/h/chip ({(q['tasks_per_hour_per_chip'] / tph - 1) * 100:+.1f}%), "
                f"finishes the target with {q_chips:,} chips ({(q_chips / self.chips - 1) * 100:+.0f}% chips, power and "
                f"$/hour: whole instances of {q_cpi:,}); this plan's point needs {self.chips:,}"
            )
        return lines

    def as_dict(self) -> dict:
        """The plan as JSON: point, instances, chips, packaging, power (kW), $/hour, tasks/h, sessions."""
        return {
            "workload": self.workload,
            "max_task_min": self.max_task_min,
            "point": dict(self.point),
            "deployment": self.point["deployment"],
            "chips_per_instance": self.chips_per_instance,
            "tasks_per_hour_per_chip": self.point["tasks_per_hour_per_chip"],
            "target_tasks_per_hour": self.target_tasks_per_hour,
            "instances": self.instances,
            "chips": self.chips,
            "packaging": {name: n for name, _, n in self.packaging},
            "power_kw": {c: v[2] / 1e3 for c, v in self.power_w.items()},
            "usd_per_hour": self.usd_per_hour,
            "usd_per_m_output_tokens": self.usd_per_m_output_tokens,
            "tasks_per_hour": self.tasks_per_hour,
            "output_tokens_per_task": self.output_tokens_per_task,
            "sessions": self.sessions,
            "fleet_chips": self.fleet_chips,
            "lead": "fewest chips (ties: more tasks/h per chip)" if self.fleet_chips is None else "most tasks/h",
            "highest_rate": None
            if self.highest_rate is None
            else {
                "point": dict(self.highest_rate[0]),
                "chips_per_instance": self.highest_rate[1],
                "chips": self.highest_rate[2],
            },
        }


def check_task_ceiling(max_task_min: float | None) -> None:
    """Refuse a ``--max-task-min`` that is not a positive finite number of minutes (None: no ceiling), before a sweep.

    Raises:
        SpecError: naming ``--max-task-min``.
    """
    if max_task_min is not None and not (math.isfinite(max_task_min) and max_task_min > 0):
        raise SpecError(
            "--max-task-min",
            f"must be a positive number of minutes, got {max_task_min!r}",
            "write e.g. --max-task-min 10",
        )


def _candidates(af: AgenticFrontier, max_task_min: float | None) -> list[tuple[dict, object]]:
    """(point dict, its Deployment) of each frontier point within the task-time ceiling.

    Raises:
        SpecError: a ceiling that is not a positive finite number of minutes. InfeasibleDeployment: no point
            is that fast (names the fastest).
    """
    check_task_ceiling(max_task_min)
    pts = af.points("all-in")
    deps = [af.sweep.deployments[int(af.sweep.dep_index[int(i)])] for i in af.frontier]
    ok = [(p, d) for p, d in zip(pts, deps) if max_task_min is None or p["task_time_s"] <= max_task_min * 60]
    if not ok:
        fastest = min(p["task_time_s"] for p in pts) / 60
        raise InfeasibleDeployment(
            "--max-task-min",
            f"{af.sweep.system} finishes a task in {fastest:,.2f} min at its fastest, above {max_task_min:g}",
            "raise --max-task-min or plan on a faster system",
        )
    return ok


def _plan(
    af: AgenticFrontier,
    spec: AgenticSpec,
    point: dict,
    dep,
    instances: int,
    target: float | None,
    max_task_min: float | None,
    fleet: int | None = None,
) -> AgenticPlan:
    s = af.pricer.system
    cpi = dep.chips
    chips = instances * cpi
    groups = instance_groups(dep, instances)
    packaging = tuple((lv.name, lv.chips, packed_boxes(groups, lv.chips)) for lv in (s.levels[:-1] or s.levels[:1]))
    power = {c: (w, label, chips * w) for c in CONVENTIONS for w, label in [power_w_per_chip(s, c)]}
    return AgenticPlan(
        s.name,
        spec.name,
        max_task_min,
        point,
        cpi,
        instances,
        chips,
        target,
        packaging,
        power,
        s.usd_per_chip_hour,
        chips * s.usd_per_chip_hour,
        output_tokens_per_task(spec),
        fleet,
        usd_estimate=is_price_estimate(s),
        show_as=hardware_show_command(s),
        usd_source=s.sources.get("cost.usd_per_chip_hour", ""),
        groups=tuple(instance_groups(dep, 1).items()),
    )


def plan_agentic(
    af: AgenticFrontier, spec: AgenticSpec, tasks_per_hour: float, max_task_min: float | None = None
) -> AgenticPlan:
    """The fleet of whole instances that finishes ``tasks_per_hour`` tasks (> 0) with the fewest chips (ties: the more
    tasks/h per chip) among the points within ``max_task_min`` (minutes; None: no ceiling), naming the
    most-tasks/h-per-chip point when it needs more (``AgenticPlan.highest_rate``).

    Raises:
        SpecError: a bad ceiling; a fleet above analysis/fleet.MAX_FLEET_CHIPS (the bound ``--chips`` is held to),
            naming ``--target``. InfeasibleDeployment: no frontier point within it.
    """
    cands = _candidates(af, max_task_min)

    def need(pd) -> int:  # chips of whole instances: ceil(demand / (tasks/h/chip x chips)) x chips
        return math.ceil(tasks_per_hour / (pd[0]["tasks_per_hour_per_chip"] * pd[1].chips)) * pd[1].chips

    point, dep = min(cands, key=lambda pd: (need(pd), -pd[0]["tasks_per_hour_per_chip"]))
    n = need((point, dep)) // dep.chips
    top = max(cands, key=lambda pd: pd[0]["tasks_per_hour_per_chip"])
    alt = None
    if top[0] is not point and top[0]["tasks_per_hour_per_chip"] > point["tasks_per_hour_per_chip"]:
        alt = (top[0], top[1].chips, need(top))
    if n * dep.chips > MAX_FLEET_CHIPS:
        raise SpecError(
            "--target",
            f"{tasks_per_hour:.3g} tasks/h needs {n * dep.chips:,} chips, above the {MAX_FLEET_CHIPS:,}-chip "
            "plausibility bound (~100x all AI accelerators installed by 2025)",
            "give one fleet's rate, e.g. --target 10000 --target-kind tasks (tasks per hour)",
        )
    return replace(_plan(af, spec, point, dep, n, float(tasks_per_hour), max_task_min), highest_rate=alt)


def agentic_fleet(af: AgenticFrontier, spec: AgenticSpec, chips: int, max_task_min: float | None = None) -> AgenticPlan:
    """What ``chips`` chips finish per hour: the frontier point within ``max_task_min`` whose whole instances
    (each worker's group whole in its boxes, analysis/fleet.fleet_instances) finish the most tasks per hour.

    Raises:
        SpecError: a bad ceiling. InfeasibleDeployment: no point within it, or no instance fits ``chips``.
    """
    best = None
    for point, dep in _candidates(af, max_task_min):
        n, _ = fleet_instances(dep, af.pricer.system, chips)
        served = n * dep.chips * point["tasks_per_hour_per_chip"]
        if n and (best is None or served > best[0]):
            best = (served, point, dep, n)
    if best is None:
        least = min(d.chips for _, d in _candidates(af, max_task_min))
        raise InfeasibleDeployment(
            "--chips",
            f"{chips:,} chips hold no whole instance on {af.sweep.system} (the "
            f"smallest on the agentic frontier needs {least:,})",
            f"give --chips {least} or more",
        )
    _, point, dep, n = best
    return _plan(af, spec, point, dep, n, None, max_task_min, chips)
