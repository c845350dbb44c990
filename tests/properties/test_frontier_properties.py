"""Property tests of the Pareto frontier, its interpolation and the comparisons built on it."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from jalapeno.analysis.compare import build_frontier, iso_interactivity_ratio, tiers
from jalapeno.analysis.frontier import frontier_indices, interp_frontier, pareto_mask

# Small integer grids make ties and exact duplicates common; a few invalid values mixed in.
coord = st.one_of(
    st.integers(1, 8).map(float),
    st.sampled_from([0.0, -1.0, math.nan, math.inf]),
)
points = st.lists(st.tuples(coord, coord), min_size=0, max_size=25)
valid_points = st.lists(
    st.tuples(st.floats(0.1, 1e4), st.floats(0.1, 1e4)), min_size=1, max_size=30
)


def _valid(x: float, y: float) -> bool:
    return math.isfinite(x) and math.isfinite(y) and x > 0 and y > 0


def _dominates(p: tuple[float, float], q: tuple[float, float]) -> bool:
    return p[0] >= q[0] and p[1] >= q[1] and (p[0] > q[0] or p[1] > q[1])


@given(points)
def test_mask_matches_brute_force(pts):
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    mask = pareto_mask(x, y)
    for i, p in enumerate(pts):
        dominated = any(_valid(*q) and _dominates(q, p) for q in pts)
        earlier_duplicate = any(pts[j] == p for j in range(i))
        expected = _valid(*p) and not dominated and not earlier_duplicate
        assert mask[i] == expected, (i, p)


@given(points)
def test_every_valid_non_frontier_point_is_covered(pts):
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    idx = frontier_indices(x, y)
    front = [pts[i] for i in idx]
    for i, p in enumerate(pts):
        if _valid(*p) and i not in set(idx.tolist()):
            # dominated by, or an exact duplicate of, some frontier point
            assert any(_dominates(q, p) or q == p for q in front)
    fx, fy = x[idx], y[idx]
    assert np.all(np.diff(fx) > 0) and np.all(np.diff(fy) < 0)


@given(points, st.randoms(use_true_random=False))
def test_frontier_values_independent_of_order(pts, rnd):
    shuffled = list(pts)
    rnd.shuffle(shuffled)

    def values(ps):
        x = np.array([p[0] for p in ps])
        y = np.array([p[1] for p in ps])
        idx = frontier_indices(x, y)
        return list(zip(x[idx].tolist(), y[idx].tolist()))

    assert values(pts) == values(shuffled)


@given(valid_points, st.lists(st.floats(0.01, 2e4), min_size=1, max_size=20))
def test_interp_monotone_bounded_and_reaches_iff_inside(pts, queries):
    f = build_frontier([p[0] for p in pts], [p[1] for p in pts])
    q = np.sort(np.array(queries))
    y, status = interp_frontier(f.x, f.y, q)
    reach = status != "unreachable"
    assert np.array_equal(reach, q <= f.x[-1])
    assert np.all(np.isnan(y[~reach]))
    yr = y[reach]
    assert np.all(np.diff(yr) <= 1e-9 * yr[:-1])  # non-increasing in x
    assert np.all(yr <= f.y[0] * (1 + 1e-12)) and np.all(yr >= f.y[-1] * (1 - 1e-12))
    # at the frontier points themselves the value is the point's own
    y_nodes, _ = interp_frontier(f.x, f.y, f.x)
    assert np.array_equal(y_nodes, f.y)


@given(
    valid_points, st.floats(0.01, 100.0), st.lists(st.floats(0.05, 2e4), min_size=1, max_size=10)
)
def test_iso_ratio_scale_invariant(pts, scale, xs):
    x = [p[0] for p in pts]
    y = [p[1] for p in pts]
    ys = [v * scale for v in y]
    # the claim holds for a scale that keeps the points' order; rounding can merge near-ties
    # (0.1 and 0.10000000000000002 times 83.875 are one float), which changes the frontier itself
    assume(all((u < v) == (su < sv) for u, su in zip(y, ys) for v, sv in zip(y, ys)))
    a = build_frontier(x, ys)
    b = build_frontier(x, y)
    for row in iso_interactivity_ratio(a, b, xs):
        if row["status_a"] == "unreachable":
            assert math.isnan(row["ratio"])
        else:
            assert math.isclose(row["ratio"], scale, rel_tol=1e-9)


@settings(max_examples=50)
@given(valid_points, st.lists(st.floats(0.0, 2e4), min_size=1, max_size=8))
def test_tiers_monotone_and_at_least_best_point(pts, floor_list):
    f = build_frontier([p[0] for p in pts], [p[1] for p in pts])
    floors = {f"t{i}": v for i, v in enumerate(sorted(floor_list))}
    t = tiers(f, floors)
    prev = t["batch"]["throughput"]
    for name, floor in floors.items():
        tier = t[name]
        above = f.y[f.x >= floor]
        if above.size == 0:
            assert tier["status"] == "unreachable" and math.isnan(tier["throughput"])
            continue
        assert tier["throughput"] >= above.max()
        assert tier["throughput"] <= prev * (1 + 1e-12)
        assert tier["interactivity"] >= floor
        prev = tier["throughput"]
