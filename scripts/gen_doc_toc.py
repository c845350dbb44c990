#!/usr/bin/env python3
"""Write the table of contents at the top of the long docs pages (docs/model.md, docs/architecture.md, the other
reference pages of :data:`REFERENCE_PAGES`, docs/gap_*.md).

Each page's contents list sits right under its ``# title`` line, between the markers ``<!-- contents -->`` and
``<!-- /contents -->``: one item per ``##`` heading (``###`` indented under it), each linking to the heading's
anchor as GitHub renders it (:func:`slug`). Headings inside code fences are not headings. Everything outside the
markers is left byte for byte; a page without the markers gets them after its title line. The anchors every
docs page links to are checked by tests/unit/test_doc_links.py with :func:`anchors`.

Run: python scripts/gen_doc_toc.py [--check]   (--check: write nothing; exit 1 naming each page not current)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BEGIN, END = "<!-- contents -->", "<!-- /contents -->"
#: heading levels listed in the contents (2 = ``##``, 3 = ``###``)
LEVELS = (2, 3)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_FENCE = ("```", "~~~")


#: the other reference pages with a contents list (round 54, docs54)
REFERENCE_PAGES = ("metrics.md", "stacks.md", "simulator.md", "audit.md", "agentic.md", "explore.md")


def pages() -> list[Path]:
    """The pages that carry a contents list: model.md, architecture.md, :data:`REFERENCE_PAGES` and every gap_*.md
    investigation log."""
    return [
        DOCS / "model.md",
        DOCS / "architecture.md",
        *(DOCS / n for n in REFERENCE_PAGES),
        *sorted(DOCS.glob("gap_*.md")),
    ]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text (without its ``#`` marks): a link ``[t](u)`` counts as ``t``; lower
    case; every character that is not a letter, digit, underscore, hyphen or space dropped (backticks, dots,
    slashes, apostrophes, ``≤``, ``→``, ``·``); each space a hyphen, none merged.

    >>> slug("8.7 Prefill queueing under load and InferenceX's idle start (`serve/queueing.py`)")
    '87-prefill-queueing-under-load-and-inferencexs-idle-start-servequeueingpy'
    """
    return re.sub(r"[^\w\- ]", "", _plain(heading).lower()).replace(" ", "-")


def _plain(heading: str) -> str:
    """A heading's text with each markdown link ``[t](u)`` (or image) written as its text ``t``."""
    return _LINK.sub(r"\1", heading.strip())


def headings(text: str) -> list[tuple[int, str, str]]:
    """(level, text, anchor) of each heading outside code fences and outside the contents block, in page order;
    a repeated anchor gets ``-1``, ``-2``, ... as GitHub gives it."""
    out, seen, fenced, in_toc = [], {}, False, False
    for ln in text.splitlines():
        if ln.lstrip().startswith(_FENCE):
            fenced = not fenced
            continue
        if ln.strip() in (BEGIN, END):
            in_toc = ln.strip() == BEGIN
            continue
        m = None if fenced or in_toc else re.match(r"(#{1,6}) +(.*?)(?: +#+)? *$", ln)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.append((len(m.group(1)), m.group(2), base if n == 0 else f"{base}-{n}"))
    return out


def anchors(text: str) -> set[str]:
    """Every anchor a link into the page may name."""
    return {a for _, _, a in headings(text)}


def contents(text: str) -> list[str]:
    """The contents block's lines (markers included) for a page's text."""
    items = [f"{'  ' * (lvl - LEVELS[0])}- [{_plain(t)}](#{a})" for lvl, t, a in headings(text) if lvl in LEVELS]
    return [BEGIN, "**Contents**", "", *items, END]


def with_contents(text: str) -> str:
    """The page with its contents block written (replacing the old one, else inserted after the title line)."""
    lines = text.split("\n")
    block = contents(text)
    if BEGIN in lines and END in lines:
        i, j = lines.index(BEGIN), lines.index(END)
        return "\n".join(lines[:i] + block + lines[j + 1 :])
    title = next(i for i, ln in enumerate(lines) if ln.startswith("# "))
    return "\n".join(lines[: title + 1] + ["", *block] + lines[title + 1 :])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page's contents are stale")
    a = ap.parse_args(argv)
    stale = []
    for p in pages():
        old = p.read_text()
        new = with_contents(old)
        if new == old:
            continue
        if a.check:
            stale.append(p.relative_to(ROOT))
        else:
            p.write_text(new)
            print(f"wrote {p.relative_to(ROOT)}")
    for p in stale:
        print(f"{p}: contents out of date; run python scripts/gen_doc_toc.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
