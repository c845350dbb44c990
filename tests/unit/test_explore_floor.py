"""analysis/explore.throughput_at_floor (round 42, kimi42): the explorer's floor metric is continuous.

Expected values by hand: the log-log line between two frontier points (x0, y0), (x1, y1) gives
y(f) = y0 · (f / x0) ** (ln(y1 / y0) / ln(x1 / x0)) (analysis/frontier.interp_frontier's rule).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from jalapeno.analysis.explore import throughput_at_floor
from jalapeno.errors import SpecError
from jalapeno.specs.design_space import design_space_from_dict


def test_interpolated_at_the_floor_by_hand():
    # two grid points either side of a 100 tok/s/user floor: batch 256 (60 tok/s/user, 1,200 tok/s/chip) and batch 128
    # (130, 500); plus a slower, dominated point that the frontier drops
    x, y = np.array([60.0, 130.0, 40.0]), np.array([1200.0, 500.0, 900.0])
    want = 1200.0 * (100.0 / 60.0) ** (math.log(500.0 / 1200.0) / math.log(130.0 / 60.0))  # 717.5
    assert throughput_at_floor(x, y, 100.0) == pytest.approx(want, rel=1e-12)
    assert throughput_at_floor(x, y, 100.0, "point") == 500.0  # the grid point above the floor only


def test_continuous_as_a_point_crosses_the_floor():
    """The old rule jumped from 500 to 1,200 as the batch-256 point crossed 100 tok/s/user; the new one moves by
    no more than the point itself."""
    y = np.array([1200.0, 500.0])
    below = throughput_at_floor(np.array([99.999, 130.0]), y, 100.0)
    above = throughput_at_floor(np.array([100.0, 130.0]), y, 100.0)
    assert above == 1200.0 and below == pytest.approx(1200.0, rel=1e-4)
    assert throughput_at_floor(np.array([99.999, 130.0]), y, 100.0, "point") == 500.0


def test_unreachable_floor_and_no_floor():
    x, y = np.array([60.0, 90.0]), np.array([1200.0, 500.0])
    assert math.isnan(throughput_at_floor(x, y, 100.0))  # no point reaches the floor: not extrapolated
    assert throughput_at_floor(x, y, 0.0) == 1200.0  # floor 0: the peak
    assert throughput_at_floor(x, y, 50.0) == 1200.0  # below the frontier's start: its slowest point


def test_space_takes_the_rule_and_refuses_another():
    base = {
        "name": "t",
        "base": "jalapeno",
        "objective": {"metrics": ["tok_s_per_kw"], "min_interactivity": 100},
        "cases": [{"model": "deepseek-r1", "workload": "8k1k"}],
        "params": {"chip.peak_dense_tflops.fp8": {"low": 2000, "high": 4000}},
    }
    assert design_space_from_dict(base).sweep.at_floor == "interpolated"
    assert design_space_from_dict({**base, "sweep": {"at_floor": "point"}}).sweep.at_floor == "point"
    with pytest.raises(SpecError, match="at_floor"):
        design_space_from_dict({**base, "sweep": {"at_floor": "nearest"}})


def test_pre_round42_study_digest_resumes_under_point():
    """A study stored before round 42 holds the digest of a space without ``at_floor`` (analysis/search.space_digest
    at ea9be52: SHA-256 of the dump less name, seed, trials); its rule was ``point``, so the same space with
    ``at_floor = "point"`` must give that digest, and the new default must not (its scores differ)."""
    import hashlib
    import json

    from jalapeno.analysis.search import space_digest

    base = {
        "name": "t",
        "base": "jalapeno",
        "objective": {"metrics": ["tok_s_per_kw"], "min_interactivity": 100},
        "cases": [{"model": "deepseek-r1", "workload": "8k1k"}],
        "params": {"chip.peak_dense_tflops.fp8": {"low": 2000, "high": 4000}},
    }
    point = design_space_from_dict({**base, "sweep": {"at_floor": "point"}})
    dump = point.model_dump(exclude={"name", "seed", "trials"})
    del dump["sweep"]["at_floor"]  # what a round-41 build dumped: no such key
    del dump["sweep"]["precisions"]  # nor this one (round 45; its default "case" is the only rule before it)
    stored = hashlib.sha256(json.dumps(dump, sort_keys=True, default=str).encode()).hexdigest()[:16]
    assert space_digest(point) == stored
    assert space_digest(design_space_from_dict(base)) != stored
