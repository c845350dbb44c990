"""Unit tests of analysis/frontier.py and analysis/compare.py; expected values by hand."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from jalapeno.analysis.compare import (
    DEFAULT_TIER_FLOORS,
    Frontier,
    build_frontier,
    iso_interactivity_ratio,
    peak_ratio,
    tiers,
)
from jalapeno.analysis.frontier import frontier_indices, interp_frontier, pareto_mask
from jalapeno.errors import JalapenoError, SpecError

# (15, 70) is dominated by (20, 80); the other three trade off.
X4 = [10.0, 20.0, 15.0, 30.0]
Y4 = [100.0, 80.0, 70.0, 10.0]


# ---------------------------------------------------------------- pareto_mask / indices


def test_hand_example_mask_and_indices():
    assert pareto_mask(X4, Y4).tolist() == [True, True, False, True]
    assert frontier_indices(X4, Y4).tolist() == [0, 1, 3]


def test_indices_sorted_by_x_ascending_not_input_order():
    x = [30.0, 10.0, 20.0]
    y = [10.0, 100.0, 80.0]
    assert frontier_indices(x, y).tolist() == [1, 2, 0]


def test_exact_duplicates_keep_first_index():
    assert pareto_mask([10, 20, 10, 20], [5, 1, 5, 1]).tolist() == [True, True, False, False]


def test_ties_on_one_axis():
    # Same x: the higher y dominates. Same y: the higher x dominates.
    assert pareto_mask([10, 10], [5, 6]).tolist() == [False, True]
    assert pareto_mask([10, 20], [5, 5]).tolist() == [False, True]


def test_invalid_points_never_on_frontier_and_dominate_nothing():
    x = [10.0, np.nan, np.inf, 50.0, -5.0, 0.0, 20.0]
    y = [100.0, 1e9, 1e9, np.inf, 1e9, 1e9, 0.0]
    assert pareto_mask(x, y).tolist() == [True, False, False, False, False, False, False]


def test_all_invalid_and_empty():
    assert pareto_mask([np.nan, -1.0], [1.0, 1.0]).tolist() == [False, False]
    assert pareto_mask([], []).shape == (0,)
    assert frontier_indices([], []).shape == (0,)


def test_mismatched_lengths_and_2d_raise_spec_error():
    with pytest.raises(SpecError) as err:
        pareto_mask([1.0, 2.0], [1.0])
    assert err.value.field == "y" and err.value.fix
    with pytest.raises(SpecError):
        pareto_mask(np.ones((2, 2)), np.ones((2, 2)))


def test_million_points_fast():
    rng = np.random.default_rng(0)
    x = rng.uniform(1, 1000, 1_000_000)
    y = rng.uniform(1, 1000, 1_000_000)
    t0 = time.perf_counter()
    idx = frontier_indices(x, y)
    assert time.perf_counter() - t0 < 5.0
    assert np.all(np.diff(x[idx]) > 0) and np.all(np.diff(y[idx]) < 0)


# ---------------------------------------------------------------- interp_frontier


def test_log_log_hand_values():
    # y = 100 * (x/10)^-1 on this segment: at x = sqrt(200) = 14.142, y = 100/sqrt(2) = 70.71.
    y, status = interp_frontier([10.0, 20.0], [100.0, 50.0], [14.142])
    assert y[0] == pytest.approx(70.71, abs=0.01)
    assert status.tolist() == ["interpolated"]
    # Exponent log(10/1000)/log(100/10) = -2: at x = sqrt(1000), y = 1000 / 10 = 100.
    y, _ = interp_frontier([10.0, 100.0, 200.0], [1000.0, 10.0, 5.0], [math.sqrt(1000.0)])
    assert y[0] == pytest.approx(100.0, rel=1e-12)


def test_statuses_around_the_frontier():
    fx, fy = [10.0, 20.0, 30.0], [100.0, 80.0, 10.0]
    q = [5.0, 10.0, 20.0, 25.0, 29.0, 29.5, 30.0, 31.0]
    y, status = interp_frontier(fx, fy, q)
    assert status.tolist() == [
        "below_frontier_start",  # flat at fy[0]
        "at_point",
        "at_point",
        "interpolated",
        "interpolated",  # 29 < 30 * 0.98 = 29.4
        "at_frontier_end",  # 29.5 >= 29.4
        "at_frontier_end",
        "unreachable",
    ]
    assert y[0] == 100.0 and y[1] == 100.0 and y[2] == 80.0 and y[6] == 10.0
    assert math.isnan(y[7])
    # 25 on (20, 80)-(30, 10): 80 * (1.25)^(ln(1/8)/ln(1.5)) = 80 * exp(-2.0794*0.22314/0.405465).
    assert y[3] == pytest.approx(80.0 * math.exp(math.log(1 / 8) * math.log(1.25) / math.log(1.5)))


def test_end_tolerance_parameter_and_shape():
    q = np.array([[19.0, 19.9]])
    y, status = interp_frontier([10.0, 20.0], [100.0, 50.0], q, end_rtol=0.01)
    assert y.shape == (1, 2) and status.tolist() == [["interpolated", "at_frontier_end"]]


def test_single_point_frontier():
    y, status = interp_frontier([10.0], [7.0], [5.0, 10.0, 11.0])
    assert status.tolist() == ["below_frontier_start", "at_frontier_end", "unreachable"]
    assert y[:2].tolist() == [7.0, 7.0]


@pytest.mark.parametrize(
    ("fx", "fy", "q"),
    [
        ([], [], [1.0]),  # empty
        ([10.0, 20.0], [100.0], [1.0]),  # lengths differ
        ([20.0, 10.0], [100.0, 50.0], [1.0]),  # x not increasing
        ([10.0, 20.0], [50.0, 100.0], [1.0]),  # y increasing
        ([10.0, 20.0], [100.0, 0.0], [1.0]),  # non-positive
        ([10.0, 20.0], [100.0, 50.0], [-1.0]),  # bad query
        ([10.0, 20.0], [100.0, 50.0], [np.nan]),
    ],
)
def test_interp_bad_inputs(fx, fy, q):
    with pytest.raises(SpecError):
        interp_frontier(fx, fy, q)


# ---------------------------------------------------------------- Frontier / compare


def test_build_frontier_keeps_labels_and_sources():
    f = build_frontier(X4, Y4, labels=["tp8", "tp4", "tp2", "tp1"])
    assert f.x.tolist() == [10.0, 20.0, 30.0] and f.y.tolist() == [100.0, 80.0, 10.0]
    assert f.labels == ("tp8", "tp4", "tp1") and f.source_indices.tolist() == [0, 1, 3]
    with pytest.raises(ValueError):
        f.x[0] = 1.0  # read-only


def test_build_frontier_errors():
    for args in (([], []), ([1.0, 2.0], [1.0]), ([np.nan], [1.0]), ([1.0], [1.0], ["a", "b"])):
        with pytest.raises(SpecError) as err:
            build_frontier(*args)
        assert isinstance(err.value, JalapenoError) and err.value.problem and err.value.fix
    with pytest.raises(SpecError):
        Frontier(np.array([20.0, 10.0]), np.array([1.0, 2.0]))


def test_peak_ratio():
    a = Frontier(np.array([10.0, 20.0]), np.array([200.0, 100.0]))
    b = Frontier(np.array([10.0, 40.0]), np.array([100.0, 25.0]))
    assert peak_ratio(a, b) == 2.0 and peak_ratio(b, a) == 0.5


def test_iso_interactivity_ratio_hand_example():
    # a: 200 (x/10)^-1 on [10, 20]; b: 100 (x/10)^-1 on [10, 40].
    a = Frontier(np.array([10.0, 20.0]), np.array([200.0, 100.0]))
    b = Frontier(np.array([10.0, 40.0]), np.array([100.0, 25.0]))
    rows = iso_interactivity_ratio(a, b, [5.0, 10.0, 14.142, 20.0, 30.0])
    assert [r["ratio"] for r in rows[:4]] == pytest.approx([2.0, 2.0, 2.0, 2.0])
    assert math.isnan(rows[4]["ratio"])
    assert [r["at_frontier_end"] for r in rows] == [True, False, False, True, False]
    assert (rows[3]["status_a"], rows[3]["status_b"]) == ("at_frontier_end", "interpolated")
    assert rows[3]["y_b"] == pytest.approx(50.0)
    assert (rows[4]["status_a"], rows[4]["status_b"]) == ("unreachable", "interpolated")
    assert rows[2]["y_a"] == pytest.approx(141.42, abs=0.01)
    # Unreachable on the denominator side too.
    back = iso_interactivity_ratio(b, a, [30.0])[0]
    assert math.isnan(back["ratio"]) and back["status_b"] == "unreachable"


def test_tiers_hand_example():
    f = build_frontier([10.0, 50.0, 100.0, 200.0, 400.0], [1000.0, 600.0, 400.0, 100.0, 20.0])
    t = tiers(f)  # defaults fast = 100, ultra_fast = 300
    assert t["batch"] == {
        "throughput": 1000.0, "interactivity": 10.0, "frontier_index": 0,
        "floor_tok_per_s_per_user": None, "status": "at_point",
    }
    assert t["fast"]["throughput"] == 400.0 and t["fast"]["frontier_index"] == 2
    assert t["fast"]["status"] == "at_point"
    # 300 on (200, 100)-(400, 20): 100 * 1.5^(ln 0.2 / ln 2) = 100 * 1.5^-2.3219 = 39.005 > 20.
    uf = t["ultra_fast"]
    assert uf["throughput"] == pytest.approx(39.005, abs=1e-3)
    assert uf["interactivity"] == 300.0 and uf["frontier_index"] is None
    assert uf["status"] == "interpolated"

    t2 = tiers(f, {"slow": 5.0, "edge": 392.0, "never": 500.0, "zero": 0.0})
    assert t2["slow"]["frontier_index"] == 0 and t2["zero"]["throughput"] == 1000.0
    # 392 = 400 * 0.98: 100 * 1.96^-2.3219 = 20.96, labelled at the frontier end.
    assert t2["edge"]["throughput"] == pytest.approx(20.96, abs=0.01)
    assert t2["edge"]["status"] == "at_frontier_end"
    assert math.isnan(t2["never"]["throughput"]) and t2["never"]["status"] == "unreachable"
    assert t2["never"]["frontier_index"] is None


def test_tiers_floor_at_last_point_and_defaults():
    f = build_frontier([10.0, 300.0], [50.0, 5.0])
    t = tiers(f)
    assert t["ultra_fast"]["frontier_index"] == 1 and t["ultra_fast"]["throughput"] == 5.0
    assert t["ultra_fast"]["status"] == "at_frontier_end"
    assert dict(DEFAULT_TIER_FLOORS) == {"fast": 100.0, "ultra_fast": 300.0}


@pytest.mark.parametrize("floors", [{"fast": -1.0}, {"fast": math.nan}, {"batch": 10.0}])
def test_tiers_bad_floors(floors):
    f = build_frontier(X4, Y4)
    with pytest.raises(SpecError) as err:
        tiers(f, floors)
    assert "floors" in err.value.field
