"""The run's drain factor (serve/point.drain_factor, RUN_DRAIN; docs/model.md §8.7 effect 8)."""

import dataclasses

import numpy as np
import pytest

import jalapeno.serve.point as point
from jalapeno.errors import SpecError
from jalapeno.serve.analytic import ServingPoints


def _pts(e2e: float, thr: float) -> ServingPoints:
    f = {k.name: np.array([1.0]) for k in dataclasses.fields(ServingPoints)}
    return ServingPoints(**{**f, "e2e_s": np.array([e2e]), "throughput_per_chip": np.array([thr])})


def test_drain_factor_by_hand():
    # C slots with remaining times uniform on [0, E2E] at the last issue: the run lasts R + 1/2 E2Es
    assert point.drain_factor(10, 0.5) == pytest.approx(10 / 10.5)
    assert point.drain_factor(4, 1.0) == pytest.approx(0.8)
    assert point.drain_factor(10, 0.0) == 1.0


@pytest.mark.parametrize(("r", "d", "field"), [(0, 0.5, "requests_per_user"), (10, -0.1, "drain_e2e")])
def test_drain_factor_rejects_bad_input(r, d, field):
    with pytest.raises(SpecError, match=field):
        point.drain_factor(r, d)


def test_run_throughput_applies_drain_only_when_on(monkeypatch):
    ss, run = _pts(20.0, 1000.0), _pts(25.0, 1000.0)
    assert float(point.run_throughput(ss, run).throughput_per_chip[0]) == pytest.approx(800.0)  # shipped OFF
    monkeypatch.setattr(point, "RUN_DRAIN", True)
    # 1000 x 20/25 x 10/10.5 = 761.90...
    assert float(point.run_throughput(ss, run).throughput_per_chip[0]) == pytest.approx(16000 / 21)
