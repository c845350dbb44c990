"""Length spreads (specs/workload.LengthSpread): means, the output-weighted decode context,
quantiles, rescaling and sampling, each computed by hand; bad input named; no spread = the
InferenceX figures as before."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.errors import SpecError
from jalapeno.serve.sim.workloads import fixed_length_requests
from jalapeno.specs.workload import LengthSpread, Workload

TWO = LengthSpread("two", np.array([100, 300]), np.array([11, 101]))


def test_means_and_decode_context_by_hand():
    """(100, 11) decodes 10 steps at 100 + 5.5; (300, 101) 100 steps at 300 + 50.5:
    (10·105.5 + 100·350.5) / 110 = 36,105 / 110 = 328.227 tokens; fixed means give 200 + 28 = 228."""
    assert (TWO.mean_isl, TWO.mean_osl) == (200, 56)
    assert TWO.decode_ctx == pytest.approx(36105 / 110, rel=1e-12)
    wl = Workload("two", 200, 56, 1.0, spread=TWO)
    assert wl.decode_ctx == TWO.decode_ctx and (wl.mean_isl, wl.mean_osl) == (200, 56)
    assert wl.isl_quantile(0.5) == 200 and wl.osl_quantile(1.0) == 101 and wl.osl_quantile(0.0) == 11


def test_equal_lengths_give_the_fixed_length_figures():
    same = LengthSpread("same", np.full(3, 1000), np.full(3, 200))
    assert same.decode_ctx == Workload("f", 1000, 200, 1.0).decode_ctx == 1100


def test_no_spread_keeps_the_inferencex_range():
    """Uniform in [0.8 L, L]: mean 0.9 L; context 0.9·8192 + 0.9·1024/2 = 7372.8 + 460.8."""
    wl = Workload("8k1k", 8192, 1024)
    assert wl.spread is None and wl.decode_ctx == pytest.approx(7833.6, rel=1e-12)
    assert wl.osl_quantile(0.0) == pytest.approx(819.2) and "spread" not in wl.as_dict()


def test_outputs_rescaled_to_a_runs_mean():
    s = LengthSpread("x", np.array([5, 7]), np.array([10, 30])).with_mean_osl(40)
    assert list(s.osl_tokens) == [20, 60] and list(s.isl_tokens) == [5, 7]
    with pytest.raises(SpecError, match="mean_osl"):
        TWO.with_mean_osl(1)


def test_simulator_draws_whole_pairs():
    wl = Workload("two", 200, 56, 1.0, spread=TWO)
    reqs = fixed_length_requests(wl, 200, np.random.default_rng(0))
    pairs = {(r.isl, r.osl) for r in reqs}
    assert pairs == {(100, 11), (300, 101)}


def test_bad_spreads_are_named():
    with pytest.raises(SpecError, match="1 input and 2 output lengths"):
        LengthSpread("x", np.array([1]), np.array([2, 3]))
    with pytest.raises(SpecError, match=r"spread\.osl_tokens.*>= 2"):
        LengthSpread("x", np.array([1, 2]), np.array([2, 1]))
    with pytest.raises(SpecError, match="range_ratio.*use range_ratio 1.0 with a spread"):
        Workload("x", 200, 56, 0.8, spread=TWO)
