"""Test configuration: puts tests/ on sys.path so test files can import tiny_fixtures; in CI
(``JALAPENO_REQUIRE_EXTRAS=1``, set by .ci/run) a skip for a missing extra package fails (tests/extras_guard.py)."""

# Hypothesis' per-example deadline (200 ms by default) times the example on a shared CI machine; timing
# is not what a property test checks here (speed targets live in benchmarks/), and a loaded run once
# failed test_iso_ratio_scale_invariant on it alone. One profile for every property test: no deadline.
from extras_guard import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401  (the hooks: pytest finds them here)
from hypothesis import settings as _hypothesis_settings

_hypothesis_settings.register_profile("jalapeno", deadline=None)
_hypothesis_settings.load_profile("jalapeno")
