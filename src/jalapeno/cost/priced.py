"""The priced op and collective tables of a step, and their memo (cost/step.py prices through them).

:func:`priced_tables` builds one step's tables (cost/ops.build_step_ops) and prices them with a pricer;
:func:`price_layouts` prices the batches of a fixed-concurrency pass (serve/lockstep.py) ahead of its steps:
one build per layout for the batches of its deployments (a sweep's serial and two-batch-overlap variants),
one build for the layouts whose op tables have the same rows (cost/layout_columns.py: their attention DP, EP,
EPLB and stage chips by column), and the collectives of every layout of the pass in one call per (kind, group)
(cost/pricer.collective_times_together). Every point of a batch is priced on its own (Batch.joined, and
every message of a collective), so a batch's tables are the same whether it is priced alone or beside
others; the memo returns the tables of an earlier call with the very same model, pricer and precision
objects, an equal layout and query length and a batch of bitwise-equal arrays (a pure function of those
inputs; the tables are never written to), and a pass hands each step the tables of its very batch object, so
results are unchanged.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from itertools import chain

import numpy as np

from jalapeno.cost.batch import Batch
from jalapeno.cost.layout_columns import joint_key, layout_columns
from jalapeno.cost.moe_exchange import moe_all_to_all_on
from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.pricer import Pricer, collective_times_together
from jalapeno.deploy.layout import Layout
from jalapeno.specs.formats import Precision
from jalapeno.specs.model import ModelSpec

#: The last few priced tables of :func:`priced_tables`, by (ids of the model, pricer and precision, batch key) →
#: (model, pricer, precision, tables), oldest first: a sweep prices each layout twice in a row with the same
#: batch, serially and under two-batch overlap (which adds its micro-batch tables to the serial ones, priced
#: alone since round 37), so the second call reuses the first's tables. One call on a layout with an EP all-to-all leaves two entries (the
#: batch and its halves). A fixed-concurrency pass hands its tables over by batch identity instead
#: (:data:`_HANDOFF`); :data:`_PRICED_KEEP` 0 turns both off.
_PRICED: OrderedDict[tuple, tuple] = OrderedDict()  # ordered: the oldest leaves in O(1) (a plain dict, deleted
#                                                        from the front, walks the holes it left on every delete)
_PRICED_KEEP = 8
#: the tables :func:`price_layouts` priced in the current pass by the id of the very batch object it was given
#: → (batch, model, pricer, precision, (layout, qlen, halves), :func:`priced_tables`'s answer): the step that
#: follows passes the same object (Batch.distinct returns it again), so :func:`priced_tables` finds its tables
#: without working out the batch's key and halves again. Emptied when the pass ends.
_HANDOFF: dict[int, tuple] = {}


def moe_all_to_all(pricer: Pricer, layout: Layout, model: ModelSpec) -> bool:
    """Whether the engine (``pricer.efficiency.moe_exchange``) runs the MoE all-to-all for this
    layout's EP group on this system (cost/moe_exchange.moe_all_to_all_on, with the model's experts per
    token), else all-gather + reduce-scatter."""
    return moe_all_to_all_on(
        pricer.efficiency.moe_exchange,
        layout.stage_chips,
        pricer.system.scale_up_chips,
        layout.moe_tp,
        model.moe.top_k if model.moe else None,
    )


def _batch_key(layout: Layout, qlen: int, batch: Batch) -> tuple:
    arrays = (
        batch.decode_seqs,
        batch.decode_ctx,
        batch.prefill_tokens,
        batch.prefill_ctx,
        batch.prefill_seqs,
        np.asarray(batch.pad_seqs, dtype=float),
    )
    return (layout, qlen, batch.pad_routing, tuple((a.dtype.str, a.shape, a.tobytes()) for a in arrays))


def columns(table, cols):
    """``table`` (an op, collective or priced table of N points) at points ``cols`` (a slice or an index
    array): every (rows, N) array cut to those columns, and an op table's (k, n) arrays (N,) to those items;
    per-row fields are kept. A slice gives views, an index array C-ordered copies (``np.take``; ``v[:, idx]``
    is Fortran-ordered, and NumPy sums such a table over its rows pairwise, a C-ordered one row by row:
    the last bits would differ); elementwise results do not depend on the layout."""
    return _columns(_prep(table), cols)


def _prep(table) -> tuple:
    """What every cut of ``table`` shares (:func:`_cut` asks once per joined table): (its class, its per-row
    fields by name, its (rows, N) arrays as (name, array), its ``kn`` where that holds (N,) arrays, else None)."""
    wide, kept, kns = [], {}, None
    for name in table.__dataclass_fields__:
        v = getattr(table, name)
        if isinstance(v, np.ndarray) and v.ndim == 2:
            wide.append((name, v))
        elif name == "kn" and any(issubclass(t, np.ndarray) for t in set(map(type, chain.from_iterable(v)))):
            kns = v
        else:
            kept[name] = v
    return type(table), kept, wide, kns


def _columns(prep: tuple, cols):
    """:func:`columns` of the table :func:`_prep` read."""
    cls, kept, wide, kns = prep
    kw = dict(kept)
    for name, v in wide:
        kw[name] = v[:, cols] if isinstance(cols, slice) else np.take(v, cols, axis=1)
    if kns is not None:
        kw["kn"] = tuple(tuple(x[cols] if isinstance(x, np.ndarray) and x.ndim == 1 else x for x in kn) for kn in kns)
    return cls(**kw)


def _cached(model, pricer, precision, key):
    hit = _PRICED.get((id(model), id(pricer), id(precision), key))  # the entry holds its objects: live ids
    return hit[3] if hit is not None and hit[0] is model and hit[1] is pricer and hit[2] is precision else None


def _build(
    model: ModelSpec, pricer: Pricer, layout: Layout, precision: Precision, parts: list[Batch], qlen: int
) -> tuple:
    """The op and collective tables of ``parts`` joined (one part: that part) and the ops' prices."""
    b = parts[0] if len(parts) == 1 else Batch.joined(*parts)
    ops, colls = build_step_ops(
        model, pricer.system.chip, layout, precision, b, pricer.efficiency, qlen, moe_all_to_all(pricer, layout, model)
    )
    return ops, colls, pricer.op_times(ops)


