"""Shared command line of the doc generators: write the page, or ``--check`` that it is current."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(
    render: Callable[[], str], default_out: Path, doc: str, script: str, argv: list[str] | None = None
) -> int:
    """Render the page; write it to ``--out``, or with ``--check`` exit 1 if the file differs."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", type=Path, default=default_out)
    ap.add_argument("--check", action="store_true", help="exit 1 if the file on disk is out of date")
    a = ap.parse_args(argv)
    text = render()
    if a.check:
        cur = a.out.read_text() if a.out.is_file() else ""
        if cur != text:
            print(f"{a.out} is out of date; run scripts/{script}", file=sys.stderr)
            return 1
        return 0
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text)
    print(f"wrote {a.out}")
    return 0
