"""The tokens an engine's KV admission counts per running request (issue 18 item 6a, round 49).

How many requests an instance keeps running at its KV bound is its pool over the tokens its admission rule
counts each request for; that is an engine rule, not the mean context a decode step reads. Two rules here,
each behind its own switch; the request-level simulator (serve/sim/scheduler.py) runs each rule request by
request, and both switches make the analytic count agree with it.

**1. A disaggregated decode worker** (:func:`decode_admission_ctx`, :data:`DECODE_ADMISSION_ON`). The
analytic cap used the mean decode context E[ISL] + E[OSL]/2 (:attr:`Workload.decode_ctx`), i.e. admission by
use with nothing reserved:

- TensorRT-LLM (Dynamo-TRT decode workers, and every deployment whose stack names no other rule): its
  default capacity scheduler, ``GUARANTEED_NO_EVICT`` (``tensorrt_llm/llmapi/llm_args.py``
  ``SchedulerConfig.capacity_scheduler_policy`` default; ``_torch/pyexecutor/scheduler.py``
  ``BindCapacityScheduler``), admits a request only when its prompt and all of its ``max_new_tokens`` fit,
  and keeps that whole length reserved: E[ISL + OSL] per request. The simulator's decode worker reserves
  exactly this (``Instance._admit``: ``need = isl + osl``).
  NAMED ASSUMPTION (review49): the ``vllm`` / ``vllm-rocm`` / ``atom-rocm`` stacks name no rule either, so
  their decode workers are priced at this whole-request rule too, though vLLM's V1 scheduler
  (vllm-project/vllm ``vllm/v1/core/sched/scheduler.py``: ``KVCacheManager.allocate_slots`` for the tokens
  each step computes, preempting a running request when no block is free) admits by use, which the mean
  decode context (the switch off) describes. No validated row is a vLLM disaggregated decode worker at
  its KV cap; a stack field naming the rule is left for when one is. Likewise ``sglang-rocm`` sets no
  ``disagg_handshake``, so its SGLang decode workers take this rule, not SGLang's below (1,843.2 against
  1,894.4 tokens at InferenceX 1k/1k, 8,294.4 against 8,345.6 at 8k/1k: within 3%).
- SGLang (stacks with ``disagg_handshake = "decode_prealloc"``: the Dynamo-SGLang decode worker):
  ``DecodePreallocQueue.pop_preallocated`` pre-allocates a request's prompt while
  prompt + R <= available − R·(running + transferring + waiting) (``_allocatable_token_budgets``,
  ``_active_reserved_tokens``; sgl-project/sglang ``python/sglang/srt/disaggregation/decode.py`` at
  0035ca42c2d6), R = ``ServerArgs.num_reserved_decode_tokens`` = 512 by default
  (``python/sglang/srt/server_args.py``; :data:`SGLANG_RESERVED_DECODE_TOKENS`). The running requests hold
  their current context, decode_ctx on average, so admission stops at n·(decode_ctx + R) = pool. (The
  rule's other term, one running request's whole ISL + clipped output over the tokens every running request
  holds, binds only at a few requests.) The simulator still reserves E[ISL + OSL] for SGLang too: at 1k/1k
  and 8k/1k outputs (R ≈ E[OSL]/2) the two differ by under 3%.

Worked number (H200, DeepSeek-R1 FP8 TP8 EP8, InferenceX 1k/1k: lengths uniform in [0.8, 1]·1,024, E[ISL] =
E[OSL] = 921.6): the KV pool holds about 1.42 M tokens; at decode_ctx 1,382.4 the old cap was 1,027 requests;
TensorRT-LLM's rule counts 1,843.2 tokens a request (about 772 requests; the simulator's decode worker,
without the prefill-budget activations a decode-only worker never holds, 774), SGLang's 1,894.4 (about 750).

**2. SGLang's ``ignore_eos`` admission, one cohort** (:func:`cohort_admission_osl`, :data:`COHORT_SHORTEST_ON`).
``PrefillAdder.add_one_req_ignore_eos`` (sgl-project/sglang ``python/sglang/srt/managers/schedule_policy.py``;
deploy/engine_memory.py) sorts the running requests and the new one by output tokens left and admits while,
for each i, free + (tokens the i earlier ones free) − left_i · (N − i) > N − i (N requests in the check). A
cohort that started together at progress t (each holds ISL_j + t, has OSL_j − t left; the new one ISL and
OSL) gives, at i = 0, the request with the fewest tokens left:

    pool − Σ ISL_j − ISL_new − N·(OSL_min − t) − N·t  >=  N,   i.e.   N·(E[ISL] + OSL_min) <= pool

(t cancels; each later i asks less for lengths uniform in [r·L, L]: (N − i)·(E[ISL] + OSL_(i)) falls with i).
So the cohort's count is set by the *shortest* output among the N, not the mean one (the analytic's
E[ISL] + E[OSL] before, which holds only for equal outputs): E[OSL_min] = r·L + (1 − r)·L/(N + 1) for
uniform lengths (the output quantile 1/(N + 1) in general), N solved as a fixed point. Worked number (the
InferenceX H200 8k/1k C 64 row, SGLang 0.5 at --mem-fraction-static 0.82, pool 516,256 tokens): the mean
rule gave 516,256 / (7,372.8 + 921.6) = 62.2; the shortest of N: OSL_min = 819.2 + 204.8/64 = 822.4,
516,256 / 8,195.2 = 63.0 (the simulator runs 63.1 mid-run).
"""

