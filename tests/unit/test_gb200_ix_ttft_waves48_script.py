"""scripts/gb200_ix_ttft_waves48.py: the wave split of a closed loop's counted requests and Little's law on the
TTFT span (expected values worked by hand in the comments)."""

from __future__ import annotations

import pytest

from script_module import load_script

w48 = load_script("gb200_ix_ttft_waves48")


def test_waves_cut_by_arrival_not_by_input_order():
    # six requests, C = 2, given out of arrival order: sorted arrivals 0, 0 | 4, 5 | 9, 9.5
    # wave 0 TTFTs {10, 2} -> median 6, mean 6; wave 1 {0.4, 0.6} -> 0.5; wave 2 {0.3, 0.5} -> 0.4
    arrivals = [4.0, 0.0, 9.0, 0.0, 5.0, 9.5]
    ttfts = [0.4, 10.0, 0.3, 2.0, 0.6, 0.5]
    t = w48.wave_table(arrivals, ttfts, 2)
    assert t.wave.tolist() == [0, 1, 2]
    assert t.ttft_p50_s.tolist() == pytest.approx([6.0, 0.5, 0.4])
    assert t.first_s.tolist() == [0.0, 4.0, 9.0]
    assert t.last_s.tolist() == [0.0, 5.0, 9.5]


def test_last_wave_may_be_partial():
    # five requests at C = 2: waves {0, 1}, {2, 3}, {4}; the last wave's median is its one TTFT
    t = w48.wave_table([0, 1, 2, 3, 4], [1.0, 3.0, 5.0, 7.0, 9.0], 2)
    assert t.ttft_p50_s.tolist() == pytest.approx([2.0, 6.0, 9.0])


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="concurrency 0"):
        w48.wave_table([0.0], [1.0], 0)
    with pytest.raises(ValueError, match="2 arrivals, 1 TTFTs"):
        w48.wave_table([0.0, 1.0], [1.0], 1)


def test_held_before_first_token():
    # row 29 measured: lambda = 15,003 tok/s/GPU x 12 GPUs / (921.6 + 921.6) tokens = 97.68/s; x 7.6283 s = 745.1
    assert w48.held_before_first_token(97.68, 7.6283) == pytest.approx(745.13, abs=0.01)
    assert w48.held_before_first_token(0.0, 5.0) == 0.0
