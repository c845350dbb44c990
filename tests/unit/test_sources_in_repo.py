"""Every source a shipped file cites is public or in the repository (issue 15, defect 3).

The catalog, the package data, the code's docstrings and the docs must name the public source
itself (a datasheet, a paper, a blog, a repository path with its commit) — never a working file
that exists only next to this checkout (``hardware_specs.md``, ``../shared/...``, ``/work/...``):
a reader of a fresh clone or of the installed package cannot open those.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Citations of files outside the repository: the notes document, the shared data folder (by any
#: relative or absolute path) and the development machine's work directory.
OUTSIDE = re.compile(r"hardware_specs(\.md)?|(?<![\w/])\.\./shared\b|(?<![\w.])shared/data\b|/work/")

#: What ships or is read by users: package code and data, the docs, the README, the scripts and
#: benchmarks a user runs, and the project metadata.
SCANNED = ("src/jalapeno", "docs", "scripts", "benchmarks")
TOP_FILES = ("README.md", "pyproject.toml")
SUFFIXES = {".py", ".md", ".toml", ".json", ".csv", ".txt", ".html", ".yaml", ".yml", ".sh"}


def outside_citations(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of ``text`` citing a file outside the repository."""
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]


def _shipped_files() -> list[Path]:
    files = [ROOT / f for f in TOP_FILES if (ROOT / f).is_file()]
    for folder in SCANNED:
        base = ROOT / folder
        if base.is_dir():
            files += [p for p in sorted(base.rglob("*"))
                      if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    return files


@pytest.mark.parametrize("text, hits", [
    ('source = "NVIDIA datasheet (hardware_specs.md §1.1)"', 1),
    ("see ../shared/data/validation/README.md", 1),
    ("copied from `shared/data/validation/inferencex_points.csv`", 1),
    ("source /work/venv/bin/activate", 1),
    ("composed like /work/shared/data/models/PROVENANCE.md", 1),
    # public or in-repo citations pass
    ('source = "NVIDIA H100 datasheet; InferenceX-app packages/app/src/lib/gpu-specs.ts"', 0),
    ("src/jalapeno/data/validation/README.md; the shared expert; a framework/ folder", 0),
    ("two ranks shared/scattered; shared_data = 1", 0),
])
def test_the_scanner_flags_outside_citations_and_nothing_else(text, hits):
    assert len(outside_citations(text)) == hits


def test_the_scan_covers_the_catalog_the_data_and_the_docs():
    rel = {p.relative_to(ROOT).as_posix() for p in _shipped_files()}
    for expected in ("README.md", "docs/catalog.md", "docs/architecture.md",
                     "src/jalapeno/data/systems/jalapeno.toml", "src/jalapeno/data/systems/gb300-nvl72.toml",
                     "src/jalapeno/data/models/PROVENANCE.md", "src/jalapeno/data/validation/README.md",
                     "src/jalapeno/data/engines.toml", "src/jalapeno/data/stacks.toml",
                     "src/jalapeno/specs/power.py", "scripts/gen_catalog_doc.py"):
        assert expected in rel, expected


def test_no_shipped_file_or_doc_cites_a_file_outside_the_repo():
    found = [f"{p.relative_to(ROOT).as_posix()}:{i}: {line[:160]}"
             for p in _shipped_files() for i, line in outside_citations(p.read_text(encoding="utf-8"))]
    assert not found, ("these lines cite a file that is not in the repository; cite the public source "
                       "itself (title, address, date) or name the assumption:\n" + "\n".join(found))
