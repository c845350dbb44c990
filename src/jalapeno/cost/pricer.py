"""The pricer: the seam between what a step does (its op and collective tables) and what it costs.

A step is described once, independently of any chip, by the op table and the collective table
(cost/ops.py). A *pricer* turns those tables into times on one system:

    pricer.op_times(ops)              -> OpTimes          per-op compute, memory, overhead, time (n_ops, N)
    pricer.collective_times(colls)    -> CollectiveTimes  per-collective time, algorithm, level, scope
    pricer.collective(kind, g, bytes) -> CollectiveTime   one collective (KV hand-off, the CLI)

plus the fixed per-step term the step assembly needs (``step_overhead_s``)
and the serving-software terms (front end, memory reserve), all read from its ``efficiency``.
``step_cost`` (cost/step.py) takes a pricer and never looks at a chip or an efficiency set
directly; everything downstream (serving, sweeps, the simulator, calibration) is priced through
the same object, so a second implementation (a chip-internal model, a toy that doubles every
time) flows through all of them unchanged.

A pricer is *system + efficiency*: hardware specs stay pure facts (specs/hardware.py), an
efficiency set (specs/efficiency.py) is a separate input — the calibrated set, a low/high band,
the documented defaults or a user's overrides — and a band is simply another pricer.

:class:`RooflinePricer` is the first implementation: per-op roofline with named efficiencies
(cost/roofline.py) and collectives on the link hierarchy (cost/collectives.py).

The wrappers that price a pool's engine backends (``with_pool_backends`` and its parts) live in
cost/pool_backends.py (split from here in round 50, module budget); they stay importable from here
(:data:`MOVED_TO_POOL_BACKENDS`, a module ``__getattr__``).
"""

from __future__ import annotations

from dataclasses import dataclass, is_dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np

from jalapeno.cost.a2a_floor import floored_all_to_all
from jalapeno.cost.allreduce_rms import fused_all_reduce
from jalapeno.cost.collectives import CollectiveTime, collective_time
from jalapeno.cost.engine_allreduce import measured_all_reduce
from jalapeno.cost.optable import CollectiveTable, OpTable
from jalapeno.cost.roofline import OpTimes, op_times
from jalapeno.errors import SpecError
from jalapeno.moved import moved_names
from jalapeno.specs.calibration import derived_from
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import System

#: Names that lived here until round 50 and now live in cost/pool_backends.py; ``from jalapeno.cost.pricer import
#: with_pool_backends`` keeps working for callers outside the package, resolved on first use (jalapeno/moved.py:
#: cost/pool_backends.py imports this module, so not at import time).
MOVED_TO_POOL_BACKENDS = (
    "with_moe_backend",
    "with_attention_backend",
    "with_decode_blocks",
    "with_pool_backends",
    "pool_backends_key",
    "applied_pool_key",
    "_root_chip_pricer",
)
__getattr__ = moved_names(__name__, {"jalapeno.cost.pool_backends": MOVED_TO_POOL_BACKENDS})


@dataclass(frozen=True, slots=True)
class CollectiveTimes:
    """Prices of a collective table for N points.

    Attributes:
        time_s: (n_coll, N) seconds per step (calls per step included).
        algorithm: (n_coll, N) name of the chosen algorithm.
        level: (n_coll,) name of the outermost link level each collective spans.
        scope: (n_coll,) ``scale_up`` or ``scale_out`` of that level.
    """

    time_s: np.ndarray
    algorithm: np.ndarray
    level: tuple[str, ...]
    scope: tuple[str, ...]


@runtime_checkable
class Pricer(Protocol):
    """What a step costs on one system. See the module docstring.

    Attributes:
        system: the hardware (pure facts: chip, link levels, power, cost).
        efficiency: the efficiency set the prices use (its ``source`` names it).
    """

    system: System
    efficiency: Efficiency

    def op_times(self, ops: OpTable) -> OpTimes:
        """Per-op times of ``ops`` (arrays (n_ops, N), seconds)."""
        ...

    def collective_times(self, colls: CollectiveTable) -> CollectiveTimes:
        """Times of every collective of ``colls`` (calls per step included)."""
        ...

    def collective(self, kind: str, group: int, message_bytes, placement: str = "packed") -> CollectiveTime:
        """One collective of ``kind`` over ``group`` chips for message sizes ``message_bytes`` (N,)."""
        ...

    def with_efficiency(self, efficiency: Efficiency) -> Pricer:
        """The same pricer with another efficiency set (a band, a what-if)."""
        ...


#: SystemPricer subclasses that passed :func:`check_pricer`'s protocol check (``isinstance`` against a
#: runtime-checkable protocol inspects every member, about 30 us a call; step_cost checks every call)
_PRICER_TYPES: set[type] = set()


