"""MoE routing statistics of one step: experts touched and the busiest expert-parallel rank.

Uniform top-k routing (each token picks k distinct experts of E uniformly) is the reference.
Real routers are skewed: expert e receives a share p_e of the assignments (specs/routing.py,
measured on DeepSeek-R1), so the busiest EP rank carries a share q of them that depends on the
placement (deploy/eplb.py: contiguous, or EPLB with redundant experts). On top of that
popularity, a step of finitely many tokens adds binomial sampling noise; large batches are
dominated by the popularity, small ones by the sampling. ``Efficiency.moe_load_skew``
multiplies the sampling tail (1 = binomial).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from jalapeno.specs.routing import expert_popularity


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


def extreme_value_tail(ep: int) -> float:
    """sqrt(2·ln ep): the Gaussian extreme-value factor of the busiest of ``ep`` ranks (0 at ep <= 1), the one
    :func:`busiest_rank_assignments` scales its sampling term by and cost/layout_columns.py works out per layout.

    >>> round(float(extreme_value_tail(8)), 4), extreme_value_tail(1)
    (2.0393, 0.0)
    """
    return np.sqrt(2.0 * np.log(ep)) if ep > 1 else 0.0


def dispatch_ranks(top_k: int, ep: int) -> float:
    """ep·(1 − (1 − 1/ep)^top_k): the EP ranks one token's top_k experts land on, the k experts on distinct
    ranks uniformly (the prefill all-to-all's copies per token, cost/expert_ops.dispatch_copies).

    >>> round(float(dispatch_ranks(8, 4)), 4)  # 4·(1 − 0.75^8)
    3.5995
    """
    return ep * (1.0 - (1.0 - 1.0 / ep) ** top_k)


def busiest_rank_assignments(
    tokens, top_k: int, ep: int, skew: float = 1.0, share: float | None = None, tail=None
) -> np.ndarray:
    """Token-expert assignments landing on the busiest of ``ep`` expert-parallel ranks.

    A = T·k assignments; the busiest rank's expected share of them is q (``share``, from
    deploy/eplb.busiest_rank_share; default 1/ep, uniform routing). Its count is binomial with
    mean A·q and std sqrt(A·q·(1 − q)); the expected maximum over ep ranks is about

        A_max = min(A, A·q + s·sqrt(A·q·(1 − q))·sqrt(2·ln ep))

    (Gaussian extreme-value tail, DESIGN.md §7; s = ``skew``). With q = 1/ep this is the
    uniform-routing binomial result. The popularity term grows as A, the sampling term as
    sqrt(A). Adding the full ep-way tail to the busiest rank's mean leans high (by at most
    s·sqrt(A·q·2 ln ep)) when one rank leads the others by many standard deviations.
    Increasing in q for q <= 1/2, so a better-balanced placement never loads the rank more.
    ``tail``: sqrt(2·ln ep) worked out already, a scalar or an (N,) array of every column's (a joined
    build of several layouts, cost/layout_columns.py; ``share`` then (N,) too and ``ep`` one column's, > 1).

    >>> round(float(busiest_rank_assignments(128, 8, 8)), 1)
    149.6
    >>> round(float(busiest_rank_assignments(128, 8, 8, share=0.25)), 1)  # 256 + 2.039·sqrt(192)
    284.3
    """
    a = np.asarray(tokens, dtype=float) * top_k
    if ep <= 1:
        return a
    q = 1.0 / ep if share is None else np.asarray(share, dtype=float)
    std = np.sqrt(a * q * (1.0 - q))
    return np.minimum(a, a * q + skew * std * (extreme_value_tail(ep) if tail is None else tail))


#: token counts of the log grid on which the skewed touched-expert fraction is tabulated
_TOUCH_GRID = np.concatenate([[0.0], np.logspace(-3, 9, 241)])


@lru_cache(maxsize=64)
def _touched_fraction_table(num_experts: int, top_k: int, sigma: float) -> np.ndarray:
    p = np.minimum(top_k * expert_popularity(num_experts, sigma), 1.0)
    miss = np.log1p(-np.minimum(p, 1 - 1e-15))
    frac = 1.0 - np.exp(np.outer(_TOUCH_GRID, miss)).mean(axis=1)
    frac.setflags(write=False)
    return frac


def touched_fraction(tokens, num_experts: int, top_k: int, sigma: float = 0.0) -> np.ndarray:
    """Fraction of a layer's experts that T tokens touch: (1/E)·Σ_e (1 − (1 − k·p_e)^T).

    A token picks expert e with probability k·p_e (p_e from specs/routing.py; capped at 1).
    σ = 0 is the uniform 1 − (1 − k/E)^T in closed form; otherwise the sum is tabulated once per
    (E, k, σ) on a log grid of T and interpolated (vectorised over (N,) tokens). Popular experts
    are hit repeatedly, so a skewed router touches fewer distinct experts at small T.

    >>> round(float(touched_fraction(64, 256, 8)), 4)
    0.8689
    """
    t = np.asarray(tokens, dtype=float)
    if sigma == 0:
        return 1.0 - (1.0 - top_k / num_experts) ** t
    return np.interp(t, _TOUCH_GRID, _touched_fraction_table(num_experts, top_k, float(sigma)))


def experts_touched_on_rank(
    assignments, experts_on_rank: int, num_experts: int, top_k: int, ep: int, sigma: float = 0.0
) -> np.ndarray:
    """Expected distinct experts among a rank's ``experts_on_rank`` hit by ``assignments`` picks.

    A token picks k distinct experts of E, so it misses a given expert with probability 1 − k/E
    (uniform) or 1 − k·p_e (popularity σ, :func:`touched_fraction`). The rank's ``assignments``
    correspond to T' = assignments·ep/k tokens' worth of traffic (T' = T on a rank with the mean
    load), hence n·f(T'), which is :func:`expected_distinct_experts` at ep = 1 and σ = 0. Only
    these experts' weights are read. With EPLB, ``experts_on_rank`` counts the rank's slots.

    >>> float(experts_touched_on_rank(8, 256, 256, 8, 1))
    8.0
    """
    a = np.asarray(assignments, dtype=float)
    tokens_equiv = a * ep / top_k
    return experts_on_rank * touched_fraction(tokens_equiv, num_experts, top_k, sigma)


def mixed_touched_fraction(
    decode_tokens, prompt_tokens, num_experts: int, top_k: int, decode_sigma: float, prompt_sigma: float = 0.0
) -> np.ndarray:
    """Fraction of a layer's experts a step of D generated and P prompt tokens touches.

    Generated tokens route with popularity ``decode_sigma``, prompt tokens with ``prompt_sigma``
    (specs/routing.py). Expert e is missed by every token with probability
    (1 − k·p_e(σ_d))^D · (1 − k·p_e(σ_p))^P. When the two σ agree this is :func:`touched_fraction`
    of D + P; when the prompt routes uniformly (σ_p = 0) the prompt factor (1 − k/E)^P is the same
    for every expert, so 1 − f = (1 − f_0(P))·(1 − f_σd(D)). Shapes: (N,), (N,) → (N,).

    >>> round(float(mixed_touched_fraction(0, 64, 256, 8, 1.03)), 4)  # prompt only: uniform
    0.8689
    >>> f_d = float(touched_fraction(8, 256, 8, 1.03)); f_p = float(touched_fraction(8, 256, 8))
    >>> round(float(mixed_touched_fraction(8, 8, 256, 8, 1.03)), 6) == round(1 - (1 - f_d) * (1 - f_p), 6)
    True

    Raises:
        ValueError: two different non-zero σ (no separable form; not a mode the CLI offers).
    """
    d = np.asarray(decode_tokens, dtype=float)
    p = np.asarray(prompt_tokens, dtype=float)
    if decode_sigma == prompt_sigma:
        return touched_fraction(d + p, num_experts, top_k, decode_sigma)
    if prompt_sigma != 0 and decode_sigma != 0:
        raise ValueError("mixed routing needs equal sigmas or a uniform prompt")
    if decode_sigma == 0:
        d, p, decode_sigma = p, d, prompt_sigma
    return 1.0 - (1.0 - touched_fraction(p, num_experts, top_k)) * (
        1.0 - touched_fraction(d, num_experts, top_k, decode_sigma)
    )
