"""Capacity planning (``jalapeno plan``): how many chips serve a token-rate target at a per-user speed.

From a system's frontier (analysis/system_frontier.system_frontier) and every instance size's own
frontier (``alternatives``) the plan leads with the point at or above ``min_interactivity`` (the
operating-tier rule of docs/metrics.md §6) that serves the target with the FEWEST CHIPS (ties: the
higher throughput per chip, then fewer outermost boxes), then:

    instances = ceil(target_tok_per_s / (throughput_per_chip × chips_per_instance))
    chips     = instances × chips_per_instance
    <level>s  = boxes of that level's chips holding every instance group whole (first-fit decreasing;
                ceil(chips / chips of that level) when the groups tile it), for each packaging level
    power_w   = chips × power per chip                  under each convention (power_cost.py)
    usd/hour  = chips × $/chip-hour

Why fewest chips: on one system power (every convention) and $/hour are per chip, so the fewest chips
is also the fewest watts and the lowest $/hour: what a capacity planner buys. The point of the highest
throughput per chip (the rule until round 49) can need many more chips once instances are whole:
Kimi K2.5 on Jalapeño, 1k8k, 1e6 output tok/s at >= 50 tok/s/user, its 524-chip instances need
3 x 524 = 1,572 chips where 132-chip ones of 0.8% lower tok/s/chip need 9 x 132 = 1,188 (newuser49).
The plan names that point when it is not the lead (``CapacityPlan.highest_rate``) and the point that
needs the fewest of the outermost boxes it prints (``fewest_boxes``: racks; GB300 agg EP72 fills
72-GPU racks that EP64 leaves 8 GPUs of idle, so 2,160 chips sit in 30 racks where EP64's 1,984
take 31): floor space and whole-rack purchases are per rack.

``target_kind`` says which tokens the target counts: ``total`` (input + output, InferenceX's
``tput_per_gpu``) or ``output`` (output tokens only); ``users`` (``plan --users``) replaces the target with
closed-loop users, instances = ceil(users / the point's concurrency) (analysis/plan_inputs.py). Throughput per chip counts every chip of
the deployment, prefill pools included. Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jalapeno.analysis.packing import instance_groups, packed_boxes
from jalapeno.analysis.plan_inputs import (  # noqa: F401  (the input checks, re-exported: they lived here)
    MAX_TARGET_TOK_PER_S,
    TARGET_KINDS,
    _check_number,
    check_floor,
    check_target,
    check_users,
)
from jalapeno.analysis.plan_text import (  # noqa: F401  (re-exported: split from here, round 49)
    _sig3,
    count_basis,
    estimate_mark,
    factor_text,
    format_rate,
    is_price_estimate,
    lengths_text,
    n_chips,
    n_instances,
    output_rate_per_user,
    packaging_lines,
    per_kw_line,
    point_conditions,
    power_lines,
    provisioned_lines,
    rate_text,
    users_line,
)
from jalapeno.analysis.power_cost import CONVENTIONS, power_w_per_chip, usd_text, whole_boxes
from jalapeno.analysis.records import FrontierRecord, PointRecord
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.specs.catalog import hardware_show_command
from jalapeno.specs.hardware import System


def whole_box_chips(chips: int, packaging: tuple) -> int:
    """Chips bought as whole outermost boxes: max(chips, boxes x chips per box) of ``packaging``'s last
    (name, chips per box, boxes) level; ``chips`` when there is no packaging level. Shared by the fixed-length
    and the agentic plans (review55: the agentic plan had repeated the rule)."""
    if not packaging:
        return chips
    _, size, n = packaging[-1]
    return max(chips, n * size)


@dataclass(frozen=True)
class Footprint:
    """The fleet one frontier point needs for the plan's target (whole instances).

    Attributes:
        point: the frontier point; rate: its throughput per chip of the target's kind, tok/s/chip.
        chips: instances × chips per instance.
        packaging: (level name, chips per level, count) per packaging level, innermost first, each
            worker's group whole in a box (``packed_boxes``), as the plan prints its own.
    """

    point: PointRecord
    rate: float
    chips: int
    packaging: tuple[tuple[str, int, int], ...]

    def text(self) -> str:
        """``720 chips in 90 trays, 6 racks``: the counts plan prints, outermost level last."""
        boxes = ", ".join(f"{n:,} {name}{'' if n == 1 else 's'}" for name, _, n in self.packaging)  # 1 rack (ux54)
        return f"{n_chips(self.chips)} in {boxes}" if boxes else n_chips(self.chips)

    def as_dict(self) -> dict:
        """JSON form: chips, boxes per level, throughput per chip, the deployment and the point."""
        return {
            "chips": self.chips,
            "packaging": {name: n for name, _, n in self.packaging},
            "tok_per_s_per_chip": self.rate,
            "deployment": self.point.deployment.as_dict(),
            "point": self.point.as_dict(),
        }


@dataclass(frozen=True)
class CapacityPlan:
    """A capacity plan and the numbers behind it (SI units; ``*_w`` watts).

    Attributes:
        point: the frontier point the fleet runs at: the one above the floor that serves the target with the
            fewest chips (ties: higher throughput per chip, then fewer outermost boxes; module docstring).
        tok_per_s_per_chip: its throughput per chip of the target's kind (exact; the text prints
            ``rate_text`` of it, the JSON this figure).
        chips_per_instance: chips of one deployment (prefill + decode pools).
        instances: deployments needed; chips: instances × chips_per_instance.
        packaging: (level name, chips per level, count) per packaging level, innermost first.
        power_w: convention → (power per chip W, its label, fleet power W).
        usd_per_hour: fleet $/hour; delivered_tok_per_s: what the fleet serves (≥ the target).
        usd_estimate: whether the system's $/chip-hour is a derived estimate (``estimate = true`` in its
            file, e.g. Jalapeño's, which has no published price) rather than a published TCO figure.
        highest_rate: the footprint of the point above the floor of the highest throughput per chip (the
            lead until round 49), when it is not the plan's point (it then needs more chips: instances are
            whole), else None.
        fewest_boxes: the footprint of the point above the floor that needs the fewest of the
            outermost packaging level ``packaging[-1]`` (racks; ties: fewer chips, then higher
            throughput per chip), when that is fewer than this plan's, else None.
    """

    system: str
    target_tok_per_s: float
    target_kind: str
    min_interactivity: float
    point: PointRecord
    tok_per_s_per_chip: float
    chips_per_instance: int
    instances: int
    chips: int
    packaging: tuple[tuple[str, int, int], ...]
    power_w: dict
    usd_per_chip_hour: float
    usd_per_hour: float
    delivered_tok_per_s: float
    highest_rate: Footprint | None = None
    usd_estimate: bool = False
    fewest_boxes: Footprint | None = None
    #: the ``jalapeno hardware show`` command that shows the system as priced, its ``--set`` options carried
    #: (specs/catalog.hardware_show_command); "": ``jalapeno hardware show SYSTEM``
    show_as: str = ""
    usd_source: str = ""  #: the file's cost.usd_per_chip_hour source, which estimate_mark words an estimate from
    #: ``plan --users N``: the closed-loop users the fleet must hold (instances = ceil(N / the point's concurrency));
    #: ``target_tok_per_s`` is then the tokens of ``target_kind`` they draw at the plan's point (newuser53)
    users: float | None = None

    def __repr__(self) -> str:
        """Short: ``CapacityPlan(gb200-nvl72: 1e+06 output tok/s at >= 50 tok/s/user: 320 chips, 5 x 64, ...)``
        (the generated repr printed the point and both alternatives, 3,800 characters); ``arithmetic()``
        gives the whole working."""
        return (
            f"CapacityPlan({self.system}: {self.target_tok_per_s:.4g} {self.target_kind} tok/s at >= "
            f"{self.min_interactivity:g} tok/s/user: {self.chips:,} chips ({self.instances:,} x "
            f"{self.chips_per_instance:,}) at {self.point.interactivity:,.1f} tok/s/user, "
            f"{self.tok_per_s_per_chip:,.1f} {self.target_kind} tok/s/chip, ${self.usd_per_hour:,.2f}/hour)"
        )

    @property
    def usd_per_mtok(self) -> float:
        """$ per million tokens of the target's kind at the plan's point: $/chip-hour over the tokens one
        chip serves in that hour (tok/s/chip × 3600 / 1e6), as compare's $/M tok (there input + output)."""
        return self.usd_per_chip_hour / (self.tok_per_s_per_chip * 3600.0 / 1e6)

    @property
    def provisioned_chips(self) -> int:
        """Chips of the outermost packaging level's whole boxes (racks x chips per rack): what is bought and
        provisioned; equal to ``chips`` when the groups fill the boxes (no packaging level: ``chips``)."""
        return whole_box_chips(self.chips, self.packaging)

    def provisioned(self) -> dict | None:
        """Cost and all-in power of the whole outermost boxes when they hold idle chips, else None: $/hour at
        the per-chip price and kW at the all-in provisioned convention (a facility provisions whole racks);
        the plan's power and cost lines count the chips in use."""
        n = self.provisioned_chips
        if n == self.chips:
            return None
        w, label, _ = self.power_w.get("all-in", (None, None, None))
        _, size, boxes = self.packaging[-1]
        return {  # compare's per-rack line counts a rack by the same rule (power_cost.whole_boxes; ux54)
            **whole_boxes(self.chips, size, boxes, w),
            "usd_per_hour": n * self.usd_per_chip_hour,
            "all_in_label": label,
        }

    def basis_text(self) -> str:
        """The one line that says what the plan's figures count: chips in use vs whole racks bought (ux54;
        plan_text.count_basis)."""
        return count_basis(self.chips, self.packaging, self.provisioned_chips)

    @property
    def users_per_instance(self) -> float:
        """Closed-loop users one instance serves at the plan's point: its concurrency (InferenceX's conc,
        requests kept outstanding; Little's law C = λ·E2E)."""
        return float(self.point.concurrency)

    @property
    def output_tok_per_s_per_user(self) -> float:
        """One user's mean output rate over a whole request, tok/s: mean OSL / E2E (TTFT and queue
        included), = instance output tok/s / users per instance; below the point's interactivity
        (1 / TPOT, the speed while decoding)."""
        return output_rate_per_user(self.point)

    def users_text(self) -> str:
        """The plan's line for "N users": users served and the output-token target that N users need."""
        n = f" >= target {self.users:,.0f} users" if self.users is not None else ""
        r = f", so N users need --target N x {self.output_tok_per_s_per_user:.1f} --target-kind output (or --users N)"
        return users_line(self.point, self.instances) + (n or r)

    def target_text(self) -> str:
        """The target as printed: thousands separators from 1,000 tok/s, four significant digits below
        (``,.0f`` printed a target of 1e-30 tok/s as 0)."""
        return format_rate(self.target_tok_per_s)

    def arithmetic(self) -> list[str]:
        """The plan's arithmetic, one line per step (what ``jalapeno plan`` prints). Throughput per chip prints to
        sensible figures (``rate_text``: 912.7, not 912.664); the products are carried by one instance's tok/s
        (whole tok/s, :func:`factor_text`), so every ``n x X = total`` line checks by hand; ``--json`` holds the
        exact figures (``tok_per_s_per_chip``)."""
        p, k = self.point, self.target_kind
        per_inst = self.tok_per_s_per_chip * self.chips_per_instance
        rate = rate_text(self.tok_per_s_per_chip)
        inst = factor_text(per_inst, self.instances, 0)
        lines = [
            (
                f"operating point: the fewest chips that serve the target at >= {self.min_interactivity:g} tok/s/user "
                f"(ties: the higher {k} throughput per chip): {rate} tok/s/chip at {p.interactivity:.1f} tok/s/user "
                f"{point_conditions(p)}"
            ),
            f"one instance: {inst} tok/s ({n_chips(self.chips_per_instance)} at {rate} tok/s/chip; exact figures: --json)",
            f"instances: ceil({self.target_text()} / {inst}) = {self.instances:,}"
            if self.users is None
            else f"instances: ceil({self.users:,.0f} users / {factor_text(self.users_per_instance, self.instances, 0)} "
            f"per instance) = {self.instances:,}",
            f"chips: {self.instances:,} x {self.chips_per_instance:,} = {self.chips:,}",
        ]
        lines += packaging_lines(self.chips, self.packaging, instance_groups(self.point.deployment, 1))
        lines += power_lines(self.chips, self.power_w)
        basis = estimate_mark(self.system, self.show_as, self.usd_estimate, self.usd_source)
        usd = factor_text(self.usd_per_chip_hour, self.chips, 2, 2)
        lines.append(f"cost: {self.chips:,} x ${usd}/chip-hour{basis} = ${self.usd_per_hour:,.2f}/hour")
        lines.append(
            f"cost per M {k} tokens: ${usd} / ({rate} tok/s/chip x 3600 s / 1e6) = ${usd_text(self.usd_per_mtok)}"
        )
        lines.append(per_kw_line(self.tok_per_s_per_chip, self.power_w, k, shown=rate))
        lines += provisioned_lines(self.chips, self.packaging, self.power_w, self.usd_per_chip_hour)
        lines.append(
            f"delivered: {n_instances(self.instances)} x {inst} = {self.delivered_tok_per_s:,.0f} "
            + (
                f"tok/s ({self.target_kind}) >= target {self.target_text()}"
                if self.users is None
                else f"tok/s ({self.target_kind}), >= the {self.target_text()} the users draw"
            )
        )
        lines.append(self.users_text())
        own = Footprint(p, self.tok_per_s_per_chip, self.chips, self.packaging).text()
        outer = self.packaging[-1][0] + "s" if self.packaging else "boxes"
        if (alt := self.highest_rate) is not None:
            q = alt.point
            lines.append(
                f"highest {k} throughput per chip: {q.deployment.label} ({n_chips(q.deployment.chips)} per instance) at "
                f"{q.interactivity:.1f} tok/s/user, {rate_text(alt.rate)} tok/s/chip "
                f"({(alt.rate / self.tok_per_s_per_chip - 1) * 100:+.1f}%), serves the target with {alt.text()} "
                f"({(alt.chips / self.chips - 1) * 100:+.0f}% chips, power and $/hour: whole instances of "
                f"{q.deployment.chips:,}); this plan's point needs {own}"
            )
        if (alt := self.fewest_boxes) is not None:
            q = alt.point
            lines.append(
                f"fewer {outer}: {q.deployment.label} ({n_chips(q.deployment.chips)} per instance) at "
                f"{q.interactivity:.1f} tok/s/user serves the target with {alt.text()} at "
                f"{rate_text(alt.rate)} tok/s/chip; this plan's point needs {own} (whole instances of "
                f"{self.chips_per_instance:,})"
            )
        return lines


