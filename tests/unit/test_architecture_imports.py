"""docs/architecture.md §3 "Who imports whom": the table's "imports (stages)" column is exactly the set of stages
each stage's modules import, and the modules below `analysis/` that read files are the ones §3 names (docs38:
the table had fallen behind the code: `fit` imports `deploy` in 14 modules, `report` imports `analysis`, `fit`
and `serve`; `cost/` and `deploy/` read the package's data files though §3 said only `specs/` did).
tests/unit/test_module_budget.py checks the other direction (no stage imports a later one)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "src" / "jalapeno"
DOC = (ROOT / "docs" / "architecture.md").read_text()
STAGES = ("errors", "units", "specs", "deploy", "cost", "serve", "analysis", "fit", "report", "cli")
IMPORT = re.compile(r"^\s*(?:from|import) jalapeno\.([a-z_]+)|^\s*from jalapeno import ([a-z_]+)", re.M)
READS = re.compile(r"resources\.files|\.read_text\(|\.read_bytes\(|\bopen\(|tomllib\.load\(|pd\.read_")


def _section3() -> str:
    return DOC.split("## 3. Who imports whom", 1)[1].split("\n## ", 1)[0]


def imported_stages(stage: str) -> set[str]:
    """Every other stage a stage's modules import (function-local imports included)."""
    found: set[str] = set()
    for p in (PKG / stage).rglob("*.py"):
        for m in IMPORT.finditer(p.read_text()):
            name = m.group(1) or m.group(2)
            if name in STAGES and name != stage:
                found.add(name)
    return found


def documented_stages(stage: str) -> set[str]:
    row = re.search(r"^\| `" + stage + r"` \| ([^|]*) \|", _section3(), re.M)
    assert row, f"docs/architecture.md §3: no row for `{stage}`"
    if "everything above" in row.group(1):
        return set(STAGES[: STAGES.index(stage)])
    return set(re.findall(r"`(\w+)`", row.group(1)))


def test_the_import_table_names_every_stage_a_stage_imports():
    wrong = {}
    for stage in ("specs", "deploy", "cost", "serve", "analysis", "fit", "report"):
        real, doc = imported_stages(stage), documented_stages(stage)
        if real != doc:
            wrong[stage] = f"code {sorted(real)}, doc {sorted(doc)}"
    assert not wrong, f"fix the 'imports (stages)' column of docs/architecture.md §3: {wrong}"


def test_the_cli_row_holds_every_stage():
    assert imported_stages("cli") <= documented_stages("cli")


def test_the_import_check_sees_a_function_local_import():
    text = "def f():\n    from jalapeno.analysis.records import bound_cell\n"
    assert [m.group(1) for m in IMPORT.finditer(text)] == ["analysis"]
    assert documented_stages("report") != documented_stages("fit")


def test_the_modules_that_read_files_below_analysis_are_named():
    readers = sorted(str(p.relative_to(PKG)) for stage in ("deploy", "cost", "serve")
                     for p in (PKG / stage).rglob("*.py") if READS.search(p.read_text()))
    sec = _section3()
    missing = [r for r in readers if f"`{r}`" not in sec and f"`{r.removesuffix('.py')}.read_trace`" not in sec]
    assert not missing, f"docs/architecture.md §3 says which modules below analysis/ read files; add {missing}"
    assert "serve/sim/trace_cells.py" in readers  # the check sees a reader (serve/sim/trace.py's pd.read_csv until round 53)
    analysis = sorted(p.name for p in (PKG / "analysis").rglob("*.py") if READS.search(p.read_text()))
    assert all(f"`{n}`" in sec for n in analysis), f"name these analysis/ readers in §3: {analysis}"
