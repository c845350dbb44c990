"""A trace file's cells read into raw columns, each bad cell noted so the first in file order is named.

serve/sim/trace.read_trace reads a CSV (pandas, every cell a string) or a JSONL file (one request object a
line) into a column per name of :data:`COLUMNS` + :data:`OPTIONAL`, then checks the values. The readers here
stop at the first row that ends the parse (more cells than the header; a line that is not a request object) and
return the rows above it with that error, so a bad value above it is named first (:class:`_Faults`); a column
or key the reader does not read is refused with the near name or the unit it looks like (``arrival_ms``).
"""

from __future__ import annotations

import csv
import io
import json
import math
import warnings
from collections.abc import Callable, Iterator

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.specs.files import (
    TOO_MANY_DIGITS_FIX,
    DuplicateKeyError,
    too_many_digits,
    too_many_digits_problem,
    unique_keys,
)


COLUMNS = ("arrival_s", "input_tokens", "output_tokens")
OPTIONAL = ("session_id", "prefix_group")
_PER_S = {"nanoseconds": "1e9", "microseconds": "1e6", "milliseconds": "1e3"}
#: Arrival-time columns named in another unit: (the unit, what to divide by for seconds).
_UNIT_SLIPS = {
    f"arrival_{u}": (unit, _PER_S[unit])
    for u, unit in (("ms", "milliseconds"), ("us", "microseconds"), ("ns", "nanoseconds"))
}

#: other traces' names for this reader's columns, per trace (break55): a Mooncake trace (kvcache-ai/Mooncake
#: FAST25-release/traces, one JSON object a line; format in ai-dynamo/dynamo benchmarks/data_generator/README.md:
#: timestamp in milliseconds since the first request, input_length, output_length, hash_ids of the prompt's KV
#: blocks), Azure's LLM inference traces (Azure/AzurePublicDataset 2023/2024: TIMESTAMP a wall-clock date-time,
#: ContextTokens, GeneratedTokens), BurstGPT (HPMLL/BurstGPT v1.1: Timestamp in seconds, Request tokens,
#: Response tokens) and jalapeno's own --isl/--osl. None: a column with no counterpart here, to drop.
_FOREIGN: dict[str, dict[str, str | None]] = {
    "a Mooncake trace's": {
        "timestamp": "arrival_s in seconds (Mooncake's are milliseconds: / 1e3)",
        "input_length": "input_tokens",
        "output_length": "output_tokens",
        "hash_ids": None,
    },
    "an Azure LLM inference trace's": {
        "TIMESTAMP": "arrival_s (seconds after the first row's time)",
        "ContextTokens": "input_tokens",
        "GeneratedTokens": "output_tokens",
    },
    "a BurstGPT trace's": {
        "Timestamp": "arrival_s",
        "Request tokens": "input_tokens",
        "Response tokens": "output_tokens",
    },
    "the --isl/--osl options'": {"isl": "input_tokens", "osl": "output_tokens"},
}


