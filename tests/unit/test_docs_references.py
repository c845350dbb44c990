"""What docs/*.md and README.md point at exists (review30, docs30: a reader follows these to the code).

- every relative Markdown link ``[text](target#anchor)`` resolves to a file, and its anchor to a heading;
- every path into this repository (``src/jalapeno/...``, ``tests/...``, ``scripts/NAME.py``, ``docs/NAME.md``,
  and package-relative ``cost/ops.py``, ``data/stacks.toml``) names a file that exists, in the pages a new
  contributor reads (the gap_*.md diagnoses quote other repositories' paths freely and are left out);
- every ``pkg/module.NAME`` reference (``serve/limits.EAGER_LAUNCH_S``, ``cost/expert_ops.add_routed_experts``)
  names something that module defines (a function, class, assignment, import or parameter), in every page.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "src" / "jalapeno"
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
READER_PAGES = [p for p in PAGES if not p.name.startswith("gap_")]
#: paths the pages name on purpose that are not files here: DeepEP's docs/legacy.md (collectives.md, model.md
#: §3.8 quote it), and the two modules STYLE.md's sketch names that architecture.md says do not exist
NOT_OURS = {"docs/legacy.md", "deploy/enumerate.py", "cost/efficiency.py"}
_SUBPACKAGES = sorted(d.name for d in PKG.iterdir() if d.is_dir() and not d.name.startswith("_"))
_REPO_PATH = re.compile(r"(?<![\w/.-])((?:src/jalapeno/|tests/)[\w./-]*\w|scripts/\w+\.py|docs/\w+\.md)")
_PKG_PATH = re.compile(r"(?<![\w/.-])((?:%s)/[\w/]*\w\.(?:py|toml|json|csv\.gz|csv|md))" % "|".join(_SUBPACKAGES))
_MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_MODULE_ATTR = re.compile(r"(?<![\w/])((?:[a-z_]+/)?[a-z_]+/[a-z_0-9]+)(?:\.py)?\.([A-Za-z_]\w*)")


def _text(page: Path) -> str:
    return re.sub(r"```.*?```", "", page.read_text(), flags=re.S)


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but ``-``/``_`` dropped, spaces to ``-``."""
    heads = re.findall(r"^#+\s+(.*)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    bad = []
    for target in _MD_LINK.findall(_text(page)):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(f"{target} (no heading #{anchor})")
    assert not bad, f"{page.name}: fix these links: {bad}"


@pytest.mark.parametrize("page", READER_PAGES, ids=lambda p: p.name)
def test_repository_paths_exist(page):
    bad = set()
    for line in page.read_text().splitlines():
        for m in _REPO_PATH.finditer(line):
            t = m.group(1).rstrip(".")
            if t not in NOT_OURS and not (ROOT / t).exists() and not (ROOT / f"{t}.py").exists():
                bad.add(t)
        for m in _PKG_PATH.finditer(line):
            if m.group(1) not in NOT_OURS and not (PKG / m.group(1)).exists():
                bad.add(m.group(1))
    assert not bad, f"{page.name} names files that do not exist (renamed or removed?): {sorted(bad)}"


@cache
def _defined(path: Path) -> frozenset[str]:
    names: set[str] = set()
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(n.name)
        elif isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                names.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
                names.update(x.attr for x in ast.walk(t) if isinstance(x, ast.Attribute))
        elif isinstance(n, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
    return frozenset(names)


def _module_file(ref: str) -> Path | None:
    for cand in (PKG / f"{ref.removeprefix('src/jalapeno/')}.py", ROOT / f"{ref}.py"):
        if cand.exists():
            return cand
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_module_names_exist(page):
    bad = set()
    for ref, name in _MODULE_ATTR.findall(page.read_text()):
        path = _module_file(ref)
        if path is not None and name not in {"py", "md", "toml", "json", "csv", "gz"} and name not in _defined(path):
            bad.add(f"{ref}.{name}")
    assert not bad, f"{page.name} names what these modules do not define (renamed?): {sorted(bad)}"


def test_the_checks_can_fail(tmp_path):
    """Each rule catches its own kind of slip (a page written here, not a shipped one)."""
    page = tmp_path / "p.md"
    page.write_text("see [x](nowhere.md) and [y](#no-such-heading)\n# A heading\n")
    with pytest.raises(AssertionError, match="nowhere.md"):
        test_relative_links_resolve(page)
    page.write_text("see `serve/rr_wait.py` and `serve/rr_wait.py`'s `serve/no_such_module.py`\n")
    with pytest.raises(AssertionError, match="no_such_module"):
        test_repository_paths_exist(page)
    page.write_text("`serve/rr_wait.wave_wait_s` and `serve/rr_wait.no_such_function`\n")
    with pytest.raises(AssertionError, match="no_such_function"):
        test_module_names_exist(page)
