"""Time of a collective on a system's link hierarchy: latency + bytes over the bottleneck bandwidth.

Placement. ``packed`` (default): a group of ``g`` chips is placed contiguously, innermost level
first (TP inside a tray/node, then DP/EP, then PP), so it spans the innermost level with
``chips >= g``; when it spans more than one level the collective is hierarchical (the part
inside the inner domain at the inner bandwidth, the rest at the outer one, concurrently on
their separate links) — unless the outer level is reached through the same ports
(``shares_ports_with_inner``, e.g. Jalapeño's tray and rack), then it is flat at the outer level. ``spread``: one
member per inner domain, so all traffic uses the outer level. Packed is never slower: its
candidates include the spread ones (``spread_<algorithm>``; assumption: every chip reaches the outer
level through its own port, so a packed group can route as a spread one does).

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
- tree all-reduce:        2·ceil(log2 g)·alpha + 2 · M/B(M)        (scale-out, many ranks; B(M) the NIC's
  size ramp, as the ring's: NCCL derates tree bandwidth by message size, ``treeCorrectionFactor`` in
  NVIDIA/nccl src/graph/tuning.cc)
- in-switch (NVLS):       2·alpha + M/(B_raw · in_switch_fraction) (switches that reduce)
- all-gather / reduce-scatter: alpha + (g-1)/g · M/B  (direct)  or  (g-1)·alpha + same (ring)
- all-to-all, switched:   alpha + alpha_a2a + (g-1)/g · M/B   (alpha_a2a = ``all_to_all_latency_s``,
  every level: the MoE dispatch/combine kernel's per-call synchronisation; B with
  ``all_to_all_fraction``; both judged and fitted on TensorRT-LLM's measured NVLink all-to-all on
  GB200 by fit/ep_all_to_all.judge_ep_all_to_all)
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

from jalapeno.errors import SpecError, UnknownNameError, choice_hint
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import LinkLevel, System

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv")
PLACEMENTS = ("packed", "spread")
#: every algorithm name a candidate can have (:func:`_candidates`; a packed group's spread routes add a ``spread_``
#: prefix): ``collective_time(algorithms=...)`` refuses another (a misspelt name matched none and the fastest of
#: all was taken, silently)
ALGORITHMS = (
    "ring",
    "direct",
    "tree",
    "one_shot",
    "two_shot",
    "in_switch",
    "hierarchical",
    "flat_ring",
    "torus_ring",
    "torus_direct",
    "p2p",
)
#: The topologies whose pricing here reads each optional level key; any other topology ignores it. ``torus_dims``:
#: the torus branches of :func:`_flat` / :func:`_hierarchical`; ``links_per_chip``: those (the bisection bound of
#: :func:`torus_all_to_all_factor`) and the full mesh's port share (:func:`_mesh_share`). cli/system_opts notes a
#: key set on another topology from this table (tests/unit/test_level_key_topologies.py prices every pair).
LEVEL_KEY_TOPOLOGIES = {"torus_dims": ("torus3d",), "links_per_chip": ("torus3d", "full_mesh")}


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


def collective_time(
    kind: str,
    group: int,
    message_bytes,
    system: System,
    eff: Efficiency,
    placement: str = "packed",
    algorithms: tuple[str, ...] | None = None,
) -> CollectiveTime:
    """Time of one collective for an array of message sizes on ``system``.

    Args:
        kind: one of :data:`COLLECTIVES`.
        group: chips in the group (1 = no collective; time 0).
        message_bytes: array-like of bytes per chip (conventions in the module docstring).
        system: the system whose link hierarchy carries it.
        eff: the efficiency set (link fractions, launch cost, torus congestion).
        placement: ``packed`` (contiguous, innermost first) or ``spread`` (one member per inner
            domain: every byte crosses the outer level).
        algorithms: restrict the choice to these candidates (e.g. ``("ring", "direct")`` for
            NCCL without in-switch reduction); names the fabric lacks for this collective are
            skipped, but at least one must be a candidate (``("in_switch",)`` on a switch that
            does not reduce is refused); None (default) takes the fastest of all.

    Returns:
        :class:`CollectiveTime` with ``time_s`` shaped like ``message_bytes``.

    Raises:
        UnknownNameError: unknown collective kind, placement or algorithm name (:data:`ALGORITHMS`).
        SpecError: the group is below 1 chip or larger than the system, a negative message size,
            ``algorithms`` empty (``()``: None takes every candidate), or none of ``algorithms`` is
            a candidate on this fabric (the message lists the candidates).
    """
    if kind not in COLLECTIVES:
        import difflib

        flat = str(kind).lower().replace("-", "").replace("_", "").replace(" ", "")
        near = [c for c in COLLECTIVES if c.replace("_", "") == flat] or difflib.get_close_matches(
            str(kind), COLLECTIVES, n=1
        )
        hint = f"did you mean {near[0]}? " if near else ""
        raise UnknownNameError("op", f"unknown collective {kind!r}", f"{hint}use one of {', '.join(COLLECTIVES)}")
    if placement not in PLACEMENTS:
        raise UnknownNameError(
            "placement",
            f"unknown placement {placement!r}{choice_hint(placement, PLACEMENTS)}",
            f"use one of {', '.join(PLACEMENTS)}",
        )
    if not isinstance(system, System) or not isinstance(eff, Efficiency):
        raise SpecError(
            "collective_time",
            f"expected a System and an Efficiency, got {type(system).__name__} and {type(eff).__name__}",
            "pass pricer.system and pricer.efficiency, or call pricer.collective(...)",
        )
    if isinstance(group, bool) or not (
        isinstance(group, (int, np.integer))
        or (  # 2.5 chips was priced; '8' a TypeError
            isinstance(group, (float, np.floating)) and float(group).is_integer()
        )
    ):
        raise SpecError("group", f"must be a whole number of chips, got {group!r}", "give e.g. group=8")
    if group < 1:  # 0 or -4 chips returned 0 s, as a group of one does
        raise SpecError(
            "group",
            f"must be at least 1 chip, got {group!r}",
            "give the chips in the group, e.g. group=8 (1: no collective, time 0)",
        )
    if isinstance(message_bytes, (str, bytes)):  # '1e6' was read as a number; 'abc' raised numpy's ValueError
        raise SpecError("bytes", f"must be a number of bytes, got {message_bytes!r}", "give e.g. 1e6")
    try:
        m = np.asarray(message_bytes, dtype=float)
    except (TypeError, ValueError):
        raise SpecError(
            "bytes",
            f"must be a number of bytes or an array of them, got {message_bytes!r}",
            "give e.g. 1e6 or [1e6, 1e8]",
        ) from None
    if np.any(m < 0) or not np.all(np.isfinite(m)):
        raise SpecError("bytes", "message sizes must be finite and >= 0", "give a non-negative byte count")
    if isinstance(algorithms, str):  # the string 'ring' was read letter by letter: no match, all candidates used
        raise SpecError(
            "algorithms",
            f"must be a tuple of names, got the string {algorithms!r}",
            f"write algorithms=({algorithms!r},)",
        )
    if algorithms is not None:  # a tuple: a generator read here was empty where the choice is made
        algorithms = tuple(algorithms) if hasattr(algorithms, "__iter__") else (algorithms,)
    if algorithms == ():  # fell back to automatic selection of every candidate, silently
        raise SpecError(
            "algorithms",
            "is empty: no candidate to choose from",
            f"give a tuple of {', '.join(ALGORITHMS)}, e.g. algorithms=('ring',), or None for all",
        )
    bad = next(
        (
            a
            for a in (algorithms or ())
            if not isinstance(a, str) or (a not in ALGORITHMS and a.removeprefix("spread_") not in ALGORITHMS)
        ),
        None,
    )
    if bad is not None:  # 'rign' matched nothing and the fastest of all was taken, silently
        raise UnknownNameError(
            "algorithms",
            f"unknown collective algorithm {bad!r}{choice_hint(bad, ALGORITHMS)}",
            f"give a tuple of {', '.join(ALGORITHMS)} (optionally spread_<name>), or None",
        )
    if group <= 1:
        return CollectiveTime(np.zeros_like(m), np.full(m.shape, "none", dtype=object), "local", "local")
    cands, outer = _candidates(kind, group, m, system, eff, placement)
    if placement == "packed":
        # a packed group can always route as the spread one does (every chip reaches the outer
        # level through its own port: NIC, torus link), so it is never priced slower
        spread, _ = _candidates(kind, group, m, system, eff, "spread")
        cands.update({f"spread_{k}": v for k, v in spread.items()})
    if algorithms is not None:  # ('in_switch',) on a fabric without it fell back to every candidate, silently
        kept = {k: v for k, v in cands.items() if k in algorithms}
        if not kept:
            raise SpecError(
                "algorithms",
                f"none of {algorithms!r} runs a {group}-chip {kind} with {placement} "
                f"placement on {system.name} (its candidates: {', '.join(cands)})",
                "request one of those candidates, or algorithms=None to take the fastest",
            )
        cands = kept
    names = list(cands)
    stack = np.stack([cands[n] for n in names])
    best = np.argmin(stack, axis=0)
    t = stack.min(axis=0) + eff.collective_launch_s  # the value at ``best``
    alg = np.asarray(names, dtype=object)[best]
    return CollectiveTime(t, alg, outer.name, outer.scope)


def _candidates(
    kind: str, group: int, m: np.ndarray, system: System, eff: Efficiency, placement: str
) -> tuple[dict[str, np.ndarray], LinkLevel]:
    """Candidate algorithm times for one placement, and the outermost level the group spans."""
    inner, outer = _levels_for(system, group)
    if placement == "spread":
        # one member per domain of the innermost level: every byte leaves its domain
        first = system.levels[0]
        if first.chips > 1 and group * first.chips <= system.max_chips:
            outer = system.level_for_group(group * first.chips)
        inner = None
    if inner is not None and inner.chips > 1 and not outer.shares_ports_with_inner:
        return _hierarchical(kind, group, m, inner, outer, eff), outer
    return _flat(kind, group, m, outer, eff), outer


def size_efficiency(m: np.ndarray, fraction: float, half_bytes: float, shape: float) -> np.ndarray:
    """Fraction of the link bandwidth a collective's bulk transfer reaches at message size ``m``.

    eta(m) = fraction / (1 + (half_bytes / m)^shape): ``fraction`` at large messages, half of it at
    ``half_bytes``; ``shape`` < 1 gives the slow approach to the plateau nccl-tests curves show
    (protocol switches LL → LL128 → Simple and channel count growing with size). Fitted on
    published nccl-tests curves (fit/collectives.py, docs/collectives.md). ``half_bytes`` = 0
    gives the constant ``fraction``.

    The transfer time m/eta(m) ∝ m + half_bytes^shape·m^(1−shape) falls with m below
    m* = half_bytes·(shape − 1)^(1/shape) when ``shape`` > 1 (GB200/GB300's custom all-reduce
    ramps: m* ≈ 2.7 / 6.1 KiB); below m* the time is held at m*'s (eta(m) = eta(m*)·m/m*), the rule
    the measured engine tables follow: no message is priced slower than a larger one.

    >>> float(size_efficiency(np.array([4e6]), 0.8, 4e6, 0.5)[0])
    0.4
    """
    if half_bytes <= 0:
        return np.full(np.shape(m), fraction, dtype=float)
    m = np.maximum(np.asarray(m, dtype=float), 1.0)
    eta = fraction / (1.0 + (half_bytes / m) ** shape)
    if shape > 1.0:
        m_star = half_bytes * (shape - 1.0) ** (1.0 / shape)
        eta_star = fraction / (1.0 + (half_bytes / m_star) ** shape)
        eta = np.where(m < m_star, eta_star * m / m_star, eta)
    return eta


def _mesh_share(level: LinkLevel, group: int | None) -> float:
    """The share of a ``full_mesh`` level's per-chip bandwidth a group of ``group`` chips reaches,
    min(group - 1, L) / L for the chip's L = ``links_per_chip`` links (one link a peer: AMD MI300X, 7 links x
    64 GB/s per direction); 1 on every other topology, without ``links_per_chip`` or without a group."""
    if level.topology == "full_mesh" and level.links_per_chip and group:
        return min(group - 1, level.links_per_chip) / level.links_per_chip
    return 1.0


def _a2a_bw(level: LinkLevel, eff: Efficiency, group: int) -> float:
    """Per-chip bandwidth of an all-to-all or send/recv on a scale-up level: the constant
    ``all_to_all_fraction`` (NICs: ``scale_out_link_fraction``)."""
    if level.scope == "scale_out":
        return _bw(level, eff, group)
    return level.bandwidth_bytes_per_s * eff.all_to_all_fraction * _mesh_share(level, group)


def _a2a_latency(level: LinkLevel, eff: Efficiency) -> float:
    """Fixed time of an all-to-all call's kernel (``all_to_all_latency_s``), on every level: it is
    measured on NVLink (TensorRT-LLM's one-sided kernel, fit/ep_all_to_all.fit_ep_all_to_all); a group
    spread over NICs runs the same dispatch/combine synchronisation plus the NIC's own latency
    (assumption: no smaller across NICs — DeepEP's internode low-latency kernels take longer than its
    intranode ones), so a packed group is never slower than a spread one."""
    del level
    return eff.all_to_all_latency_s


def _bw(level: LinkLevel, eff: Efficiency, group: int | None = None, m: np.ndarray | None = None):
    """Achievable per-chip bandwidth at ``level`` for a group of ``group`` chips.

    With message sizes ``m``: the size-dependent NCCL fraction (:func:`size_efficiency` with
    ``link_fraction`` — ``scale_out_link_fraction`` on NICs — ``link_half_bytes``, ``link_shape``),
    an array like ``m``; without: the constant asymptotic fraction (all-to-all, send/recv).
    """
    if level.scope == "scale_out":
        # the NCCL ramp (fitted on NVLink) shapes NIC collectives too (assumption): a group is
        # never faster for leaving its switch domain
        frac = (
            eff.scale_out_link_fraction
            if m is None
            else size_efficiency(m, eff.scale_out_link_fraction, eff.link_half_bytes, eff.link_shape)
        )
    elif m is not None:
        frac = size_efficiency(m, eff.link_fraction, eff.link_half_bytes, eff.link_shape)
    else:
        frac = eff.link_fraction
    return level.bandwidth_bytes_per_s * frac * _mesh_share(level, group)


def _custom_bw(level: LinkLevel, eff: Efficiency, group: int, m: np.ndarray) -> np.ndarray:
    """Effective per-chip bandwidth of the serving engines' custom one-/two-shot all-reduce kernels
    (TensorRT-LLM / vLLM / SGLang; P2P loads and stores over the scale-up fabric) at size ``m``."""
    return (
        level.bandwidth_bytes_per_s
        * size_efficiency(m, eff.custom_ar_fraction, eff.custom_ar_half_bytes, eff.custom_ar_shape)
        * _mesh_share(level, group)
    )


def _in_switch_bw(level: LinkLevel, eff: Efficiency, m: np.ndarray) -> np.ndarray:
    """Effective bandwidth M/t of an in-switch (NVLS/SHARP) all-reduce at message size ``m``."""
    return level.bandwidth_bytes_per_s * size_efficiency(
        m, eff.in_switch_fraction, eff.in_switch_half_bytes, eff.in_switch_shape
    )


def _flat(kind: str, g: int, m: np.ndarray, lv: LinkLevel, eff: Efficiency) -> dict[str, np.ndarray]:
    """Algorithms inside one level (the group does not leave it)."""
    a = lv.latency_s  # all-to-all and send/recv take the asymptotic fraction (_a2a_bw)
    bw_m = _bw(lv, eff, g, m)  # NCCL ring / direct / tree, torus rings: size-dependent
    bw_c = _custom_bw(lv, eff, g, m)  # engines' one-/two-shot all-reduce kernels: their own ramp
    frac = (g - 1) / g
    out: dict[str, np.ndarray] = {}
    if lv.topology == "torus3d":
        shape = torus_subshape(lv.torus_dims, g)
        diam = sum(d // 2 for d in shape)
        ring_steps = sum(d - 1 for d in shape)
        # dimension-wise rings on the size ramp, as every ring (and the hierarchical torus across)
        if kind == "all_reduce":
            out["torus_ring"] = 2 * ring_steps * a + 2 * frac * m / bw_m
        elif kind in ("all_gather", "reduce_scatter"):
            out["torus_ring"] = ring_steps * a + frac * m / bw_m
        elif kind == "all_to_all":
            f = torus_all_to_all_factor(shape, lv.links_per_chip or 6) * eff.torus_congestion
            out["torus_direct"] = diam * a + _a2a_latency(lv, eff) + m * f / _a2a_bw(lv, eff, g)
        else:  # the peer anywhere in the sub-torus: up to its diameter in hops, as the hierarchical α_o
            out["p2p"] = max(1, diam) * a + m / _a2a_bw(lv, eff, g)
        return out
    if kind == "all_reduce":
        out["ring"] = 2 * (g - 1) * a + 2 * frac * m / bw_m
        if lv.scope == "scale_up":  # load/store fabrics: every rank reaches every peer directly
            out["two_shot"] = 2 * a + 2 * frac * m / bw_c
            out["one_shot"] = a + (g - 1) * m / bw_c
        elif g > 2:  # NICs: NCCL's rings and double binary trees, both on the NIC's size ramp
            out["tree"] = 2 * math.ceil(math.log2(g)) * a + 2 * m / bw_m
        if lv.in_network_reduction:
            out["in_switch"] = 2 * a + m / _in_switch_bw(lv, eff, m)
    elif kind in ("all_gather", "reduce_scatter"):
        out["ring"] = (g - 1) * a + frac * m / bw_m
        out["direct"] = a + frac * m / bw_m
    elif kind == "all_to_all":
        out["direct"] = a + _a2a_latency(lv, eff) + frac * m / _a2a_bw(lv, eff, g)
    else:
        out["p2p"] = a + m / _a2a_bw(lv, eff, g)
    return out


def _hierarchical(
    kind: str, g: int, m: np.ndarray, inner: LinkLevel, outer: LinkLevel, eff: Efficiency
) -> dict[str, np.ndarray]:
    """A group spanning ``outer`` whose pieces of ``inner.chips`` chips share a faster domain."""
    s = min(inner.chips, g)
    n_out = max(1, math.ceil(g / s))
    bi, bo = _bw(inner, eff, s, m), _bw(outer, eff, n_out, m / s)
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
            inner_t = np.minimum(inner_t, 2 * ai + m / _in_switch_bw(inner, eff, m))
        across = 2 * ao + 2 * (n_out - 1) / n_out * (m / s) / bo
        out["hierarchical"] = inner_t + across
        out["flat_ring"] = 2 * (g - 1) * max(ai, outer.latency_s) + 2 * (g - 1) / g * m / bo
    elif kind in ("all_gather", "reduce_scatter"):
        # across domains first (each chip exchanges its M/s slice with its peers in other
        # domains), then inside the domain (the full M among s chips)
        out["hierarchical"] = (ao + (n_out - 1) / n_out * (m / s) / bo) + (ai + (s - 1) / s * m / bi)
    elif kind == "all_to_all":
        # concurrent: traffic to peers in the same inner domain on inner links, rest on outer.
        t_in = (s - 1) / g * m / _a2a_bw(inner, eff, s)
        t_out = (g - s) / g * m * out_factor / _a2a_bw(outer, eff, n_out)
        out["hierarchical"] = ao + _a2a_latency(inner, eff) + np.maximum(t_in, t_out)
    else:  # send/recv (KV hand-off, pipeline stages): the constant asymptotic fraction
        out["p2p"] = ao + m / _a2a_bw(outer, eff, n_out)
    return out
