"""One file-schema error in the project's words: what is wrong with the key, and the fix.

pydantic reports a bad file key as ``Input should be a valid number [type=float_type, ...]``;
:func:`describe` turns one entry of ``ValidationError.errors()`` into a problem sentence and a
fix that name the key and what to write instead (``must be a number, got 'fast'`` / ``write
chip.hbm_stacks = { value = <number>, source = "..." }``). A validator's own message
(``value_error``) is already ours and is kept, without pydantic's ``Value error, `` prefix.
Shared by specs/hardware.py (system files, ``--set``; schema: specs/system_file.py), specs/die.py and specs/design_space.py.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

#: a number written with thousands separators (``1,000``, ``1,000,000.5``): one pattern for a system file's or
#: ``--set``'s value (:func:`describe`) and a number option's (cli/app._option_value_error)
THOUSANDS = re.compile(r"\s*\d{1,3}(,\d{3})+(\.\d+)?\s*")

_SOURCED = ("Sourced", "Banded")  # a number that carries its source (specs/sourced.py)
_TABLE = ("model_type", "dict_type", "model_attributes_type")
_NUMBER = (
    "float_type",
    "float_parsing",
    "int_type",
    "int_parsing",
    "int_from_float",
    "decimal_type",
    "decimal_parsing",
)


def as_written(x: Any) -> str:
    """A value read from a TOML file, as the file writes it: ``true``, not Python's ``True``; a TOML
    date or time as ``the date/time 1979-05-27``, not ``datetime.date(1979, 5, 27)``; else its repr.

    >>> as_written(True), as_written(datetime.date(1979, 5, 27)), as_written("700")
    ('true', 'the date/time 1979-05-27', "'700'")
    """
    if isinstance(x, (datetime.date, datetime.time)):
        return f"the date/time {x.isoformat()}"
    return str(x).lower() if isinstance(x, bool) else repr(x)


def json_written(v: Any) -> str:
    """A config.json value as the file writes it: ``true``, ``"25600"``, ``NaN`` (Python said ``True``, ``'25600'``).

    >>> json_written(True), json_written("25600"), json_written(25600.0)
    ('true', '"25600"', '25600.0')
    """
    import json

    try:
        return json.dumps(v)
    except (TypeError, ValueError):
        return repr(v)


def _got(e: dict[str, Any]) -> str:
    """``, got <input>`` as the file writes it (:func:`as_written`)."""
    if "input" not in e or isinstance(e["input"], dict):
        return ""
    shown = as_written(e["input"])  # a 10-million-character name was echoed whole
    return f", got {shown if len(shown) <= 80 else shown[:60] + f'... ({len(shown):,} characters)'}"


def _quoted_number(x: Any, whole: bool) -> str | None:
    """The number a quoted value spells (``"700"`` -> ``700``), as the key takes it, or None.

    >>> _quoted_number("700", False), _quoted_number(" 8 ", True), _quoted_number("eight", True)
    ('700', '8', None)
    """
    if not isinstance(x, str):
        return None
    try:
        v = float(x)
    except ValueError:
        return None
    if v != v or v in (float("inf"), float("-inf")) or (whole and not v.is_integer()):
        return None
    return str(int(v)) if v.is_integer() else f"{v:g}"


def _number_with_unit(x: Any, whole: bool, loc: str = "") -> tuple[str, str] | None:
    """(number, unit) of a value typed with a unit (``"550W"``, ``"4.8 TB/s"``), the number as the key takes it, or
    None; the unit is "" when it is the one the key's name ends with (``chip.tdp_w``: W), so the number is the key's
    and the fix shows it, not a generic 4.8 (``--set chip.tdp_w=550W`` suggested 4.8 W); else the unit as typed:
    ``1.2kW`` is not 1.2 W, so the fix asks for a conversion instead of handing 1.2 back.

    >>> _number_with_unit("550W", False, "chip.tdp_w"), _number_with_unit("4.8 TB/s", False, "chip.hbm_bandwidth_tb_per_s")
    (('550', ''), ('4.8', ''))
    >>> _number_with_unit("1.2kW", False, "chip.tdp_w"), _number_with_unit("fast", False, "chip.tdp_w")
    (('1.2', 'kW'), None)
    """
    import re

    m = (
        re.fullmatch(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z%/][A-Za-z%/ ]*)", x)
        if isinstance(x, str)
        else None
    )
    if m is None or (bare := _quoted_number(m.group(1), whole)) is None:
        return None
    typed = [w for w in re.split(r"[^a-z0-9]+", m.group(2).lower()) if w]
    # the key's words without "per" (hbm_bandwidth_tb_per_s -> ..., tb, s), segment by segment (peak_dense_tflops.bf16)
    names = [[w for w in seg.split("_") if w != "per"] for seg in loc.removesuffix(".value").lower().split(".")]
    own = bool(typed) and any(len(ws) > len(typed) and ws[-len(typed) :] == typed for ws in names)
    return bare, "" if own else m.group(2).strip()


def describe(
    e: dict[str, Any], loc: str, schema_doc: str, option: str | None = None, whole: bool = False
) -> tuple[str, str]:
    """``(problem, fix)`` for one pydantic error entry, in the project's words.

    Args:
        e: one entry of ``pydantic.ValidationError.errors()`` (keys ``type``, ``msg``, ``ctx``,
            ``input``).
        loc: the key as the user writes it (``chip.hbm_stacks``), used in the fix.
        schema_doc: the document that holds the schema (``docs/catalog.md``), named in fixes.
        option: the command-line option that gave the value (``--set``): a bad number's fix is
            then written as that option takes it (``--set chip.hbm_stacks=8``), not as TOML.
        whole: the key is a count (``chip.hbm_stacks``) even where its schema type is a float:
            the fix asks for a whole number.

    Returns:
        The problem (no leading key, no trailing period) and the fix. Never pydantic's wording
        (``Input should be``, ``Field required``, ``type=``).
    """
    kind, ctx = e.get("type", ""), e.get("ctx") or {}
    got = _got(e)
    see = f"(see {schema_doc} for the schema)"
    if kind in _TABLE and ctx.get("class_name") in _SOURCED:
        return (
            f"must be a number with its source{got}",
            f'write {loc} = {{ value = <number>, source = "<where it comes from>" }}',
        )
    if kind in _TABLE:
        return f"must be a table of its keys{got}", f"write {loc} as a table ([{loc}] in the file) {see}"
    if kind in _NUMBER:
        whole = whole or kind.startswith("int")
        # none of the user's numbers to show: a placeholder (4.8 read as 4.8 W for chip.tdp_w)
        number, example = ("whole number", "8") if whole else ("number", "<number>")
        quoted = _quoted_number(e.get("input"), whole)
        if quoted is not None:  # tdp_w = "700": the user's own number, unquoted (not 4.8 W)
            example = quoted
        unit = ""
        raw = e.get("input")
        if quoted is None and isinstance(raw, str) and THOUSANDS.fullmatch(raw):
            example, unit = raw.strip().replace(",", ""), " without thousands separators"  # --set chip.tdp_w=1,000
        elif quoted is None and (typed := _number_with_unit(raw, whole, loc)) is not None:  # "550W"
            example, unit = typed[0], " without its unit (the key's name gives the unit)"
            if typed[1]:  # "1.2kW" for tdp_w: 1.2 would be 1.2 W
                k = loc.removesuffix(".value")
                fix = (
                    f"write the number in the unit the key's name gives ({k}), without a unit: {typed[1]!r} is not "
                    f"it, so convert first, e.g. "
                )
                return (f"must be a {number}{got}", fix + (f"{option} {k}=<number>" if option else f"{loc} = <number>"))
        if option:  # --set chip.hbm_stacks=eight: the key as typed (no .value), the option's syntax
            return (
                f"must be a {number}{got}",
                f"write a {number}{unit}, e.g. {option} {loc.removesuffix('.value')}={example}",
            )
        return f"must be a {number}{got}", f"write a {number}{unit or ' without quotes'}, e.g. {loc} = {example}"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false{got}", f"write {loc} = true or {loc} = false"
    if kind in ("string_type", "string_unicode"):
        return f"must be text{got}", f'write {loc} = "<text>" (in double quotes)'
    if kind in ("list_type", "tuple_type", "set_type"):
        return f"must be a list{got}", f"write {loc} = [ ... ] {see}"
    if kind == "missing":
        return "is missing", f"add {loc} to the file {see}"
    if kind == "extra_forbidden":
        return "is not a key this table knows", f"remove {loc} or correct its spelling {see}"
    if kind == "finite_number":
        return f"must be a finite number{got}", f"write a finite number for {loc} (not nan or inf)"
    for bound, words in (
        ("greater_than_equal", "at least"),
        ("less_than_equal", "at most"),
        ("greater_than", "greater than"),
        ("less_than", "less than"),
    ):
        if kind == bound:
            limit = next(iter(ctx.values()), "?")
            key = loc.removesuffix(".value")  # --set chip.hbm_stacks=0 names chip.hbm_stacks, as typed
            if bound == "greater_than" and limit == 0 and key.startswith("chip.peak_dense_tflops."):
                # an FP4-only what-if wrote fp8 = 0 and was told only to give a positive value (newuser52)
                fmt = key.rsplit(".", 1)[1]
                return (
                    f"must be positive{got}",
                    f"give {key} a positive value, or leave {fmt} out for a chip without {fmt} units (as "
                    "a100-sxm.toml leaves fp8 out); a variant or --set cannot drop a format its base states: "
                    "copy the base's file without it, with calibration = \"<base>\" to keep the base's efficiency "
                    "set (docs/catalog.md, 'Variants')",
                )
            if bound == "greater_than" and limit == 0:
                return f"must be positive{got}", f"give {key} a positive value"
            return f"must be {words} {limit}{got}", f"give {key} a value {words} {limit}"
    if kind in ("too_short", "too_long"):
        n = ctx.get("min_length" if kind == "too_short" else "max_length", "?")
        return (
            f"must have {'at least' if kind == 'too_short' else 'at most'} {n} item(s){got}",
            f"give {loc} {'at least' if kind == 'too_short' else 'at most'} {n} item(s)",
        )
    if kind in ("string_too_short", "string_too_long"):
        n = ctx.get("min_length" if kind == "string_too_short" else "max_length", "?")
        return (
            f"must be {'at least' if kind == 'string_too_short' else 'at most'} {n} character(s){got}",
            f"write a {'longer' if kind == 'string_too_short' else 'shorter'} {loc}",
        )
    if kind in ("literal_error", "enum"):
        return (f"must be one of {ctx.get('expected', '?')}{got}", f"write one of {ctx.get('expected', '?')} for {loc}")
    if kind in ("value_error", "assertion_error"):
        msg = str(e.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        return msg, f"correct {loc} {see}"
    return f"is not a valid value{got}", f"correct {loc} {see}"