def _cut(joined: tuple, parts: list[Batch]) -> list[tuple]:
    """Every part's (ops, collectives, op times, collective times): its columns of the joined tables."""
    if len(parts) == 1:
        return [joined]
    ends = np.cumsum([0] + [p.n for p in parts])
    preps = [_prep(t) for t in joined]  # what every part's cut shares, looked up once
    return [tuple(_columns(prep, slice(int(a), int(z))) for prep in preps) for a, z in zip(ends[:-1], ends[1:])]


def _price_parts(
    model: ModelSpec, pricer: Pricer, layout: Layout, precision: Precision, parts: list[Batch], qlen: int
) -> list[tuple]:
    """(ops, collectives, op times, collective times) of every batch in ``parts``, from one build of the
    joined batch (each part's columns a slice of it) or, for one part, of that part alone."""
    ops, colls, times = _build(model, pricer, layout, precision, parts, qlen)
    return _cut((ops, colls, times, pricer.collective_times(colls)), parts)


def _remember(model, pricer, precision, keys: list, outs: list) -> None:
    for k, out in zip(keys, outs):
        full = (id(model), id(pricer), id(precision), k)
        _PRICED.pop(full, None)  # the newest last
        _PRICED[full] = (model, pricer, precision, out)
    _trim()


def _trim() -> None:
    """Drop the oldest entries beyond :data:`_PRICED_KEEP`."""
    while len(_PRICED) > _PRICED_KEEP:
        _PRICED.popitem(last=False)


def priced_tables(
    model: ModelSpec,
    pricer: Pricer,
    layout: Layout,
    precision: Precision,
    batch: Batch,
    qlen: int,
    halves: bool = False,
) -> tuple[tuple, tuple | None]:
    """The step's op and collective tables (cost/ops.build_step_ops) priced by ``pricer``, and where
    ``halves`` those of ``batch.halved()`` (the two-batch-overlap micro-batch; None else).

    With ``halves`` one build prices the batch and its halves side by side (Batch.joined: every
    point is priced on its own, so each part's tables are those a call of its own gives; the call's
    fixed cost is paid once), or the halves alone where the memo holds the batch (a serial step, which
    step_cost prices without its halves, priced it: a sweep's serial variant before its overlap one; the
    batch has two points or more, so the halves' tables have two columns or more either way). A pass's
    tables priced with their halves serve a step that asks without. Memoised (module docstring).
    """
    hit = _HANDOFF.get(id(batch))  # priced by this pass's price_layouts (the entry holds its objects: live ids)
    if (
        hit is not None
        and hit[0] is batch
        and hit[1] is model
        and hit[2] is pricer
        and hit[3] is precision
        and hit[4][:2] == (layout, qlen)
        and (hit[4][2] or not halves)
    ):
        return hit[5] if halves == hit[4][2] else (hit[5][0], None)  # a serial step of a two-batch-overlap build
    half = batch.halved() if halves else None
    keys = [_batch_key(layout, qlen, batch)] + ([_batch_key(layout, qlen, half)] if halves else [])
    outs = [_cached(model, pricer, precision, k) for k in keys]
    if all(o is not None for o in outs):
        return outs[0], outs[1] if halves else None
    if outs[0] is not None and batch.n >= 2:  # a serial step priced the batch: its halves alone (two columns or more)
        outs[1] = _price_parts(model, pricer, layout, precision, [half], qlen)[0]
        _remember(model, pricer, precision, keys[1:], outs[1:])
        return outs[0], outs[1]
    outs = _price_parts(model, pricer, layout, precision, [batch, half] if halves else [batch], qlen)
    _remember(model, pricer, precision, keys, outs)
    return outs[0], outs[1] if halves else None


