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

The aggregated model's long prompts (serve/analytic.py): :func:`long_chunks` builds the one Batch of every
distinct chunk of the prompt lengths longer than a token budget, beside the decode batch, and
:func:`chunked_prefill_s` reads each length's prefill time from those chunks' priced steps (moved here from
serve/analytic.py, round 46, module budget).
"""

from __future__ import annotations

import math

import numpy as np

from jalapeno.cost.batch import Batch, first_seen
from jalapeno.deploy.deployment import Deployment

#: switch (round 52, mlperfint52): a mixed step's prompt chunk is what the step's token cap leaves beside its decode
#: rows. TensorRT-LLM's micro-batch scheduler (NVIDIA/TensorRT-LLM@0a949d31 cpp/tensorrt_llm/batch_manager/
#: microBatchScheduler.cpp ``MicroBatchScheduler::operator()``) first takes the generation requests, each counting its
#: beam width plus draft tokens against ``maxNumTokensRuntime`` (``batchNumTokens``), then gives the context requests
#: ``ctxTokensCapacity = maxNumTokensRuntime - batchNumTokens``; under ``first_come_first_served`` a prompt that does
#: not fit gets min(capacity, remaining) rounded down to the chunk unit (``setCtxRequestsChunkSize``). The deployment
#: field that carries the cap is ``max_tokens_per_step`` ("decode rows plus prefill tokens", deploy/deployment.py).
#: Off: a prompt-carrying step carries min(ISL, budget) whatever the decode rows beside it (the model before round 52).
#: Shipped OFF or ON by the round-52 rule: docs/gap_large_batch_decode.md "Round 52 (mlperfint52)".
MIXED_STEP_ROOM_ON = True


def step_room(dep: Deployment, layout, decode_seqs, rows_per_seq: int) -> np.ndarray | None:
    """Prompt tokens one mixed step of ``dep`` on ``layout`` can carry beside ``decode_seqs`` (N,) decoding sequences
    per micro-batch of ``rows_per_seq`` rows each (1, or 1 + k with MTP): ``max_tokens_per_step`` − q·B, at least
    one token; None (no room bound) with :data:`MIXED_STEP_ROOM_ON` off, no ``max_tokens_per_step``, or attention
    DP (``layout.dp`` > 1: the ranks' chunk grouping, serve/analytic._chunk_step_load, is left as before). The chunk
    unit's rounding (TensorRT-LLM: KV blocks of ``tokens_per_block``) is not priced.

    >>> from jalapeno.deploy.deployment import Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> import jalapeno.serve.chunked as m
    >>> d = Deployment(get_precision("fp8"), Pool(Layout()), token_budget=256, max_tokens_per_step=256)
    >>> from unittest.mock import patch  # the switch restored whatever an example prints (review52)
    >>> with patch.object(m, "MIXED_STEP_ROOM_ON", True):
    ...     m.step_room(d, Layout(), np.array([107.0, 300.0]), 1).tolist()  # 256 - 107; past the cap: one token
    [149.0, 1.0]
    >>> with patch.object(m, "MIXED_STEP_ROOM_ON", False):
    ...     m.step_room(d, Layout(), np.array([107.0]), 1) is None
    True
    """
    if not MIXED_STEP_ROOM_ON or dep.max_tokens_per_step is None or layout.dp > 1:
        return None
    return np.maximum(dep.max_tokens_per_step - rows_per_seq * np.asarray(decode_seqs, dtype=float), 1.0)


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


#: chunk plans of :func:`long_chunks` by (budget, lengths): a fixed-concurrency solve prices one deployment
#: nine times (serve/analytic.solve_concurrency), every time with the same plan
_PLANS: dict[tuple, tuple] = {}


def long_chunks(dep: Deployment, lengths: dict, b_mb: np.ndarray, ctx: float) -> tuple[list, Batch | None, tuple]:
    """The chunk steps of the prompts in ``lengths`` (key → tokens) longer than one token budget (one
    attention-DP rank's, Deployment.prompt_budget): (their keys, the Batch of every distinct chunk of those
    lengths beside the ``b_mb`` (N,) decoding sequences at context ``ctx`` — N·K' rows, batch point major,
    chunk j at its own prefix j·budget; the lengths share their full chunks at equal prefixes, so the K
    chunks hold K' <= K distinct (tokens, prefix) pairs — or None when no prompt is that long, the chunk
    plan (tokens, prefix, owner) from :func:`chunk_plan` and, per chunk, its column among the K'
    (K,) int)."""
    budget = dep.prompt_budget(dep.decode.layout)  # a prompt's chunks run on its attention-DP rank
    long = [k for k, v in lengths.items() if math.ceil(v / budget) > 1]
    if not long:
        return long, None, ()
    key = (budget, tuple(lengths[k] for k in long))  # the plan depends on these alone (read-only arrays)
    if key not in _PLANS:
        tok, pre, owner = chunk_plan([lengths[k] for k in long], budget)
        _PLANS[key] = (tok, pre, owner, *first_seen(np.stack([tok, pre], axis=1)))  # distinct chunks, first seen
        if len(_PLANS) > 256:
            del _PLANS[next(iter(_PLANS))]
    tok, pre, owner, keep, col = _PLANS[key]
    n = b_mb.shape[0]
    tok_k, pre_k = tok[keep], pre[keep]  # fresh copies: np.tile's answer for one point (a fixed concurrency's)
    return (
        long,
        Batch.make(
            decode_seqs=b_mb.repeat(keep.size),
            decode_ctx=ctx,
            prefill_tokens=tok_k if n == 1 else np.tile(tok_k, n),
            prefill_ctx=pre_k if n == 1 else np.tile(pre_k, n),
        ),
        (tok, pre, owner, col),
    )


def chunked_prefill_s(
    lengths: dict, chunk_step: np.ndarray, long: list, plan: tuple, step_s: np.ndarray, interval_s: np.ndarray
) -> dict:
    """Prefill time of one prompt of each length in ``lengths`` (key → tokens), (N,) per key.

    A prompt within one token budget takes one chunk step ``chunk_step`` (N,); a longer one (key in
    ``long``, chunks ``plan`` from :func:`long_chunks`) runs its ⌈L/budget⌉ chunks, each a step beside the
    decoding sequences (0 for a prefill-first engine, whose prefill steps carry no decode), pipelined over
    the PP stages (:func:`pipelined_prefill_s`), from the chunk steps' latency ``step_s`` and interval ``interval_s``
    (N·K',) as cost/step.step_cost priced :func:`long_chunks`'s batch of distinct chunks.
    """
    out = {k: chunk_step for k in lengths}
    if long:
        n, col = chunk_step.shape[0], plan[3]
        # every chunk of the plan from its distinct chunk's column, (N, K) C-ordered (np.take, as reshape gave)
        t = pipelined_prefill_s(
            step_s.reshape(n, -1).take(col, axis=1),
            interval_s.reshape(n, -1).take(col, axis=1),
            plan[2],
            len(long),
        )
        out.update({key: t[:, i] for i, key in enumerate(long)})
    return out
