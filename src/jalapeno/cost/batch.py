"""What one step of a model instance processes: :class:`Batch`, N points at once (cost/step.py prices it).

The padding dummies of a CUDA-graph step (``pad_seqs``, ``pad_routing``) are part of the batch because
the MoE router prices them (cost/ops.py; deploy/graph_capture.PAD_ROUTING says how each engine routes them).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, fields

import numpy as np

from jalapeno.deploy.graph_capture import PAD_ROUTINGS
from jalapeno.errors import SpecError


#: up to this many rows :func:`first_seen` compares them in Python (np.unique's fixed cost dominates below)
_SMALL = 32


#: the odd 64-bit multiplier of Fibonacci hashing (2^64 / golden ratio; Knuth, TAOCP vol. 3, §6.4)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _hashed_groups(rows: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The bitwise-equal groups of ``rows`` (M, k) float64, C-contiguous, M >= 1, as np.unique(..., return_index=True,
    return_inverse=True) gives them on the rows' bytes, up to the order of the groups: (each group's first row (D,),
    every row's group (M,)). Groups by a 64-bit hash of each row's bits (a sort of M integers, where np.unique
    sorts M k-word byte strings: 2-4x faster from a thousand rows up), then checks every row bitwise against its
    group's first row: (None, None) where two distinct rows share a hash."""
    bits = rows.view(np.uint64)
    h = bits[:, 0] * _GOLDEN
    for j in range(1, bits.shape[1]):
        h ^= bits[:, j]
        h *= _GOLDEN
    order = np.argsort(h)  # not stable (4-5x faster than a stable sort): each group's first row is its least index
    hs = h[order]
    new = np.empty(h.size, dtype=bool)
    new[0] = True
    np.not_equal(hs[1:], hs[:-1], out=new[1:])
    first = np.minimum.reduceat(order, np.flatnonzero(new))
    inv = np.empty(h.size, dtype=np.intp)
    inv[order] = np.cumsum(new) - 1
    if not np.array_equal(bits, bits[first[inv]]):
        return None, None
    return first, inv