def price_layouts(model: ModelSpec, pricer: Pricer, jobs: list[tuple]) -> None:
    """Price every job's batches, each with its halves where ``halves`` (as :func:`priced_tables` would), and hand
    them to the steps of the pass (:data:`_HANDOFF`), so that the :func:`priced_tables` calls that follow find them.
    A job is (layout as step_cost passes it (``for_model``), precision, batches as step_cost prices them
    (``Batch.distinct``), query length, halves[, per batch whether its halves are priced: the layout's two-batch-
    overlap deployments' batches alone (serve/lockstep.py); left out, every batch where ``halves``]): one build
    for its batches (Batch.joined; each batch's columns cut from it) — one build for the batches of every job whose layout gives the same rows
    (cost/layout_columns.joint_key, with the same precision, query length, halves and padding routing: the layouts
    vary by column, each job's columns cut from it with their own collective groups) —, and the collectives of
    every job together, every (kind, group) once over the messages of every row that has it
    (cost/pricer.collective_times_together: each message priced on its own). Batches of
    fewer than two points are left to their own call (a one-column table is summed in another order), as is
    everything with the memo off (:data:`_PRICED_KEEP` 0); ``jobs`` empty ends the pass. The pass's tables are
    not kept in :data:`_PRICED`: a fixed-concurrency pass never prices a batch an earlier pass priced (a
    deployment whose batch comes back unchanged has reached its fixed point and leaves the solve;
    ``compare -c 64`` and ``-c 1,4,16,64,256``: no hit in 7,184 and 8,500 look-ups), so working out their keys
    bought nothing."""
    _HANDOFF.clear()
    builds: dict[tuple, list] = {}
    for layout, precision, batches, qlen, halves, *flags in jobs if _PRICED_KEEP else ():
        parts, owners = [], []
        for b, h in zip(batches, flags[0] if flags else (halves,) * len(batches)):
            if b.n >= 2:
                parts += [b, b.halved()] if h else [b]
                owners.append((b, h))
        if parts:
            joint = joint_key(model, layout, moe_all_to_all(pricer, layout, model))
            key = (len(builds),) if joint is None else (id(precision), qlen, halves, _routing(parts), joint)
            builds.setdefault(key, []).append((layout, precision, parts, owners, (layout, qlen)))
    todo = []  # (precision, parts, owners, how, the parts' joined tables)
    for members in builds.values():
        if len(members) == 1:
            layout, precision, parts, owners, how = members[0]
            todo.append((precision, parts, owners, how, _build(model, pricer, layout, precision, parts, how[1])))
        else:
            todo += [
                (precision, parts, owners, how, built)
                for (_, precision, parts, owners, how), built in zip(members, _build_joint(model, pricer, members))
            ]
    cts = collective_times_together(pricer, [built[1] for *_, built in todo])
    for (precision, parts, owners, how, built), ct in zip(todo, cts):
        outs = _cut((*built, ct), parts)
        at = 0  # each owner's batch, then its halves where priced with them
        for b, h in owners:
            _hand(b, model, pricer, precision, (*how, h), outs[at : at + 1 + h])
            at += 1 + h


def _routing(parts: list[Batch]) -> str:
    """The padding routing of ``parts`` joined (Batch.joined: that of the parts with dummies, else the first's)."""
    padded = {p.pad_routing for p in parts if (np.asarray(p.pad_seqs) > 0).any()}
    return padded.pop() if len(padded) == 1 else parts[0].pad_routing if not padded else "mixed"


def _build_joint(model: ModelSpec, pricer: Pricer, members: list[tuple]) -> list[tuple]:
    """Every member job's (ops, collectives, op times) of its parts joined (:func:`_build`'s), cut from one build
    of all their parts joined under their layouts by column (cost/layout_columns.py); each job's collectives
    get its layout's group."""
    parts = [p for _, _, ps, _, _ in members for p in ps]
    sizes = [sum(p.n for p in ps) for _, _, ps, _, _ in members]
    layout, precision, _, _, how = members[0]
    qlen = how[1]
    ops, colls = build_step_ops(
        model,
        pricer.system.chip,
        layout,
        precision,
        Batch.joined(*parts),
        pricer.efficiency,
        qlen,
        moe_all_to_all(pricer, layout, model),
        layout_columns(model, [m[0] for m in members], sizes),
    )
    preps = [_prep(t) for t in (ops, colls, pricer.op_times(ops))]
    ends = np.cumsum([0] + sizes).tolist()
    out = []
    for a, z in zip(ends[:-1], ends[1:]):
        o, c, t = (_columns(prep, slice(a, z)) for prep in preps)
        out.append((o, replace(c, group=tuple(int(g[a]) if type(g) is np.ndarray else g for g in c.group)), t))
    return out


def _hand(batch: Batch, model, pricer, precision, how: tuple, outs: list) -> None:
    """Leave ``batch``'s tables (and its halves') for the step that follows in this pass (:data:`_HANDOFF`)."""
    _HANDOFF[id(batch)] = (batch, model, pricer, precision, how, (outs[0], outs[1] if how[2] else None))
