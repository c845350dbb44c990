"""Expert placement over expert-parallel ranks, and the busiest rank's share of the routed load.

Without EPLB, engines place experts contiguously by id: rank r holds experts
[r·n, (r+1)·n), n = ceil(E/ep). Expert ids carry no popularity order, and each MoE layer has its
own popularity pattern (TensorRT-LLM tech blog 4: the hot layer and hot experts differ by layer
and dataset), so over the layers of a step the busiest rank's share is the expectation, over
random assignments of the popularity profile (specs/routing.py) to ids, of the largest rank
sum. It is computed by averaging ``PLACEMENT_SAMPLES`` seeded permutations (deterministic).

With EPLB (DeepSeek's Expert Parallelism Load Balancer, github.com/deepseek-ai/EPLB README;
DeepSeek-V3 report §3.4 "redundant experts"), R extra slots hold replicas of the hottest
experts, a replicated expert's tokens are split evenly over its replicas, and replicas are
packed onto ranks to balance load — implemented here from that description:

1. replicate: R times, give one more replica to the expert with the highest load per replica;
2. pack: take the replicas heaviest first and put each on the least-loaded rank that still has
   a free slot ((E + R)/ep slots per rank).

This is the global policy (the README uses it for decode and whenever groups do not divide the
nodes); the hierarchical, node-limited variant is not modelled. EPLB balances on the popularity
it measured; the step's binomial sampling noise remains (cost/moe.py).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from jalapeno.specs.routing import expert_popularity

#: random placements averaged for the no-EPLB busiest share (seeded: results are reproducible)
PLACEMENT_SAMPLES = 512
PLACEMENT_SEED = 20250505


def eplb_rank_shares(popularity, ep: int, redundant: int) -> np.ndarray:
    """Load share of each EP rank after EPLB's replicate-and-pack placement (see module doc).

    Args:
        popularity: (E,) expert shares summing to 1.
        ep: expert-parallel ranks; must divide E + ``redundant`` (checked by the layout).
        redundant: R extra expert slots (0 = placement only).

    Returns:
        (ep,) rank shares summing to 1.

    >>> [round(float(x), 3) for x in eplb_rank_shares([0.4, 0.3, 0.2, 0.1], 2, 0)]
    [0.5, 0.5]
    >>> [round(float(x), 3) for x in eplb_rank_shares([0.6, 0.2, 0.1, 0.1], 2, 2)]  # 0.6 split 3 ways
    [0.5, 0.5]
    """
    p = np.asarray(popularity, dtype=float)
    e = p.size
    slots = (e + redundant) // ep
    replicas = np.ones(e, dtype=int)
    for _ in range(redundant):
        replicas[np.argmax(p / replicas)] += 1
    items = np.sort(np.repeat(p / replicas, replicas))[::-1]
    load = np.zeros(ep)
    free = np.full(ep, slots)
    for w in items:
        open_ranks = np.flatnonzero(free > 0)
        r = open_ranks[np.argmin(load[open_ranks])]
        load[r] += w
        free[r] -= 1
    return load


def contiguous_max_share(popularity, ep: int, samples: int = PLACEMENT_SAMPLES, seed: int = PLACEMENT_SEED) -> float:
    """Expected largest rank share with ceil(E/ep) experts per rank in id order, ids random.

    Uniform popularity gives ceil(E/ep)/E (= 1/ep when ep divides E) exactly.

    >>> contiguous_max_share([0.25] * 4, 2)
    0.5
    """
    p = np.asarray(popularity, dtype=float)
    e = p.size
    n = math.ceil(e / ep)
    padded = np.concatenate([p, np.zeros(n * ep - e)])
    if np.all(p == p[0]):
        return float(n * p[0])
    rng = np.random.default_rng(seed)
    perms = rng.permuted(np.tile(np.arange(n * ep), (samples, 1)), axis=1)
    return float(padded[perms].reshape(samples, ep, n).sum(axis=2).max(axis=1).mean())


@lru_cache(maxsize=256)
def busiest_rank_share(num_experts: int, sigma: float, ep: int, redundant: int | None) -> float:
    """Share of a MoE layer's assignments on its busiest EP rank (popularity part, no sampling).

    ``redundant`` None: contiguous placement (no EPLB); an integer R: EPLB with R redundant
    experts. 1.0 when ep = 1. tests/properties/test_routing_properties.py checks that the EPLB
    share never exceeds the no-EPLB one.

    >>> busiest_rank_share(256, 0.0, 8, None)
    0.125
    >>> round(busiest_rank_share(256, 1.03, 32, 32) * 32, 2)
    1.0
    """
    if ep <= 1:
        return 1.0
    p = expert_popularity(num_experts, sigma)
    if redundant is None:
        return contiguous_max_share(p, ep)
    return float(eplb_rank_shares(p, ep, redundant).max())
