"""LoadGen's early-stopping test on Server token latencies (serve/early_stopping.py, round 54 mlperf54).

Expected values are computed here independently: the binomial tail by summing log-pmf terms with math.lgamma, and
LoadGen's own rule (loadgen/early_stopping.cc, mlcommons/inference @b66003e) restated with scipy's regularised
incomplete beta, not with the module's code.
"""

import math

from types import SimpleNamespace

import numpy as np
import pytest

from jalapeno.errors import SpecError
from jalapeno.serve import early_stopping
from jalapeno.serve.early_stopping import early_stopping_quantile, over_limit_allowance


def _cdf_by_hand(t: int, n: int, p: float) -> float:
    """P(Bin(n, p) <= t) as a sum of pmf terms (lgamma), independent of scipy.stats."""
    lp, lq = math.log(p), math.log1p(-p)
    return sum(
        math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq)
        for k in range(t + 1)
    )


def _loadgen_passes(n: int, t: int) -> bool:
    """LoadGen's Server early stopping as results.cc / early_stopping.cc state it: h = the least h with
    I_0.99(h, 1 + t) < 0.01, and the run passes iff n >= h + t."""
    from scipy.special import betainc

    h = 1
    while betainc(h, 1 + t, 0.99) >= 0.01:
        h += 1
    return n >= h + t


def test_allowance_of_a_deepseek_r1_server_run():
    # N = 26,328 (the v5.1 DeepSeek-R1 Server runs' min_query_count). Normal approximation: 263.28 − 2.326 x
    # sqrt(26,328 x 0.01 x 0.99) = 263.28 − 2.326 x 16.14 = 225.7; the exact binomial boundary is 225:
    assert _cdf_by_hand(225, 26328, 0.01) < 0.01 <= _cdf_by_hand(226, 26328, 0.01)
    assert over_limit_allowance(26328) == 225
    # so a run may carry 225 over-limit queries (0.855%), not the 263 a plain 1% would allow
    assert early_stopping_quantile(26328) == pytest.approx(1 - 225 / 26328)


def test_smallest_run_that_can_pass():
    # no over-limit query allowed at all until 0.99^n < 0.01: n > ln(0.01) / ln(0.99) = 458.2
    assert 0.99**458 > 0.01 > 0.99**459
    assert over_limit_allowance(458) == -1
    assert over_limit_allowance(459) == 0
    # with none allowed, the quantile is the largest of n draws', 1 − 1/(n + 1)
    assert early_stopping_quantile(459) == pytest.approx(1 - 1 / 460)


@pytest.mark.parametrize("n", [459, 1000, 5000, 26328])
def test_allowance_is_loadgens_rule(n):
    t = over_limit_allowance(n)
    assert _loadgen_passes(n, t)
    assert not _loadgen_passes(n, t + 1)


def test_quantile_tightens_p99_and_tends_to_it():
    qs = [early_stopping_quantile(n) for n in (26328, 49152, 270336, 10**7)]
    assert all(q > 0.99 for q in qs)
    assert qs == sorted(qs, reverse=True)
    # N = 10^7: sd 314.6, 2.326 sd / N = 0.0000732 below 1%
    assert qs[-1] == pytest.approx(0.99 + 2.326 * math.sqrt(1e7 * 0.0099) / 1e7, abs=2e-6)


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "100"])
def test_bad_query_count_is_one_clear_error(bad):
    with pytest.raises(SpecError) as e:
        over_limit_allowance(bad)
    assert "n_queries" in str(e.value)


def test_bad_percentile_is_one_clear_error():
    with pytest.raises(SpecError) as e:
        early_stopping_quantile(1000, percentile=1.5)
    assert "percentile" in str(e.value)


class _Pts:
    def __init__(self, rates):
        self.request_rate_per_s = np.asarray(rates, dtype=float)
        self.chips = np.array(8.0)

    def __len__(self):
        return len(self.request_rate_per_s)

    def take(self, idx):
        return _Pts(self.request_rate_per_s[idx])


