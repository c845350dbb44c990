"""scripts/_served_point.py: the diagnosis scripts' shared set-up (one validated row served at its concurrency,
fit/mlperf_scenarios.priced_point with its ``system`` and ``stack`` overrides). Expected values come from validate's
own path (fit/validate.predict_points), from a twin row and from arithmetic by hand, not from the helper's output."""

from __future__ import annotations

import dataclasses

import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.validate import point_stack, predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from script_module import load_script

s = load_script("_served_point")
PTS = {p.id: p for p in load_inferencex(DEFAULT_POINTS)[0]}


def _row(n: int):
    return PTS[f"inferencex_points:{n}"]


def test_served_as_validate_prices_the_row():
    # row 28: MI300X DeepSeek-R1 8k/1k, C 64, a matched deployment: validate's predicted TPOT and throughput per
    # chip are those of the same row served at its concurrency
    p = _row(28)
    pred = predict_points([p]).set_index("metric")["predicted"]
    run = s.served_point(p).run
    assert float(run.tpot_s[0]) == pytest.approx(pred["tpot_s"], rel=1e-9)
    assert float(run.throughput_per_chip[0]) == pytest.approx(pred["throughput_per_chip"], rel=1e-9)


def test_system_override_prices_the_deployment_on_the_named_chip():
    # rows 44 (MI325X) and 45 (MI300X): gpt-oss-120b 8k/1k, C 64, one vLLM image and deployment. Row 45 priced on
    # MI325X is row 44 as served; on its own chip its TPOT is longer, by at most the HBM ratio 6.0 / 5.3 = 1.132
    # (datasheets), since the rest of the step is priced alike on the two gfx942 chips
    mi325x, mi300x = _row(44), _row(45)
    assert mi325x.deployment == mi300x.deployment and (mi325x.isl, mi325x.osl) == (mi300x.isl, mi300x.osl)
    twin = float(s.served_point(mi325x).run.tpot_s[0])
    moved = s.served_point(mi300x, system="mi325x")
    assert float(moved.run.tpot_s[0]) == pytest.approx(twin, rel=1e-12)
    own = float(s.served_point(mi300x).run.tpot_s[0])
    assert 1.0 < own / twin <= 6.0 / 5.3


def test_stack_override_reaches_the_steps():
    # row 44 has no MTP: one decode step a token, so 5 ms more per step is 5 ms more per token, plus the longer
    # prompt steps' share of the stall (under 2%)
    p = _row(44)
    st = point_stack(p)
    assert s.served_point(p).dep.mtp is None
    base = float(s.served_point(p).run.tpot_s[0])
    slower = s.served_point(p, stack=dataclasses.replace(st, step_overhead_s=st.step_overhead_s + 0.005))
    assert float(slower.run.tpot_s[0]) - base == pytest.approx(0.005, rel=0.02)


def test_row_without_a_deployment_is_one_clear_error():
    # row 27 is validated as a sweep (no single declared deployment)
    with pytest.raises(SpecError, match="deployment"):
        s.served_point(_row(27))
