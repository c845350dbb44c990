"""Column cuts worked out when first read: a step's per-op tables at a batch's every point.

cost/step.step_cost prices a batch's distinct points once (Batch.distinct) and indexes every per-point
array to each point of the batch. Its per-point figures (step time, attribution, bound, memory fit) are
read by every caller; its op and collective tables at every point — (rows, N) arrays, N up to a few
thousand in a long-prompt sweep, whose chunk steps repeat — are read by few (the eager step of a
CUDA-graph ceiling, ``jalapeno step``, power and utilisation): copying them all on every call took a
sixth of ``compare -w 128k1k``. :func:`lazy_columns` gives the same table with each (rows, N) array cut
(``np.take(v, cols, axis=1)``, as cost/priced.columns does) the first time it is read, and kept;
:func:`lazy_fields` does the same for named fields of any frozen, slotted dataclass (the step cost's
collective times and algorithms); :func:`step_at_points` puts a step cost priced at a batch's distinct points
at its every point with both. A read gives the very array an eager cut gives: results are bitwise unchanged.

The instance is of a subclass of the table's own class (made once per class), so ``isinstance`` holds
and ``dataclasses.fields``/``replace`` work; a field not yet read is an unset slot, which Python answers
through ``__getattr__``; it pickles and copies as the plain class. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np

from jalapeno.cost.priced import _prep
from jalapeno.cost.step_result import StepCost

#: the lazy subclass of each dataclass, made on first use
_SUBCLASSES: dict[type, type] = {}


def _pending_getattr(self, name: str):
    """Work out a field not yet read (``__getattr__``: only an unset slot or an unknown name lands here)."""
    pending = self.__dict__.get("_pending")
    if pending is None or name not in pending:
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
    value = pending[name]()  # dropped only once worked out: a read that raised (MemoryError) can be retried
    del pending[name]
    object.__setattr__(self, name, value)  # the frozen dataclass's own way to set a slot
    return value


def _plain(cls: type, values: dict):
    """An instance of ``cls`` with ``values`` (name → value) set: what a lazy instance pickles and copies as."""
    out = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(out, name, value)
    return out


def _reduce(self):
    """Pickle (and copy) as the plain class, every field read."""
    base = type(self).__mro__[1]
    return _plain, (base, {f.name: getattr(self, f.name) for f in fields(base)})


def _subclass(cls: type) -> type:
    if cls in _SUBCLASSES.values():  # already lazy (a cut of a cut)
        return cls
    sub = _SUBCLASSES.get(cls)
    if sub is None:  # no __slots__: a __dict__ holds the pending thunks
        sub = _SUBCLASSES[cls] = type(
            f"Lazy{cls.__name__}",
            (cls,),
            {"__getattr__": _pending_getattr, "__reduce__": _reduce, "__module__": __name__},
        )
    return sub


def lazy_fields(cls: type, ready: dict, pending: dict):
    """An instance of the frozen, slotted dataclass ``cls`` with the fields ``ready`` (name → value) set and
    those of ``pending`` (name → a function of no arguments giving the value) worked out when first read.

    Raises:
        ValueError: a field of ``cls`` is in neither, or in both (an internal invariant).
    """
    names = {f.name for f in fields(cls)}
    if names != ready.keys() | pending.keys() or ready.keys() & pending.keys():
        raise ValueError(f"lazy_fields({cls.__name__}): every field once, in ready or pending")
    out = object.__new__(_subclass(cls))
    for name, value in ready.items():
        object.__setattr__(out, name, value)
    out.__dict__["_pending"] = dict(pending)
    return out


def lazy_columns(table, cols: np.ndarray):
    """cost/priced.columns(``table``, ``cols``) for an index array ``cols`` (N,): the same table at points
    ``cols``, each (rows, N) array (and an op table's (N,) ``kn`` items) cut when first read; per-row fields
    are kept. ``table`` is an op, collective or op-times table of the distinct points."""
    cls, kept, wide, kns = _prep(table)
    pending = {name: (lambda v=v: np.take(v, cols, axis=1)) for name, v in wide}
    if kns is not None:
        pending["kn"] = lambda: tuple(
            tuple(x[cols] if isinstance(x, np.ndarray) and x.ndim == 1 else x for x in kn) for kn in kns
        )
    return lazy_fields(cls, kept, pending)


def step_at_points(sc: StepCost, at: np.ndarray) -> StepCost:
    """``sc``, priced at a batch's distinct points, at every point of the batch: ``at`` (N,) is each
    point's distinct point (Batch.distinct). Every per-point array is indexed; per-op and per-collective
    fields are kept. The (rows, N) tables (ops, times, collectives, their times and algorithms) are cut
    when first read (:func:`lazy_columns`, :func:`lazy_fields`): the same arrays, most callers read none of them."""
    mem = sc.memory
    ready = {f.name: getattr(sc, f.name) for f in fields(sc)}
    for name in ("coll_time_s", "coll_algorithm"):
        del ready[name]
    ready.update(
        ops=lazy_columns(sc.ops, at),
        times=lazy_columns(sc.times, at),
        collectives=lazy_columns(sc.collectives, at),
        step_time_s=sc.step_time_s[at],
        interval_s=sc.interval_s[at],
        draft_s=sc.draft_s[at],
        attribution_s={k: v[at] for k, v in sc.attribution_s.items()},
        bound=sc.bound[at],
        bound_margin=sc.bound_margin[at],
        bound_level=sc.bound_level[at],
        memory=replace(
            mem,
            kv_bytes=mem.kv_bytes[at],
            activation_bytes=mem.activation_bytes[at],
            fits=mem.fits[at],
            reason=mem.reason[at],
        ),
        feasible=sc.feasible[at],
        reason=sc.reason[at],
        hidden_comm_s=None if sc.hidden_comm_s is None else sc.hidden_comm_s[at],
    )
    # the per-op tables at every point are read by few callers: cut when first read
    return lazy_fields(
        StepCost,
        ready,
        {
            "coll_time_s": lambda: np.take(sc.coll_time_s, at, axis=1),
            "coll_algorithm": lambda: np.take(sc.coll_algorithm, at, axis=1),
        },
    )