def check_pricer(pricer, where: str = "pricer") -> None:
    """Refuse anything that is not a pricer, naming the fix (a System alone has no efficiency set).

    Raises:
        SpecError: ``pricer`` does not satisfy :class:`Pricer`.
    """
    if type(pricer) in _PRICER_TYPES:  # a class seen to satisfy the protocol (below): the same answer
        return
    if isinstance(pricer, Pricer):
        if isinstance(pricer, SystemPricer) and is_dataclass(pricer):  # its instances all satisfy it
            _PRICER_TYPES.add(type(pricer))
        return
    if isinstance(pricer, System):
        raise SpecError(
            where,
            f"got the System {pricer.name!r}, which has no efficiency set",
            f"pass load_pricer({pricer.name!r}) or RooflinePricer(system, load_efficiency(name))",
        )
    raise SpecError(
        where,
        f"expected a pricer, got {type(pricer).__name__}",
        "pass load_pricer(name) or RooflinePricer(system, efficiency)",
    )


def price_collectives(pricer: Pricer, colls: CollectiveTable) -> CollectiveTimes:
    """Price a collective table one row at a time through ``pricer.collective``.

    Shared by every pricer whose collectives are priced per call (the roofline one included).
    """
    nc, n = len(colls.name), colls.bytes.shape[1] if colls.bytes.ndim == 2 else 0
    ct = np.zeros((nc, n))
    alg = np.empty((nc, n), dtype=object)
    levels, scopes = [], []
    for j in range(nc):
        r = pricer.collective(colls.kind[j], colls.group[j], colls.bytes[j])
        ct[j] = r.time_s * colls.calls[j]
        alg[j] = r.algorithm
        levels.append(r.level)
        scopes.append(r.scope)
    return CollectiveTimes(ct, alg, tuple(levels), tuple(scopes))


def collective_times_together(pricer: Pricer, tables: list[CollectiveTable]) -> list[CollectiveTimes]:
    """``pricer.collective_times`` of every table, each (kind, group) priced in one call over the messages of
    every row that has it, one after another (tables of several layouts of one fixed-concurrency pass:
    serve/lockstep.py). The link-hierarchy collectives price each message on its own (cost/collectives.py,
    cost/engine_allreduce.py: elementwise), so each row's times and algorithms are those of
    :func:`price_collectives`. A pricer with collectives of its own is asked table by table."""
    if (
        type(pricer).collective is not SystemPricer.collective
        or type(pricer).collective_times is not SystemPricer.collective_times
    ):
        return [pricer.collective_times(c) for c in tables]
    rows: dict[tuple, list] = {}
    out = []
    for t, colls in enumerate(tables):
        nc, n = len(colls.name), colls.bytes.shape[1] if colls.bytes.ndim == 2 else 0
        out.append((np.zeros((nc, n)), np.empty((nc, n), dtype=object), [None] * nc, [None] * nc))
        for j in range(nc):
            rows.setdefault((colls.kind[j], colls.group[j]), []).append((t, j))
    for (kind, group), members in rows.items():
        msgs = [tables[t].bytes[j] for t, j in members]
        r = pricer.collective(kind, group, msgs[0] if len(msgs) == 1 else np.concatenate(msgs))
        start = 0
        for (t, j), m in zip(members, msgs):
            cut = slice(start, start + m.shape[0])
            start = cut.stop
            ct, alg, levels, scopes = out[t]
            ct[j] = r.time_s[cut] * tables[t].calls[j]
            alg[j] = r.algorithm[cut]
            levels[j], scopes[j] = r.level, r.scope
    return [CollectiveTimes(ct, alg, tuple(levels), tuple(scopes)) for ct, alg, levels, scopes in out]