class _Run:
    def queries(self, rate):
        # two counts: 26,328 below 10/s, 270,336 at or above
        return 26328 if rate < 10 else 270336


def test_limits_judge_each_load_at_its_runs_quantile(monkeypatch):
    from jalapeno.fit import latency_limits

    seen = []

    def fake(model, pricer, dep, wl, pts, q=0.99, arrival_k=1):
        seen.append((round(q, 5), tuple(pts.request_rate_per_s)))
        return np.full(len(pts), q)

    monkeypatch.setattr(latency_limits, "poisson_ttft_s", fake)
    monkeypatch.setattr(latency_limits, "poisson_tpot_s", fake)
    from jalapeno.serve import occupancy_padding

    monkeypatch.setattr(occupancy_padding, "OCCUPANCY_PADDING_ON", False)  # its own test below
    pts = _Pts([5.0, 20.0, 6.0])
    monkeypatch.setattr(early_stopping, "EARLY_STOPPING_ON", False)
    ttft, tpot = latency_limits._judged_p99s(None, None, None, None, pts, _Run(), 0)
    assert list(ttft) == [0.99, 0.99, 0.99]  # off: every load at p99, one pricing call per latency
    assert len(seen) == 2
    seen.clear()
    monkeypatch.setattr(early_stopping, "EARLY_STOPPING_ON", True)
    ttft, tpot = latency_limits._judged_p99s(None, None, None, None, pts, _Run(), 0)
    # 1 − 225/26,328 = 0.99145 at 5 and 6 /s; at 20 /s 270,336 queries: 2,703.4 − 2.326 x 51.73 = 2,583 allowed,
    # 1 − 2,583/270,336 = 0.99045
    assert list(np.round(ttft, 5)) == [0.99145, 0.99045, 0.99145]
    assert list(np.round(tpot, 5)) == [0.99145, 0.99045, 0.99145]
    # without a run (a sweep's frontier with no LoadGen run) the switch changes nothing
    assert list(latency_limits._judged_p99s(None, None, None, None, pts, None, 0)[0]) == [0.99] * 3


# --- serve/occupancy_padding.py: the CUDA-graph padding a Poisson batch pays (round 54) ---------------------------


def _poisson_sf_by_hand(k: int, c: float) -> float:
    """P(N > k), N ~ Poisson(c), by summing pmf terms with lgamma (independent of scipy)."""
    return 1.0 - sum(math.exp(-c + n * math.log(c) - math.lgamma(n + 1)) for n in range(k + 1))


def test_poisson_mean_of_a_staircase():
    from jalapeno.serve.occupancy_padding import poisson_mean_of

    # a step from 79.3 to 89.7 ms past 3,072 sequences (384 a rank x 8, round 45's NVIDIA B200 curve) at a mean of
    # 2,976 (372 a rank): sd 54.6, z = (3,072.5 − 2,976) / 54.6 = 1.77, so ~3.9% of the steps pad to 512 a rank
    p = _poisson_sf_by_hand(3072, 2976.0)
    assert p == pytest.approx(0.038, abs=0.004)
    got = poisson_mean_of(lambda n: np.where(n > 3072, 0.0897, 0.0793), 2976.0)
    assert got == pytest.approx(0.0793 + 0.0104 * p, rel=1e-6)
    # a linear step has no excess: E[a + bN] = a + b c
    assert poisson_mean_of(lambda n: 0.05 + 1e-5 * n, 2976.0) == pytest.approx(0.05 + 1e-5 * 2976.0, rel=1e-6)


class _Dep:
    def __init__(self, sizes, prefill=None):
        self.cuda_graph_batch_sizes = sizes
        self.prefill = prefill
        self.decode = SimpleNamespace(layout=SimpleNamespace(dp=1))  # one rank: no largest-rank excess (dprank54)


