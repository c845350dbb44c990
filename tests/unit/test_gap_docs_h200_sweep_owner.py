"""docs/gap_*.md: every passage that read the 2026-03-25 "aiconfigurator 0.5.9" H200 SGLang DeepSeek-R1 rows as
aiconfigurator's own run or client carries round 52's dated correction (followup52). h200sgl52 found them to be
InferenceX's own v0.5.9-cu130 sweep: aiconfigurator-core 0.12.0's silicon_data_source says
``source_file=2026-03-25.csv``, measured 16:34:14Z, four seconds after InferenceX commit 12ba0ae07 (PR #943, 16:34:10Z).
The passages are named here by their words, not found by the code under test."""

from __future__ import annotations

from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: the words of each earlier passage that took the rows for aiconfigurator's own (rounds 25, 25 and 48)
PASSAGES = (
    "common to both sources (aiconfigurator 0.5.9 −5.7%, InferenceX v0.5.7/v0.5.12 −6.9%)",
    "aiconfigurator's own SGLang 0.5.9 H200 DeepSeek-R1 TP8 EP1 rows",
    "0.5.9 rows are aiconfigurator's run (2026-03-25, its client)",
)
#: how far after a passage its note must start (characters: the rest of the paragraph)
REACH = 700


@pytest.mark.parametrize("passage", PASSAGES)
def test_each_earlier_reading_carries_the_dated_correction(passage):
    text = (DOCS / "gap_aic_itl.md").read_text(encoding="utf-8")
    assert text.count(passage) == 1, passage  # the passage itself stays (a note, not a rewrite)
    after = text[text.index(passage) : text.index(passage) + len(passage) + REACH]
    assert "round 52 followup52" in after and "2026-12-07" in after
    assert "12ba0ae07" in after and "InferenceX's" in after and "source_file=2026-03-25.csv" in after


def test_no_other_gap_doc_calls_them_aiconfigurators_run():
    for p in sorted(DOCS.glob("gap_*.md")):
        text = p.read_text(encoding="utf-8")
        for phrase in ("aiconfigurator's run (2026-03-25", "aiconfigurator's client (2026-03-25"):
            i = text.find(phrase)
            while i >= 0:
                assert "round 52 followup52" in text[i : i + REACH], f"{p.name}: {phrase!r} without the round-52 note"
                i = text.find(phrase, i + 1)
