"""CLI golden set: rerun every stored ``jalapeno ... --json`` invocation and compare its output.

The expected outputs (``data/golden_cli.json``, made by ``scripts/make_golden.py``) are a snapshot
of the CLI's behaviour taken before the internal refactor; they pin the observable behaviour
through the CLI only, so they survive any reorganisation of the Python internals. Numbers must
agree within 1e-6 relative (1e-12 absolute near zero), strings, bools and nulls exactly, lists in
length and order. Keys present in the snapshot must still be present; new keys are allowed, and
the snapshot's ``volatile_keys`` (wall-clock timings) are skipped. The first mismatch is reported
with its JSON path.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_runner import run

DATA = Path(__file__).parent / "data" / "golden_cli.json"
GOLDEN = json.loads(DATA.read_text())
VOLATILE = set(GOLDEN.get("volatile_keys", ()))
REL, ABS = 1e-6, 1e-12


def first_mismatch(expected, actual, path: str = "$") -> str | None:
    """JSON path and description of the first difference between ``expected`` and ``actual``, or None."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return None if expected is actual else f"{path}: expected {expected!r}, got {actual!r}"
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if math.isclose(expected, actual, rel_tol=REL, abs_tol=ABS):
            return None
        rel = abs(actual - expected) / max(abs(expected), 1e-300)
        return f"{path}: expected {expected!r}, got {actual!r} (rel diff {rel:.3g})"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {type(actual).__name__}"
        for k, v in expected.items():
            if k in VOLATILE:
                continue
            if k not in actual:
                return f"{path}.{k}: missing"
            m = first_mismatch(v, actual[k], f"{path}.{k}")
            if m:
                return m
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{path}: expected a list, got {type(actual).__name__}"
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            m = first_mismatch(e, a, f"{path}[{i}]")
            if m:
                return m
        return None
    return None if expected == actual else f"{path}: expected {expected!r}, got {actual!r}"


@pytest.mark.parametrize("name", sorted(GOLDEN["cases"]))
def test_cli_output_matches_golden(capsys, name):
    case = GOLDEN["cases"][name]
    code, out, err = run(capsys, *case["args"], "--json")
    assert code == 0, f"jalapeno {' '.join(case['args'])} exited {code}: {err}"
    got = json.loads(out)
    mismatch = first_mismatch(case["output"], got)
    assert mismatch is None, f"{name} (jalapeno {' '.join(case['args'])} --json): {mismatch}"


def test_comparator_reports_path():
    """The comparator itself: tolerance, exact strings, and the path of the first difference."""
    assert first_mismatch({"a": [1.0, {"b": "x"}]}, {"a": [1.0 + 1e-9, {"b": "x"}], "new": 1}) is None
    assert first_mismatch({"a": [1.0, {"b": 2.0}]}, {"a": [1.0, {"b": 2.1}]}).startswith("$.a[1].b:")
    assert first_mismatch({"a": "x"}, {"a": "y"}).startswith("$.a:")
    assert first_mismatch({"a": True}, {"a": 1}) is not None
    assert first_mismatch({"a": 1}, {}) == "$.a: missing"