class SystemPricer:
    """What every pricer of a system with an efficiency set shares: the input checks, ``name``,
    collectives on the link hierarchy (cost/collectives.py; a TP all-reduce by the engine's measured
    kernel where the efficiency set's ``all_reduce_table`` names one, cost/engine_allreduce.py) and
    ``with_efficiency``. A pricer is a
    frozen dataclass with ``system`` and ``efficiency`` fields that inherits this and adds
    ``op_times`` (and its own checks in ``__post_init__``, calling this one first).

    Raises:
        SpecError: ``system`` is not a System or ``efficiency`` not an Efficiency.
    """

    __slots__ = ()

    def __post_init__(self) -> None:
        if not isinstance(self.system, System):
            raise SpecError(
                "pricer.system",
                f"expected a System, got {type(self.system).__name__}",
                "load one with jalapeno.load_system(name)",
            )
        if not isinstance(self.efficiency, Efficiency):
            raise SpecError(
                "pricer.efficiency",
                f"expected an Efficiency, got {type(self.efficiency).__name__}",
                "load one with jalapeno.load_efficiency(name, which)",
            )

    @property
    def name(self) -> str:
        """The system's name (what tables and records show)."""
        return self.system.name

    def __repr__(self) -> str:
        """Short: ``RooflinePricer(gb200-nvl72, efficiency: <its source>)``; the generated repr printed
        the whole system and efficiency set (11,000 characters). Subclasses are ``repr=False`` dataclasses
        so this one stands."""
        return f"{type(self).__name__}({self.system.name}, efficiency: {self.efficiency.source})"

    def collective(self, kind: str, group: int, message_bytes, placement: str = "packed") -> CollectiveTime:
        """One collective of ``kind`` over ``group`` chips for ``message_bytes`` (N,, bytes per chip), seconds:
        cost/collectives.collective_time, or the engine's measured all-reduce where the efficiency set has one on
        this system (cost/engine_allreduce.py; fused with RMSNorm: cost/allreduce_rms.py); an all-to-all no faster
        than TensorRT-LLM's measured per-call floor where that switch is on (cost/a2a_floor.py, shipped off).

        Raises:
            UnknownNameError, SpecError: as collective_time.
        """
        r = collective_time(kind, group, message_bytes, self.system, self.efficiency, placement)
        if kind == "all_to_all":  # TensorRT-LLM's measured per-call floor where on (cost/a2a_floor.py)
            return floored_all_to_all(r, group, self.system, self.efficiency, placement)
        if kind != "all_reduce" or self.efficiency.all_reduce_table == "none" or not measured_here(self.efficiency):
            return r
        # the engine's own all-reduce where measured on this system (cost/engine_allreduce.py)
        m = measured_all_reduce(r, self.efficiency.all_reduce_table, group, message_bytes, self.system, placement)
        if not self.efficiency.allreduce_rms_fusion:
            return m
        # vLLM's fuse_allreduce_rms runs TensorRT-LLM's fused kernel up to its max size (cost/allreduce_rms.py)
        return fused_all_reduce(m, r, group, message_bytes, self.system, placement)

    def collective_times(self, colls: CollectiveTable) -> CollectiveTimes:
        """Times of every collective of ``colls``, seconds (:func:`price_collectives`)."""
        return price_collectives(self, colls)

    def with_efficiency(self, efficiency: Efficiency):
        """The same pricer with another efficiency set (a band, a what-if)."""
        return replace(self, efficiency=efficiency)


@dataclass(frozen=True, slots=True, repr=False)
class RooflinePricer(SystemPricer):
    """Roofline ops + link-hierarchy collectives on ``system`` with ``efficiency``.

    Per op: max(FLOP / (peak_fmt · η_c), bytes / (HBM bandwidth · η_m)) + kernels · launch
    (cost/roofline.py); per collective: the fastest algorithm on the levels the group spans
    (cost/collectives.py). Formulas and constants: docs/model.md.

    Raises:
        SpecError: ``system`` is not a System or ``efficiency`` not an Efficiency.
    """

    system: System
    efficiency: Efficiency

    def op_times(self, ops: OpTable) -> OpTimes:
        """Roofline times of ``ops`` (seconds, (n_ops, N); cost/roofline.op_times), the MoE width term where measured here."""
        from jalapeno.cost.moe_width import width_terms

        eff = self.efficiency
        return op_times(
            ops,
            self.system.chip,
            eff,
            width_terms(_root(self.system)) if eff.moe_width_term and measured_here(eff) else None,
        )


