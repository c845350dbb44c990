"""A user's request trace, read into columns (``jalapeno simulate -w trace.csv``).

A trace of a million requests is held as five NumPy columns (~40 MB), not a million row objects,
and the simulator feeds it one arrival at a time (serve/sim/simulation.py), so memory grows with
the requests in flight and the counted results, not with a plan of the whole trace.

Arrival times are seconds. Times that are plainly not seconds since the trace's start are
refused with the unit they look like: epoch timestamps in ms, µs or ns (~1.7e12-1.7e18; at
1.7e18 the spacing of a float64 is 256 s, so every step of a simulation would vanish). Epoch
*seconds* (~1.7e9) are rebased to the first arrival (float64 spacing there is 0.24 µs).
"""

from __future__ import annotations

import csv
import io
import json
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.specs.files import (
    TOO_MANY_DIGITS_FIX,
    DuplicateKeyError,
    read_user_text,
    too_many_digits,
    too_many_digits_problem,
    unique_keys,
)

COLUMNS = ("arrival_s", "input_tokens", "output_tokens")
OPTIONAL = ("session_id", "prefix_group")
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
_PER_S = {"nanoseconds": "1e9", "microseconds": "1e6", "milliseconds": "1e3"}
#: Arrival-time columns named in another unit: (the unit, what to divide by for seconds).
_UNIT_SLIPS = {f"arrival_{u}": (unit, _PER_S[unit]) for u, unit in
               (("ms", "milliseconds"), ("us", "microseconds"), ("ns", "nanoseconds"))}
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

        return RequestSpec(int(self.isl[k]), int(self.osl[k]), float(self.arrival_s[k]), int(self.session[k]), 0,
                           int(self.prefix_group[k]))

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
        cols = [np.array([getattr(s, a) for s in specs], dtype=t) for a, t in
                (("arrival_s", float), ("isl", np.int64), ("osl", np.int64), ("session", np.int64),
                 ("prefix_group", np.int64))]
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


class _Faults:
    """The bad cells of a trace, kept so that the one named is the first in file order (by row,
    then by column), whatever order the columns are checked in."""

    def __init__(self, name: str, columns, where: Callable[[int], str]) -> None:
        self.name, self.where = name, where
        self.rank = {c: i for i, c in enumerate(columns)}
        self.first: tuple | None = None  # (row, column rank, column, problem, fix)

    def add(self, bad: np.ndarray, col: str, problem: Callable[[int], str], fix: str) -> None:
        """Note column ``col``'s first bad row (``bad``: a boolean mask over rows); ``problem(k)``
        says what is wrong with row ``k``."""
        if bad.any():
            k = int(np.argmax(bad))
            key = (k, self.rank.get(col, len(self.rank)))
            if self.first is None or key < self.first[:2]:
                self.first = (*key, col, problem(k), fix)

    def error(self) -> SpecError | None:
        """The first bad cell as one error (row, column, problem, fix), or None."""
        if self.first is None:
            return None
        k, _, col, problem, fix = self.first
        return SpecError(f"{self.name}: {self.where(k)}: {col}", problem, fix)


class _Quoted(str):
    """A JSONL value written as a JSON string ("10"): a token count or time must be a JSON number. An id column
    (session_id, prefix_group) is read as a Series and skips this check on purpose: an id is a label, and
    "session_id": "5" names session 5 as the CSV cell 5 does (a text label such as "sess-a1" is still refused)."""


def _as_float(v) -> float:
    """One cell as a float: inf past a float's range, NaN where it is no number (what ``pd.to_numeric``'s
    coerce gives, for the cells it raised OverflowError on).

    >>> _as_float(10**400), _as_float("x"), _as_float("12")
    (inf, nan, 12.0)
    """
    try:
        return float(v)
    except OverflowError:
        return math.inf
    except (TypeError, ValueError):
        return math.nan


