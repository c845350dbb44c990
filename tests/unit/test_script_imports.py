"""Every ``from jalapeno.X import name`` in scripts/ and benchmarks/ resolves (static; nothing is run).

Neither folder is imported by the test suite as a whole, so a rename in src/ could leave a script or a benchmark
importing a name that is gone (round 38: benchmarks/bench_gb200_decode_gap.py still imported
``specs.moe_backends.moe_backend_curve`` after it became ``moe_backend_curves``).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*ROOT.glob("scripts/*.py"), *ROOT.glob("benchmarks/*.py")])


def _missing(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "jalapeno"):
            continue
        mod = importlib.import_module(node.module)
        for alias in node.names:
            if hasattr(mod, alias.name):
                continue
            try:  # a submodule imported by name (from jalapeno.fit import stack_fit)
                importlib.import_module(f"{node.module}.{alias.name}")
            except ModuleNotFoundError:
                out.append(f"{node.module}.{alias.name}")
    return out


def test_files_found():
    assert len(FILES) > 50  # the folders hold ~200 files; a wrong ROOT would make every check vacuous


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_jalapeno_imports_resolve(path):
    assert _missing(path) == []


def test_a_missing_name_is_caught(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from jalapeno.specs.moe_backends import moe_backend_curve\n")
    assert _missing(bad) == ["jalapeno.specs.moe_backends.moe_backend_curve"]
