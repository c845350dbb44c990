"""Reading a user's file: one place that turns every way a read can fail into a named error.

Every reader of a user file (system TOML, model config.json, trace CSV/JSONL, calibration TOML,
validation CSV) goes through :func:`read_user_text`, so a missing file, a directory, a file the
user may not read, a non-UTF-8 file and a UTF-8 byte-order mark are handled the same way
everywhere. :func:`csv_rows` parses CSV text with the same care (an unterminated quote, a field
past the csv module's limit).
"""

from __future__ import annotations

import csv
from pathlib import Path

from jalapeno.errors import SpecError

#: Largest CSV field accepted, in characters. The csv module's default limit is 131,072; a longer
#: field in a trace or points file is always a broken quote, so it is refused with that reason.
CSV_FIELD_LIMIT = 131_072

#: Largest user file read, in bytes (256 MiB). An assumption, far above any real input: the
#: shipped data files are under 0.5 MB each, and a 256 MiB trace holds ~8 million requests (about
#: 32 bytes a CSV row), past what the simulator replays in a session. Above it the input is a
#: device or a wrong file (``--model /dev/zero`` read without end, filling memory).
MAX_USER_FILE_BYTES = 256 * 2**20


def too_many_digits(e: BaseException) -> bool:
    """Whether ``e`` is Python's refusal to read a whole number of more digits than
    ``sys.get_int_max_str_digits()`` (4,300 by default, CPython >= 3.11): ``tomllib`` and ``json`` raise it as a
    plain ValueError, which reached the user as a traceback (a 5,000-digit ``hbm_stacks``, break50).

    >>> too_many_digits(ValueError("Exceeds the limit (4300 digits) for integer string conversion"))
    True
    """
    return isinstance(e, ValueError) and "integer string conversion" in str(e)


def too_many_digits_problem() -> str:
    """The problem text of :func:`too_many_digits`, with the interpreter's limit.

    >>> too_many_digits_problem()
    'holds a whole number of more than 4,300 digits, more than Python reads'
    """
    import sys

    return f"holds a whole number of more than {sys.get_int_max_str_digits():,} digits, more than Python reads"


#: the fix of :func:`too_many_digits_problem`
TOO_MANY_DIGITS_FIX = "write the number as the quantity it is (a large one in scientific notation, e.g. 1e30)"


def parse_toml(text: str) -> dict:
    """``tomllib.loads`` for a user's file, with arrays or inline tables nested past Python's recursion limit
    read as the TOML error they are (``x = [[[...]]]`` 5,000 deep raised RecursionError from tomllib, a traceback).

    Raises:
        tomllib.TOMLDecodeError: malformed or too deeply nested TOML, or a whole number past Python's digit limit
            (:func:`too_many_digits`).
    """
    import tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("arrays or inline tables nested too deeply to read") from None
    except tomllib.TOMLDecodeError as e:
        twice = _set_twice(str(e), text)
        if twice:
            raise tomllib.TOMLDecodeError(twice) from None
        raise
    except ValueError as e:  # after TOMLDecodeError, a ValueError too: a 5,000-digit integer (break50)
        if not too_many_digits(e):
            raise
        raise tomllib.TOMLDecodeError(f"{too_many_digits_problem()}: {TOO_MANY_DIGITS_FIX}") from None


def _set_twice(msg: str, text: str) -> str:
    r"""tomllib's message for a key or table given twice, with the key and its line written out ("" for any other
    error): 'Cannot overwrite a value (at line 4, column 17)' named neither (break46).

    >>> _set_twice("Cannot overwrite a value (at line 2, column 4)", "a = 1\na = 2\n")
    "the key 'a' is set twice (line 2: a = 2): give each key once (Cannot overwrite a value (at line 2, column 4))"
    """
    import re

    at = re.search(r"\(at line (\d+), column \d+\)$", msg)
    lines = text.split("\n")  # tomllib counts lines by "\n" alone (splitlines also splits at \f, \x85, \u2028 ...)
    if not at or not 0 < int(at[1]) <= len(lines):
        return ""
    line = lines[int(at[1]) - 1].strip()
    shown = line if len(line) <= 80 else line[:77] + "..."
    key = line.split("=", 1)[0].strip() if "=" in line else ""
    what = f"the key {key!r}" if key else "a key"
    if msg.startswith("Cannot mutate immutable namespace"):  # 'a = {x = 1}' then 'a.y = 2': nothing is set twice
        return (
            f"{what} adds to an inline table, which is closed once written (line {at[1]}: {shown}): put the "
            f"key inside its braces, or write the table as [name] ({msg})"
        )
    if msg.startswith("Cannot overwrite a value"):
        under = f", or a key it is under ({key.rsplit('.', 1)[0]!r}) is a value already" if "." in key else ""
        return f"{what} is set twice{under} (line {at[1]}: {shown}): give each key once ({msg})"
    if msg.startswith("Cannot declare"):
        return f"the table {shown} is declared twice (line {at[1]}): give each table once, its keys together ({msg})"
    return ""


