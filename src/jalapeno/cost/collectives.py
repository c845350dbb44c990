"""Time of a collective on a system's link hierarchy: latency + bytes over the bottleneck bandwidth.

Groups are placed contiguously, innermost level first (TP inside a tray/node, then DP/EP, then PP),
so a group of ``g`` chips spans the innermost level with ``chips >= g``. When it spans more than
one level the collective is hierarchical: the part inside the inner domain runs at the inner
bandwidth, the rest at the outer one.

Message size conventions (per chip, bytes):
- all_reduce: the buffer each rank holds (input = output size M).
- all_gather / reduce_scatter: the full gathered buffer M (each rank owns M/g).
- all_to_all: everything one rank sends, its own share included (M/g per destination).
- send_recv: the message one rank sends.

Formulas (alpha = per-step latency at the level, B = per-chip per-direction bandwidth x
``link_fraction``; Thakur, Rabenseifner & Gropp, "Optimization of collective communication
operations in MPICH", IJHPCA 2005, for ring / direct algorithms; NVLS in-switch reduction from
NVIDIA NCCL 2.18 release notes):
- ring all-reduce:        2(g-1)·alpha + 2(g-1)/g · M/B
- two-shot all-reduce:    2·alpha + 2(g-1)/g · M/B                 (switched / full mesh)
- one-shot all-reduce:    alpha + (g-1) · M/B                      (small messages)
- in-switch (NVLS):       2·alpha + M/B                            (switches that reduce)
- all-gather / reduce-scatter: alpha + (g-1)/g · M/B  (direct)  or  (g-1)·alpha + same (ring)
- all-to-all, switched:   alpha + (g-1)/g · M/B
- all-to-all, 3-D torus:  diameter·alpha + (g-1)/g · M · h_avg / B, h_avg the mean hop count
  (each byte occupies h_avg links; B is the chip's total injection bandwidth over all its links)
- send/recv:              alpha + M/B
Every time adds ``collective_launch_s`` (software) once per call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jalapeno.errors import UnknownNameError
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import LinkLevel, System

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv")


@dataclass(frozen=True, slots=True)
class CollectiveTime:
    """Result of pricing one collective over an array of message sizes.

    Attributes:
        time_s: array like the message sizes.
        algorithm: name of the fastest algorithm (per element).
        level: name of the outermost link level the group spans.
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


def mean_torus_hops(shape: tuple[int, ...], wrap: bool = True) -> float:
    """Mean shortest-path hops between two chips of a torus (ring per dimension).

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


def _levels_for(system: System, group: int) -> tuple[LinkLevel | None, LinkLevel]:
    outer = system.level_for_group(group)
    idx = system.levels.index(outer)
    inner = system.levels[idx - 1] if idx > 0 else None
    return inner, outer


def collective_time(kind: str, group: int, message_bytes, system: System,
                    eff: Efficiency | None = None) -> CollectiveTime:
    """Time of one collective for an array of message sizes on ``system``.

    Args:
        kind: one of :data:`COLLECTIVES`.
        group: chips in the group (1 = no collective; time 0).
        message_bytes: array-like of bytes per chip (conventions in the module docstring).
        system: the system whose link hierarchy carries it.
        eff: efficiency parameters (default: the system's).

    Returns:
        :class:`CollectiveTime` with ``time_s`` shaped like ``message_bytes``.

    Raises:
        UnknownNameError: unknown collective kind.
        SpecError: the group is larger than the system.
    """
    if kind not in COLLECTIVES:
        raise UnknownNameError("op", f"unknown collective {kind!r}", f"use one of {', '.join(COLLECTIVES)}")
    eff = eff or system.efficiency
    m = np.asarray(message_bytes, dtype=float)
    if group <= 1:
        return CollectiveTime(np.zeros_like(m), np.full(m.shape, "none", dtype=object), "local", "local")
    inner, outer = _levels_for(system, group)
    launch = eff.collective_launch_s
    if inner is not None and inner.chips > 1:
        cands = _hierarchical(kind, group, m, inner, outer, eff)
    else:
        cands = _flat(kind, group, m, outer, eff)
    names = list(cands)
    stack = np.stack([cands[n] for n in names])
    best = np.argmin(stack, axis=0)
    t = np.take_along_axis(stack, best[None, ...], axis=0)[0] + launch
    alg = np.asarray(names, dtype=object)[best]
    return CollectiveTime(t, alg, outer.name, outer.scope)


def _bw(level: LinkLevel, eff: Efficiency) -> float:
    return level.bandwidth_bytes_per_s * eff.link_fraction


def _flat(kind: str, g: int, m: np.ndarray, lv: LinkLevel, eff: Efficiency) -> dict[str, np.ndarray]:
    """Algorithms inside one level (the group does not leave it)."""
    a, bw = lv.latency_s, _bw(lv, eff)
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
            # mean_torus_hops averages over all g destinations (self at distance 0), so it
            # already carries the (g-1)/g share of bytes that leave the chip.
            out["torus_direct"] = diam * a + m * mean_torus_hops(shape) / bw
        else:
            out["p2p"] = a + m / bw
        return out
    if kind == "all_reduce":
        out["ring"] = 2 * (g - 1) * a + 2 * frac * m / bw
        out["two_shot"] = 2 * a + 2 * frac * m / bw
        out["one_shot"] = a + (g - 1) * m / bw
        if lv.in_network_reduction:
            out["in_switch"] = 2 * a + m / bw
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
    bi, bo = _bw(inner, eff), _bw(outer, eff)
    out_hops = 1.0
    out_diam = 1
    if outer.topology == "torus3d":
        shape = torus_subshape(outer.torus_dims, g)
        out_hops = max(1.0, mean_torus_hops(shape))
        out_diam = max(1, sum(d // 2 for d in shape))
    ai, ao = inner.latency_s, outer.latency_s * out_diam
    out: dict[str, np.ndarray] = {}
    if kind == "all_reduce":
        # reduce-scatter inside, all-reduce of M/s across domains, all-gather inside.
        inner_t = 2 * (ai + (s - 1) / s * m / bi)
        if inner.in_network_reduction:
            inner_t = np.minimum(inner_t, 2 * ai + m / bi)
        across = 2 * ao + 2 * (n_out - 1) / n_out * (m / s) * out_hops / bo
        out["hierarchical"] = inner_t + across
        out["flat_ring"] = 2 * (g - 1) * max(ai, outer.latency_s) + 2 * (g - 1) / g * m * out_hops / bo
    elif kind in ("all_gather", "reduce_scatter"):
        out["hierarchical"] = (ai + (s - 1) / s * m / (bi * n_out)) + ao + (n_out - 1) / n_out * m * out_hops / bo
    elif kind == "all_to_all":
        # concurrent: traffic to peers in the same inner domain on inner links, rest on outer.
        t_in = (s - 1) / g * m / bi
        t_out = (g - s) / g * m * out_hops / bo
        out["hierarchical"] = ao + np.maximum(t_in, t_out)
    else:
        out["p2p"] = ao + m / bo
    return out