def plan_capacity(
    frontier: FrontierRecord,
    system: System,
    target_tok_per_s: float,
    target_kind: str = "output",
    min_interactivity: float = 0.0,
    alternatives: FrontierRecord | None = None,
    users: float | None = None,
) -> CapacityPlan:
    """The fleet of the best-per-chip deployment at ``min_interactivity`` (whole instances) that
    serves ``target_tok_per_s``, and the points above the floor that need fewer chips or fewer of the
    outermost boxes (racks) when there are such.

    Args:
        frontier: the system's frontier (points by interactivity).
        system: the system (packaging levels, power, $/chip-hour).
        target_tok_per_s: tokens per second the fleet must serve (> 0).
        target_kind: ``output`` or ``total`` (input + output).
        min_interactivity: per-user speed floor, tok/s/user (>= 0).
        alternatives: the points searched for ``fewest`` / ``fewest_boxes``: ``SystemFrontier.fleet_record()``
            (each instance size's own frontier; ``jalapeno plan`` passes it). Default: ``frontier``, which
            drops a small instance a larger one dominates, the one a target of a few instances needs.

    Raises:
        SpecError: a frontier (or alternatives) that is not a FrontierRecord (a SystemFrontier: pass its ``.record()``),
            a system that is not a System or not the frontier's,
            a target or floor that is not a number (a string, True), a non-positive target or one above
            ``MAX_TARGET_TOK_PER_S``, an unknown kind, a negative floor.
        InfeasibleDeployment: no frontier point reaches the floor (names the fastest one).
    """
    if not isinstance(frontier, FrontierRecord):  # a SystemFrontier raised AttributeError on numpy.int64
        raise SpecError(
            "plan_capacity: frontier",
            f"expected a FrontierRecord, got {type(frontier).__name__}",
            "pass system_frontier(...).record() and its .system, as the README shows",
        )
    if not isinstance(system, System):  # a name raised AttributeError: 'str' object has no attribute 'levels'
        raise SpecError(
            "plan_capacity: system",
            f"expected a System, got {type(system).__name__}",
            "pass the frontier's own system: system_frontier(...).system, or load_system(name)",
        )
    if system.name != frontier.system:  # another system's racks, power and $ priced this one's frontier silently
        raise SpecError(
            "plan_capacity: system",
            f"{system.name!r} is not the frontier's system {frontier.system!r}",
            "pass the system the frontier was swept on (system_frontier(...).system)",
        )
    if users is None:
        _check_number("target_tok_per_s", target_tok_per_s, "e.g. target_tok_per_s=1e6 (tokens/s)")
    _check_number("min_interactivity", min_interactivity, "e.g. min_interactivity=50.0 (tok/s/user)")
    check_target(None if users is not None else target_tok_per_s, target_kind)
    check_users(users)
    ok = points_above_floor(frontier, system, min_interactivity)
    if alternatives is not None:
        if not isinstance(alternatives, FrontierRecord) or alternatives.system != frontier.system:
            raise SpecError(
                "plan_capacity: alternatives",
                f"expected the frontier's system's FrontierRecord, got "
                f"{getattr(alternatives, 'system', type(alternatives).__name__)!r}",
                "pass system_frontier(...).fleet_record() of the same sweep, or leave it out",
            )
        alt_ok = [p for p in alternatives.frontier if p.feasible and p.interactivity >= min_interactivity]
    else:
        alt_ok = ok

    def rate(p: PointRecord) -> float:
        return p.output_throughput_per_chip if target_kind == "output" else p.throughput_per_chip

    # every level but the outermost (the cluster or global fabric the fleet spans); a system of one
    # level (a user's 8-GPU node without a scale-out level) counts its nodes, which it printed nothing for
    levels = system.levels[:-1] or system.levels[:1]

    def footprint(p: PointRecord) -> Footprint:
        n = (
            math.ceil(target_tok_per_s / (rate(p) * p.deployment.chips))
            if users is None
            else math.ceil(users / max(p.concurrency, 1e-30))  # closed loop: an instance holds its concurrency
        )
        units = instance_groups(p.deployment, n)
        return Footprint(
            p,
            rate(p),
            n * p.deployment.chips,
            tuple((lv.name, lv.chips, packed_boxes(units, lv.chips)) for lv in levels),
        )

    def outer(f: Footprint) -> int:
        return f.packaging[-1][2] if f.packaging else f.chips

    # the lead: the fewest chips (= fewest watts, lowest $/hour: both per chip), ties to the higher rate, then
    # fewer outermost boxes; searched over the system's frontier and every instance size's own (alternatives)
    alts = [footprint(p) for p in ok] + [footprint(p) for p in alt_ok if alt_ok is not ok]
    own = min(alts, key=lambda f: (f.chips, -f.rate, outer(f)))
    best, per_chip, chips, packaging = own.point, own.rate, own.chips, own.packaging
    per_inst_chips = best.deployment.chips
    instances = chips // per_inst_chips
    top = footprint(max(ok, key=rate))  # the highest rate on the system's frontier (the old lead)
    highest_rate = top if top.point is not best and top.rate > per_chip else None
    least = min(alts, key=lambda f: (outer(f), f.chips, -f.rate))
    fewest_boxes = least if outer(least) < outer(own) else None
    power = {}
    for c in CONVENTIONS:
        w, label = power_w_per_chip(system, c)
        power[c] = (w, label, chips * w)
    if users is not None:  # the tokens of the target's kind the users draw at the lead: rate x chips / concurrency each
        target_tok_per_s = users * per_chip * per_inst_chips / max(best.concurrency, 1e-30)
    return CapacityPlan(
        system.name,
        float(target_tok_per_s),
        target_kind,
        float(min_interactivity),
        best,
        per_chip,
        per_inst_chips,
        instances,
        chips,
        packaging,
        power,
        system.usd_per_chip_hour,
        chips * system.usd_per_chip_hour,
        chips * per_chip,
        highest_rate,
        is_price_estimate(system),
        fewest_boxes,
        hardware_show_command(system),
        system.sources.get("cost.usd_per_chip_hour", ""),
        None if users is None else float(users),
    )


def points_above_floor(frontier: FrontierRecord, system: System, min_interactivity: float) -> list[PointRecord]:
    """The feasible frontier points at or above ``min_interactivity`` (tok/s/user); a negative or
    non-finite floor is a SpecError, a floor no point reaches an InfeasibleDeployment naming the fastest."""
    check_floor(min_interactivity)
    ok = [p for p in frontier.frontier if p.feasible and p.interactivity >= min_interactivity]
    if not ok:
        fastest = max((p.interactivity for p in frontier.frontier), default=0.0)
        d = 1  # enough decimals that the maximum reads below the floor ('at most 139.5 ..., below 139.5')
        while d < 6 and round(fastest, d) >= min_interactivity:
            d += 1
        raise InfeasibleDeployment(
            "--min-interactivity",
            f"{system.name} reaches at most {fastest:.{d}f} tok/s/user on this workload, below {min_interactivity:g}",
            "lower --min-interactivity or plan on a faster system",
        )
    return ok
