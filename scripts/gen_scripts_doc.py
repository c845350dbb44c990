#!/usr/bin/env python3
"""Generate docs/scripts.md: one row per ``scripts/*.py`` with its kind, purpose, command line and citing docs.

Each row is read from the script's own source with ``ast`` (nothing is imported or run): the first
sentence of its module docstring, its command line (the first ``python scripts/NAME.py ...`` at or
after its ``Run:``, else anywhere in the docstring), and, from a grep of ``docs/*.md`` for ``NAME.py``, each page that cites it with
the heading of the section holding its first mention. The kind comes from ``kind_of`` (rules on the
name and the docstring, listed on the page). A script without a module docstring is refused by name.

Usage:
    python scripts/gen_scripts_doc.py [--out docs/scripts.md] [--check]
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from _docgen import write_or_check
from gen_doc_toc import BEGIN, END

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
DOCS = ROOT / "docs"
DEFAULT_OUT = DOCS / "scripts.md"

#: Scripts whose output is written into the repository but whose name does not say so.
_FIT = {
    "run_loso",
    "inferencex_search_space",
    "fidelity_ratchet",
    "first_wave_stall",
    "sglang_rocm_release",
    "_toml_tables",
    "recalibrate",
}
#: Tools of the test suite.
_TEST = {"make_golden", "mutants"}

KIND_RULES = (
    (
        "doc generator",
        "``gen_*`` and ``check_collectives`` (writes docs/collectives.md): write a page of docs/, "
        "most with ``--check``",
    ),
    ("doc section", "``_docgen``, ``*_section*``: modules imported by a doc generator, not run alone"),
    (
        "fit",
        "``fit_*`` and "
        + ", ".join(f"``{n}``" for n in sorted(_FIT))
        + ": fit or measure a value the package ships (a data TOML or a constant)",
    ),
    ("test tool", ", ".join(f"``{n}``" for n in sorted(_TEST)) + ": the CLI golden set and the mutation check"),
    ("what-if", "a name with ``whatif`` or a docstring opening ``What-if``: a change priced, not shipped"),
    ("diagnosis", "every other script: prints figures behind a doc's diagnosis; nothing is fitted or written"),
)


def kind_of(name: str, doc: str) -> str:
    """The kind of ``scripts/{name}.py`` by the rules of ``KIND_RULES`` (first match wins)."""
    if name.startswith("gen_") or name == "check_collectives":
        return "doc generator"
    if name == "_docgen" or "_section" in name:
        return "doc section"
    if name.startswith("fit_") or name in _FIT:
        return "fit"
    if name in _TEST:
        return "test tool"
    if "whatif" in name or doc.startswith("What-if"):
        return "what-if"
    return "diagnosis"


def first_sentence(doc: str) -> str:
    """The docstring's first paragraph up to its first full stop followed by a capital, ``(``, a backtick,
    ``scripts/`` or the end."""
    para = " ".join(doc.strip().split("\n\n")[0].split())
    m = re.search(r"[.?!](?=\s+(?:[A-Z(`]|scripts/)|$)", para)
    return para[: m.end()] if m else para


def run_line(name: str, doc: str) -> str:
    """The command line of the docstring: ``[VAR=value ...] python scripts/{name}.py ARGS``, the first one
    at or after its ``Run:`` (else anywhere), up to a parenthesised note, a backtick, a ``#`` comment or
    two spaces; empty when the docstring gives none."""
    pat = re.compile(rf"(?:\b[A-Z_]+=\S+\s+)*python\s+scripts/{re.escape(name)}\.py[^`(#\n]*")
    start = doc.find("Run:")
    m = pat.search(doc, max(start, 0)) or pat.search(doc)
    return re.split(r"\s{2,}", m.group(0).strip())[0] if m else ""


def doc_lines() -> list[tuple[str, list[tuple[str, str]], str]]:
    """(page name, its (heading, line) pairs, those lines joined) of each docs/*.md but this page: every line that is
    neither a fence marker nor a heading outside a fence nor in a page's generated contents list (a list of its
    headings is no mention), with the heading it sits under — the lines
    :func:`cited_in` searches. Read once per :func:`rows` (the pages are read at render time, so ``--check`` sees the
    files as they are); the joined text lets a name no page mentions skip the line-by-line search."""
    out = []
    for page in sorted(DOCS.glob("*.md")):
        if page == DEFAULT_OUT:
            continue
        heading, fenced, kept, toc = "", False, [], False
        for ln in page.read_text().splitlines():
            if ln in (BEGIN, END):  # a page's contents list (gen_doc_toc.py)
                toc = ln == BEGIN
            elif toc:
                continue
            elif ln.startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"#{1,6} ", ln):
                heading = ln.lstrip("#").strip()
            else:
                kept.append((heading, ln))
        out.append((page.name, kept, "\n".join(ln for _, ln in kept)))
    return out


def cited_in(name: str, pages: list[tuple[str, list[tuple[str, str]], str]] | None = None) -> list[str]:
    """``page.md §heading`` of each docs/*.md (not this page) that names ``{name}.py``, at its first mention.
    ``pages``: :func:`doc_lines` (None: read now)."""
    pat = re.compile(rf"(?<![\w/]){re.escape(name)}\.py|scripts/{re.escape(name)}\.py")
    out = []
    for page, kept, text in doc_lines() if pages is None else pages:
        if f"{name}.py" not in text:  # both forms of the pattern contain it: no line of the page can match
            continue
        for heading, ln in kept:
            if pat.search(ln):
                out.append(f"{page} §{heading}" if heading else page)
                break
    return out


def rows() -> list[tuple[str, str, str, str, str]]:
    """(name, kind, first sentence, run line, citing pages) for every ``scripts/*.py``, sorted by name."""
    pages = doc_lines()
    out = []
    for path in sorted(SCRIPTS.glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()))
        if not doc:
            raise SystemExit(
                f"scripts/{path.name} has no module docstring; add one line saying what it "
                "prints or writes (units), then rerun scripts/gen_scripts_doc.py"
            )
        name = path.stem
        out.append(
            (name, kind_of(name, doc), first_sentence(doc), run_line(name, doc), "; ".join(cited_in(name, pages)))
        )
    return out


def _cell(s: str) -> str:
    return s.replace("|", "\\|") if s else "—"


def render() -> str:
    """The page's text."""
    lines = [
        "<!-- Generated by scripts/gen_scripts_doc.py from the scripts' module docstrings and a grep of "
        "docs/*.md; do not edit by hand. -->",
        "",
        "# Scripts",
        "",
        "Every `scripts/*.py`, generated by `python scripts/gen_scripts_doc.py` (`--check` fails when this page",
        "is stale; `tests/unit/test_scripts_doc.py` runs it). *What it does* is the first sentence of the",
        "script's module docstring, *Run* its command line from the docstring (run from the repository root, with the package",
        "installed or `PYTHONPATH=src`), *Cited in* each doc page naming the script and the section of its",
        "first mention. Scripts read the shipped data and print; a *fit* or *doc generator* also writes a",
        "file of the repository. Package layout and the generated docs: `docs/architecture.md`.",
        "",
        "Kinds:",
        "",
    ]
    lines += [f"- **{k}**: {rule}" for k, rule in KIND_RULES]
    lines += ["", "| Script | Kind | What it does | Run | Cited in |", "|---|---|---|---|---|"]
    for name, kind, sentence, run, cited in rows():
        run_md = f"`{run}`" if run else "—"
        lines.append(
            f"| `{name}.py` | {kind} | {_cell(sentence)} | {_cell(run_md) if run else run_md} | {_cell(cited)} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    return write_or_check(render, DEFAULT_OUT, __doc__, "gen_scripts_doc.py", argv)


if __name__ == "__main__":
    raise SystemExit(main())
