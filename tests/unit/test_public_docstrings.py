"""Every public function, method and class of the package has a docstring (STYLE.md: docstrings with units and
sources on public functions; round 38's scan found 81 without one). Names starting with ``_`` and functions nested
in another function are private and exempt; a CLI command's docstring is its ``--help`` text."""

import ast
from pathlib import Path

import jalapeno


def _undocumented(tree: ast.Module, rel: str) -> list[str]:
    out = []

    def walk(node, prefix: str) -> None:
        for n in ast.iter_child_nodes(node):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_"):
                if not ast.get_docstring(n):
                    out.append(f"{rel}:{n.lineno} {prefix}{n.name}")
                if isinstance(n, ast.ClassDef):
                    walk(n, f"{n.name}.")

    walk(tree, "")
    return out


def test_every_public_function_and_class_has_a_docstring():
    root = Path(jalapeno.__file__).parent
    missing = [m for p in sorted(root.rglob("*.py"))
               for m in _undocumented(ast.parse(p.read_text()), str(p.relative_to(root)))]
    assert not missing, f"add a docstring (what it returns, in which units; Raises: where it refuses) to: {missing}"


def test_the_scan_sees_a_missing_docstring():
    tree = ast.parse('def f():\n    return 1\n\n\nclass C:\n    """c"""\n\n    def m(self):\n        pass\n\n'
                     '    def _p(self):\n        pass\n\n\ndef g():\n    """g"""\n\n    def inner():\n        pass\n')
    assert _undocumented(tree, "x.py") == ["x.py:1 f", "x.py:8 C.m"]