def first_seen(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``rows`` (M, k) float in order of first appearance: (the index of each distinct row's
    first appearance (D,), for every row its distinct row's rank (M,)). Rows are equal when bitwise equal.

    >>> keep, at = first_seen(np.array([[8.0, 1.0], [64.0, 1.0], [8.0, 1.0]]))
    >>> keep.tolist(), at.tolist()
    ([0, 1], [0, 1, 0])
    """
    rows = np.ascontiguousarray(rows, dtype=float)
    if rows.shape[0] <= _SMALL:  # a few rows: their bytes in a dict (the same answer, a fifth of the time)
        width = rows.itemsize * rows.shape[1]
        raw, seen, keep = rows.tobytes(), {}, []
        at = [seen.setdefault(raw[i * width : (i + 1) * width], len(seen)) for i in range(rows.shape[0])]
        for i, r in enumerate(at):
            if r == len(keep):
                keep.append(i)
        return np.array(keep, dtype=np.intp), np.array(at, dtype=np.intp)
    first, inv = _hashed_groups(rows)
    if first is None:  # two distinct rows hashed alike: sort the rows' bytes themselves
        _, first, inv = np.unique(
            rows.view(np.dtype((np.void, rows.itemsize * rows.shape[1]))).ravel(),
            return_index=True,
            return_inverse=True,
        )
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[inv.ravel()]


def _column(v, n: int) -> np.ndarray:
    """``v`` (a field of a batch of ``n`` points) as (n,) float: itself where it is one already."""
    if type(v) is np.ndarray and v.dtype == np.float64 and v.shape == (n,):
        return v
    return np.broadcast_to(np.asarray(v, dtype=float), (n,))


def _not_numbers(field: str, v) -> None:
    """Raise the error of a batch field that holds no numbers (a name, true/false, a dict, ragged lists)."""
    shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
    raise SpecError(
        f"batch.{field}",
        f"must be a number or a 1-D array of numbers (sequences or tokens), got {shown}",
        f"give {field} as numbers, e.g. {field}=64 or {field}=[8, 64, 256]",
    )


#: Values that numpy would read as numbers but that are not counts of sequences or tokens ('64', True).
_NOT_NUMBERS = (str, bytes, bool, np.bool_)


def _floats(field: str, v) -> np.ndarray:
    """``v`` as a float array, or the error naming ``field`` (numpy's ValueError/TypeError/OverflowError said neither).

    Raises:
        SpecError: ``v`` holds no numbers, or an integer beyond float64's range (above about 1.8e308: 10**400).
    """
    try:
        return np.asarray(v, dtype=float)
    except OverflowError:  # an int past float64's largest finite value, 1.797e308 (IEEE 754 binary64)
        raise SpecError(
            f"batch.{field}",
            "must be finite and >= 0, got an integer too large for a float (> 1.8e308)",
            f"give non-negative {field} below 1.8e308",
        ) from None
    except (TypeError, ValueError):
        _not_numbers(field, v)


#: scalar types :func:`_plain_fields` takes as they are (bool, a subclass of int, is not one: it is refused as a count)
_PLAIN_SCALARS = (float, int, np.float64)


def _filled(n: int, v) -> np.ndarray:
    """(n,) float64, every element ``float(v)``: np.full's array (empty, then fill: a third of its call's cost)."""
    out = np.empty(n)
    out.fill(float(v))
    return out


def _plain_fields(decode_seqs, decode_ctx, prefill_tokens, prefill_ctx, prefill_seqs, pad_seqs) -> dict | None:
    """:func:`_read_fields`'s arrays for the inputs a sweep passes (every count field a Python or NumPy float, an int
    or a C-contiguous 1-D float64 array, the arrays of one length N >= 1, every value finite and >= 0; ``prefill_seqs``
    also None; ``pad_seqs`` a number or a float64 (N,) array): the same arrays (an array as it is, a number filled to
    N), without the per-field type, shape and broadcast checks (``compare -c 64``'s 7,511 batches: Batch.make 0.21 ->
    0.13 s CPU, round 44). None for any other input: :func:`_read_fields` reads it, and raises its error."""
    vals = (decode_seqs, decode_ctx, prefill_tokens, prefill_ctx)
    n = 0
    for i, v in enumerate((*vals, prefill_seqs)):  # the count fields set N (the dummies do not: they must match it)
        t = type(v)
        if t is np.ndarray:
            if v.dtype != np.float64 or v.ndim != 1 or not v.flags.c_contiguous or (n and v.shape[0] != n):
                return None
            n = v.shape[0]
            if not n:
                return None
        elif t not in _PLAIN_SCALARS and not (v is None and i == 4):  # prefill_seqs None: one where tokens are
            return None
    n = n or 1
    if type(pad_seqs) is np.ndarray:
        if pad_seqs.dtype != np.float64 or pad_seqs.shape != (n,):
            return None
    elif type(pad_seqs) not in _PLAIN_SCALARS:
        return None
    if prefill_seqs is None:
        prefill_seqs = (
            np.where(prefill_tokens > 0, 1.0, 0.0)
            if type(prefill_tokens) is np.ndarray
            else 1.0
            if prefill_tokens > 0
            else 0.0
        )
    try:
        arrs = [v if type(v) is np.ndarray else _filled(n, v) for v in (*vals, prefill_seqs)]
    except OverflowError:  # an int past float64's range (10**400): _read_fields names it
        return None
    every = np.concatenate(arrs)
    if not (every.min() >= 0.0 and every.max() < np.inf):  # a negative, infinite or NaN value: _read_fields names it
        return None
    return dict(zip(_COUNT_FIELDS, arrs))


def _read_fields(decode_seqs, decode_ctx, prefill_tokens, prefill_ctx, prefill_seqs, pad_seqs) -> dict:
    """:meth:`Batch.make`'s five count fields read and checked, as (N,) float arrays by name (every input it takes).

    Raises:
        SpecError: a field that holds no numbers, is negative or not finite, or arrays of different lengths.
    """
    raw = dict(
        decode_seqs=decode_seqs,
        decode_ctx=decode_ctx,
        prefill_tokens=prefill_tokens,
        prefill_ctx=prefill_ctx,
        prefill_seqs=prefill_seqs,
        pad_seqs=pad_seqs,
    )
    for k, v in raw.items():  # 'abc' raised numpy's ValueError; '64' and True were read as numbers
        # (an object array of numbers, pandas' .to_numpy() of an object column, is read as its numbers)
        if (
            isinstance(v, _NOT_NUMBERS)
            or (type(v) is np.ndarray and v.dtype.kind not in "iufO")
            or (type(v) in (list, tuple) and any(isinstance(x, _NOT_NUMBERS) for x in v))
            or (type(v) is np.ndarray and v.dtype.kind == "O" and any(isinstance(x, _NOT_NUMBERS) for x in v.ravel()))
        ):
            _not_numbers(k, v)
    del raw["pad_seqs"]
    if prefill_seqs is None:
        prefill_seqs = raw["prefill_seqs"] = np.where(_floats("prefill_tokens", prefill_tokens) > 0, 1.0, 0.0)
    try:
        lengths = {
            k: v.size if type(v) is np.ndarray else np.size(v)
            for k, v in raw.items()
            if (v.ndim if type(v) is np.ndarray else np.ndim(v)) > 0
        }  # the methods: np's dispatch costs
    except ValueError:  # a ragged list ([[1, 2], [3]]): name its field
        for k, v in raw.items():
            _floats(k, v)
        raise
    if len(set(lengths.values())) > 1:  # only scalars broadcast: [64] beside 3 contexts is a mistake
        raise SpecError(
            "batch",
            "array fields of different lengths: " + ", ".join(f"{k} {n}" for k, n in lengths.items()),
            "give every array field the same length (scalars apply to every row)",
        )
    vals = [_floats(k, v) for k, v in raw.items()]
    if all(a.ndim <= 1 for a in vals):  # the usual case: the arrays as they are, scalars filled to their length
        n = max(lengths.values(), default=1)
        arrs = [np.ascontiguousarray(a) if a.ndim else np.full(n, a) for a in vals]
    else:
        try:
            arrs = np.broadcast_arrays(*[np.atleast_1d(a) for a in vals])
        except ValueError:
            raise SpecError(
                "batch", "field shapes do not broadcast", "pass scalars or arrays of one common length"
            ) from None
    out = dict(zip(raw, arrs))
    every = np.concatenate(arrs) if all(a.ndim == 1 for a in arrs) else None
    if every is None or not np.isfinite(every).all() or (every < 0).any():  # say which field
        for k, a in out.items():
            if a.ndim != 1:
                raise SpecError(f"batch.{k}", "must be a scalar or 1-D array", "flatten the input")
            if not np.all(np.isfinite(a)) or np.any(a < 0):
                raise SpecError(f"batch.{k}", "must be finite and >= 0", f"give non-negative {k}")
        out = {k: np.ascontiguousarray(a) for k, a in out.items()}
    return out


def refuse_no_tokens(decode_seqs, prefill_tokens, field: str, fix: str) -> None:
    """Refuse a step with no tokens: no decoding sequence and no prompt token at some point.

    Such a step is priced as launch and collective latency alone (about 1-3 ms of nothing), so the CLI's
    ``step`` and the public ``jalapeno.step_cost`` (cost/step_api.py) refuse it with this one message; the
    simulator and the sweeps call cost/step.step_cost directly, where a point with no work is legitimate.

    Args:
        decode_seqs, prefill_tokens: scalars or (N,) arrays of the step's decoding sequences and prompt tokens.
        field, fix: the input to name and what to give instead (an option for the CLI, an argument for the API).

    Raises:
        SpecError: some point has neither; with N > 1 points the message names them (0-based).
    """
    empty = np.atleast_1d((np.asarray(decode_seqs) <= 0) & (np.asarray(prefill_tokens) <= 0))
    if not empty.any():
        return
    where = "" if empty.size == 1 else f" at point(s) {', '.join(str(i) for i in np.flatnonzero(empty)[:8])}"
    raise SpecError(field, f"the step has no tokens: no decoding sequence and no prompt token{where}", fix)


@dataclass(frozen=True, slots=True)
class Batch:
    """What one step of a model instance processes; every field but ``pad_routing`` an array of shape (N,).

    Attributes:
        decode_seqs: sequences decoding in the step (whole instance, all DP ranks).
        decode_ctx: their mean context length, tokens.
        prefill_tokens: new prompt tokens in the step (chunked prefill).
        prefill_ctx: mean cached prefix of the prefill sequences, tokens.
        prefill_seqs: sequences the prefill tokens belong to.
        pad_seqs, pad_routing: of ``decode_seqs``, the CUDA-graph padding dummies (serve/limits.graph_padded;
            0 = none) and how the MoE routes them (:data:`PAD_ROUTINGS`; docs/model.md, graph padding).

    Rows per decoding sequence are not a batch property: they follow from the deployment's MTP
    setting, which :func:`step_cost` owns (1, or 1 + draft tokens for a verify step).
    """

    decode_seqs: np.ndarray
    decode_ctx: np.ndarray
    prefill_tokens: np.ndarray
    prefill_ctx: np.ndarray
    prefill_seqs: np.ndarray
    pad_seqs: np.ndarray | float = 0.0
    pad_routing: str = "routed"

    @classmethod
    def make(
        cls,
        decode_seqs=0,
        decode_ctx=0,
        prefill_tokens=0,
        prefill_ctx=0,
        prefill_seqs=None,
        pad_seqs=0,
        pad_routing="routed",
    ) -> Batch:
        """Broadcast the fields to one 1-D shape and check them.

        ``prefill_seqs`` defaults to one sequence wherever there are prefill tokens.

        Raises:
            SpecError: a negative or non-finite field (an integer past float64's range, 10**400, included),
                array fields of different lengths (only scalars broadcast), or ``pad_seqs`` of another
                length than the count fields, more prefill sequences than prefill tokens (sequences with no
                tokens included); each names the field and the fix.
        """
        out = _plain_fields(decode_seqs, decode_ctx, prefill_tokens, prefill_ctx, prefill_seqs, pad_seqs)
        if out is None:  # anything but plain numbers and float arrays: read, check and name the field at fault
            out = _read_fields(decode_seqs, decode_ctx, prefill_tokens, prefill_ctx, prefill_seqs, pad_seqs)
        if ((out["prefill_tokens"] > 0) & (out["prefill_seqs"] <= 0)).any():
            raise SpecError(
                "batch.prefill_seqs",
                "prefill tokens need at least one sequence",
                "set prefill_seqs >= 1 where prefill_tokens > 0",
            )
        # every sequence holds a token (break52); one sequence may hold a fraction of one: the serving model's expected
        # last chunk of a prompt of a mean length (serve/chunked.long_chunks at a 1-token budget: 0.6 of a token)
        tok, seq = out["prefill_tokens"], out["prefill_seqs"]
        over = (seq > 0) & ((tok <= 0) | (seq > np.maximum(tok, 1.0) * (1 + 1e-9)))
        if over.any():
            i = int(np.argmax(over))
            s, t = out["prefill_seqs"][i], out["prefill_tokens"][i]
            raise SpecError(
                "batch.prefill_seqs",
                f"{s:g} prefill sequence(s) hold only {t:g} prefill token(s)"
                + (f" (row {i})" if over.size > 1 else "")
                + ": every sequence has at least one token",
                "give prefill_seqs <= prefill_tokens (0 where prefill_tokens is 0; one sequence may "
                "hold a fraction of a token, an expected last chunk)",
            )
        if pad_routing not in PAD_ROUTINGS:
            raise SpecError(
                "batch.pad_routing", f"{pad_routing!r} is not one of {', '.join(PAD_ROUTINGS)}", "give one of those"
            )
        if type(pad_seqs) in (int, float) and pad_seqs == 0:  # no dummies (every decode_seqs is >= 0)
            return cls(**out, pad_seqs=np.zeros(out["decode_seqs"].shape), pad_routing=pad_routing)
        pad = _floats("pad_seqs", pad_seqs)
        try:
            pad = np.broadcast_to(pad, out["decode_seqs"].shape)
        except ValueError:  # numpy's broadcast error named neither the field nor the length it needs
            raise SpecError(
                "batch.pad_seqs",
                f"has shape {pad.shape} where the count fields have {out['decode_seqs'].shape[0]} row(s)",
                "give pad_seqs as one number or a 1-D array of the count fields' length",
            ) from None
        if not np.all(np.isfinite(pad)) or np.any(pad < 0) or np.any(pad > out["decode_seqs"] + 1e-9):
            raise SpecError(
                "batch.pad_seqs",
                "must be finite, >= 0 and at most decode_seqs",
                "give pad_seqs between 0 and decode_seqs",
            )
        return cls(**out, pad_seqs=np.ascontiguousarray(pad), pad_routing=pad_routing)

    @property
    def n(self) -> int:
        """Rows of the batch (N, the length of every array)."""
        return self.decode_seqs.shape[0]

    @classmethod
    def joined(cls, *parts: Batch) -> Batch:
        """The rows of ``parts`` one after another, (N₁ + N₂ + …,): :func:`step_cost` prices every row on
        its own, so one call on the joined batch gives each part's figures end to end (a call's fixed
        Python cost, about 1-4 ms, is paid once; serve/analytic.py prices a step's three kinds so). ``pad_routing``
        is that of the parts with padding dummies (rows without dummies do not read it).

        Raises:
            ValueError: parts with dummies routed differently (one call has one routing).
        """
        padded = {p.pad_routing for p in parts if (np.asarray(p.pad_seqs) > 0).any()}
        if len(padded) > 1:
            raise ValueError(f"parts pad their CUDA graphs with different routings {sorted(padded)}: price them apart")
        arrays = {name: np.concatenate([_column(getattr(p, name), p.n) for p in parts]) for name in _ARRAY_FIELDS}
        return cls(**arrays, pad_routing=padded.pop() if padded else parts[0].pad_routing)

    def distinct(self) -> tuple[Batch, np.ndarray | None]:
        """The batch's distinct points in order of first appearance, and for every point the index of
        its distinct point, (N,) int; ``(self, None)`` where no two points are equal or the batch has two.
        Two points are equal when every field is bitwise equal (:func:`~jalapeno.cost.step.step_cost`
        prices every point on its own, so it prices a repeated point once: a sweep clips its batch grid
        to one cap). A batch of one distinct point keeps two columns: NumPy sums a (rows, 1) table over
        its rows pairwise, a wider one row by row, and the last bits of a step time would differ.

        >>> b, at = Batch.make(decode_seqs=[8.0, 64.0, 8.0], decode_ctx=1024).distinct()
        >>> b.decode_seqs.tolist(), at.tolist()
        ([8.0, 64.0], [0, 1, 0])
        >>> Batch.make(decode_seqs=[8.0, 8.0, 8.0], decode_ctx=1024).distinct()[1].tolist()
        [0, 0, 0]
        """
        if self.n <= 2:  # what _distinct returns for every batch of two points or fewer, without the look-up
            return self, None
        raw = tuple(np.asarray(getattr(self, name)).tobytes() for name in _ARRAY_FIELDS)
        hit = _DISTINCT.get(id(self))  # a batch is asked again by the step that prices it (serve/lockstep.py)
        if hit is not None and hit[0] is self and hit[1] == raw:
            return hit[2]
        out = self._distinct()
        _DISTINCT.pop(id(self), None)
        _DISTINCT[id(self)] = (self, raw, out)  # the entry holds its batch: a live id
        if len(_DISTINCT) > _DISTINCT_KEEP:
            _DISTINCT.popitem(last=False)
        return out

    def _distinct(self) -> tuple[Batch, np.ndarray | None]:
        pad = np.broadcast_to(np.asarray(self.pad_seqs, dtype=float), (self.n,))
        cols = np.empty((self.n, 6))  # np.stack(..., axis=1)'s (N, 6) C-ordered float64, filled by column (2.5x faster)
        for j, a in enumerate(
            (self.decode_seqs, self.decode_ctx, self.prefill_tokens, self.prefill_ctx, self.prefill_seqs, pad)
        ):
            cols[:, j] = a
        keep, at = first_seen(cols)
        if keep.size == self.n or self.n == 2:
            return self, None
        if keep.size == 1:  # one distinct point: two columns
            keep = np.array([0, 1])
        return (
            Batch(
                self.decode_seqs[keep],
                self.decode_ctx[keep],
                self.prefill_tokens[keep],
                self.prefill_ctx[keep],
                self.prefill_seqs[keep],
                self.pad_seqs if np.ndim(self.pad_seqs) == 0 else pad[keep],
                self.pad_routing,
            ),
            at,
        )

    def tokens(self, query_len: float = 1.0) -> np.ndarray:
        """Rows processed by the step: decode sequences × ``query_len`` + prefill tokens."""
        return self.decode_seqs * query_len + self.prefill_tokens

    def halved(self) -> Batch:
        """One of two equal micro-batches: half the decoding sequences, half the prefill tokens
        and sequences (a prefill chunk split by its tokens keeps its mean length, so each half
        carries half the causal attention work — DeepSeek balances it so), same contexts."""
        return Batch(
            self.decode_seqs / 2,
            self.decode_ctx,
            self.prefill_tokens / 2,
            self.prefill_ctx,
            self.prefill_seqs / 2,
            np.asarray(self.pad_seqs) / 2,
            self.pad_routing,
        )


_ARRAY_FIELDS = tuple(f.name for f in fields(Batch) if f.name != "pad_routing")
#: the count fields :meth:`Batch.make` reads (all but the padding dummies), in order
_COUNT_FIELDS = _ARRAY_FIELDS[:5]
#: the last :data:`_DISTINCT_KEEP` (batch, its fields' bytes, Batch.distinct of it) by the batch's id, oldest first:
#: the same batch object with the same contents gives the same answer. A fixed-concurrency solve asks each step
#: batch twice, to price the pass (serve/lockstep._price_shared) and to step it, with every other deployment's
#: batches of the pass in between (a few dozen; ``compare -c 64`` about 55): the memo holds a pass.
_DISTINCT: OrderedDict = OrderedDict()  # the oldest leaves in O(1)
_DISTINCT_KEEP = 256
