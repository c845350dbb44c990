"""A user's request trace, read into columns (``jalapeno simulate -w trace.csv``).

A trace of a million requests is held as five NumPy columns (~40 MB), not a million row objects,
and the simulator feeds it one arrival at a time (serve/sim/simulation.py), so memory grows with
the requests in flight and the counted results, not with a plan of the whole trace.

Arrival times are seconds. Times that are plainly not seconds since the trace's start are
refused with the unit they look like: epoch timestamps in ms, µs or ns (~1.7e12-1.7e18; at
1.7e18 the spacing of a float64 is 256 s, so every step of a simulation would vanish). Epoch
*seconds* (~1.7e9) are rebased to the first arrival (float64 spacing there is 0.24 µs).

The CSV and JSONL cells are read into raw columns by serve/sim/trace_cells.py; this module checks the values
and builds the :class:`Trace`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.serve.sim.trace_cells import (  # the file-cell readers: split from here, round 53
    _PER_S,
    COLUMNS,
    OPTIONAL,
    _columns_from_csv,
    _columns_from_jsonl,
    _Faults,
    _is_label,
    _numeric,
)
from jalapeno.specs.files import read_user_text

#: First arrival at or above this (s) is taken as an absolute timestamp and rebased to zero:
#: 1e6 s is 11.6 days, longer than any trace's own offset and far below epoch seconds (1.7e9).
REBASE_ABOVE_S = 1e6
#: Arrival times at or above this are not seconds at all: 1e11 s is 3,200 years, and epoch
#: milliseconds (1.7e12), microseconds (1.7e15) and nanoseconds (1.7e18) all lie above it.
NOT_SECONDS_ABOVE = 1e11
#: Largest token count accepted in a trace cell (a billion tokens; any model's context is far below).
MAX_TOKENS = 1e9
#: Session and prefix-group ids are below this (the simulator's prefix cache keys a prefix group at
#: GROUP_KEY_BASE + id, apart from the sessions: serve/sim/entities.py).
MAX_ID = float(1 << 62)
#: Longest trace span accepted after rebasing (s): 1e8 s is 3.2 years of requests.
MAX_SPAN_S = 1e8
_HELP = "pass a CSV or JSONL file with arrival_s, input_tokens, output_tokens [, session_id, prefix_group]"


@dataclass(frozen=True)
class Trace:
    """Requests of a trace as columns, sorted by arrival (stable: equal times keep file order).

    Attributes (all shape (N,)): ``arrival_s`` float64 seconds from the first arrival's origin;
    ``isl``, ``osl`` int64 tokens (osl >= 2: one token is the prefill's); ``session``,
    ``prefix_group`` int64 (-1 = none); ``raised_to_two``: rows of the file that asked for one output
    token and run as two (a count, said on the command line; 0 for a trace not read from a file);
    ``row``: int64, each request's row in the file (1 = the first request, header excluded) or its
    place in the list it was made from, so a message names the row the user wrote (None: the
    arrival order).
    """

    arrival_s: np.ndarray
    isl: np.ndarray
    osl: np.ndarray
    session: np.ndarray
    prefix_group: np.ndarray
    raised_to_two: int = 0
    row: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.arrival_s.size)

    def spec(self, k: int):
        """Request ``k`` as a :class:`~jalapeno.serve.sim.workloads.RequestSpec`."""
        from jalapeno.serve.sim.workloads import RequestSpec

        return RequestSpec(
            int(self.isl[k]),
            int(self.osl[k]),
            float(self.arrival_s[k]),
            int(self.session[k]),
            0,
            int(self.prefix_group[k]),
        )

    def __iter__(self) -> Iterator:
        return (self.spec(k) for k in range(len(self)))

    def head(self, n: int) -> Trace:
        """The first ``n`` requests by arrival (all of them when ``n >= len(self)``)."""
        if n >= len(self):
            return self
        cut = [c[:n] for c in (self.arrival_s, self.isl, self.osl, self.session, self.prefix_group)]
        return Trace(*cut, row=None if self.row is None else self.row[:n])

    def file_row(self, k: int) -> int:
        """The file row (1-based, header excluded) of request ``k`` in arrival order."""
        return int(self.row[k]) if self.row is not None else k + 1

    @classmethod
    def from_specs(cls, specs: Sequence) -> Trace:
        """A trace from request specs (sorted by arrival, stable).

        Raises:
            SpecError: an empty list.
        """
        if isinstance(specs, Trace):
            return specs
        if len(specs) == 0:
            raise SpecError("trace", "the trace has no requests", "give at least one request")
        cols = [
            np.array([getattr(s, a) for s in specs], dtype=t)
            for a, t in (
                ("arrival_s", float),
                ("isl", np.int64),
                ("osl", np.int64),
                ("session", np.int64),
                ("prefix_group", np.int64),
            )
        ]
        order = np.argsort(cols[0], kind="stable")
        return cls(*(c[order] for c in cols), row=order.astype(np.int64) + 1)


def first_failing_row(trace: Trace, check: Callable[[int, int, str], None]) -> None:
    """Run ``check(isl, osl, where)`` so that, when rows fail it, the error names the first of them
    in file order (``where`` = "trace row N", N the file row), not the longest nor the first by arrival.

    ``check`` must fail exactly for the requests longer than some limit (isl + osl > L), as the
    model-context and KV-cache checks do: the smallest failing total is found by bisecting the
    distinct totals (log2 N checks, not N), and the first file row at or above it is checked.

    Raises:
        JalapenoError: whatever ``check`` raises, for that row.
    """
    from jalapeno.errors import JalapenoError

    total = trace.isl + trace.osl

    def fails(k: int) -> bool:
        try:
            check(int(trace.isl[k]), int(trace.osl[k]), f"trace row {trace.file_row(k)}")
        except JalapenoError:
            return True
        return False

    if not len(trace) or not fails(int(np.argmax(total))):
        return
    uniq = np.unique(total)
    lo, hi = 0, uniq.size - 1  # uniq[hi] (the longest) fails
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(int(np.argmax(total == uniq[mid]))) else (mid + 1, hi)
    bad = np.flatnonzero(total >= uniq[lo])
    rows = trace.row[bad] if trace.row is not None else bad
    k = int(bad[np.argmin(rows)])
    check(int(trace.isl[k]), int(trace.osl[k]), f"trace row {trace.file_row(k)}")


def read_trace(path: str | Path) -> Trace:
    """Read a CSV or JSONL trace: arrival_s, input_tokens, output_tokens [, session_id, prefix_group].

    Raises:
        SpecError: missing or unreadable file, unknown extension, malformed CSV/JSON, a missing
            column or a bad value (the row and column named: a token count that is not a whole
            number >= 1, an id that is not a whole number >= 0, a JSONL time or length written as a
            JSON string), arrival times that are not seconds.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if p.is_dir():  # was "unknown trace format ''"
        raise SpecError(str(p), "is a folder, not a trace file", "give the path of a .csv or .jsonl trace")
    if suffix not in (".csv", ".jsonl", ".json"):
        what = f"unknown trace format {p.suffix!r}" if p.suffix else "no file suffix: a trace is read by its suffix"
        raise SpecError(str(p), what, "use .csv or .jsonl")
    text = read_user_text(p, "a CSV or JSONL trace", _HELP)
    cols, where, stop = (_columns_from_csv if suffix == ".csv" else _columns_from_jsonl)(text, p.name)
    n = len(next(iter(cols.values()))) if cols else 0
    if n == 0:
        raise stop or SpecError(str(p), "the trace has no rows", "add at least one request")
    for c in COLUMNS:
        if c not in cols:
            raise SpecError(f"{p.name}: {c}", "missing column", _HELP)
    faults = _Faults(p.name, cols, where)  # every bad cell noted; the first in file order is named
    arr = _numeric(faults, "arrival_s", cols["arrival_s"])
    isl = _numeric(faults, "input_tokens", cols["input_tokens"])
    osl = _numeric(faults, "output_tokens", cols["output_tokens"])
    opt = {}
    for c in OPTIONAL:
        raw = cols.get(c)
        if raw is None:
            opt[c] = np.full(n, -1, dtype=np.int64)
            continue
        import pandas as pd

        s = pd.Series(raw, dtype=object).map(lambda v: "" if v is None or str(v).strip() in ("", "None") else v)
        blank = (s == "").to_numpy()
        # a text id ("sess-a1", a UUID) was 'not a finite number. Fix: use finite numbers' (break44): say it is a label
        text = (
            ~blank
            & pd.to_numeric(s.where(~blank, "-1"), errors="coerce").isna().to_numpy()
            & s.map(_is_label).to_numpy()
        )
        faults.add(
            text,
            c,
            lambda k, s=s: f"{str(s.iloc[k])!r} is text, not a numeric id",
            f"number the {c}s 0, 1, 2, ... (the same number on every row of one {c.removesuffix('_id').replace('_', ' ')}) "
            "and leave the cell blank for none",
        )
        vals = _numeric(faults, c, s.where(~blank, "-1"))
        with np.errstate(invalid="ignore"):
            bad = ~blank & np.isfinite(vals) & ((vals < 0) | (vals != np.floor(vals)) | (vals >= MAX_ID))
        # -5 was read as "no session" and 1.5 as session 1, silently
        faults.add(
            bad,
            c,
            lambda k, v=vals: f"{v[k]:g} is not an id (a whole number from 0 to 2^62)",
            f"number the {c}s 0, 1, 2, ... and leave the cell blank for none",
        )
        opt[c] = np.where(np.isfinite(vals) & ~bad, vals, -1).astype(np.int64)  # a bad id is named below, not cast
    for col, v in (("arrival_s", arr), ("input_tokens", isl), ("output_tokens", osl)):
        tokens = col != "arrival_s"
        with np.errstate(invalid="ignore"):
            out = (v < 1) | (v > MAX_TOKENS) if tokens else v < 0
        faults.add(
            out,
            col,
            lambda k, v=v, t=tokens: f"{v[k]:g} is out of range ({f'1 to {MAX_TOKENS:.0e} tokens' if t else '>= 0 s'})",
            f"give {col} as a whole number of tokens from 1 to {MAX_TOKENS:.0e}"
            if tokens
            else "give arrival_s in seconds from the trace's start (>= 0)",
        )
        if tokens:  # 100.5 was truncated to 100, silently
            faults.add(
                np.isfinite(v) & ~out & (v != np.floor(v)),
                col,
                lambda k, v=v: f"{v[k]:g} is not a whole number of tokens",
                "give token counts as integers",
            )
    err = faults.error() or stop
    if err is not None:
        raise err
    first = float(arr.min())
    if float(arr.max()) >= NOT_SECONDS_ABOVE:
        if first < NOT_SECONDS_ABOVE:  # seconds beside 1e300: that row's slip, not an epoch clock (break53)
            k = int(np.flatnonzero(arr >= NOT_SECONDS_ABOVE)[0])
            raise SpecError(
                f"{p.name}: {where(k)}: arrival_s",
                f"{arr[k]:.3g} s is over {NOT_SECONDS_ABOVE:.0e} s "
                f"(3,200 years) while the first arrival is {first:g} s",
                "give every arrival_s in seconds on one clock",
            )
        unit = "nanoseconds" if first >= 1e17 else "microseconds" if first >= 1e14 else "milliseconds"
        raise SpecError(
            f"{p.name}: arrival_s",
            f"values up to {arr.max():.3g} are not seconds (epoch {unit}?)",
            f"give seconds: divide by {_PER_S[unit]}",
        )
    if first >= REBASE_ABOVE_S:
        arr = arr - first  # an absolute clock (epoch seconds): only the gaps matter
    if float(arr.max()) > MAX_SPAN_S:
        raise SpecError(
            f"{p.name}: arrival_s",
            f"the trace spans {arr.max():.3g} s (over {MAX_SPAN_S:.0e} s, 3 years)",
            "give arrival times in seconds",
        )
    order = np.argsort(arr, kind="stable")
    return Trace(
        arr[order],
        isl.astype(np.int64)[order],
        np.maximum(osl.astype(np.int64), 2)[order],
        opt["session_id"][order],
        opt["prefix_group"][order],
        int(np.count_nonzero(osl < 2)),
        order.astype(np.int64) + 1,
    )