def _foreign(names, name: str) -> SpecError | None:
    """The refusal of a trace written in another tool's column names (:data:`_FOREIGN`), naming each renaming it
    needs, or None: ``timestamp`` was 'unknown column' with no hint, and a Mooncake trace's milliseconds renamed
    alone would be read as seconds.

    >>> str(_foreign(["isl", "osl", "arrival_s"], "t.csv"))
    "t.csv: isl: unknown column (the --isl/--osl options' name). Fix: rename isl to input_tokens, osl to output_tokens (a trace holds arrival_s, input_tokens, output_tokens [, session_id, prefix_group])"
    """
    for label, cols in _FOREIGN.items():
        present = [c for c in names if c in cols]
        if not present:
            continue
        renames = [f"{c} to {cols[c]}" for c in present if cols[c] is not None]
        drops = [c for c in names if c not in cols and c not in COLUMNS + OPTIONAL]  # BurstGPT's Model, Log Type
        drops += [c for c in present if cols[c] is None]
        fix = "rename " + ", ".join(renames) if renames else ""
        if drops:
            fix += ("; " if fix else "") + f"drop {', '.join(drops)}"
            fix += " (KV block hashes: shared prefixes are prefix_group)" if "hash_ids" in drops else ""
        return SpecError(
            f"{name}: {present[0]}",
            f"unknown column ({label} name)",
            fix + " (a trace holds arrival_s, input_tokens, output_tokens [, session_id, prefix_group])",
        )
    return None


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
        faults.add(
            quoted,
            col,
            lambda k: f"{json.dumps(str(raw[k]))} is text, not a number",
            f'write {col} as a JSON number without quotes, e.g. "{col}": 1024',
        )
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
            faults.add(
                bad, col, lambda _: f"{shown} is not a finite number", "use finite numbers for times, lengths and ids"
            )
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
            raise SpecError(
                f"{name}: header",
                f"its columns are separated by {word}, not commas",
                "write the trace comma-separated: arrival_s,input_tokens,output_tokens",
            )
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise SpecError(f"{name}: header", f"column {dup[0]!r} appears twice", "give each column once")
    where = _csv_where(text)
    try:
        with warnings.catch_warnings():  # pandas only warns when a row has more cells than the header
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True, index_col=False
            )
    except (pd.errors.ParserWarning, pd.errors.ParserError) as e:
        width = len(header)
        wide = next(((k, ln, row) for k, (ln, row) in enumerate(_csv_rows(text)) if len(row) > width), None)
        if wide is None:
            raise SpecError(
                name,
                f"malformed CSV ({str(e).splitlines()[0]})",
                'one request per line; close every quoted field with a matching "',
            ) from None
        k, line, row = wide
        stop = SpecError(
            f"{name}: row {k + 1} (line {line})",
            f"{len(row)} cells, more cells than the header has columns ({width})",
            "give one value per column (quote a value that holds a comma)",
        )
        if k == 0:
            return {}, where, stop
        cols, _, _ = _columns_from_csv("\n".join(text.split("\n")[: line - 1]) + "\n", name)
        return cols, where, stop
    except pd.errors.EmptyDataError:
        raise SpecError(name, "the trace has no rows", "add a header and at least one request") from None
    except ValueError as e:
        raise SpecError(
            name,
            f"malformed CSV ({str(e).splitlines()[0]})",
            'one request per line; close every quoted field with a matching "',
        ) from None
    df.columns = [str(c).strip() for c in df.columns]
    _check_names(df.columns, name)
    return {c: df[c] for c in df.columns}, where, None


def _check_names(names, name: str) -> None:
    """Refuse a column (CSV header) or key (JSONL) the trace reader does not read: a misspelt
    optional column (``sesion_id``) was dropped silently and the trace replayed without sessions."""
    import difflib

    for c in names:
        if c in _UNIT_SLIPS:  # arrival_ms was 'did you mean arrival_s?': renaming it alone reads ms as s
            raise SpecError(
                f"{name}: {c}",
                f"arrival times in {_UNIT_SLIPS[c][0]}; the trace reads seconds",
                f"divide the times by {_UNIT_SLIPS[c][1]} and name them arrival_s",
            )
        if c not in COLUMNS + OPTIONAL:
            if (other := _foreign(names, name)) is not None:
                raise other
            near = difflib.get_close_matches(c.lower(), COLUMNS + OPTIONAL, n=1, cutoff=0.6)  # ARRIVAL_S: no hint
            raise SpecError(
                f"{name}: {c}",
                "unknown column" + (f" (did you mean {near[0]!r}?)" if near else ""),
                "rename or drop it: a trace holds arrival_s, input_tokens, output_tokens [, session_id, prefix_group]",
            )


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
        return (
            cols,
            (lambda k: f"row {k + 1}"),
            SpecError(
                name,
                "is one JSON array, not JSON Lines (one request object per line)",
                "write one JSON object per line, e.g. jq -c '.[]' FILE > trace.jsonl",
            ),
        )
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, object_pairs_hook=unique_keys)
        except DuplicateKeyError as e:  # the last value was kept, silently
            stop = SpecError(
                f"{name}: line {i}: {e.key}", "is given twice in one object", "give each field once per line"
            )
        except (json.JSONDecodeError, RecursionError) as e:
            stop = SpecError(
                f"{name}: line {i}",
                f"malformed JSON: {getattr(e, 'msg', 'nested too deeply')}",
                "one JSON object per line",
            )
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
            col.append(
                ""
                if v is None
                else json.dumps(v)
                if isinstance(v, (dict, list, bool)) or v != v
                else _Quoted(v)
                if isinstance(v, str)
                else v
            )
    cols = {c: v for c, v in cols.items() if c in COLUMNS or any(x != "" for x in v)}
    return cols, (lambda k: f"row {k + 1} (line {lines[k]})"), stop


def _is_label(v) -> bool:
    """Whether an id cell is written as a text label (``sess-a1``), not a number, a NaN or a JSON-dumped non-number."""
    return isinstance(v, str) and v.strip().lower() not in ("nan", "true", "false") and v.strip()[:1] not in ("[", "{")