def read_user_text(path: str | Path, what: str, fix: str) -> str:
    """The text of a user's file, UTF-8 with an optional byte-order mark removed.

    Args:
        path: the file.
        what: what the file should be, for the message ("a system TOML file").
        fix: what to pass instead, for the message.

    Raises:
        SpecError: missing, a directory, unreadable (permission, I/O error), larger than
            :data:`MAX_USER_FILE_BYTES` or not UTF-8; the field is the path.
    """
    p = Path(path)
    if p.is_dir():
        inner = p / "config.json"  # a Hugging Face snapshot folder: its config.json is the file meant (break46)
        if "config.json" in what and inner.is_file():
            fix = f"pass the config.json it holds: {inner}"
        raise SpecError(str(p), f"is a directory, not {what}", fix)
    if not p.exists():
        if p.is_symlink():  # exists() follows the link: a dangling one, or one that loops back on itself
            raise SpecError(
                str(p),
                "is a symbolic link that leads to no file (broken, or looping back on itself)",
                f"point the link at a real file, or {fix[:1].lower()}{fix[1:]}",
            )
        raise SpecError(str(p), "file not found", fix)
    try:
        if p.is_file():
            size = p.stat().st_size
            data = p.read_bytes() if size <= MAX_USER_FILE_BYTES else b""
        else:  # a device or a pipe (<(...)): at most one byte past the limit, as /dev/zero never ends
            with p.open("rb") as f:
                data = f.read(MAX_USER_FILE_BYTES + 1)
            size = len(data)
        if size > MAX_USER_FILE_BYTES:
            raise SpecError(
                str(p),
                f"is larger than {MAX_USER_FILE_BYTES // 2**20} MiB: not {what} (a device or a wrong file?)",
                fix,
            )
    except PermissionError:
        raise SpecError(
            str(p),
            "permission denied (the file cannot be read)",
            "make the file readable (chmod u+r) or pass another file",
        ) from None
    except OSError as e:
        raise SpecError(str(p), f"cannot be read ({e.strerror or type(e).__name__})", fix) from None
    try:
        return data.decode("utf-8-sig")  # a byte-order mark (Excel's CSV export) is not part of the data
    except UnicodeDecodeError:
        raise SpecError(str(p), f"not a UTF-8 text file (expected {what})", fix) from None


class DuplicateKeyError(ValueError):
    """A JSON object names one key twice (``json.loads`` keeps the last, silently)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def file_stamp(name_or_path: str) -> tuple[int, int] | None:
    """``(mtime_ns, size)`` of the file at ``name_or_path``, or None where there is none (a
    catalog name).

    A cache-key part for the loaders cached per name (specs/catalog.load_model and
    load_efficiency, specs/variants.load_variant): keyed on the path alone, a notebook that rewrote
    its variant TOML or config.json and loaded it again got the first version back, silently. The
    mtime moves with the kernel's clock tick (a few ms): two same-size writes inside one tick read
    as one version. A system file's ``base`` chain: :func:`chain_stamp`.
    """
    try:
        st = Path(name_or_path).stat()
    except (OSError, TypeError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size)


def chain_stamp(name_or_path: str, _seen: tuple[str, ...] = ()) -> tuple | None:
    """:func:`file_stamp` of a system TOML file and of every file its ``base`` chain reaches (a relative
    base path from the naming file's folder, as specs/variants.resolve_system_data resolves it), or
    None for a catalog name. The cache key of the loaders cached per system file (specs/variants.load_variant,
    specs/catalog.load_efficiency): keyed on the named file alone, an edited base file went unseen and
    the variant kept the base's first version, silently. A file that does not parse ends the chain (its
    loader reports it); a loop ends it too (the loader refuses the loop).

    >>> chain_stamp("h200") is None  # a catalog name
    True
    """
    st = file_stamp(name_or_path)
    if st is None or not Path(name_or_path).is_file():
        return None
    p = Path(name_or_path)
    try:
        base = parse_toml(p.read_text(encoding="utf-8-sig")).get("base")
    except (OSError, ValueError):  # UnicodeDecodeError and TOMLDecodeError are ValueErrors
        return (st,)
    here = str(p.resolve())
    if not isinstance(base, str) or not base or here in _seen:
        return (st,)
    return (st,) + (chain_stamp(base_reference(p, base), _seen + (here,)) or ())


def base_reference(path: Path, base: str) -> str:
    """What a system file at ``path`` means by ``base = "..."``: a catalog name as written, a path (it has a
    separator or ends in .toml) relative to the file's own folder unless absolute. One rule for the loader
    (specs/variants.resolve_system_data) and the cache key (:func:`chain_stamp`).

    >>> base_reference(Path("/a/b/v.toml"), "h200"), base_reference(Path("/a/b/v.toml"), "c.toml")
    ('h200', '/a/b/c.toml')
    """
    if ("/" in base or "\\" in base or base.lower().endswith(".toml")) and not Path(base).is_absolute():
        return str(Path(path).parent / base)
    return base


def unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``object_pairs_hook`` for :func:`json.loads`: the object as a dict, or
    :class:`DuplicateKeyError` naming a key given twice (a config.json with two ``hidden_size``
    entries was read with the last one, silently).

    >>> import json
    >>> json.loads('{"a": 1, "b": 2}', object_pairs_hook=unique_keys)
    {'a': 1, 'b': 2}
    """
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKeyError(k)
        out[k] = v
    return out


