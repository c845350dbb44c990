"""serve/occupancy_padding's largest attention-DP rank (round 54, dprank54): J = the largest rank's count above
⌈N/dp⌉ under TensorRT-LLM's capped least-loaded admission, and the padding priced at N + dp·J sequences."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from jalapeno.serve import occupancy_padding, open_loop


def _j_pmf_dp2_by_hand(j: int) -> float:
    """dp 2, by hand: the deficit D of the lower rank. From D = 0 every event (an arrival with both ranks at M raises
    M; a departure from either rank) gives D = 1. From D >= 1: an arrival fills the lower rank (½) or a departure
    hits the larger rank (¼): D − 1, 3/4 in all; a departure from the lower rank (¼): D + 1. Balance: π1 = (4/3)π0,
    π(d+1) = π(d)/3, Σ = 3π0: π0 = 1/3, π1 = 4/9, π(d) = (4/9)(1/3)^(d−1). J = ⌊D/2⌋: P(J=0) = 7/9,
    P(J=j) = π(2j) + π(2j+1) = (16/81)(1/9)^(j−1)."""
    return 7 / 9 if j == 0 else (16 / 81) * (1 / 9) ** (j - 1)


def test_largest_rank_extra_dp2_by_hand():
    got = occupancy_padding.largest_rank_extra_pmf(2)
    assert got[0] == pytest.approx(7 / 9, rel=1e-3)
    assert got[1] == pytest.approx(16 / 81, rel=1e-3)
    assert got[2] == pytest.approx(16 / 729, rel=1e-2)
    assert occupancy_padding.largest_rank_extra_pmf(1) == (1.0,)


def test_largest_rank_extra_dp8_sits_between_equal_and_independent():
    """dp 8 (the MLPerf DeepSeek-R1 engines): the largest rank is ⌈N/dp⌉ (equal shares, J = 0) in 41% of steps,
    one above in 45% (a Monte Carlo of 400,000 events of the same chain gave 0.413, 0.443, 0.124, 0.018); its mean
    excess is far below eight independent Poisson(372) ranks' (the largest's mean is 372 + 2.85·19.3 = 427)."""
    pj = occupancy_padding.largest_rank_extra_pmf(8)
    assert pj[0] == pytest.approx(0.413, abs=0.01)
    assert pj[1] == pytest.approx(0.443, abs=0.01)
    assert pj[2] == pytest.approx(0.124, abs=0.01)
    assert sum(j * p for j, p in enumerate(pj)) < 1.0


def _sf(k: int, c: float) -> float:
    """P(N > k), N ~ Poisson(c), by lgamma sums (independent of scipy)."""
    return 1.0 - sum(math.exp(-c + n * math.log(c) - math.lgamma(n + 1)) for n in range(k + 1))


def test_padding_prices_the_largest_rank(monkeypatch):
    """dp 2, a 10.4 ms step past 3,072 sequences (1,536 a rank), mean 3,000: the largest rank crosses when
    N + 2J > 3,072, so the excess is 10.4 ms x Σ_j P(J=j)·P(N > 3,072 − 2j); off: P(N > 3,072) alone."""
    monkeypatch.setattr(
        open_loop, "decode_step_s", lambda m, p, d, w, n: np.where(np.asarray(n, dtype=float) > 3072, 0.0897, 0.0793)
    )
    dep = SimpleNamespace(cuda_graph_batch_sizes=(1024, 1536, 2048), prefill=None)
    dep.decode = SimpleNamespace(layout=SimpleNamespace(dp=2))
    pts = SimpleNamespace(decode_batch=np.array([3000.0]), tpot_s=np.array([0.08]), step_time_s=np.array([0.08]))
    pts = _Pts(pts)
    want = 0.0104 * sum(_j_pmf_dp2_by_hand(j) * _sf(3072 - 2 * j, 3000.0) for j in range(5))
    monkeypatch.setattr(occupancy_padding, "RANK_IMBALANCE_ON", True)
    on = occupancy_padding.padding_excess_s(None, None, dep, None, pts)[0]
    assert on == pytest.approx(want, rel=2e-3)
    monkeypatch.setattr(occupancy_padding, "RANK_IMBALANCE_ON", False)
    off = occupancy_padding.padding_excess_s(None, None, dep, None, pts)[0]
    assert off == pytest.approx(0.0104 * _sf(3072, 3000.0), rel=1e-5)
    assert on > off


class _Pts:
    def __init__(self, ns):
        self.decode_batch, self.tpot_s, self.step_time_s = ns.decode_batch, ns.tpot_s, ns.step_time_s

    def __len__(self):
        return len(self.decode_batch)