from __future__ import annotations

from collections.abc import Callable

from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.workload import Workload

#: Whether a disaggregated decode worker's KV cap counts each request's tokens by its engine's admission rule
#: (rule 1 of the module docstring); False: the mean decode context (the figures before round 49).
#: Shipped on (round 49, kvcap49): no validated row's prediction moves (validate --held-out and --mlperf
#: byte-identical; no validated decode worker runs at its KV cap), and the simulator's H200 1k/1k C 1,024
#: case goes from −91% to −2% (tests/golden/test_ttft_sim_vs_analytic.py)
DECODE_ADMISSION_ON = True

#: Whether SGLang's ``ignore_eos`` admission counts a cohort by its shortest output (rule 2 of the module
#: docstring); False: by the mean output (the figures before round 49)
COHORT_SHORTEST_ON = False

#: SGLang's per-request decode reservation in tokens, ``--num-reserved-decode-tokens`` (ServerArgs
#: num_reserved_decode_tokens = 512, sgl-project/sglang python/sglang/srt/server_args.py); no InferenceX
#: SGLang recipe stored here sets it (data/engines.toml)
SGLANG_RESERVED_DECODE_TOKENS = 512.0

#: Fixed-point passes of :func:`cohort_admission_osl` (the count moves the shortest output by under a token
#: after the second pass at N > 10)
_PASSES = 4


def admission_rule(eff: Efficiency) -> str:
    """The decode worker's admission rule for a stack's ``eff``: ``sglang_prealloc`` where the stack runs
    SGLang's decode pre-allocation (``eff.disagg_handshake == "decode_prealloc"``), else ``whole``
    (TensorRT-LLM's ``GUARANTEED_NO_EVICT``, the simulator's)."""
    return "sglang_prealloc" if eff.disagg_handshake == "decode_prealloc" else "whole"


def decode_admission_ctx(wl: Workload, eff: Efficiency, on: bool | None = None) -> float:
    """Tokens one running request counts for in a disaggregated decode worker's KV pool (rule 1).

    Args:
        wl: the workload (its mean lengths and mean decode context, tokens).
        eff: the stack's efficiency profile (its ``disagg_handshake`` names SGLang's rule).
        on: :data:`DECODE_ADMISSION_ON` where None; False gives the mean decode context (the old cap).

    Returns:
        tokens per request: E[ISL] + E[OSL] (``whole``), decode_ctx + 512 (``sglang_prealloc``) or
        decode_ctx (off).

    >>> import dataclasses
    >>> wl = Workload("1k/1k", 1024, 1024)                      # lengths in [819.2, 1024]: means 921.6
    >>> round(decode_admission_ctx(wl, Efficiency()), 1), round(decode_admission_ctx(wl, Efficiency(), on=False), 1)
    (1843.2, 1382.4)
    >>> round(decode_admission_ctx(wl, dataclasses.replace(Efficiency(), disagg_handshake="decode_prealloc")), 1)
    1894.4
    """
    if not (DECODE_ADMISSION_ON if on is None else on):
        return wl.decode_ctx
    if admission_rule(eff) == "sglang_prealloc":
        return wl.decode_ctx + SGLANG_RESERVED_DECODE_TOKENS
    return wl.mean_isl + wl.mean_osl


def cohort_admission_osl(count: Callable[[float], float], wl: Workload, on: bool | None = None) -> float:
    """The output length SGLang's ``ignore_eos`` admission of one cohort counts each request for (rule 2).

    Args:
        count: requests admitted when each counts E[ISL] plus the given output (tokens -> requests;
            deploy/kv_capacity.admission_batch_cap at the workload's mean prompt).
        wl: the workload (its output quantiles).
        on: :data:`COHORT_SHORTEST_ON` where None; False gives the mean output (the old count).

    Returns:
        tokens: the expected shortest of N outputs, wl's output quantile 1/(N + 1), N = count(that) solved
        by fixed point from the mean output; E[OSL] when off or with fixed lengths.

    >>> wl = Workload("8k/1k", 8192, 1024)                      # outputs in [819.2, 1024]
    >>> pool, isl = 516_256.0, wl.mean_isl
    >>> round(cohort_admission_osl(lambda o: pool / (isl + o), wl, on=True), 1)   # 819.2 + 204.8/(63.0 + 1)
    822.4
    >>> round(cohort_admission_osl(lambda o: pool / (isl + o), wl, on=False), 1)
    921.6
    """
    if not (COHORT_SHORTEST_ON if on is None else on):
        return wl.mean_osl
    osl = wl.mean_osl
    for _ in range(_PASSES):
        osl = wl.osl_quantile(1.0 / (max(count(osl), 0.0) + 1.0))
    return osl
