"""Round 28 new-user pass and break-it (newuser28): what a newcomer typed and what it did."""

from __future__ import annotations

import pytest
from cli_runner import error_line, run

@pytest.mark.parametrize(("claim", "fix"), [
    ("max_interactivity_ratio_ratio=1", "--claim max_interactivity_ratio=1"),
    ("tok_s_per_kw_ratio@50_ratio=1.5", "--claim tok_s_per_kw_ratio@50=1.5"),
])
def test_a_claim_saying_ratio_twice_is_refused(capsys, claim, fix):
    """`--claim max_interactivity_ratio_ratio=1 --baseline gb300-nvl72` ran as max_interactivity_ratio
    (the parser took a _ratio before and another after @X, and a doubled one without @X, as one)."""
    line = error_line(*run(capsys, "audit", "--system", "jalapeno", "--baseline", "gb300-nvl72",
                           "--claim", claim))
    assert line == f"error: --claim: {claim!r} says _ratio twice. Fix: write it once, e.g. {fix}"


def test_a_claim_with_ratio_once_still_parses():
    """Either place of the one _ratio (before or after @X) is the same claim."""
    from jalapeno.analysis.claims import parse_claim

    assert parse_claim("tok_s_per_kw@50_ratio=1.5") == parse_claim("tok_s_per_kw_ratio@50=1.5")
    assert parse_claim("tok_s_per_kw@50_ratio=1.5").ratio
