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

TensorRT-LLM and SGLang overlap it too, each under its own conditions (:data:`TRTLLM_STREAM`,
:data:`SGLANG_STREAM`); those rules are sourced here but not priced (:data:`SHARED_EXPERT_STREAMS` holds vLLM's
only): switched on with their profiles refitted they move the model the wrong way beyond noise on DeepSeek-R1
and, through the refit, on models without a shared expert (docs/gap_aic_itl.md, round 26, sharedtrt26):

- TensorRT-LLM: ``Deepseekv3MoE.forward`` runs ``_compute_routed_output`` (router GEMM + fused MoE) on the main
  stream and ``_compute_shared_output`` on ``aux_stream_dict[AuxStreamType.MoeShared]`` through
  ``maybe_execute_in_parallel`` (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/models/modeling_deepseekv3.py
  @000561df), with no token threshold; but ``maybe_execute_in_parallel`` runs the two in series unless
  ``do_multi_stream()``, which only the CUDA-graph runner sets (``with_multi_stream(True)`` around capture;
  tensorrt_llm/_torch/modules/multi_stream_utils.py @05b58881: "Multi-stream is only enabled when cuda graph
  is turned on because switch stream has extra host overhead"). TensorRT-LLM graphs generation-only steps
  (``can_run_cuda_graph``), so the overlap is priced on decode-only steps (no prompt rows), at any size;
- SGLang: ``DeepseekV2MoE.forward`` takes ``forward_normal_dual_stream`` (shared expert on the main stream,
  routed experts on ``alt_stream``, created only on CUDA) when the MoE is not all-to-all (DeepEP takes
  ``forward_deepep``, shared expert in series), ``num_fused_shared_experts == 0`` and 0 < tokens <=
  ``DUAL_STREAM_TOKEN_THRESHOLD`` = 1024 (sgl-project/sglang python/sglang/srt/models/deepseek_v2.py, 0.5.x).
  ``determine_num_fused_shared_experts`` fuses the shared expert into the routed MoE (a 257th expert, no
  second stream) for DeepSeek-V3/R1 (256 routed + 1 shared experts) on NVIDIA at expert-parallel size 1, so
  there nothing is overlapped; Kimi K2.5 (384 routed) is never fused. The profile ``sglang-rocm`` does not
  get it (``alt_stream`` is None off CUDA).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from jalapeno.cost.optable import OpTable
from jalapeno.cost.roofline import OpTimes


@dataclass(frozen=True)
class StreamRule:
    """When an engine runs the shared expert on its second stream (module docstring).

    ``max_tokens``: most rows in the step (inf: no threshold); ``decode_only``: only in steps without
    prompt rows (the engine's CUDA-graph steps); ``not_all_to_all``: not when the MoE exchanges tokens
    by all-to-all (another MoE path); ``fuses_256_plus_1_at_ep1``: not for a model of 256 routed + 1
    shared experts at EP 1 (the engine fuses the shared expert into the routed MoE instead).
    """

    max_tokens: float
    decode_only: bool = False
    not_all_to_all: bool = False
    fuses_256_plus_1_at_ep1: bool = False


#: TensorRT-LLM's and SGLang's rules (module docstring), sourced but NOT priced: switched on and refitted they
#: make the model worse beyond noise (docs/gap_aic_itl.md, round 26, sharedtrt26; scripts/shared_stream_engines.py)
TRTLLM_STREAM = StreamRule(math.inf, decode_only=True)
SGLANG_STREAM = StreamRule(1024, not_all_to_all=True, fuses_256_plus_1_at_ep1=True)
#: the rules of the engines not priced with one (``--engines`` of scripts/shared_stream_engines.py)
UNPRICED_STREAMS: dict[str, StreamRule] = {"trtllm": TRTLLM_STREAM, "sglang": SGLANG_STREAM}

#: software-stack profile (specs/stacks.py name, without ``+ar_rms`` or ``@VERSION``) -> when the engine
#: runs the shared expert on its auxiliary stream (module docstring); absent: never (priced in series)
SHARED_EXPERT_STREAMS: dict[str, StreamRule] = {"vllm": StreamRule(256)}

#: op-name prefix of the shared expert's ops (cost/ops.py) and the routed-expert op that covers them
SHARED_PREFIX = "moe.shared_expert."
ROUTED_OP = "moe.experts"


def stream_rule(stack_name: str) -> StreamRule | None:
    """The aux-stream rule of a stack profile ``stack_name`` (None: the engine does not overlap).

    >>> [stream_rule(n).max_tokens for n in ("vllm", "vllm+ar_rms", "vllm@0.17.0")]
    [256, 256, 256]
    >>> stream_rule("trtllm@1.2.0rc6.post2"), stream_rule("sglang"), stream_rule("vllm-rocm")
    (None, None, None)
    """
    base = stack_name.split("@")[0].split("+")[0].strip()
    return SHARED_EXPERT_STREAMS.get(base)


def pricer_stream_rule(efficiency_source: str, system: str) -> StreamRule | None:
    """:func:`stream_rule` of the profile an efficiency set was priced with (specs/stacks.stack_of_source)."""
    return stream_rule(_stack_name(efficiency_source, system))


def stream_on(
    rule: StreamRule | None,
    tokens: np.ndarray,
    prefill_tokens: np.ndarray,
    all_to_all: bool,
    routed_experts: int,
    shared_experts: int,
    ep: int,
) -> np.ndarray:
    """Bool (N,): the steps in which ``rule``'s engine runs the shared expert on its second stream.

    ``tokens``: rows of each step (N,); ``prefill_tokens``: its prompt rows (N,); ``all_to_all``: the MoE
    exchanges tokens by all-to-all (DeepEP); ``routed_experts`` / ``shared_experts``: the model's counts;
    ``ep``: the layout's expert-parallel size.

    >>> t, p = np.array([8.0, 1000.0, 2000.0]), np.array([0.0, 900.0, 0.0])
    >>> stream_on(TRTLLM_STREAM, t, p, False, 256, 1, 1).tolist(), stream_on(stream_rule("vllm"), t, p, False, 256, 1, 1).tolist()
    ([True, False, True], [True, False, False])
    >>> stream_on(SGLANG_STREAM, t, p, False, 384, 1, 1).tolist(), stream_on(SGLANG_STREAM, t, p, False, 256, 1, 1).tolist()
    ([True, True, False], [False, False, False])
    >>> stream_on(SGLANG_STREAM, t, p, True, 256, 1, 8).tolist(), stream_on(None, t, p, False, 384, 1, 1).tolist()
    ([False, False, False], [False, False, False])
    """
    tokens = np.asarray(tokens, dtype=float)
    off = np.zeros(tokens.shape, dtype=bool)
    if rule is None or shared_experts <= 0 or (rule.not_all_to_all and all_to_all):
        return off
    if rule.fuses_256_plus_1_at_ep1 and routed_experts == 256 and shared_experts == 1 and ep == 1:
        return off
    on = (tokens > 0) & (tokens <= rule.max_tokens)
    return on & (np.asarray(prefill_tokens, dtype=float) <= 0) if rule.decode_only else on


@lru_cache(maxsize=64)
def _stack_name(efficiency_source: str, system: str) -> str:
    """The stack profile's name read from an efficiency set's source (``... + stack NAME``, as Stack.apply writes
    it, NAME with any switch suffix such as ``+gemm_ar`` or ``+ar_rms``: only its base is used), else the system's
    default profile (remembered: once per priced batch).

    >>> _stack_name("calibrated b200 + stack trtllm+gemm_ar", "b200"), _stack_name("calibrated b200", "b200")
    ('trtllm+gemm_ar', 'default')
    """
    import re

    from jalapeno.specs.stacks import default_stack

    m = re.search(r" \+ stack (\S+)", efficiency_source)
    return m.group(1) if m else default_stack(system).name


def hidden_shared_s(ops: OpTable, times: OpTimes, stage: np.ndarray, on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hidden (N,), shared (n_ops,)): the shared expert's seconds per pipeline stage the routed experts
    hide, and which ops are the shared expert's (bool mask; all False where nothing can be hidden).

    ``stage``: the ops priced once per layer of a stage (OpTable.per_stage), bool (n_ops,); ``on``: the
    steps the engine overlaps, bool (N,) (:func:`stream_on`).
    hidden = min(Σ_shared max(t_op − memory_op, 0), t_routed) where on, else 0, with t_op the op's priced
    time and memory_op its HBM-traffic time (cost/roofline.py).

    Worked example (times in µs; compute, memory, overhead per op): shared gate_up (1, 3, 4) takes
    max(1, 3) + 4 = 7 of which 4 beyond its bytes; shared down (2, 1, 4) takes 6, 5 beyond; the routed
    experts (9, 8, 4) take 13. Hidden: min(4 + 5, 13) = 9 µs; in a step not overlapped (e.g. over vLLM's 256
    tokens), 0.

    >>> from types import SimpleNamespace
    >>> t = OpTimes.combine(np.array([[1e-6] * 2, [2e-6] * 2, [9e-6] * 2]), np.array([[3e-6] * 2, [1e-6] * 2, [8e-6] * 2]),
    ...                     np.array([[4e-6] * 2] * 3))
    >>> ops = SimpleNamespace(name=("moe.shared_expert.gate_up", "moe.shared_expert.down", "moe.experts"))
    >>> h, se = hidden_shared_s(ops, t, np.array([True] * 3), np.array([True, False]))
    >>> [round(float(x) * 1e6, 6) for x in h], se.tolist()
    ([9.0, 0.0], [True, True, False])
    """
    n = times.time_s.shape[1]
    on = np.asarray(on, dtype=bool)
    if not on.any():  # no overlapped step (every profile without a rule): skip the per-op name scan
        return np.zeros(n), np.zeros(len(ops.name), dtype=bool)
    names = np.array(ops.name, dtype=object)
    se = np.array([str(x).startswith(SHARED_PREFIX) for x in names], dtype=bool) & np.asarray(stage, dtype=bool)
    ro = (names == ROUTED_OP) & np.asarray(stage, dtype=bool)
    if not se.any() or not ro.any():
        return np.zeros(n), np.zeros(len(names), dtype=bool)
    beyond_bytes = np.maximum(times.time_s[se] - times.memory_s[se], 0.0).sum(axis=0)
    return np.where(on, np.minimum(beyond_bytes, times.time_s[ro].sum(axis=0)), 0.0), se