class _DecodePts(_Pts):
    def __init__(self, batch):
        super().__init__([1.0] * len(batch))
        self.decode_batch = np.asarray(batch, dtype=float)
        self.tpot_s = np.full(len(batch), 0.08)
        self.step_time_s = np.full(len(batch), 0.08)


def test_padding_excess_is_signed_and_needs_a_staircase(monkeypatch):
    from jalapeno.serve import occupancy_padding, open_loop

    def stairs(model, pricer, dep, wl, n):
        return np.where(np.asarray(n, dtype=float) > 3072, 0.0897, 0.0793)

    monkeypatch.setattr(open_loop, "decode_step_s", stairs)
    pts = _DecodePts([3000.0, 3100.0])
    ex = occupancy_padding.padding_excess_s(None, None, _Dep((128, 256, 384, 512)), None, pts)
    # below the size: + 10.4 ms x P(N > 3,072); just above it: − 10.4 ms x P(N <= 3,072)
    assert ex[0] == pytest.approx(0.0104 * _poisson_sf_by_hand(3072, 3000.0), rel=1e-5)
    assert ex[1] == pytest.approx(-0.0104 * (1 - _poisson_sf_by_hand(3072, 3100.0)), rel=1e-5)
    assert ex[0] > 0 > ex[1]
    # no captured sizes, or a disaggregated deployment: nothing
    assert not occupancy_padding.padding_excess_s(None, None, _Dep(()), None, pts).any()
    assert not occupancy_padding.padding_excess_s(None, None, _Dep((384,), prefill=object()), None, pts).any()


def test_limits_add_the_excess_only_for_a_run(monkeypatch):
    from jalapeno.fit import latency_limits
    from jalapeno.serve import occupancy_padding

    monkeypatch.setattr(latency_limits, "poisson_ttft_s", lambda *a, **k: np.full(len(a[4]), 1.0))
    monkeypatch.setattr(latency_limits, "poisson_tpot_s", lambda *a, **k: np.full(len(a[4]), 0.075))
    monkeypatch.setattr(occupancy_padding, "padding_excess_s", lambda *a: np.full(len(a[4]), 0.002))
    monkeypatch.setattr(early_stopping, "EARLY_STOPPING_ON", False)
    pts = _Pts([5.0, 6.0])
    monkeypatch.setattr(occupancy_padding, "OCCUPANCY_PADDING_ON", True)
    assert list(latency_limits._judged_p99s(None, None, None, None, pts, _Run(), 0)[1]) == pytest.approx([0.077] * 2)
    assert list(latency_limits._judged_p99s(None, None, None, None, pts, None, 0)[1]) == [0.075] * 2  # closed loop
    monkeypatch.setattr(occupancy_padding, "OCCUPANCY_PADDING_ON", False)
    assert list(latency_limits._judged_p99s(None, None, None, None, pts, _Run(), 0)[1]) == [0.075] * 2


def test_padding_excess_is_per_output_token(monkeypatch):
    """The step's excess is read per output token by the point's TPOT over its step time (review54: every other case
    had TPOT = step, so dropping the conversion went unseen). With MTP at 2 tokens a step (TPOT 40 ms of an 80 ms
    step) the excess per token is half the step's: 10.4 ms x P(N > 3,072) / 2 at a mean of 3,000."""
    from jalapeno.serve import occupancy_padding, open_loop

    monkeypatch.setattr(
        open_loop, "decode_step_s", lambda m, p, d, w, n: np.where(np.asarray(n, dtype=float) > 3072, 0.0897, 0.0793)
    )
    pts = _DecodePts([3000.0, 0.5])
    pts.tpot_s = np.array([0.04, 0.04])
    ex = occupancy_padding.padding_excess_s(None, None, _Dep((128, 256, 384, 512)), None, pts)
    assert ex[0] == pytest.approx(0.0104 * _poisson_sf_by_hand(3072, 3000.0) / 2, rel=1e-5)
    assert ex[1] == 0.0  # under one sequence in flight: not priced
