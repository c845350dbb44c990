"""analysis/win_ranges._sorted_distinct (round 55, code55): the knots of a win-range comparison without np.unique,
whose np.ma.is_masked check imports numpy.ma (~10-30 ms) on ``compare``'s serial path after the sweeps.

Expected values come from np.unique itself (NumPy's own code, not this module's), bit for bit, and from a fresh
process: the where-wins ranges of two small hand-made frontiers no longer import numpy.ma."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from jalapeno.analysis.win_ranges import _sorted_distinct


def test_the_knots_equal_np_unique_bit_for_bit():
    rng = np.random.default_rng(55)
    cases = [np.array([]), np.array([5.0]), np.array([2.0, 2.0]), np.array([np.nan, 1.0, np.nan, 1.0])]
    for n in (3, 17, 200):
        v = rng.choice(np.array([0.5, 1.0, 7.25, 30.0, 1e-3, 1e6]), size=n)  # many repeats
        cases += [v, np.concatenate([v, rng.uniform(1.0, 100.0, size=n)]), np.append(v, [np.nan, np.nan])]
    for v in cases:
        got, want = _sorted_distinct(v.copy()), np.unique(v)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), v  # NaN's bits included


def test_a_where_wins_comparison_imports_no_numpy_ma():
    code = (
        "import sys, numpy as np\n"
        "from jalapeno.analysis.compare import Frontier\n"
        "from jalapeno.analysis.win_ranges import win_ranges\n"
        "a = Frontier(np.array([10.0, 20.0, 40.0]), np.array([100.0, 50.0, 25.0]))\n"
        "b = Frontier(np.array([10.0, 40.0]), np.array([200.0, 12.5]))\n"
        "w = win_ranges(a, b, {'throughput_per_chip': 1.0})\n"
        "assert w['throughput_per_chip'], w\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False", out.stderr
