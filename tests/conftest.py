"""Test configuration: puts tests/ on sys.path so test files can import tiny_fixtures; in CI
(``JALAPENO_REQUIRE_EXTRAS=1``, set by .ci/run) a skip for a missing extra package fails (tests/extras_guard.py)."""

import os as _os

import pytest
from extras_guard import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401  (the hooks: pytest finds them here)
from hypothesis import settings as _hypothesis_settings

# Hypothesis' per-example deadline (200 ms by default) times the example on a shared CI machine; timing
# is not what a property test checks here (speed targets live in benchmarks/), and a loaded run once
# failed test_iso_ratio_scale_invariant on it alone. One profile for every property test: no deadline.
_hypothesis_settings.register_profile("jalapeno", deadline=None)
_hypothesis_settings.load_profile("jalapeno")


def _run_in_a_folder_of_its_own(tmp_path_factory, name: str, *args: str):
    """(exit code, stdout, stderr, folder) of ``jalapeno ARGS`` run in a new folder under pytest's tmp path."""
    from cli_runner import run_captured

    folder = tmp_path_factory.mktemp(name)
    here = _os.getcwd()
    _os.chdir(folder)
    try:
        code, out, err = run_captured(*args)
    finally:
        _os.chdir(here)
    return code, out, err, folder


@pytest.fixture(scope="session")
def default_compare(tmp_path_factory):
    """``jalapeno compare`` with no argument (DeepSeek-R1 8k1k on the default systems, its HTML page written to the
    working folder as jalapeno-compare.html), run once for every test that reads it: (exit code, stdout, stderr,
    the folder it ran in). The sweep behind it is the suite's costliest default; tests that read the same run
    share it rather than each sweeping again. It runs in a folder of its own, so the page lands there."""
    return _run_in_a_folder_of_its_own(tmp_path_factory, "default_compare", "compare")


@pytest.fixture(scope="session")
def default_compare_json(tmp_path_factory):
    """``jalapeno compare --json --html ''`` (the default comparison's JSON, no page), run once for every test that
    reads it: (exit code, stdout, stderr, the folder it ran in, where no page may appear)."""
    return _run_in_a_folder_of_its_own(tmp_path_factory, "default_compare_json", "compare", "--json", "--html", "")


@pytest.fixture(scope="session")
def cli_once(tmp_path_factory):
    """``once(*ARGS)``: (exit code, stdout, stderr, folder) of ``jalapeno ARGS``, run in a folder of its own the first
    time a test asks for exactly those ARGS and the same tuple for every later test that asks (the runs are kept by
    their ARGS for the session). For a command several tests read and none changes what it reads (no monkeypatched
    switch, environment variable, console width or working folder around the call): each then reads the one text
    the command prints, as each would have printed it alone."""
    runs = {}

    def once(*args: str):
        if args not in runs:
            runs[args] = _run_in_a_folder_of_its_own(tmp_path_factory, "cli_once", *args)
        return runs[args]

    return once
