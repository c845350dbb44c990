"""In CI a test must not skip for a package of the extras CI installs (issue 18: the kernel-fit tests run there).

``.ci/run`` installs the ``[test,calibrate,explore]`` extras and exports ``JALAPENO_REQUIRE_EXTRAS=1``; with it
set, :func:`pytest_runtest_makereport` and :func:`pytest_make_collect_report` (a module skipped whole at its
import; both re-exported by tests/conftest.py) turn a skip whose reason names one of
:data:`EXTRA_MODULES` (``pytest.importorskip``'s "could not import 'scipy'", or an import error naming one) or
one of :data:`EXTRA_PHRASES` (the tests' own skip messages) into a failure naming the package. Without it (a
developer's checkout without the extras) those tests skip as before. Other skips (no chromium for
tests/browser, the [docs] extra's pdoc, a platform) are left alone.
"""

from __future__ import annotations

import os
import re

import pytest

#: the variable .ci/run exports
ENV = "JALAPENO_REQUIRE_EXTRAS"
#: the import names of the [calibrate] (aiconfigurator-core, amd-aiter, pyarrow, scipy) and [explore] (optuna,
#: ray, duckdb, pyarrow) extras' packages (pyproject.toml)
EXTRA_MODULES = ("aiconfigurator_core", "aiter", "pyarrow", "scipy", "optuna", "ray", "duckdb")
#: the tests' own skip messages for a missing extra package (test_fitted_files, test_mla_decode_floor, ...)
EXTRA_PHRASES = ("aiconfigurator-core not installed", "amd-aiter is not installed")


def missing_extra(reason: str) -> str | None:
    """The extra package a skip ``reason`` says is missing, or None when it names none.

    >>> missing_extra("could not import 'scipy': No module named 'scipy'")
    'scipy'
    >>> missing_extra("could not import 'jalapeno.fit.kernel_tables': No module named 'pyarrow'")
    'pyarrow'
    >>> missing_extra("chromium not found") is None
    True
    """
    for m in re.finditer(r"(?:could not import|No module named) '([\w.]+)'", reason):
        top = m.group(1).split(".")[0]
        if top in EXTRA_MODULES:
            return top
    return next((p for p in EXTRA_PHRASES if p in reason), None)


def _failed(nodeid: str, extra: str, reason: str) -> str:
    return (
        f"{nodeid} skipped for a missing extra package ({extra}: {reason}) while {ENV}=1: "
        "install the extras .ci/run names (pip install -e '.[test,calibrate,explore]')"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """With :data:`ENV` = 1, a module skipped whole for a missing extra package (a module-level
    ``pytest.importorskip("aiconfigurator_core")``: tests/unit/test_a2a_fabric_sibling.py and three more) is a
    collection error naming the package: it is skipped at collection, where :func:`pytest_runtest_makereport`
    never sees it (review46)."""
    outcome = yield
    rep = outcome.get_result()
    if not (rep.skipped and os.environ.get(ENV) == "1"):
        return
    reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
    extra = missing_extra(reason)
    if extra:
        rep.outcome = "failed"
        rep.longrepr = _failed(collector.nodeid, extra, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With :data:`ENV` = 1, a skip for a missing extra package fails, naming the package and the fix."""
    outcome = yield
    rep = outcome.get_result()
    if not (rep.skipped and os.environ.get(ENV) == "1" and call.excinfo is not None):
        return
    reason = str(call.excinfo.value)
    extra = missing_extra(reason)
    if extra:
        rep.outcome = "failed"
        rep.longrepr = _failed(item.nodeid, extra, reason)
