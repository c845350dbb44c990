"""tests/extras_guard.py: in CI (JALAPENO_REQUIRE_EXTRAS=1, exported by .ci/run) a test skipped for a missing
[calibrate]/[explore] package fails; elsewhere it skips; other skips are left alone (issue 18)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from extras_guard import ENV, missing_extra

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def _reason(name: str) -> str:
    """pytest's own importorskip message for a module that cannot be imported."""
    sys.modules[name] = None  # an import of it fails
    try:
        with pytest.raises(pytest.skip.Exception) as e:
            pytest.importorskip(name)
    finally:
        del sys.modules[name]
    return str(e.value)


def test_reasons_naming_an_extra_package():
    assert missing_extra(_reason("aiconfigurator_core")) == "aiconfigurator_core"
    assert missing_extra(_reason("scipy")) == "scipy"
    assert missing_extra("aiconfigurator-core not installed") == "aiconfigurator-core not installed"
    assert missing_extra(_reason("pdoc")) is None  # the [docs] extra: CI does not install it
    assert missing_extra("needs Linux /dev/full") is None


def _run(tmp_path, env_value, probes=None):
    probes = probes or {}
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
        "from extras_guard import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401\n"
    )
    for name, text in probes.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "test_probe.py").write_text(
        "import sys\nimport pytest\n\n"
        "def test_kernel_fit():\n    sys.modules['scipy'] = None\n    pytest.importorskip('scipy')\n\n"
        "def test_browser():\n    pytest.skip('chromium not found')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != ENV} | ({ENV: env_value} if env_value else {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def test_ci_fails_a_skip_for_a_missing_extra(tmp_path):
    r = _run(tmp_path, "1")
    assert r.returncode == 1, r.stdout
    assert "1 failed, 1 skipped" in r.stdout and "missing extra package (scipy" in r.stdout


def test_outside_ci_it_still_skips(tmp_path):
    r = _run(tmp_path, None)
    assert r.returncode == 0 and "2 skipped" in r.stdout, r.stdout


#: a module skipped whole at its import (tests/unit/test_a2a_fabric_sibling.py's module-level importorskip): pytest
#: skips it at collection, before any test's report (review46: the guard let it skip in CI)
_MODULE_SKIP = {
    "test_module_probe.py": "import sys\nimport pytest\n\nsys.modules['aiconfigurator_core'] = None\n"
    "pytest.importorskip('aiconfigurator_core')\n\n\ndef test_never_run():\n    pass\n"
}


def test_ci_fails_a_module_skipped_for_a_missing_extra(tmp_path):
    r = _run(tmp_path, "1", _MODULE_SKIP)
    assert r.returncode != 0, r.stdout
    assert "1 error" in r.stdout and "missing extra package (aiconfigurator_core" in r.stdout, r.stdout


def test_outside_ci_a_module_still_skips(tmp_path):
    r = _run(tmp_path, None, _MODULE_SKIP)
    assert r.returncode == 0 and "3 skipped" in r.stdout, r.stdout


def test_ci_run_exports_the_variable():
    text = (ROOT / ".ci" / "run").read_text()
    assert f"export {ENV}=1" in text and "calibrate" in text
