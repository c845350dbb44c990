"""The all-reduce + residual add + RMSNorm fusion (vLLM's compile pass, TensorRT-LLM's decoder classes): which
steps it covers.

TensorRT-LLM runs it by default: its DeepseekV3 (DeepSeek-R1, Kimi K2.5), Qwen3MoE, GptOss and Llama decoder
layers call each TP all-reduce with ``AllReduceFusionOp.RESIDUAL_RMS_NORM`` when attention runs TP without
attention DP (the ``trtllm`` and ``dynamo-trtllm`` profiles set ``allreduce_rms_fusion``, read only while
specs/stacks.ENGINE_AR_RMS_ON, shipped off in round 46; sources and limits in data/stacks.toml). The same kernel family, so the same pricing below; the step cap is vLLM's (a named assumption
for TensorRT-LLM, whose AUTO strategy falls back to NCCL and a separate norm at large messages).

With ``--compilation_config.pass_config.fuse_allreduce_rms true`` (vLLM's ``AllReduceFusionPass``,
vllm/compilation/passes/fusion/allreduce_rms_fusion.py) the compiled graph replaces each tensor-parallel
all-reduce and the ``fused_add_rms_norm`` after it (attention o_proj -> post-attention norm; MLP/MoE
output -> the next layer's input norm) by one FlashInfer kernel (``flashinfer.comm.allreduce_fusion``,
pattern ``kARResidualRMSNorm``, optionally with the FP8/NVFP4 quantisation of the norm's output):
the two add + RMSNorm kernels a layer launches go, and their activation traffic with them (the
residual is read and the normed output written by the all-reduce kernel itself).

The pass applies only to the compiled ranges of step sizes (tokens per step, all sequences together)
up to ``max_token_num = max_size // (hidden x 2 bytes)``, with ``max_size`` from its per-device,
per-TP-size table ``FI_ALLREDUCE_FUSION_MAX_SIZE_MB`` (:data:`FUSION_MAX_MIB`); larger steps run the
unfused all-reduce and norms. Above TP sizes the table lacks, at TP 1 and on other vendors' chips the
pass is off.

Pricing (named assumption, no measured fused-kernel table in aiconfigurator-core 0.12.0): the fused
kernel takes the time of a plain all-reduce of the same message by the kernel family it runs — at the
message sizes it covers (<= 4 MiB per rank) the all-reduce is latency-bound and the norm's few vectors
per token ride in its registers — and the layer's elementwise op (cost/ops.py ``layer.elementwise``:
its 2 kernels and ~10 BF16 vectors per token) is dropped at the fused steps. The kernel family is
TensorRT-LLM's, not vLLM's custom all-reduce: ``flashinfer.comm.allreduce_fusion`` runs FlashInfer's
``trtllm_allreduce_fusion`` (flashinfer-ai/flashinfer flashinfer/comm/trtllm_ar.py: the Lamport
one-shot / two-shot all-reduce + residual + RMSNorm kernels of TensorRT-LLM's
allReduceFusionKernels, include/flashinfer/comm/trtllm_allreduce_fusion.cuh). So where the profile
prices its all-reduces from an engine's measured table (``all_reduce_table``, cost/engine_allreduce.py),
a message of at most the pass's ``max_size`` (:func:`fused_max_bytes`) is priced from TensorRT-LLM's
table (:data:`FUSED_KERNEL_TABLE`: its ``AllReduce`` op, AUTO strategy, no fusion, on the system) and
a larger one from the profile's own (:func:`fused_all_reduce`). The message test equals the step test
of :func:`fused_steps` for whole tokens (``M = 2 h t <= max_size`` iff ``t <= max_size // 2h``); it
also covers a fused profile's other all-reduces of a small message (the per-layer QK-norm variance
all-reduce, cost/ops.py, a few bytes per token), which vLLM runs with its own kernel (named limit:
no validation row with the fusion runs a model that has one), and a layout with attention DP as well
as TP (cost/ops.py keeps its norms unfused; the pricer does not see the layout; no such vLLM row). With
the link-hierarchy model (``all_reduce_table = "none"``) the fused steps keep its price. Only a pure
attention-TP layout fuses (attention DP: the MoE output comes back through an all-to-all combine or a
reduce-scatter, not the pattern's all-reduce).

SGLang's rule (``allreduce_rms_rule = "sglang"``, the ``sglang`` profile; read only while
specs/stacks.SGLANG_AR_RMS_ON, shipped off in round 47). SGLang turns ``enable_flashinfer_allreduce_fusion`` on
by itself (sgl-project/sglang PR #14764, "Enable TRT Allreduce Fusion by default for compatible models", opened
2025-12-10, merged by 2025-12-22: issue #15650 quotes its commit 1ab9b8e0a; server_args
``_handle_model_specific_adjustments``) for a listed architecture on SM90 / SM100 at TP > 1 without attention DP
on one node, and the layer communicator then runs each TP all-reduce with the next residual add + RMSNorm in
FlashInfer's ``trtllm_allreduce_fusion`` (the same TensorRT-LLM kernels, so the same price) whenever
``apply_flashinfer_allreduce_fusion(batch_size)`` holds: ``0 < batch_size <= FUSE_ALLREDUCE_MAX_BATCH_SIZE``
= 2,048 tokens (python/sglang/srt/layers/communicator.py), not vLLM's size table. Named assumptions: the
architecture list is read at later stored versions (DeepseekV3ForCausalLM, which DeepSeek-R1 and Kimi K2.5 run,
GptOssForCausalLM, Qwen3MoeForCausalLM, Glm4Moe*, KimiK25*; :data:`SGLANG_MODEL_TYPES` by the catalog's
``model_type``) and taken to hold from PR #14764 on; SM100's test is taken to cover SM103 (B300 / GB300); a TP
group over several nodes and a DeepEP all-to-all (both refused by the engine) are not told apart here (the
pricer sees no node count; DeepEP pools run attention DP, which already keeps the norms). PR #23402 (June 2026)
dropped SM90 from the auto-enable list and PR #28789 (2026-06-20, cherry-picked to v0.5.14) restored it: no
measured H200 row ran a release between them (the newest, v0.5.12, predates both).

By release (``sglang_sm100``, round 48, sglrel48): the released wheels' python/sglang/srt/server_args.py
(``_handle_model_specific_adjustments``) show PR #14764's block first in 0.5.7 (built 2026-01-01). In 0.5.5.post2,
0.5.6 and 0.5.6.post2 the fusion is enabled only in the DeepseekV3ForCausalLM branch (not an NSA model, under
``is_sm100_supported()``, compute capability major 10) and the GptOssForCausalLM branch (``is_blackwell_supported()``),
each without attention DP on one node, with the same 2,048-token cap in the communicator: no Hopper, no Qwen3-MoE.
The ``sglang`` profile's version rule sets ``allreduce_rms_rule = "sglang_sm100"`` before 0.5.7 (:data:`SGLANG_RULES`);
releases before 0.5.5.post2 were not read (the rule is open below). Not priced (named limit, all releases): the
auto-enable's ``nnodes == 1`` test: a TP group over two GB200 / GB300 trays (4 GPUs each) runs unfused in SGLang, but
the op table sees no node count.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.collectives import CollectiveTime
from jalapeno.cost.engine_allreduce import measured_all_reduce
from jalapeno.specs.hardware import System

#: The measured table of the kernel family the fused kernel runs (module docstring:
#: FlashInfer's trtllm_allreduce_fusion, TensorRT-LLM's Lamport one-/two-shot kernels)
FUSED_KERNEL_TABLE = "trtllm"

#: Fallback only (round 49): the CUDA compute capability (major x 10 + minor) by the chip name's prefix, read for a chip
#: whose hardware file omits ``chip.compute_capability`` (a user file written before the field; a bare chip name
#: given to these functions). Every shipped NVIDIA chip states the field with its source (data/systems/*.toml), so
#: a user's own GH200 or H20 file, or a renamed Hopper/Blackwell, gets the fused kernels by stating it too.
#: Kept rather than removed: a user file that relied on its name (an "H100 ..." copy) prices as before. Hopper
#: H100/H200/H800 9.0; Blackwell B200/GB200 10.0; Blackwell Ultra B300/GB300 10.3 (NVIDIA CUDA GPUs
#: compute-capability table, developer.nvidia.com/cuda-gpus)
CAPABILITY_BY_PREFIX: tuple[tuple[str, int], ...] = (
    ("GB300", 103),
    ("B300", 103),
    ("GB200", 100),
    ("B200", 100),
    ("H100", 90),
    ("H200", 90),
    ("H800", 90),
)

#: vLLM ``FI_ALLREDUCE_FUSION_MAX_SIZE_MB``: the largest all-reduce input (MiB per rank) the fusion pass
#: covers, by device capability and TP size (vllm-project/vllm vllm/compilation/passes/fusion/
#: allreduce_rms_fusion.py; v0.16.0 lists 90 and 100 with the same values, the 103 entry and TP 16 are
#: later additions: a B300 run on a release without them is an assumption here)
FUSION_MAX_MIB: dict[int, dict[int, float]] = {
    90: {2: 64.0, 4: 2.0, 8: 0.5},
    100: {2: 64.0, 4: 32.0, 8: 1.0, 16: 64.0},
    103: {2: 64.0, 4: 64.0, 8: 4.0, 16: 64.0},
}

#: SGLang's cap on the fused steps, tokens: ``FUSE_ALLREDUCE_MAX_BATCH_SIZE`` (sgl-project/sglang
#: python/sglang/srt/layers/communicator.py, ``apply_flashinfer_allreduce_fusion``; module docstring)
SGLANG_MAX_TOKENS = 2048

#: The catalog ``model_type`` values whose architecture SGLang auto-enables the fusion for (module docstring):
#: DeepseekV3ForCausalLM (deepseek_v3; kimi_k2, whose config names DeepseekV3ForCausalLM), GptOssForCausalLM,
#: Qwen3MoeForCausalLM. Not DeepSeek-V3.2 (DeepseekV32ForCausalLM: PR #15310 closed unmerged), MiniMax-M2,
#: dense Llama / Qwen.
SGLANG_MODEL_TYPES = frozenset({"deepseek_v3", "kimi_k2", "gpt_oss", "qwen3_moe"})

#: The same before PR #14764 (rule ``sglang_sm100``, releases before 0.5.7; module docstring): server_args of the
#: 0.5.5.post2, 0.5.6 and 0.5.6.post2 wheels enables the fusion only in the DeepseekV3ForCausalLM branch (not an NSA
#: model) and the GptOssForCausalLM branch, each under ``is_sm100_supported()`` / ``is_blackwell_supported()``
#: (capability major 10: B200, GB200, B300, GB300). No Qwen3-MoE, no Hopper.
SGLANG_SM100_MODEL_TYPES = frozenset({"deepseek_v3", "kimi_k2", "gpt_oss"})

#: SGLang's rule -> (compute-capability majors it enables the fusion on, model types): from 0.5.7 SM90 and SM100
#: (``is_sm90_supported() or is_blackwell_supported()``: majors 9 and 10 among the catalog chips), before it SM100
SGLANG_RULES: dict[str, tuple[frozenset[int], frozenset[str]]] = {
    "sglang": (frozenset({9, 10}), SGLANG_MODEL_TYPES),
    "sglang_sm100": (frozenset({10}), SGLANG_SM100_MODEL_TYPES),
}

MIB = 1024 * 1024
#: BF16 bytes per element of the all-reduce input (the model dtype)
_INPUT_BYTES = 2


def device_capability(chip) -> int | None:
    """The CUDA compute capability of ``chip`` (major x 10 + minor), None for a chip with none known.

    ``chip``: a :class:`~jalapeno.specs.hardware.Chip`, whose ``compute_capability`` (its hardware file's
    ``chip.compute_capability``) decides; where that is None, and for a chip name (str), the name's prefix
    (:data:`CAPABILITY_BY_PREFIX`, the documented fallback).

    >>> device_capability("B200 (HGX)"), device_capability("GB300 (Blackwell Ultra GPU in NVL72)"), device_capability("MI355X")
    (100, 103, None)
    >>> from jalapeno.specs.catalog import load_system
    >>> from dataclasses import replace
    >>> device_capability(replace(load_system("h200").chip, name="my-h20"))  # the field, not the name
    90
    """
    cap = getattr(chip, "compute_capability", None)
    if cap is not None:
        return cap
    name = chip if isinstance(chip, str) else chip.name
    return next((cap for prefix, cap in CAPABILITY_BY_PREFIX if name.startswith(prefix)), None)


def fused_max_tokens(chip, tp: int, hidden_size: int) -> int:
    """vLLM's ``max_token_num``: the largest step (tokens) the fusion covers on ``chip`` (a Chip or a chip name:
    its capability by :func:`device_capability`), 0 when it is off.

    >>> fused_max_tokens("B200 (HGX)", 8, 7168)  # 1 MiB // (7168 x 2 B): Kimi K2.5 at TP8
    73
    >>> fused_max_tokens("H200 SXM", 8, 7168), fused_max_tokens("H200 SXM", 1, 7168), fused_max_tokens("MI355X", 8, 7168)
    (36, 0, 0)
    """
    return int(fused_max_bytes(chip, tp)) // (hidden_size * _INPUT_BYTES)


def rule_max_tokens(rule: str, model_type: str, chip, tp: int, hidden_size: int) -> int:
    """The largest step (tokens) the fusion covers under ``rule`` (``vllm``: :func:`fused_max_tokens`;
    ``sglang`` / ``sglang_sm100``: :data:`SGLANG_MAX_TOKENS` for a model and a chip family of
    :data:`SGLANG_RULES` at TP > 1), 0 when it is off.

    >>> rule_max_tokens("sglang", "deepseek_v3", "H200 SXM", 8, 7168), rule_max_tokens("vllm", "deepseek_v3", "H200 SXM", 8, 7168)
    (2048, 36)
    >>> rule_max_tokens("sglang", "llama", "H200 SXM", 8, 8192), rule_max_tokens("sglang", "deepseek_v3", "MI355X", 8, 7168)
    (0, 0)
    >>> [rule_max_tokens("sglang_sm100", m, c, 8, 7168) for m, c in
    ...  (("deepseek_v3", "H200 SXM"), ("deepseek_v3", "GB300 (Blackwell Ultra GPU in NVL72)"), ("qwen3_moe", "B200 (HGX)"))]
    [0, 2048, 0]
    """
    if rule not in SGLANG_RULES:
        return fused_max_tokens(chip, tp, hidden_size)
    majors, models = SGLANG_RULES[rule]
    cap = device_capability(chip)
    on = tp > 1 and model_type in models and cap is not None and cap // 10 in majors
    return SGLANG_MAX_TOKENS if on else 0


def fused_steps(tokens, chip, tp: int, hidden_size: int, rule: str = "vllm", model_type: str = "") -> np.ndarray:
    """(N,) bool: the steps of ``tokens`` (tokens per step per TP group, (N,)) that run the fused kernel under
    ``rule`` (:func:`rule_max_tokens`; ``model_type``: the catalog model's, read by SGLang's rule).

    >>> fused_steps(np.array([1.0, 73.0, 74.0]), "B200 (HGX)", 8, 7168).tolist()
    [True, True, False]
    >>> fused_steps(np.array([64.0, 2048.0, 2049.0]), "H200 SXM", 8, 7168, "sglang", "deepseek_v3").tolist()
    [True, True, False]
    """
    t = np.asarray(tokens, dtype=float)
    return (t > 0) & (t <= rule_max_tokens(rule, model_type, chip, tp, hidden_size))


def fused_max_bytes(chip, tp: int) -> float:
    """The pass's ``max_size`` (bytes per rank) on the chip at ``tp`` ranks, 0 when the pass is off.

    >>> fused_max_bytes("B200 (HGX)", 8) / MIB, fused_max_bytes("H200 SXM", 4) / MIB, fused_max_bytes("MI355X", 8)
    (1.0, 2.0, 0.0)
    """
    cap = device_capability(chip)
    mib = FUSION_MAX_MIB.get(cap, {}).get(int(tp)) if cap is not None and tp > 1 else None
    return 0.0 if mib is None else float(mib * MIB)


def fused_all_reduce(
    priced: CollectiveTime, base: CollectiveTime, group: int, message_bytes, system: System, placement: str = "packed"
) -> CollectiveTime:
    """``priced`` (a profile's TP all-reduce from its engine's table) with the messages the fusion covers
    (<= :func:`fused_max_bytes`) priced from :data:`FUSED_KERNEL_TABLE` instead (module docstring).

    Args:
        priced: the all-reduce as the profile's own table prices it; base: its link-hierarchy price
            (what the fused kernel's table falls back to where it has no curve).
        group: ranks; message_bytes: (N,) bytes per rank; system, placement: as
            :func:`jalapeno.cost.engine_allreduce.measured_all_reduce`.

    Returns:
        :class:`CollectiveTime` (the fused elements' algorithm ``trtllm_measured`` where measured).
    """
    m = np.atleast_1d(np.asarray(message_bytes, dtype=float))
    fused = (m > 0) & (m <= fused_max_bytes(system.chip, group))
    if not fused.any():
        return priced
    f = measured_all_reduce(base, FUSED_KERNEL_TABLE, group, m, system, placement)
    return CollectiveTime(
        np.where(fused, f.time_s, priced.time_s),
        np.where(fused, f.algorithm, priced.algorithm).astype(object),
        priced.level,
        priced.scope,
    )


def fusion_moves_price(efficiency, model_type: str, chip, hidden_size: int) -> bool:
    """Whether switching the fusion on (``+ar_rms``) can change any price of a model (catalog ``model_type``,
    ``hidden_size``) on ``chip`` (a Chip or a name, :func:`device_capability`) under ``efficiency`` at some TP > 1, by either of the two places the pricer reads
    it: the step's add + RMSNorm kernels, dropped at the steps :func:`rule_max_tokens` covers under the set's
    ``allreduce_rms_rule`` (cost/ops.py, through :func:`fused_steps`); and the TP all-reduce of a profile that prices
    it from an engine's measured table other than :data:`FUSED_KERNEL_TABLE`, whose messages up to
    :func:`fused_max_bytes` are priced from the fused kernel's table whatever the rule or model
    (cost/pricer.SystemPricer.collective, :func:`fused_all_reduce`; a set derived from another chip reads no table).
    Read by cli/serving_opts.refuse_idle_ar_rms, so that it refuses only what the pricer prices unchanged.

    >>> from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY as d
    >>> from dataclasses import replace
    >>> sgl = replace(d, allreduce_rms_rule="sglang")
    >>> fusion_moves_price(sgl, "llama", "H200 SXM", 8192), fusion_moves_price(sgl, "gpt_oss", "H200 SXM", 2880)
    (False, True)
    >>> fusion_moves_price(replace(sgl, all_reduce_table="sglang"), "llama", "H200 SXM", 8192)
    True
    >>> fusion_moves_price(d, "llama", "MI300X", 8192)
    False
    """
    from jalapeno.cost.pricer import measured_here  # the pricer imports this module

    tps = sorted({tp for caps in FUSION_MAX_MIB.values() for tp in caps})  # every TP size vLLM's table lists
    rule = efficiency.allreduce_rms_rule
    if any(rule_max_tokens(rule, model_type, chip, tp, hidden_size) for tp in tps):
        return True
    table = efficiency.all_reduce_table
    return (
        table not in ("none", FUSED_KERNEL_TABLE)
        and measured_here(efficiency)
        and any(fused_max_bytes(chip, tp) for tp in tps)
    )
