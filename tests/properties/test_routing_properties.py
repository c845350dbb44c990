"""EPLB is never worse than no EPLB: the busiest EP rank's load, over EP, tokens, R and skew."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jalapeno.cost.moe import busiest_rank_assignments
from jalapeno.deploy.eplb import busiest_rank_share


@settings(max_examples=150, deadline=None)
@given(e=st.sampled_from([16, 64, 128, 256, 384]), log_ep=st.integers(1, 8),
       extra_slots=st.integers(0, 3), sigma=st.sampled_from([0.0, 0.3, 1.03, 1.8]),
       tokens=st.floats(0.0, 1e6), k=st.sampled_from([1, 4, 8]))
def test_eplb_never_loads_the_busiest_rank_more(e, log_ep, extra_slots, sigma, tokens, k):
    ep = 2 ** log_ep
    if ep > e:
        ep = e
    # R: the fewest redundant experts making ep divide E + R, plus 0-3 more slots per rank
    r = (-e) % ep + extra_slots * ep
    k = min(k, e)
    none = busiest_rank_share(e, sigma, ep, None)
    bal = busiest_rank_share(e, sigma, ep, r)
    assert bal <= none + 1e-12
    assert bal >= 1 / ep - 1e-12  # nothing beats a perfect balance
    a_none = float(busiest_rank_assignments(tokens, k, ep, share=none))
    a_bal = float(busiest_rank_assignments(tokens, k, ep, share=bal))
    assert a_bal <= a_none * (1 + 1e-12) + 1e-9
    assert a_bal >= tokens * k / ep * (1 - 1e-12) - 1e-9  # never below the mean rank's load
