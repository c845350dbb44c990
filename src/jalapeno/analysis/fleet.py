"""What a fleet of a given size serves (``jalapeno plan --chips N``): the reverse of capacity.plan_capacity.

Over the points above a per-user speed floor (``SystemFrontier.fleet_record``: each instance size's own
frontier), floor(N / chips per instance) whole instances each; the most tokens per second delivered, ties
to the fewest chips used. The fleet's power and $/hour count every chip, idle ones included, each at its
convention's full watts (a named assumption: a planner provisions power and pays for the chips it has, and
an idle chip's draw, a fraction of TDP that no system file here states, is not modelled). Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jalapeno.analysis.capacity import (
    factor_text,
    format_rate,
    is_price_estimate,
    output_rate_per_user,
    per_kw_line,
    point_conditions,
    rate_text,
    points_above_floor,
    power_lines,
    estimate_mark,
    users_line,
    n_chips,
    n_instances,
)
from jalapeno.analysis.plan_inputs import TARGET_KINDS
from jalapeno.analysis.packing import instance_groups, packed_boxes
from jalapeno.analysis.power_cost import CONVENTIONS, power_w_per_chip, usd_text
from jalapeno.analysis.records import FrontierRecord, PointRecord
from jalapeno.errors import InfeasibleDeployment, SpecError, choice_hint
from jalapeno.specs.catalog import hardware_show_command
from jalapeno.specs.hardware import System
from jalapeno.specs.plausibility import MAX_CHIPS

# A plausibility bound on a fleet size (``plan --chips``), a named assumption: 1e9 chips is ~100x the
# order of 10 million AI accelerators installed worldwide by 2025; a count above it is a typo (a
# 20-digit count planned 1e23 tok/s without a word), so it is refused. One bound with a system file's
# levels (specs/plausibility.MAX_CHIPS).
MAX_FLEET_CHIPS = MAX_CHIPS
# Relative tolerance under which two fleets deliver the same tok/s (``fleet_throughput``'s ties): floating-point
# noise of one rate times different instance counts, far below any model error (a named assumption).
TIE_RTOL = 1e-9


def _count(n: int) -> str:
    """A chip count for a message: with thousands commas up to 1e15, past that as 4.61e+302 (``--power-mw 1e300``
    printed a 300-digit count)."""
    return f"{n:,}" if n < 10**15 else f"{n:.3g}"


@dataclass(frozen=True)
class FleetThroughput:
    """What a fleet of a given size serves (``jalapeno plan --chips N``): the frontier point above the
    floor whose whole instances, packed into the fleet, serve the most tokens per second.

    Attributes:
        point: the chosen frontier point; rate: its throughput per chip of ``target_kind``, tok/s/chip.
        fleet_chips: the chips given; instances: the most whole instances whose groups pack into the fleet's
            boxes (``fleet_instances``), at most floor(fleet_chips / chips per instance);
        chips_used: instances × chips per instance (the rest idle: an instance is indivisible);
        delivered_tok_per_s: chips_used × rate, tok/s of ``target_kind``.
        power_w: convention → (W per chip, its label, the fleet's W: every chip, idle ones included).
        usd_per_chip_hour: the system's $/chip-hour (the fleet's $/hour: × fleet_chips).
        usd_estimate: whether that price is a derived estimate (``CapacityPlan.usd_estimate``);
        show_as: the ``jalapeno hardware show`` command that shows the system as priced, its ``--set`` options
            carried (specs/catalog.hardware_show_command).
        usd_source: the file's ``cost.usd_per_chip_hour`` source, which estimate_mark words an estimate from.
    """

    point: PointRecord
    rate: float
    target_kind: str
    fleet_chips: int
    instances: int
    chips_used: int
    delivered_tok_per_s: float
    power_w: dict
    usd_per_chip_hour: float
    usd_estimate: bool
    show_as: str
    system: str
    #: (level name, chips per level) of the packaging level that cut the instances below floor(chips / per
    #: instance) (each worker's group whole in one box), else None
    packed_by: tuple[str, int] | None = None
    #: the per-user speed floor the point was chosen at, tok/s/user (0: none)
    min_interactivity: float = 0.0
    usd_source: str = ""

    def arithmetic(self) -> list[str]:
        """The lines plan prints: the operating point (its rate, speed, TTFT, TPOT and bound, as ``plan --target``
        prints it), instances that fit, chips used, tokens per second delivered, power, cost and the users the
        fleet holds."""
        per_inst = self.point.deployment.chips
        n = self.fleet_chips // per_inst
        if self.packed_by is None:
            count = f"instances: floor({n_chips(self.fleet_chips)} / {per_inst:,} per instance) = {n:,}"
        else:  # each worker's stage group whole in a box: fewer instances than the chips alone hold
            name, size = self.packed_by
            sizes = "/".join(str(g) for g in sorted(instance_groups(self.point.deployment, 1), reverse=True))
            boxes, rest = divmod(self.fleet_chips, size)
            have = f"{boxes:,} {name}{'' if boxes == 1 else 's'} of {size}" + (f" and one of {rest}" if rest else "")
            count = (
                f"instances: floor({n_chips(self.fleet_chips)} / {per_inst:,} per instance) = {n:,}, of which "
                f"{self.instances:,} fit with each worker's {sizes}-chip group whole in a {name} ({have})"
            )
        # the rate to sensible figures (rate_text: 1,173.6, not the 1,173.552 'chips x rate = delivered' needed, plan49),
        # the same text on every line; the product is carried by one instance's tok/s, to the decimals it needs to check
        # by hand (the total whole from 1,000), as plan --target prints it; --json holds the exact rate
        rate = rate_text(self.rate)
        inst = (
            factor_text(self.rate * per_inst, self.instances, 0)
            if self.delivered_tok_per_s >= 1000
            else f"{self.rate * per_inst:,.4g}"
        )
        p = self.point
        return (
            [
                f"operating point: the most {self.target_kind} tok/s the fleet's whole instances deliver at >= "
                f"{self.min_interactivity:g} tok/s/user: {rate} tok/s/chip at {p.interactivity:.1f} "
                f"tok/s/user {point_conditions(p)}",
                f"{count} ({n_chips(self.chips_used)} used, {self.fleet_chips - self.chips_used:,} idle)",
                f"delivered: {n_instances(self.instances)} x {inst} {self.target_kind} tok/s ({n_chips(per_inst)} at {rate} "
                f"tok/s/chip) = "
                f"{format_rate(self.delivered_tok_per_s)} {self.target_kind} tok/s at "
                f"{self.point.interactivity:,.1f} tok/s/user",
            ]
            + power_lines(self.fleet_chips, self.power_w)
            + [
                per_kw_line(
                    self.delivered_tok_per_s / self.fleet_chips,
                    self.power_w,
                    self.target_kind,
                    "tok/s per fleet chip (idle ones included)",
                ),
                f"cost: {self.fleet_chips:,} x ${factor_text(self.usd_per_chip_hour, self.fleet_chips, 2, 2)}/chip-hour"
                f"{estimate_mark(self.system, self.show_as, self.usd_estimate, self.usd_source)} = "
                f"${self.fleet_chips * self.usd_per_chip_hour:,.2f}/hour; per M {self.target_kind} tokens: "
                f"${usd_text(self.usd_per_mtok)}",
                users_line(p, self.instances),
            ]
        )

    @property
    def usd_per_mtok(self) -> float:
        """$ per million ``target_kind`` tokens: the whole fleet's $/hour (idle chips included) over the
        tokens it delivers in an hour, in millions."""
        return self.fleet_chips * self.usd_per_chip_hour / (self.delivered_tok_per_s * 3600.0 / 1e6)

    def as_dict(self) -> dict:
        """JSON form: fleet, instances, chips used, rate, delivered, power (kW per convention, the whole
        fleet), $/hour, $ per M tokens (``usd_per_mtok``, as ``plan --target --json``), whether the price is an
        estimate, the packaging level that cut the instances (``instances_cut_by``, else null), the users it
        holds (``users_per_instance``, ``users``, ``output_tok_per_s_per_user``, as ``plan --target --json``), the
        deployment and the point."""
        return {
            "fleet_chips": self.fleet_chips,
            "instances": self.instances,
            "chips_used": self.chips_used,
            "tok_per_s_per_chip": self.rate,
            "target_kind": self.target_kind,
            "delivered_tok_per_s": self.delivered_tok_per_s,
            "power_kw": {c: v[2] / 1e3 for c, v in self.power_w.items()},
            "usd_per_hour": self.fleet_chips * self.usd_per_chip_hour,
            "usd_per_mtok": self.usd_per_mtok,
            "usd_estimate": self.usd_estimate,
            "instances_cut_by": None
            if self.packed_by is None
            else {"level": self.packed_by[0], "chips": self.packed_by[1]},
            "users_per_instance": float(self.point.concurrency),
            "users": float(self.point.concurrency) * self.instances,
            "output_tok_per_s_per_user": output_rate_per_user(self.point),
            "deployment": self.point.deployment.as_dict(),
            "point": self.point.as_dict(),
        }


def fleet_throughput(
    frontier: FrontierRecord, system: System, chips: int, target_kind: str = "output", min_interactivity: float = 0.0
) -> FleetThroughput:
    """The most tokens per second ``chips`` chips serve at ``min_interactivity`` or faster: over the
    frontier points above the floor, floor(chips / chips per instance) whole instances each, the most
    delivered tok/s (a smaller instance can beat the best per-chip one when that one does not fit).
    Ties (within ``TIE_RTOL``): the fewest chips used, then the higher interactivity, then the smaller instance.

    Args:
        frontier: the points to choose from: ``SystemFrontier.fleet_record`` (each instance size's own
            frontier; the system's frontier alone drops small instances a larger one dominates, which a
            small fleet still runs); system: its System.
        chips: fleet size, chips (a positive integer; racks x chips per rack from ``hardware show``).
        target_kind: ``output`` or ``total`` (input + output) tokens.
        min_interactivity: per-user speed floor, tok/s/user (>= 0).

    Raises:
        SpecError: a non-positive or non-integer chip count, an unknown kind, a bad floor.
        InfeasibleDeployment: no point reaches the floor, or every instance above it needs more chips.
    """
    check_fleet_chips(chips)
    if target_kind not in TARGET_KINDS:
        raise SpecError(
            "--target-kind",
            f"unknown kind {target_kind!r}{choice_hint(target_kind, ('output', 'total'))}",
            "use output or total",
        )
    ok = points_above_floor(frontier, system, min_interactivity)
    fits = [p for p in ok if p.deployment.chips <= chips]
    if not fits:
        least = min(p.deployment.chips for p in ok)
        hold = "chip holds" if chips == 1 else "chips hold"
        # at a floor of 0 (the default) 'or lower --min-interactivity' named a change that cannot be made (break49)
        lower = ", or lower --min-interactivity" if min_interactivity > 0 else ""
        at = f" at >= {min_interactivity:g} tok/s/user" if min_interactivity > 0 else ""
        raise InfeasibleDeployment(
            "--chips",
            f"{chips:,} {hold} no instance of {system.name}{at}: the smallest needs {least:,} chips",
            f"give --chips {least} or more{lower}",
        )

    def rate(p: PointRecord) -> float:
        return p.output_throughput_per_chip if target_kind == "output" else p.throughput_per_chip

    placed = {id(p): fleet_instances(p.deployment, system, chips) for p in fits}
    fits = [p for p in fits if placed[id(p)][0] > 0]
    if not fits:
        at = f" at >= {min_interactivity:g} tok/s/user" if min_interactivity > 0 else ""
        raise InfeasibleDeployment(
            "--chips",
            f"{chips:,} chips hold no instance of {system.name}{at} with each worker's group whole in a box",
            "give more chips (whole racks or nodes)"
            + (", or lower --min-interactivity" if min_interactivity > 0 else ""),
        )

    def used(p: PointRecord) -> int:
        return placed[id(p)][0] * p.deployment.chips

    # ties on delivered tok/s (to TIE_RTOL) are common: a disagg instance with spare prefill chips delivers
    # what a smaller one does (GB200 8k/1k, 64 chips at >= 50: 52-, 56- and 64-chip instances, 29,343 tok/s
    # each). The fleet's cost is the same; the planner keeps the chips that add nothing: fewest chips used,
    # then the faster per-user speed, then the smaller instance (finer failure and scaling unit)
    top = max(used(p) * rate(p) for p in fits)
    best = min(
        (p for p in fits if used(p) * rate(p) >= top * (1 - TIE_RTOL)),
        key=lambda p: (used(p), -p.interactivity, p.deployment.chips),
    )
    power = {c: (w, label, chips * w) for c in CONVENTIONS for w, label in [power_w_per_chip(system, c)]}
    n, cut = placed[id(best)]
    return FleetThroughput(
        best,
        rate(best),
        target_kind,
        chips,
        n,
        used(best),
        used(best) * rate(best),
        power,
        system.usd_per_chip_hour,
        is_price_estimate(system),
        hardware_show_command(system),
        system.name,
        cut,
        min_interactivity,
        system.sources.get("cost.usd_per_chip_hour", ""),
    )


def check_fleet_chips(chips: int) -> None:
    """Refuse a ``--chips`` that is not a positive whole number or is above ``MAX_FLEET_CHIPS`` (``plan`` calls it
    before its sweep).

    Raises:
        SpecError: naming ``--chips``.
    """
    if isinstance(chips, bool) or not isinstance(chips, int) or chips <= 0:
        raise SpecError(
            "--chips",
            f"must be a positive whole number of chips, got {chips!r}",
            "write e.g. --chips 1152 (16 racks of 72: racks x chips per rack, `jalapeno hardware show`)",
        )
    if chips > MAX_FLEET_CHIPS:
        raise SpecError(
            "--chips",
            f"{_count(chips)} chips is above the {MAX_FLEET_CHIPS:,}-chip plausibility bound "
            "(~100x all AI accelerators installed by 2025)",
            "give the chips of one fleet, e.g. --chips 1152",
        )


def fleet_instances(dep, system: System, chips: int) -> tuple[int, tuple[str, int] | None]:
    """The most whole instances of ``dep`` that ``chips`` chips hold with each worker's pipeline-stage group
    whole inside one box of every packaging level (trays, nodes, racks; the level its collectives are priced
    on, packing.instance_groups), and the level that cut the count below floor(chips / chips per instance)
    (None when none did). The fleet is floor(chips / size) whole boxes and one of the remainder; the check
    packs the groups with a placeholder group filling the partial box's missing chips (first-fit decreasing,
    packing.packed_boxes). 2 GB200 NVL72 racks (144 chips) hold 8 EP16 instances, not floor(144 / 16) = 9:
    4 sixteen-chip groups fill 64 of a rack's 72 GPUs.
    """
    n_max = chips // dep.chips
    levels = system.levels[:-1] or system.levels[:1]

    def cut(n: int) -> tuple[str, int] | None:
        for lv in levels:
            boxes, rest = divmod(chips, lv.chips)
            groups = instance_groups(dep, n)
            if rest:
                groups[lv.chips - rest] = groups.get(lv.chips - rest, 0) + 1
                boxes += 1
            if packed_boxes(groups, lv.chips) > boxes:
                return lv.name, lv.chips
        return None

    first = cut(n_max) if n_max else None
    if first is None:
        return n_max, None
    lo, hi = 0, n_max - 1  # the most n in [lo, hi] that packs: n_max does not, 0 does
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if cut(mid) is None else (lo, mid - 1)
    return lo, first


def _up4(x: float) -> float:
    """``x`` > 0 rounded up to 4 significant digits (a hint that rounds down would hold no whole box).

    >>> _up4(0.00987648), _up4(0.1512)
    (0.009877, 0.1512)
    """
    scale = 10.0 ** (3 - math.floor(math.log10(x)))
    up = math.ceil(round(x * scale, 6)) / scale  # round(): 0.1512 x 1e4 is 1512.0000000000002 in floating point
    return float(f"{up:.4g}")


def fleet_chips(
    system: System, racks: int | None = None, power_mw: float | None = None, convention: str = "all-in"
) -> tuple[int, str]:
    """A fleet size in chips from what a planner has: ``racks`` (× the chips of the system's ``rack`` level,
    from its file) or ``power_mw`` (whole boxes of the outermost packaging level, the one plan counts:
    floor(MW / (W per chip × chips per box)) × chips per box, W under ``convention``). Returns the chips
    and the line that shows the conversion.

    >>> from jalapeno.specs.catalog import load_system
    >>> fleet_chips(load_system("gb200-nvl72"), racks=4)
    (288, 'chips: 4 racks x 72 chips per rack = 288')

    Raises:
        SpecError: neither or both given, a non-positive or non-finite value, a system without a rack level
            (``--racks``), a budget that holds no whole box or a fleet above ``MAX_FLEET_CHIPS``.
    """
    if (racks is None) == (power_mw is None):
        raise SpecError("fleet_chips", "give exactly one of racks and power_mw", "e.g. racks=4 or power_mw=20")
    if racks is not None:
        rack = [lv for lv in system.levels if lv.name == "rack"]
        if isinstance(racks, bool) or not isinstance(racks, int) or racks <= 0:
            raise SpecError(
                "--racks", f"must be a positive whole number of racks, got {racks!r}", "write e.g. --racks 4"
            )
        if not rack:
            have = ", ".join(f"{lv.name} of {lv.chips:,} chips" for lv in system.levels)
            raise SpecError(
                "--racks",
                f"{system.name}'s file has no rack level ({have})",
                f"give --chips ({system.levels[0].name}s x {system.levels[0].chips}: 32 {system.levels[0].name}s "
                f"is --chips {32 * system.levels[0].chips}) or --power-mw",
            )
        chips, line = (
            racks * rack[0].chips,
            f"chips: {racks:,} {'rack' if racks == 1 else 'racks'} x {rack[0].chips} chips per rack",
        )
        where = "--racks"
    else:
        if not (
            isinstance(power_mw, (int, float))
            and not isinstance(power_mw, bool)
            and math.isfinite(power_mw)
            and power_mw > 0
        ):
            raise SpecError(
                "--power-mw", f"must be a positive number of megawatts, got {power_mw!r}", "write e.g. --power-mw 20"
            )
        w, label = power_w_per_chip(system, convention)
        box = (system.levels[:-1] or system.levels[:1])[-1]
        boxes = power_mw * 1e6 / (w * box.chips)
        # a budget of exactly n boxes' watts, typed in MW, can land a rounding error below n (1.0248 MW of
        # 5,600 W H100 nodes: 182.99999999999997): within 1e-9 relative of the next whole box counts as it
        n = math.floor(boxes) + math.isclose(boxes, math.floor(boxes) + 1, rel_tol=1e-9)
        if n < 1:
            raise SpecError(
                "--power-mw",
                f"{power_mw:g} MW holds no whole {box.name} of {box.chips} {system.name} chips "
                f"at {w:,.0f} W each ({label}: {w * box.chips / 1e3:,.1f} kW a {box.name})",
                f"give --power-mw {_up4(w * box.chips / 1e6):g} or more",
            )
        chips = n * box.chips
        line = (
            f"chips: floor({power_mw:,g} MW / ({w:,.0f} W {label} x {box.chips} chips per {box.name})) = "
            f"{n:,} {box.name}s x {box.chips}"
        )
        where = "--power-mw"
    if chips > MAX_FLEET_CHIPS:
        raise SpecError(
            where,
            f"{_count(chips)} chips is above the {MAX_FLEET_CHIPS:,}-chip plausibility bound "
            "(~100x all AI accelerators installed by 2025)",
            f"give one fleet's, e.g. {'--racks 16' if where == '--racks' else '--power-mw 20'}",
        )
    return chips, f"{line} = {chips:,}"