def _numeric(faults: _Faults, col: str, raw) -> np.ndarray:
    """A column as float64, NaN where a cell is missing or not a finite number (noted in ``faults``
    with its row)."""
    import pandas as pd

    if not hasattr(raw, "dtype"):  # JSONL: a quoted "10" was read as the number 10, with no word
        quoted = np.array([isinstance(v, _Quoted) for v in raw], dtype=bool)
        faults.add(quoted, col, lambda k: f"{json.dumps(str(raw[k]))} is text, not a number",
                   f'write {col} as a JSON number without quotes, e.g. "{col}": 1024')
    s = pd.Series(raw, dtype=object) if not hasattr(raw, "dtype") else raw
    try:
        vals = np.array(pd.to_numeric(s, errors="coerce"), dtype=float)  # a copy: bad cells become NaN
    except OverflowError:  # a JSON integer past a float's range (1 and 400 zeros): pandas raised it (break50)
        vals = np.array([_as_float(v) for v in s], dtype=float)
    bad = ~np.isfinite(vals)
    if bad.any():
        k = int(np.argmax(bad))
        cell = s.iloc[k] if hasattr(s, "iloc") else s[k]
        if cell is None or (isinstance(cell, float) and math.isnan(cell)) or str(cell).strip() == "":
            faults.add(bad, col, lambda _: "missing value", f"give {col} for every row")
        else:
            shown = f"{cell:g}" if isinstance(cell, float) else repr(cell)  # a NumPy float read 'np.float64(inf)'
            faults.add(bad, col, lambda _: f"{shown} is not a finite number",
                       "use finite numbers for times, lengths and ids")
        vals[bad] = np.nan
    return vals


