"""scripts/sgl_cold_chunk_split.py: whether a cold run's first wave overruns SGLang's --chunked-prefill-size
(docs/gap_aic_ttft.md, "The cold SGLang rows and the chunked-prefill boundary"). Expected classes by hand:
C prompts uniform in [0.8 L, L] sum to [0.8 C L, C L] tokens."""

from __future__ import annotations

import pytest
from script_module import load_script

split = load_script("sgl_cold_chunk_split")


@pytest.mark.parametrize(("conc", "isl", "chunk", "want"), [
    (16, 1024, 16384, "never"),    # at most 16 x 1024 = 16384 tokens: fits one step exactly
    (32, 1024, 16384, "always"),   # at least 32 x 819.2 = 26,214 tokens
    (4, 8192, 16384, "always"),    # at least 4 x 6553.6 = 26,214 tokens
    (4, 8192, 32768, "never"),     # at most 4 x 8192 = 32768 tokens
    (8, 8192, 32768, "always"),    # at least 8 x 6553.6 = 52,429 tokens
])
def test_chunk_class(conc, isl, chunk, want):
    assert split.chunk_class(conc, isl, chunk) == want


def test_maybe_between_the_bounds():
    # 18 prompts of 819.2..1024 tokens: 14,746 .. 18,432 around a 16384-token chunk
    assert split.chunk_class(18, 1024, 16384) == "maybe"