def load_pricer(system: str, efficiency: str = "calibrated", overrides: tuple = (), stack=None) -> RooflinePricer:
    """The roofline pricer of a catalog system (or a system TOML path) with a named efficiency set
    and software stack.

    Args:
        system: catalog name or TOML path (a variant file's ``base`` chain is resolved).
        efficiency: ``calibrated`` (default), ``low``, ``high`` or ``spec`` (specs/calibration.py).
        overrides: dotted (key, value) pairs applied to the system and its efficiency set
            (``("chip.hbm_stacks", 8)``, ``("efficiency.kernel_launch_s", 2.5e-7)``;
            specs/variants.py), as ``--set`` does.
        stack: a software-stack profile (specs/stacks.Stack) or its name; None: the system's
            default profile (specs/stacks.default_stack; ``default`` keeps the set's fixed costs).
            An ``efficiency.*`` fixed cost given in ``overrides`` wins over the stack's.

    Raises:
        UnknownNameError: unknown system, set or stack; SpecError: a malformed file or override,
            overrides that are not an iterable of (key, value) pairs (None: none), a System object for
            ``system`` (it takes a name or path), or a ``stack`` that is neither a name nor a Stack.
    """
    from jalapeno.specs.catalog import load_system
    from jalapeno.specs.stack_profile import Stack
    from jalapeno.specs.stacks import default_stack, get_stack
    from jalapeno.specs.system_overrides import check_pairs
    from jalapeno.specs.variants import variant_efficiency

    if isinstance(system, System):  # raised TypeError: unhashable type: 'mappingproxy'
        raise SpecError(
            "load_pricer: system",
            f"got the System {system.name!r}; it takes a name or a TOML path",
            f"pass load_pricer({system.name!r}), or RooflinePricer(system, efficiency) for a System object",
        )
    if stack is not None and not isinstance(stack, (str, Stack)):  # 5 raised AttributeError: no attribute 'apply'
        raise SpecError(
            "load_pricer: stack",
            f"expected a stack name or a Stack, got {type(stack).__name__}",
            "pass a name from `jalapeno validate --help` (--stack), e.g. stack='sglang', or None for the default",
        )
    # "chip.hbm_stacks=4" raised ValueError: not enough values to unpack (one pass: a generator is read once)
    pairs = check_pairs("load_pricer: overrides", overrides)
    s = load_system(system, pairs)  # a str or a pathlib.Path (specs/catalog.name_text)
    st = default_stack(_root(s)) if stack is None else get_stack(stack) if isinstance(stack, str) else stack
    return RooflinePricer(s, apply_stack(s, variant_efficiency(s, efficiency), st))


def measured_here(efficiency: Efficiency) -> bool:
    """Whether the system's own per-system kernel measurements may price it under ``efficiency``: False for a
    set wholly derived from another chip (specs/calibration.derived_from: Jalapeño, Vera Rubin, a
    leave-one-system-out set, fit/loso.py), which prices with no measurement of this chip — not its routed
    experts' width term (data/moe_width.toml), its engines' measured all-reduce (data/collectives/
    engine_allreduce.toml), TensorRT-LLM's all-to-all floor (data/collectives/a2a_floor.toml), MoE backend
    kernels (data/moe_backends.toml, moe_backend_kernels.toml) or attention backend speeds (data/attention_backends.toml); of an engine MoE backend it prices only the per-layer floor
    pooled over the other measured systems (fit/floor_transfer.py). A derived catalog system has none of them anyway; a measured
    system priced with a derived set would otherwise read its own.

    >>> from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY as d
    >>> measured_here(d), measured_here(replace(d, source="calibrated (derived from b300; set calibrated; x.toml)"))
    (True, False)
    """
    return derived_from(efficiency.source) is None


def _root(system: System) -> str:
    """The catalog name a system's base chain starts from (a variant runs its base's stack)."""
    o = system.origin
    return o.root if o is not None and o.root else system.name


def apply_stack(system: System, eff: Efficiency, stack, which: str = "calibrated") -> Efficiency:
    """``eff`` with ``stack``'s fixed costs (its band ``which``), except those the system's own
    ``--set efficiency.<field>`` overrides name (an explicit what-if wins over a profile)."""
    out = stack.apply(eff, which)
    given = {
        k[len("efficiency.") :]
        for k, _ in (system.origin.overrides if system.origin else ())
        if k.startswith("efficiency.")
    }
    keep = {f: getattr(eff, f) for f in given if hasattr(eff, f) and getattr(out, f) != getattr(eff, f)}
    return replace(out, **keep) if keep else out


def band_pricers(pricer: Pricer) -> dict[str, Pricer]:
    """``pricer`` under the low / calibrated / high efficiency sets of its system, each with the
    matching band of its software stack (specs/stacks.py: Jalapeño's spans GPU-like to compiled).

    A catalog system's bands come from its calibration file, a variant's from its base's (or the
    calibration it names), with the variant's efficiency overrides on each; a system priced with
    the documented defaults (a user file without a base) has no efficiency band (all three are
    ``pricer`` itself, so a comparison sweeps it once). Each band also takes the matching band of
    the pricer's software stack where it has one (Jalapeño: GPU-like to compiled; the ``default``
    stack's band is not swept: specs/stacks.Stack.has_band).
    """
    from jalapeno.specs.stacks import stack_of_source
    from jalapeno.specs.variants import variant_efficiency

    st = stack_of_source(pricer.efficiency.source, _root(pricer.system))
    o = pricer.system.origin
    if o is None or o.calibration is None:
        if not st.has_band:
            return {"low": pricer, "calibrated": pricer, "high": pricer}
        return {
            w: pricer.with_efficiency(apply_stack(pricer.system, pricer.efficiency, st, w))
            for w in ("low", "calibrated", "high")
        }
    return {
        w: pricer.with_efficiency(
            apply_stack(pricer.system, variant_efficiency(pricer.system, w), st, w if st.has_band else "calibrated")
        )
        for w in ("low", "calibrated", "high")
    }