def _csv_rows(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line, cells) of each CSV data row, the line (1-based) it starts on, rows counted as pandas
    counts them (blank lines skipped; a quoted cell may span lines). Only read to word an error;
    stops quietly at what the csv module cannot read (a NUL byte)."""
    reader = csv.reader(io.StringIO(text), skipinitialspace=True)
    try:
        next(reader, None)
        start = reader.line_num + 1
        for row in reader:
            if len(row) > 1 or (row and row[0].strip()):
                yield start, row
            start = reader.line_num + 1
    except csv.Error:
        return


def _csv_where(text: str) -> Callable[[int], str]:
    """How to name data row ``k`` (0-based): "row k+1 (line L)"; the lines are read on first use."""
    lines: list[int] = []

    def where(k: int) -> str:
        if not lines:
            lines.extend([ln for ln, _ in _csv_rows(text)] or [0])
        return f"row {k + 1} (line {lines[k]})" if k < len(lines) and lines[k] else f"row {k + 1}"
    return where


def _columns_from_csv(text: str, name: str) -> tuple[dict, Callable[[int], str], SpecError | None]:
    """The CSV's columns (strings), how to name row k, and the error of a row that stops the parse
    (more cells than the header) or None: the rows above that one are returned, so a bad value
    before it is named first."""
    import pandas as pd

    header = [h.strip() for h in next(csv.reader([text.split("\n", 1)[0]]), [])]
    for sep, word in ((";", "semicolons"), ("\t", "tabs"), ("|", "bars")):  # one column 'a;b;c' was 'unknown column'
        if len(header) == 1 and len(header[0].split(sep)) > 1 and header[0].split(sep)[0].strip() in COLUMNS + OPTIONAL:
            raise SpecError(f"{name}: header", f"its columns are separated by {word}, not commas",
                            "write the trace comma-separated: arrival_s,input_tokens,output_tokens")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise SpecError(f"{name}: header", f"column {dup[0]!r} appears twice", "give each column once")
    where = _csv_where(text)
    try:
        with warnings.catch_warnings():  # pandas only warns when a row has more cells than the header
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True,
                             index_col=False)
    except (pd.errors.ParserWarning, pd.errors.ParserError) as e:
        width = len(header)
        wide = next(((k, ln, row) for k, (ln, row) in enumerate(_csv_rows(text)) if len(row) > width), None)
        if wide is None:
            raise SpecError(name, f"malformed CSV ({str(e).splitlines()[0]})",
                            "one request per line; close every quoted field with a matching \"") from None
        k, line, row = wide
        stop = SpecError(f"{name}: row {k + 1} (line {line})", f"{len(row)} cells, more cells than the header "
                         f"has columns ({width})", "give one value per column (quote a value that holds a comma)")
        if k == 0:
            return {}, where, stop
        cols, _, _ = _columns_from_csv("\n".join(text.split("\n")[:line - 1]) + "\n", name)
        return cols, where, stop
    except pd.errors.EmptyDataError:
        raise SpecError(name, "the trace has no rows", "add a header and at least one request") from None
    except ValueError as e:
        raise SpecError(name, f"malformed CSV ({str(e).splitlines()[0]})",
                        "one request per line; close every quoted field with a matching \"") from None
    df.columns = [str(c).strip() for c in df.columns]
    _check_names(df.columns, name)
    return {c: df[c] for c in df.columns}, where, None


def _check_names(names, name: str) -> None:
    """Refuse a column (CSV header) or key (JSONL) the trace reader does not read: a misspelt
    optional column (``sesion_id``) was dropped silently and the trace replayed without sessions."""
    import difflib

    for c in names:
        if c in _UNIT_SLIPS:  # arrival_ms was 'did you mean arrival_s?': renaming it alone reads ms as s
            raise SpecError(f"{name}: {c}", f"arrival times in {_UNIT_SLIPS[c][0]}; the trace reads seconds",
                            f"divide the times by {_UNIT_SLIPS[c][1]} and name them arrival_s")
        if c not in COLUMNS + OPTIONAL:
            near = difflib.get_close_matches(c.lower(), COLUMNS + OPTIONAL, n=1, cutoff=0.6)  # ARRIVAL_S: no hint
            raise SpecError(f"{name}: {c}", "unknown column" + (f" (did you mean {near[0]!r}?)" if near else ""),
                            "rename or drop it: a trace holds arrival_s, input_tokens, output_tokens "
                            "[, session_id, prefix_group]")


def _is_array_of_objects(text: str) -> bool:
    """Whether the whole text is one JSON array of objects (a trace written with json.dump, not as JSON Lines)."""
    if not text.lstrip().startswith("["):
        return False
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError, or a number past Python's digit limit (read per line)
        return False
    return isinstance(doc, list) and all(isinstance(x, dict) for x in doc)


def _columns_from_jsonl(text: str, name: str) -> tuple[dict, Callable[[int], str], SpecError | None]:
    """The JSONL's columns, how to name row k (its line), and the error of the first line that is
    not a request object (malformed JSON, a key twice or unknown, not an object) or None: the rows
    above that line are returned, so a bad value before it is named first."""
    cols: dict[str, list] = {c: [] for c in COLUMNS + OPTIONAL}
    lines: list[int] = []
    stop = None
    if _is_array_of_objects(text):  # json.dump of a list of requests was 'line 1: not a JSON object'
        return cols, (lambda k: f"row {k + 1}"), SpecError(
            name, "is one JSON array, not JSON Lines (one request object per line)",
            "write one JSON object per line, e.g. jq -c '.[]' FILE > trace.jsonl")
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, object_pairs_hook=unique_keys)
        except DuplicateKeyError as e:  # the last value was kept, silently
            stop = SpecError(f"{name}: line {i}: {e.key}", "is given twice in one object",
                             "give each field once per line")
        except (json.JSONDecodeError, RecursionError) as e:
            stop = SpecError(f"{name}: line {i}", f"malformed JSON: {getattr(e, 'msg', 'nested too deeply')}",
                             "one JSON object per line")
        except ValueError as e:  # a 5,000-digit integer: json raised it past every handler, a traceback (break50)
            if not too_many_digits(e):
                raise
            stop = SpecError(f"{name}: line {i}", too_many_digits_problem(), TOO_MANY_DIGITS_FIX)
        else:
            if not isinstance(obj, dict):
                stop = SpecError(f"{name}: line {i}", "not a JSON object", "one JSON object per line")
            else:
                try:
                    _check_names(obj, f"{name}: line {i}")
                except SpecError as e:
                    stop = e
        if stop is not None:
            break
        lines.append(i)
        for c, col in cols.items():
            v = obj.get(c)
            # a non-number shown as JSON writes it (true, [1, 2]), not as Python would ('True'); a NaN literal
            # as 'NaN' (a float NaN was taken for a blank cell: 'missing value')
            col.append("" if v is None else json.dumps(v) if isinstance(v, (dict, list, bool)) or v != v
                       else _Quoted(v) if isinstance(v, str) else v)
    cols = {c: v for c, v in cols.items() if c in COLUMNS or any(x != "" for x in v)}
    return cols, (lambda k: f"row {k + 1} (line {lines[k]})"), stop


def _is_label(v) -> bool:
    """Whether an id cell is written as a text label (``sess-a1``), not a number, a NaN or a JSON-dumped non-number."""
    return isinstance(v, str) and v.strip().lower() not in ("nan", "true", "false") and v.strip()[:1] not in ("[", "{")


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
        text = ~blank & pd.to_numeric(s.where(~blank, "-1"), errors="coerce").isna().to_numpy() & s.map(_is_label).to_numpy()
        faults.add(text, c, lambda k, s=s: f"{str(s.iloc[k])!r} is text, not a numeric id",
                   f"number the {c}s 0, 1, 2, ... (the same number on every row of one {c.removesuffix('_id').replace('_', ' ')}) "
                   "and leave the cell blank for none")
        vals = _numeric(faults, c, s.where(~blank, "-1"))
        with np.errstate(invalid="ignore"):
            bad = ~blank & np.isfinite(vals) & ((vals < 0) | (vals != np.floor(vals)) | (vals >= MAX_ID))
        # -5 was read as "no session" and 1.5 as session 1, silently
        faults.add(bad, c, lambda k, v=vals: f"{v[k]:g} is not an id (a whole number from 0 to 2^62)",
                   f"number the {c}s 0, 1, 2, ... and leave the cell blank for none")
        opt[c] = np.where(np.isfinite(vals) & ~bad, vals, -1).astype(np.int64)  # a bad id is named below, not cast
    for col, v in (("arrival_s", arr), ("input_tokens", isl), ("output_tokens", osl)):
        tokens = col != "arrival_s"
        with np.errstate(invalid="ignore"):
            out = (v < 1) | (v > MAX_TOKENS) if tokens else v < 0
        faults.add(out, col, lambda k, v=v, t=tokens: f"{v[k]:g} is out of range "
                   f"({f'1 to {MAX_TOKENS:.0e} tokens' if t else '>= 0 s'})",
                   f"give {col} as a whole number of tokens from 1 to {MAX_TOKENS:.0e}" if tokens
                   else "give arrival_s in seconds from the trace's start (>= 0)")
        if tokens:  # 100.5 was truncated to 100, silently
            faults.add(np.isfinite(v) & ~out & (v != np.floor(v)), col,
                       lambda k, v=v: f"{v[k]:g} is not a whole number of tokens", "give token counts as integers")
    err = faults.error() or stop
    if err is not None:
        raise err
    first = float(arr.min())
    if float(arr.max()) >= NOT_SECONDS_ABOVE:
        if first < NOT_SECONDS_ABOVE:  # seconds beside 1e300: that row's slip, not an epoch clock (break53)
            k = int(np.flatnonzero(arr >= NOT_SECONDS_ABOVE)[0])
            raise SpecError(f"{p.name}: {where(k)}: arrival_s", f"{arr[k]:.3g} s is over {NOT_SECONDS_ABOVE:.0e} s "
                            f"(3,200 years) while the first arrival is {first:g} s", "give every arrival_s in "
                            "seconds on one clock")
        unit = "nanoseconds" if first >= 1e17 else "microseconds" if first >= 1e14 else "milliseconds"
        raise SpecError(f"{p.name}: arrival_s", f"values up to {arr.max():.3g} are not seconds (epoch {unit}?)",
                        f"give seconds: divide by {_PER_S[unit]}")
    if first >= REBASE_ABOVE_S:
        arr = arr - first  # an absolute clock (epoch seconds): only the gaps matter
    if float(arr.max()) > MAX_SPAN_S:
        raise SpecError(f"{p.name}: arrival_s", f"the trace spans {arr.max():.3g} s (over {MAX_SPAN_S:.0e} s, "
                        "3 years)", "give arrival times in seconds")
    order = np.argsort(arr, kind="stable")
    return Trace(arr[order], isl.astype(np.int64)[order], np.maximum(osl.astype(np.int64), 2)[order],
                 opt["session_id"][order], opt["prefix_group"][order], int(np.count_nonzero(osl < 2)),
                 order.astype(np.int64) + 1)
