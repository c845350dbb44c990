"""Shared writer of the fit scripts' data files: a header of comments, then one ``[[table]]`` per entry (review30:
fit_moe_backend_kernels.py and fit_moe_backend_floors.py carried the same 40 lines each; fit_moe_backends.py its
own value writer and --dry-run/write tail)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from jalapeno.errors import JalapenoError


def toml_value(x) -> str:
    """One value as the data files write it: TOML booleans, quoted strings, lists of values, floats to 6
    significant digits."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, str):
        return '"' + x + '"'
    if isinstance(x, list):
        return "[" + ", ".join(toml_value(i) for i in x) + "]"
    if isinstance(x, float):
        return repr(float(f"{x:.6g}"))
    return str(x)


def tables_toml(header: list[str], table: str, entries: list[dict]) -> str:
    """``header`` (comment lines), a blank line, then one ``[[table]]`` per entry, each followed by a blank line."""
    lines = [*header, ""]
    for e in entries:
        lines += [f"[[{table}]]", *(f"{k} = {toml_value(v)}" for k, v in e.items()), ""]
    return "\n".join(lines)


def write_main(argv: list[str], out: Path, what: str, render: Callable[[], str]) -> int:
    """``[--dry-run | --check]``: print ``render()``, write it to ``out``, or (``--check``, a step of
    scripts/recalibrate.py) exit 1 when ``out`` differs from it (numbers beyond fit/fitted_files.REL_TOL); a
    JalapenoError (e.g. the tables' package not installed) is printed as its one line, exit 2."""
    ap = argparse.ArgumentParser(description=f"Write {out.name}: {what}.")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--dry-run", action="store_true", help=f"print the TOML instead of writing {out.name}")
    g.add_argument("--check", action="store_true", help=f"exit 1 when {out.name} is not what a fresh fit writes")
    a = ap.parse_args(argv)
    return emit(out, render, a.dry_run, a.check)


def emit(out: Path, render: Callable[[], str], dry_run: bool, check: bool = False) -> int:
    """Print ``render()`` (``dry_run``), compare it with ``out`` (``check``: 1 when stale, each difference printed)
    or write it to ``out``; a JalapenoError is printed as its one line, exit 2."""
    try:
        text = render()
    except JalapenoError as e:
        print(e)
        return 2
    if check:
        from jalapeno.fit.fitted_files import check_file

        return check_file(out, text)
    if dry_run:
        print(text)
    else:
        out.write_text(text)
        print(f"wrote {out}")
    return 0
