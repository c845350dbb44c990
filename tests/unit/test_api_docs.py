"""The API reference renders from the docstrings (scripts/gen_api_docs.py; skipped without pdoc,
the ``docs`` extra)."""

from __future__ import annotations

import pytest

pdoc = pytest.importorskip("pdoc", reason="pdoc not installed (pip install -e '.[docs]')")


def test_a_module_page_carries_its_docstrings():
    import pdoc.render

    pdoc.render.configure(docformat="google")
    html = pdoc.pdoc("jalapeno.analysis.capacity")
    assert "plan_capacity" in html and "CapacityPlan" in html
    assert "InfeasibleDeployment" in html  # the Raises: section
    assert "instances = ceil(target_tok_per_s" in html  # the module docstring's formula
