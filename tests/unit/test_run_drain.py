"""The run's drain (serve/run_drain.py, serve/point.drain_factor, RUN_DRAIN; docs/model.md §8.7 effect 8)."""

import dataclasses
import heapq
import math

import numpy as np
import pytest

import jalapeno.serve.point as point
from jalapeno.errors import SpecError
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.serve.run_drain import drain_e2e


def _pts(e2e: float, thr: float) -> ServingPoints:
    f = {k.name: np.array([1.0]) for k in dataclasses.fields(ServingPoints)}
    return ServingPoints(**{**f, "e2e_s": np.array([e2e]), "throughput_per_chip": np.array([thr])})


def _client_mc(users: int, width: float, offsets, reps: int, R: int = 10, seed: int = 7) -> float:
    """The client protocol itself: C slots take requests from one list of R·C (E2E uniform on
    [1 − w/2, 1 + w/2]), a slot's first request starts at its offset; d = max finish − mean finish."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(reps):
        lens = 1.0 + width * (rng.random(R * users) - 0.5)
        o = rng.choice(np.asarray(offsets, dtype=float), users)
        heap = [(o[i] + lens[i], i) for i in range(users)]
        heapq.heapify(heap)
        nxt, fin = users, []
        while heap:
            t, s = heapq.heappop(heap)
            if nxt < R * users:
                heapq.heappush(heap, (t + lens[nxt], s))
                nxt += 1
            else:
                fin.append(t)
        out.append(max(fin) - float(np.mean(fin)))
    return float(np.mean(out))


def test_drain_factor_by_hand():
    assert float(point.drain_factor(10, 0.5)) == pytest.approx(10 / 10.5)
    assert float(point.drain_factor(4, 1.0)) == pytest.approx(0.8)
    assert float(point.drain_factor(10, 0.0)) == 1.0


@pytest.mark.parametrize(("r", "d", "field"), [(0, 0.5, "requests_per_user"), (10, -0.1, "drain_e2e")])
def test_drain_factor_rejects_bad_input(r, d, field):
    with pytest.raises(SpecError, match=field):
        point.drain_factor(r, d)


def test_run_throughput_applies_a_given_drain():
    ss, run = _pts(20.0, 1000.0), _pts(25.0, 1000.0)
    assert float(point.run_throughput(ss, run).throughput_per_chip[0]) == pytest.approx(800.0)  # not priced
    # 1000 x 20/25 x 10/10.5 = 761.90...
    assert float(point.run_throughput(ss, run, np.array([0.5])).throughput_per_chip[0]) == pytest.approx(16000 / 21)


def test_one_slot_never_waits_for_another():
    assert drain_e2e(1, 10, 0.2, [0.0]) == pytest.approx(0.0, abs=1e-6)


def test_in_step_slots_drain_the_largest_of_c_sums():
    # phases in step: every slot ends its 10th request, d = E[max of 4 N(0, 1)] · √10 · w/√12;
    # E[max of 4 standard normals] = 1.0294 (tables of normal order statistics, Harter 1961)
    want = 1.0294 * math.sqrt(10) * 0.2 / math.sqrt(12)
    assert drain_e2e(4, 10, 0.2, [0.0]) == pytest.approx(want, abs=0.01)


@pytest.mark.parametrize(("users", "offsets"), [(16, [0.0]), (256, [0.0]), (64, np.linspace(0, 0.5, 32))])
def test_closed_form_follows_the_client_protocol(users, offsets):
    mc = _client_mc(users, 0.2, offsets, reps=max(2000 // users, 10))
    assert drain_e2e(users, 10, 0.2, offsets) == pytest.approx(mc, abs=0.03)


def test_wide_spread_stays_under_the_renewal_bound():
    # every slot at an equilibrium phase: the longest remaining life (1 + w/2) less the mean one,
    # E[L²]/(2E[L]) = (1 + w²/12)/2 for E2Es uniform on [1 − w/2, 1 + w/2]
    bound = 1.1 - (1 + 0.04 / 12) / 2
    d = drain_e2e(4096, 10, 0.2, [0.0])
    assert 0.5 < d < bound


def test_the_step_speed_up_shortens_the_drain():
    u = np.array([0.0, 1.0])
    flat = drain_e2e(64, 10, 0.2, [0.0], (u, np.array([1.0, 1.0])))
    assert flat == pytest.approx(drain_e2e(64, 10, 0.2, [0.0]), rel=1e-9)
    # τ(B) = a + b·B with a = half the full step: only the fixed half is paid while the batch empties
    # (∫ q·(a + b·C·p/q) − p·(a + b·C) = a·∫ (q − p)), d halves
    assert drain_e2e(64, 10, 0.2, [0.0], (u, np.array([0.5, 1.0]))) == pytest.approx(flat / 2, rel=0.02)


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"users": 0.5}, "users"),
        ({"requests_per_user": 0}, "requests_per_user"),
        ({"width": -0.1}, "width"),
        ({"jitter": -1.0}, "jitter"),
    ],
)
def test_drain_e2e_rejects_bad_input(kw, field):
    args = {"users": 4, "requests_per_user": 10, "width": 0.2, "offsets": [0.0], **kw}
    with pytest.raises(SpecError, match=field):
        drain_e2e(**args)


def test_switch_prices_random_lengths_only(monkeypatch):
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    model, pr = load_model("gpt-oss-120b"), load_pricer("h200")
    dep = Deployment(get_precision("mxfp4"), Pool(Layout(tp=2)))
    cs = [1, 64]
    rand, fixed = get_workload("1k1k"), get_workload("1k1k", fixed=True)
    off = [point.serve_at_concurrency(model, pr, dep, w, cs).throughput_per_chip for w in (rand, fixed)]
    monkeypatch.setattr(point, "RUN_DRAIN", True)
    on = [point.serve_at_concurrency(model, pr, dep, w, cs).throughput_per_chip for w in (rand, fixed)]
    assert on[0][0] == pytest.approx(off[0][0], rel=1e-6)  # one user: nothing to wait for
    assert 0.95 < on[0][1] / off[0][1] < 0.995  # 64 users: d between 0.05 and 0.5 of R = 10
    np.testing.assert_allclose(on[1], off[1], rtol=1e-12)  # fixed lengths: effect 6's waves, not drained
