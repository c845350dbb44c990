"""Time to prefill one long prompt in token-budget chunks, pipelined over the PP stages.

A prompt of L tokens with token budget b runs as c = ⌈L/b⌉ chunks; chunk j (0-based) carries
min(b, L − j·b) tokens and attends to a cached prefix of j·b tokens, so later chunks cost more
(causal attention). With pp pipeline stages the chunks flow through the stages: chunk j + 1
enters stage 1 while chunk j is in stage 2 (SGLang "chunked pipeline parallelism": docs
"Pipeline Parallelism for Long Context" and LMSYS blog 2026-01-15 — "different chunks of the
same request can be processed simultaneously by different nodes"). Each chunk occupies the
first stage for one step interval I_j (stage time + edge ops + p2p + step overhead, cost/step.py)
and needs S_j (the step latency through all stages) end to end. For a proportionate flow shop
(each job takes the same time on every machine) the makespan is Σ_j s_j + (m − 1)·max_j s_j
(Pinedo, "Scheduling", §6.1); with the first stage's extra edge work that is

    T = Σ_j I_j + max_j (S_j − I_j)

which is (c − 1)·I + S = (c + pp − 1)·stage + c·(edge + overhead) + (c + pp − 2)·p2p for equal
chunks and Σ_j S_j at pp = 1 (no pipeline: the chunks run back to back). Everything is
vectorised: one step-cost call prices the chunks of every length at every batch point.
"""

from __future__ import annotations

import math

import numpy as np


def chunk_plan(lengths, budget: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chunks of each prompt length: tokens, cached prefix and owner, each (K,).

    Args:
        lengths: prompt lengths in tokens, (M,), each > 0.
        budget: token budget per step (chunk size), > 0.

    Returns:
        (tokens, prefix, owner): chunk j of length i carries min(budget, L_i − j·budget) tokens at
        prefix j·budget; ``owner`` is i; chunks are grouped by owner in order.

    >>> chunk_plan([10, 4], 4)
    (array([4., 4., 2., 4.]), array([0., 4., 8., 0.]), array([0, 0, 0, 1]))
    """
    lens = [float(x) for x in np.atleast_1d(lengths)]
    counts = [max(1, math.ceil(x / budget)) for x in lens]
    owner = np.repeat(np.arange(len(lens)), counts)
    j = np.concatenate([np.arange(c, dtype=float) for c in counts])
    prefix = j * budget
    tokens = np.minimum(float(budget), np.asarray(lens)[owner] - prefix)
    return tokens, prefix, owner


def pipelined_prefill_s(step_s, interval_s, owner, n_owners: int) -> np.ndarray:
    """Time to prefill each prompt from its chunks' step latency and interval (module docstring).

    Args:
        step_s, interval_s: (..., K) step latency S_j and interval I_j of every chunk (a leading
            axis may hold batch points).
        owner: (K,) the prompt each chunk belongs to (grouped, as :func:`chunk_plan` returns).
        n_owners: number of prompts M.

    Returns:
        (..., M): T_i = Σ_{j of i} I_j + max_{j of i} (S_j − I_j).
    """
    step_s, interval_s = np.asarray(step_s, dtype=float), np.asarray(interval_s, dtype=float)
    starts = np.searchsorted(owner, np.arange(n_owners))
    total = np.add.reduceat(interval_s, starts, axis=-1)
    fill = np.maximum.reduceat(step_s - interval_s, starts, axis=-1)
    return total + fill
