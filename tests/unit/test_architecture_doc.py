"""docs/architecture.md §2 names every module of the package (review28: two modules of earlier rounds,
cost/shared_stream.py and fit/client_warmup.py, were missing from its tree and table)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_module_is_named_in_the_architecture_doc():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    modules = [p for p in (ROOT / "src" / "jalapeno").rglob("*.py") if not p.name.startswith("__")]
    missing = sorted(str(p.relative_to(ROOT / "src" / "jalapeno")) for p in modules if p.name not in doc)
    assert not missing, f"list these in docs/architecture.md §2 (tree and table): {missing}"
