"""MoE routing statistics of one step: experts touched and the busiest expert-parallel rank.

Uniform top-k routing (each token picks k distinct experts of E uniformly) is the reference;
real routers are skewed and load balancers (redundant experts, EPLB) flatten them, both
captured by ``Efficiency.moe_load_skew`` multiplying the tail term.
"""

from __future__ import annotations

import numpy as np


def expected_distinct_experts(tokens, num_experts: int, top_k: int) -> np.ndarray:
    """Expected number of distinct experts T tokens touch: E·(1 − (1 − k/E)^T).

    Each expert is missed by one token with probability 1 − k/E, by all T with (1 − k/E)^T
    (DESIGN.md §7). Shapes: ``tokens`` (N,) → (N,).

    >>> float(expected_distinct_experts(1, 256, 8))
    8.0
    >>> round(float(expected_distinct_experts(64, 256, 8)), 1)
    222.4
    """
    t = np.asarray(tokens, dtype=float)
    return num_experts * (1.0 - (1.0 - top_k / num_experts) ** t)


def busiest_rank_assignments(tokens, top_k: int, ep: int, skew: float = 1.0) -> np.ndarray:
    """Token-expert assignments landing on the busiest of ``ep`` expert-parallel ranks.

    A = T·k assignments spread over ep ranks: mean A/ep, binomial std sqrt(A·(1/ep)(1 − 1/ep));
    the expected maximum of ep such counts is about mean + std·sqrt(2·ln ep) (Gaussian extreme
    value approximation; DESIGN.md §7), capped at A. ``skew`` multiplies the tail term.

    >>> round(float(busiest_rank_assignments(128, 8, 8)), 1)
    149.6
    """
    a = np.asarray(tokens, dtype=float) * top_k
    if ep <= 1:
        return a
    mean = a / ep
    std = np.sqrt(a * (1.0 / ep) * (1.0 - 1.0 / ep))
    return np.minimum(a, mean + skew * std * np.sqrt(2.0 * np.log(ep)))


def experts_touched_on_rank(assignments, experts_on_rank: int, num_experts: int, top_k: int,
                            ep: int) -> np.ndarray:
    """Expected distinct experts among a rank's ``experts_on_rank`` hit by ``assignments`` picks.

    A token picks k distinct experts of E, so it misses a given expert with probability 1 − k/E.
    The rank's ``assignments`` correspond to T' = assignments·ep/k tokens' worth of traffic
    (T' = T on a rank with the mean load), hence n·(1 − (1 − k/E)^T'), which is
    :func:`expected_distinct_experts` at ep = 1. Only these experts' weights are read.

    >>> float(experts_touched_on_rank(8, 256, 256, 8, 1))
    8.0
    """
    a = np.asarray(assignments, dtype=float)
    tokens_equiv = a * ep / top_k
    return experts_on_rank * (1.0 - (1.0 - top_k / num_experts) ** tokens_equiv)