def csv_rows(text: str, where: str) -> list[dict[str, str]]:
    """Rows of CSV text as dicts keyed by the header (header names stripped of spaces).

    Raises:
        SpecError: a malformed CSV (an unterminated quote, a field over :data:`CSV_FIELD_LIMIT`
            characters, a row of more cells than the header has columns or of fewer than its named ones: a
            header's unnamed column, a trailing comma, may go without its cell, read as None; a line of blanks is
            skipped), naming the line; a column named twice in the header.

    >>> csv_rows("a,b,\\n1,2\\n", "x.csv")
    [{'a': '1', 'b': '2', '': None}]
    """
    reader = csv.DictReader(text.splitlines())
    rows = []
    try:
        for row in reader:
            if None in row:  # more cells than the header has columns
                raise SpecError(
                    f"{where}: line {reader.line_num}",
                    "more cells than the header has columns",
                    "give one value per column (quote a value that contains a comma)",
                )
            # fewer: DictReader filled the rest with None, silently (the point was then skipped as 'isl/osl
            # None/None missing', break48); a header's unnamed column (a trailing comma) may go without its cell
            # (review48: a header ending in a comma over rows without one read before break48 and is read again)
            if any(v is None and (k or "").strip() for k, v in row.items()):
                if not any((v or "").strip() for v in row.values()):
                    continue  # a line of blanks, as DictReader skips an empty one
                n = sum(v is not None for v in row.values())
                raise SpecError(
                    f"{where}: line {reader.line_num}",
                    f"{n} cell(s) where the header has {len(row)} "
                    "columns: a row cut short (its missing cells would read as blank)",
                    "give one value per column, an empty cell (two commas) where a value is unknown",
                )
            rows.append(row)
    except csv.Error as e:
        msg = str(e)
        if "field larger than field limit" in msg:
            msg = (
                f"a field is longer than {CSV_FIELD_LIMIT:,} characters (an unterminated quote "
                "runs to the end of the file)"
            )
        raise SpecError(
            f"{where}: line {reader.line_num}", f"malformed CSV: {msg}", 'close every quoted field with a matching "'
        ) from None
    if reader.fieldnames:
        names = [k.strip() for k in reader.fieldnames if k is not None]
        dup = [k for k in dict.fromkeys(names) if names.count(k) > 1]
        if dup:  # DictReader keeps the last cell of a repeated column, silently
            raise SpecError(f"{where}: header", f"column {dup[0]!r} appears twice", "give each column once")
        rename = {k: k.strip() for k in reader.fieldnames if k is not None and k != k.strip()}
        if rename:
            rows = [{rename.get(k, k): v for k, v in r.items()} for r in rows]
    return rows


#: The example of a system TOML that a fix names (a JSON or YAML file given where TOML is read).
TOML_EXAMPLE = 'base = "jalapeno" and dotted keys such as chip.tdp_w = 600 (docs/catalog.md)'


def toml_syntax_fix(text: str, path: str | Path, example: str = TOML_EXAMPLE) -> str:
    """The fix of a TOML syntax error: a JSON file given where TOML is read (``--system my.json`` got
    'malformed TOML: Invalid statement (at line 1, column 1). Fix: fix the TOML syntax') is named as such, and so
    is a YAML one by its suffix (``--system ./my.yaml``, newuser51).

    >>> toml_syntax_fix('{"base": "jalapeno"}', "s.json")
    'this is JSON (TOML is read here): write it as TOML, e.g. base = "jalapeno" and dotted keys such as chip.tdp_w = 600 (docs/catalog.md)'
    >>> toml_syntax_fix("base: jalapeno", "./s.yaml")[:47]
    'this is YAML (TOML is read here): write it as T'
    >>> toml_syntax_fix("base = ", "s.toml")
    'fix the TOML syntax'
    """
    if str(path).lower().endswith(".json") or text.lstrip().startswith(("{", "[{")):
        return f"this is JSON (TOML is read here): write it as TOML, e.g. {example}"
    if str(path).lower().endswith((".yaml", ".yml")):
        return f"this is YAML (TOML is read here): write it as TOML, e.g. {example}"
    return "fix the TOML syntax"
