"""The ``>>>`` examples of scripts/*.py run as tests (round 49): pytest's ``--doctest-modules`` collects the package's
modules (pyproject ``testpaths`` includes src/jalapeno) but not scripts/, which is no package, so a script's examples
were never run (two had gone wrong: a polyfit result printed to its last bits, and a wrong intercept). Each script
with an example is loaded as the script tests load it (tests/script_module.load_script) and run by doctest, with
ELLIPSIS on (the scripts' examples end a long float with ``...``, as ``745.1...``). About 3 s of CPU for the ~80
scripts on the 2-core machine (pytest's start not counted)."""

from __future__ import annotations

import doctest
import sys
import tomllib
import types
from pathlib import Path

import pytest
from script_module import SCRIPTS, load_script

ROOT = Path(__file__).resolve().parents[2]
WITH_EXAMPLES = sorted(p.stem for p in SCRIPTS.glob("*.py") if ">>>" in p.read_text(encoding="utf-8"))


def _run_examples(module: types.ModuleType) -> doctest.TestResults:
    """Every example in ``module``'s docstrings, run; failures are printed (pytest shows them)."""
    return doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True, verbose=False)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_script_examples_hold(name, monkeypatch):
    module = load_script(name)
    # doctest keeps only the functions inspect.getmodule places in this module, by sys.modules[name]: a script that
    # another script imported by its name earlier in the run (scripts/ on sys.path) hid all its examples
    monkeypatch.setitem(sys.modules, name, module)
    result = _run_examples(module)
    assert result.attempted > 0, f"scripts/{name}.py has '>>>' but doctest found no example"
    assert result.failed == 0, f"scripts/{name}.py: {result.failed} of {result.attempted} examples failed"


def test_the_script_examples_are_found():
    assert len(WITH_EXAMPLES) >= 70  # 79 scripts had examples in round 49: a glob that found none would pass


def test_a_wrong_example_fails():
    module = types.ModuleType("wrong_example")
    exec('def double(x):\n    """\n    >>> double(2)\n    5\n    """\n    return 2 * x\n', module.__dict__)
    assert _run_examples(module) == doctest.TestResults(failed=1, attempted=1)


def test_the_package_doctests_are_collected():
    """The package's own examples: ``pytest`` (the README's and .ci/run's command, no paths) collects src/jalapeno
    with ``--doctest-modules``."""
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "src/jalapeno" in ini["testpaths"] and "--doctest-modules" in ini["addopts"].split()
