"""The shared expert on an auxiliary CUDA stream: the part of its time the routed experts hide.

An MoE layer with a shared expert (DeepSeek-V3 / Kimi K2.5: one always-active SwiGLU FFN beside
the routed experts) computes two independent outputs that are summed at the end. vLLM runs the
shared expert on a second CUDA stream while the main stream runs the routed experts, for steps of
at most a token threshold (captured in the decode CUDA graphs like any other stream work):

- vllm-project/vllm PR #26440 ("Dual stream execution of shared_experts and selected_experts inside
  FusedMoE", merged 2025-10): DeepSeek-R1 FP8, FlashInfer TRT-LLM-gen MoE, 8x B200, batch 32: TPOT
  23.35 -> 22.09 ms;
- PR #28406 (2025-11): one global auxiliary stream, used only at <= 256 tokens
  (``VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD``, default 256); PR #30085 (2025-12): CUDA only
  (an MI300 regression), so the ROCm profile (``vllm-rocm``) does not get it;
- PR #38990 (2026-04): a main-branch regression that ran the shared expert first on the main stream
  for TP-only layouts, "not in any official release"; the fix restores "what 0.18.x did"
  (``SharedExpertsOrder.MULTI_STREAM_OVERLAPPED`` in vllm/model_executor/layers/fused_moe/runner/
  shared_experts.py).

What is hidden (a named assumption): the shared-expert ops' time beyond their own HBM traffic —
their launches, tails and few-row / serial-k compute — up to the routed-expert block's time on the
main stream. Their bytes are not hidden: both streams read one HBM, and the routed experts stream
their weights at the bandwidth the model already prices. Only the routed-expert op (``moe.experts``)
counts as the main stream's cover, not the router GEMM before it (vLLM's gate may run before the fork).

TensorRT-LLM (``maybe_execute_in_parallel`` with an ``aux_stream`` in modeling_deepseekv3.py) and
SGLang (``alt_stream`` on CUDA) overlap the shared expert too; their profiles were fitted without it
on DeepSeek-R1 rows, so they are not switched on here without a refit (docs/gap_aic_itl.md,
"Kimi K2.5 too slow on every system (round 26)").
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from jalapeno.cost.optable import OpTable
from jalapeno.cost.roofline import OpTimes

#: software-stack profile (specs/stacks.py name, without ``+ar_rms`` or ``@VERSION``) -> the most tokens
#: in a step for which the engine runs the shared expert on its auxiliary stream (module docstring)
SHARED_EXPERT_STREAM_TOKENS: dict[str, int] = {"vllm": 256}

#: op-name prefix of the shared expert's ops (cost/ops.py) and the routed-expert op that covers them
SHARED_PREFIX = "moe.shared_expert."
ROUTED_OP = "moe.experts"


def stream_tokens(stack_name: str) -> int:
    """The aux-stream token threshold of a stack profile ``stack_name`` (0: the engine does not overlap).

    >>> stream_tokens("vllm"), stream_tokens("vllm+ar_rms"), stream_tokens("vllm@0.17.0"), stream_tokens("vllm-rocm")
    (256, 256, 256, 0)
    """
    base = stack_name.split("@")[0].split("+")[0].strip()
    return SHARED_EXPERT_STREAM_TOKENS.get(base, 0)


def pricer_stream_tokens(efficiency_source: str, system: str) -> int:
    """:func:`stream_tokens` of the profile an efficiency set was priced with (specs/stacks.stack_of_source)."""
    return stream_tokens(_stack_name(efficiency_source, system))


@lru_cache(maxsize=64)
def _stack_name(efficiency_source: str, system: str) -> str:
    """The stack profile's name read from an efficiency set's source (remembered: once per priced batch)."""
    from jalapeno.specs.stacks import stack_of_source
    return stack_of_source(efficiency_source, system).name


def hidden_shared_s(ops: OpTable, times: OpTimes, stage: np.ndarray, tokens: np.ndarray,
                    max_tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """(hidden (N,), shared (n_ops,)): the shared expert's seconds per pipeline stage the routed experts
    hide, and which ops are the shared expert's (bool mask; all False where nothing can be hidden).

    ``stage``: the ops priced once per layer of a stage (OpTable.per_stage), bool (n_ops,); ``tokens``:
    rows of the step, (N,); ``max_tokens``: the engine's threshold (:func:`stream_tokens`; 0 = never).
    hidden = min(Σ_shared max(t_op − memory_op, 0), t_routed) where tokens <= max_tokens, else 0, with
    t_op the op's priced time and memory_op its HBM-traffic time (cost/roofline.py).

    Worked example (times in µs; compute, memory, overhead per op): shared gate_up (1, 3, 4) takes
    max(1, 3) + 4 = 7 of which 4 beyond its bytes; shared down (2, 1, 4) takes 6, 5 beyond; the routed
    experts (9, 8, 4) take 13. Hidden: min(4 + 5, 13) = 9 µs; at 300 tokens, over the threshold, 0.

    >>> from types import SimpleNamespace
    >>> t = OpTimes.combine(np.array([[1e-6] * 2, [2e-6] * 2, [9e-6] * 2]), np.array([[3e-6] * 2, [1e-6] * 2, [8e-6] * 2]),
    ...                     np.array([[4e-6] * 2] * 3))
    >>> ops = SimpleNamespace(name=("moe.shared_expert.gate_up", "moe.shared_expert.down", "moe.experts"))
    >>> h, se = hidden_shared_s(ops, t, np.array([True] * 3), np.array([4.0, 300.0]), 256)
    >>> [round(float(x) * 1e6, 6) for x in h], se.tolist()
    ([9.0, 0.0], [True, True, False])
    """
    n = times.time_s.shape[1]
    names = np.array(ops.name, dtype=object)
    se = np.array([str(x).startswith(SHARED_PREFIX) for x in names], dtype=bool) & np.asarray(stage, dtype=bool)
    ro = (names == ROUTED_OP) & np.asarray(stage, dtype=bool)
    if max_tokens <= 0 or not se.any() or not ro.any():
        return np.zeros(n), np.zeros(len(names), dtype=bool)
    beyond_bytes = np.maximum(times.time_s[se] - times.memory_s[se], 0.0).sum(axis=0)
    on = np.asarray(tokens, dtype=float) <= max_tokens
    return np.where(on, np.minimum(beyond_bytes, times.time_s[ro].sum(axis=0)), 0.0), se
