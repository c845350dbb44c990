"""Time of a collective on a system's link hierarchy: latency + bytes over the bottleneck bandwidth.

Placement. ``packed`` (default): a group of ``g`` chips is placed contiguously, innermost level
first (TP inside a tray/node, then DP/EP, then PP), so it spans the innermost level with
``chips >= g``; when it spans more than one level the collective is hierarchical (the part
inside the inner domain at the inner bandwidth, the rest at the outer one, concurrently on
their separate links) — unless the outer level is reached through the same ports
(``shares_ports_with_inner``, e.g. Jalapeño's tray and rack), then it is flat at the outer level. ``spread``: one
member per inner domain, so all traffic uses the outer level. Packed is never slower.

Message size conventions (per chip, bytes):
- all_reduce: the buffer each rank holds (input = output size M).
- all_gather / reduce_scatter: the full gathered buffer M (each rank owns M/g).
- all_to_all: everything one rank sends, its own share included (M/g per destination).
- send_recv: the message one rank sends.

Formulas (alpha = per-step latency at the level, B = per-chip per-direction bandwidth x
``link_fraction`` (``scale_out_link_fraction`` on scale-out levels); ring/direct/tree algorithms after Thakur, Rabenseifner & Gropp, IJHPCA 2005;
NCCL's double binary tree after Sanders, Speck & Träff 2009):
- ring all-reduce:        2(g-1)·alpha + 2(g-1)/g · M/B
- two-shot all-reduce:    2·alpha + 2(g-1)/g · M/B                 (scale-up: switched / full mesh)
- one-shot all-reduce:    alpha + (g-1) · M/B                      (scale-up, small messages)
- tree all-reduce:        2·ceil(log2 g)·alpha + 2 · M/B           (scale-out, many ranks)
- in-switch (NVLS):       2·alpha + M/(B_raw · in_switch_fraction) (switches that reduce)
- all-gather / reduce-scatter: alpha + (g-1)/g · M/B  (direct)  or  (g-1)·alpha + same (ring)
- all-to-all, switched:   alpha + (g-1)/g · M/B
- full mesh (AMD Infinity Fabric): a group of g chips uses g-1 of the chip's L links, so
  B_eff = B · min(g-1, L)/L (AMD MI300X: 7 links x 64 GB/s per direction)
- all-to-all, 3-D torus:  diameter·alpha + max(hop bound, bisection bound) · congestion,
  hop bound M·h_avg/B (each byte occupies h_avg links; B the chip's injection bandwidth over
  all its links; h_avg over all g destinations), bisection bound (g·M/4) / (2·(g/a)·B/L)
  for the sub-torus cut across its longest dimension a (wrap-around links both ways)
- send/recv:              alpha + M/B
Every time adds ``collective_launch_s`` (software) once per call. Checked against published
nccl-tests and DeepEP figures in docs/collectives.md (scripts/check_collectives.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jalapeno.errors import SpecError, UnknownNameError
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import LinkLevel, System

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv")
PLACEMENTS = ("packed", "spread")


@dataclass(frozen=True, slots=True)
class CollectiveTime:
    """Result of pricing one collective over an array of message sizes.

    Attributes:
        time_s: array like the message sizes.
        algorithm: name of the fastest algorithm (per element).
        level: name of the outermost link level the group spans (the one that bounds it).
        scope: scale_up or scale_out (of that level).
    """

    time_s: np.ndarray
    algorithm: np.ndarray
    level: str
    scope: str


def torus_subshape(dims: tuple[int, ...], group: int) -> tuple[int, ...]:
    """Shape of the sub-torus a contiguous group of ``group`` chips occupies (fill dims in order).

    >>> torus_subshape((8, 16, 16), 256)
    (8, 16, 2)
    """
    shape = []
    left = group
    for d in dims:
        take = min(d, max(1, left))
        shape.append(take)
        left = math.ceil(left / take)
    return tuple(shape)


def mean_torus_hops(shape: tuple[int, ...]) -> float:
    """Mean shortest-path hops from a chip to all chips of a torus (itself included, at 0).

    For a ring of d nodes the mean distance is d/4 (d even) or (d^2-1)/(4d) (d odd).

    >>> mean_torus_hops((4, 4, 4))
    3.0
    """
    total = 0.0
    for d in shape:
        if d <= 1:
            continue
        total += d / 4 if d % 2 == 0 else (d * d - 1) / (4 * d)
    return total


def torus_all_to_all_factor(shape: tuple[int, ...], links_per_chip: int) -> float:
    """Bytes-over-injection-bandwidth multiplier of a uniform all-to-all on a torus.

    max(mean hops, bisection bound): the bisection across the longest dimension a carries
    g·M/4 bytes each way over 2·(g/a) wrap-around links of B/L each, i.e. a·L/8 · M/B.

    >>> torus_all_to_all_factor((16, 1, 1), 2)   # a ring of 16: hops 4, bisection 16·2/8 = 4
    4.0
    """
    hops = mean_torus_hops(shape)
    a = max(shape)
    bisection = a * links_per_chip / 8 if a > 2 else 0.0
    return max(hops, bisection)


def _levels_for(system: System, group: int) -> tuple[LinkLevel | None, LinkLevel]:
    outer = system.level_for_group(group)
    idx = system.levels.index(outer)
    inner = system.levels[idx - 1] if idx > 0 else None
    return inner, outer


def collective_time(kind: str, group: int, message_bytes, system: System,
                    eff: Efficiency, placement: str = "packed") -> CollectiveTime:
    """Time of one collective for an array of message sizes on ``system``.

    Args:
        kind: one of :data:`COLLECTIVES`.
        group: chips in the group (1 = no collective; time 0).
        message_bytes: array-like of bytes per chip (conventions in the module docstring).
        system: the system whose link hierarchy carries it.
        eff: the efficiency set (link fractions, launch cost, torus congestion).
        placement: ``packed`` (contiguous, innermost first) or ``spread`` (one member per inner
            domain: every byte crosses the outer level).

    Returns:
        :class:`CollectiveTime` with ``time_s`` shaped like ``message_bytes``.

    Raises:
        UnknownNameError: unknown collective kind or placement.
        SpecError: the group is larger than the system, or a negative message size.
    """
    if kind not in COLLECTIVES:
        raise UnknownNameError("op", f"unknown collective {kind!r}", f"use one of {', '.join(COLLECTIVES)}")
    if placement not in PLACEMENTS:
        raise UnknownNameError("placement", f"unknown placement {placement!r}",
                               f"use one of {', '.join(PLACEMENTS)}")
    if not isinstance(system, System) or not isinstance(eff, Efficiency):
        raise SpecError("collective_time", f"expected a System and an Efficiency, got {type(system).__name__} and "
                        f"{type(eff).__name__}", "pass pricer.system and pricer.efficiency, or call pricer.collective(...)")
    m = np.asarray(message_bytes, dtype=float)
    if np.any(m < 0) or not np.all(np.isfinite(m)):
        raise SpecError("bytes", "message sizes must be finite and >= 0", "give a non-negative byte count")
    if group <= 1:
        return CollectiveTime(np.zeros_like(m), np.full(m.shape, "none", dtype=object), "local", "local")
    inner, outer = _levels_for(system, group)
    if placement == "spread" and group > 1:
        # one member per domain of the innermost level: every byte leaves its domain
        first = system.levels[0]
        if first.chips > 1 and group * first.chips <= system.max_chips:
            outer = system.level_for_group(group * first.chips)
        inner = None
    if inner is not None and inner.chips > 1 and not outer.shares_ports_with_inner:
        cands = _hierarchical(kind, group, m, inner, outer, eff)
    else:
        cands = _flat(kind, group, m, outer, eff)
    names = list(cands)
    stack = np.stack([cands[n] for n in names])
    best = np.argmin(stack, axis=0)
    t = np.take_along_axis(stack, best[None, ...], axis=0)[0] + eff.collective_launch_s
    alg = np.asarray(names, dtype=object)[best]
    return CollectiveTime(t, alg, outer.name, outer.scope)


def _bw(level: LinkLevel, eff: Efficiency, group: int | None = None) -> float:
    """Achievable per-chip bandwidth at ``level`` for a group of ``group`` chips."""
    frac = eff.scale_out_link_fraction if level.scope == "scale_out" else eff.link_fraction
    b = level.bandwidth_bytes_per_s * frac
    if level.topology == "full_mesh" and level.links_per_chip and group:
        b *= min(group - 1, level.links_per_chip) / level.links_per_chip
    return b


def _flat(kind: str, g: int, m: np.ndarray, lv: LinkLevel, eff: Efficiency) -> dict[str, np.ndarray]:
    """Algorithms inside one level (the group does not leave it)."""
    a, bw = lv.latency_s, _bw(lv, eff, g)
    frac = (g - 1) / g
    out: dict[str, np.ndarray] = {}
    if lv.topology == "torus3d":
        shape = torus_subshape(lv.torus_dims, g)
        diam = sum(d // 2 for d in shape)
        ring_steps = sum(d - 1 for d in shape)
        if kind == "all_reduce":
            out["torus_ring"] = 2 * ring_steps * a + 2 * frac * m / bw
        elif kind in ("all_gather", "reduce_scatter"):
            out["torus_ring"] = ring_steps * a + frac * m / bw
        elif kind == "all_to_all":
            f = torus_all_to_all_factor(shape, lv.links_per_chip or 6) * eff.torus_congestion
            out["torus_direct"] = diam * a + m * f / bw
        else:
            out["p2p"] = a + m / bw
        return out
    if kind == "all_reduce":
        out["ring"] = 2 * (g - 1) * a + 2 * frac * m / bw
        if lv.scope == "scale_up":  # load/store fabrics: every rank reaches every peer directly
            out["two_shot"] = 2 * a + 2 * frac * m / bw
            out["one_shot"] = a + (g - 1) * m / bw
        elif g > 2:  # NICs: NCCL's rings and double binary trees
            out["tree"] = 2 * math.ceil(math.log2(g)) * a + 2 * m / bw
        if lv.in_network_reduction:
            out["in_switch"] = 2 * a + m / (lv.bandwidth_bytes_per_s * eff.in_switch_fraction)
    elif kind in ("all_gather", "reduce_scatter"):
        out["ring"] = (g - 1) * a + frac * m / bw
        out["direct"] = a + frac * m / bw
    elif kind == "all_to_all":
        out["direct"] = a + frac * m / bw
    else:
        out["p2p"] = a + m / bw
    return out


def _hierarchical(kind: str, g: int, m: np.ndarray, inner: LinkLevel, outer: LinkLevel,
                  eff: Efficiency) -> dict[str, np.ndarray]:
    """A group spanning ``outer`` whose pieces of ``inner.chips`` chips share a faster domain."""
    s = min(inner.chips, g)
    n_out = max(1, math.ceil(g / s))
    bi, bo = _bw(inner, eff, s), _bw(outer, eff, n_out)
    out_factor = 1.0
    out_diam = 1
    if outer.topology == "torus3d":
        shape = torus_subshape(outer.torus_dims, g)
        out_factor = max(1.0, torus_all_to_all_factor(shape, outer.links_per_chip or 6)) * eff.torus_congestion
        out_diam = max(1, sum(d // 2 for d in shape))
    ai, ao = inner.latency_s, outer.latency_s * out_diam
    out: dict[str, np.ndarray] = {}
    if kind == "all_reduce":
        # reduce-scatter inside, all-reduce of M/s across domains, all-gather inside.
        inner_t = 2 * (ai + (s - 1) / s * m / bi)
        if inner.in_network_reduction:
            inner_t = np.minimum(inner_t, 2 * ai + m / (inner.bandwidth_bytes_per_s * eff.in_switch_fraction))
        across = 2 * ao + 2 * (n_out - 1) / n_out * (m / s) / bo
        out["hierarchical"] = inner_t + across
        out["flat_ring"] = 2 * (g - 1) * max(ai, outer.latency_s) + 2 * (g - 1) / g * m / bo
    elif kind in ("all_gather", "reduce_scatter"):
        # across domains first (each chip exchanges its M/s slice with its peers in other
        # domains), then inside the domain (the full M among s chips)
        out["hierarchical"] = (ao + (n_out - 1) / n_out * (m / s) / bo) + (ai + (s - 1) / s * m / bi)
    elif kind == "all_to_all":
        # concurrent: traffic to peers in the same inner domain on inner links, rest on outer.
        t_in = (s - 1) / g * m / bi
        t_out = (g - s) / g * m * out_factor / bo
        out["hierarchical"] = ao + np.maximum(t_in, t_out)
    else:
        out["p2p"] = ao + m / bo
    return out
