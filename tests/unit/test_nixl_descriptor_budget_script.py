"""scripts/nixl_descriptor_budget.py: descriptors a prompt, µs a descriptor and the host-time budget, by hand."""

from __future__ import annotations

import pytest
from script_module import load_script

nb = load_script("nixl_descriptor_budget")


def test_sglang_descriptors_by_hand():
    # 61 MLA layers, 64-token pages: a 1,000-token prompt spans ceil(1000/64) = 16 pages -> 61 x 16 = 976 when no
    # two pages are adjacent, 61 when the pages form one run; 8,192 tokens = 128 pages -> 7,808
    assert nb.sglang_descriptors(1000) == 976
    assert nb.sglang_descriptors(1000, contiguous=True) == 61
    assert nb.sglang_descriptors(8192) == 7808
    assert nb.sglang_descriptors(65) == 122  # 2 pages
    with pytest.raises(ValueError, match="isl: 0"):
        nb.sglang_descriptors(0)


def test_us_per_descriptor_by_hand():
    # nixl #1401 warm: 164 µs over 122 descriptors = 1.344 µs; vllm #34054: 129.127 ms / 40,064 = 3.223 µs
    by = {p.source: p for p in nb.POSTING}
    assert by["nixl #1401 warm transfers (SGLang)"].us_per_descriptor == pytest.approx(164 / 122)
    assert by["vllm #34054 80-transfer mean"].us_per_descriptor == pytest.approx(129127 / 40064)
    assert by["nixl #176 (2025-04, pre-prepped API)"].us_per_descriptor == pytest.approx(40.0)
    # every warm report sits under UCX's declared cuda_ipc overhead, every first/cold one above it
    assert all((p.us_per_descriptor < nb.UCX_CUDA_IPC_OVERHEAD_US) == p.warm for p in nb.POSTING)


def test_additive_and_split_by_hand():
    # GB300 FP4 1k: 1e6 (1/11387 - 1/32863) = 87.820 - 30.430 = 57.390 µs
    assert nb.additive_us_per_token(32863.0, 11387.0) == pytest.approx(57.390, abs=1e-3)
    # a + b L through (1000, 50 µs) and (9000, 20 µs): 50 ms and 180 ms -> b = 130 ms / 8000 = 16.25 µs, a = 33.75 ms
    a, b = nb.per_request_split((1000, 50.0), (9000, 20.0))
    assert (a, b) == (pytest.approx(0.03375), pytest.approx(16.25))
    with pytest.raises(ValueError, match="isl: both points"):
        nb.per_request_split((1024, 1.0), (1024, 2.0))
    with pytest.raises(ValueError, match="must be positive"):
        nb.additive_us_per_token(0.0, 1.0)


def test_posting_falls_short_of_the_gap():
    # at UCX's 7 µs and no two pages adjacent, a 1k prompt costs 7 x 976 / 1024 = 6.672 µs a token: under an eighth
    # of the smallest 1k additive gap round 27 measured (51.0 µs, GB200 FP8)
    per_tok = nb.posting_us_per_token(7.0, 1024)
    assert per_tok == pytest.approx(7.0 * 976 / 1024)
    gaps = [nb.additive_us_per_token(f, s) for (_, _, isl), (f, s) in nb.ROUND27.items() if isl == 1024]
    assert min(gaps) == pytest.approx(51.04, abs=0.01)
    assert per_tok < min(gaps) / 7
