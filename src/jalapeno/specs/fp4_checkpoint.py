"""NVIDIA's NVFP4 DeepSeek-R1 checkpoints priced at their own per-module formats (issue 18, round 48, gb300_48;
shipped off: :data:`FP4_CHECKPOINT_FORMATS_ON`).

The ``fp4`` preset (specs/formats.PRESETS) prices a DeepSeek-R1 FP4 deployment's attention projections, dense FFN and
shared experts as FP8 block-scale linears and only the routed experts as NVFP4. NVIDIA's ModelOpt checkpoints
store them otherwise:

- attention input projections (q_a, q_b, kv_a_with_mqa, kv_b) unquantised, BF16: the tensor listing of
  nvidia/DeepSeek-R1-0528-FP4 (``model.layers.0.self_attn.{q_a,q_b,kv_a_proj_with_mqa,kv_b,o}_proj.weight`` BF16);
  NVIDIA/Model-Optimizer issue #150 (2025-03-07: "the proj weights in the transformer attention section are in
  BF16" in nvidia/DeepSeek-R1-FP4); RedHatAI/DeepSeek-R1-NVFP4-FP8-BLOCK, made from nvidia/DeepSeek-R1-NVFP4 by
  "applying FP8_BLOCK quantization to targeted attention layers"; TensorRT-LLM tech blog 1 ("Pushing Latency
  Boundaries ... B200", Precision Strategy table: "64x Attention Modules bf16", "3x Dense FFN Layers nvfp4",
  "58x MoE FFN Layers nvfp4"); tech blog 3 (throughput recipe, nvidia/DeepSeek-R1-FP4: the same recipe with FP8
  KV cache and FP8 attention math, which the preset keeps);
- the dense FFN NVFP4: the same listing, ``model.layers.0.mlp.{gate,up,down}_proj.weight`` U8 (packed e2m1) with an
  F8_E4M3 ``weight_scale`` per 16 elements (``[7168, 1152]`` for a ``[7168, 9216]`` packed down_proj) and an fp32
  ``weight_scale_2``;
- the shared experts NVFP4: blog 1's "58x MoE FFN Layers nvfp4" (the shared expert is a linear of the MoE block,
  not excluded as the attention is); assumption for the -v2 checkpoint the recipes load
  (``deepseek-r1-0528-fp4-v2``), whose exclusion list is not read here;
- the attention output projection (o_proj, ``wo``) NVFP4, stored apart as :data:`O_PROJ_MODULE`: the recipes load the
  ``-v2`` checkpoint (InferenceX's srt-slurm launch maps dsr1 fp4 to ``deepseek-r1-0528-fp4-v2``; TensorRT-LLM's perf
  sanity list names ``nvidia/DeepSeek-R1-0528-FP4-v2``), whose model card says "Compared to
  nvidia/DeepSeek-R1-0528-FP4, this checkpoint additionally quantizes the wo module in attention layers" (the same
  sentence on nvidia/DeepSeek-R1-FP4-v2 against nvidia/DeepSeek-R1-FP4); aiconfigurator's DeepSeek model keeps the
  same per-projection fact for DeepSeek-V3.1-NVFP4 (BF16 q / kv, NVFP4 o_proj: ai-dynamo/aiconfigurator @095f58a51
  ``sdk/models/deepseek.py``). Round 49 (gb300tpot49): with it, the switch removes round 48's BF16 o_proj, the
  largest term that made the FP4 rows slower (docs/gap_fp4_fp8_decode.md §6). Read by the MLA op builder
  (cost/attention.add_mla_ops) and the resident weights (deploy/memory_fit.weight_bytes_per_chip); MLA models only.

With the switch on, :func:`checkpoint_precision` gives ``fp4`` on a DeepSeek-R1 model (:data:`CHECKPOINT_MODELS`,
the MTP module included: its name extends the model's) these formats; cost/ops.build_step_ops calls it, so every
priced step (prefill, decode, MTP drafts) reads them; the recorded precision name stays ``fp4``. Off (shipped):
the preset as it is. Figures on against off: docs/gap_fp4_fp8_decode.md §5 (round 48) and §6 (round 49, with the -v2
o_proj, alone and with cost/ops.FUSED_A_PREFETCH_ON).
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

#: price DeepSeek-R1 ``fp4`` deployments at the NVIDIA checkpoints' own module formats (module docstring); shipped
#: off (round 48): without a stack refit it makes the FP4 rows slower where they are already over-predicted, and
#: the refit with it does not meet the held-out rule (docs/gap_fp4_fp8_decode.md §5); round 49 (-v2 o_proj): on alone
#: it makes aiconfigurator GB300 interactivity a new miss; with cost/ops.FUSED_A_PREFETCH_ON no new miss and two
#: fewer, but some touched groups move the wrong way (§6), so still off; round 50 (fp4pair50): with the stacks
#: refitted on the pair (trtllm tp_rank_step_s 75 -> 87.5 us, dynamo-trtllm MTP acceptance 0.80 -> 0.825) the refit
#: takes the gain back and GB300 interactivity is a new miss (13 -> 14 misses, §7), so off
FP4_CHECKPOINT_FORMATS_ON = False

#: model names (prefixes: the MTP module is ``<model>.mtp``) whose ``fp4`` checkpoint is NVIDIA's ModelOpt DeepSeek one
CHECKPOINT_MODELS = ("deepseek-r1",)

#: the precision module key of the attention output projection where it is stored apart from the other attention
#: projections (read by cost/ops.build_step_ops for the MLA o_proj; absent: o_proj is the ``attention`` module's)
O_PROJ_MODULE = "attention_out"

#: module → (weight format, compute format) of those checkpoints where they differ from the ``fp4`` preset
CHECKPOINT_MODULES = {
    "attention": ("bf16", "bf16"),
    O_PROJ_MODULE: ("nvfp4", "fp4"),
    "dense_ffn": ("nvfp4", "fp4"),
    "shared_experts": ("nvfp4", "fp4"),
}

#: (id of a precision, key) -> (that precision, its checkpoint copy); specs/stack_profile.memo_copy
_CACHE: dict = {}


def checkpoint_precision(model_name: str, precision, on: bool | None = None):
    """``precision`` with :data:`CHECKPOINT_MODULES` in place where the switch is on, the precision is the ``fp4``
    preset (any ``,kv=`` / ``,attn=`` / ``,fallback`` override kept) and ``model_name`` is one of
    :data:`CHECKPOINT_MODELS` (or its MTP module); else ``precision`` itself.

    Args:
        model_name: ModelSpec.name; precision: a specs/formats.Precision; on: the switch, None = the module's.

    >>> from jalapeno.specs.formats import get_precision
    >>> p = checkpoint_precision("deepseek-r1", get_precision("fp4"), on=True)
    >>> p.name, p.modules["attention"].weight.name, p.modules["attention_out"].weight.name
    ('fp4', 'bf16', 'nvfp4')
    >>> checkpoint_precision("kimi-k2.5", get_precision("fp4"), on=True).modules["attention"].weight.name
    'fp8'
    """
    if not (FP4_CHECKPOINT_FORMATS_ON if on is None else on) or precision.name.split(",")[0] != "fp4":
        return precision
    if not any(model_name == m or model_name.startswith(m + ".") for m in CHECKPOINT_MODELS):
        return precision
    from jalapeno.specs.formats import ModulePrecision, get_format
    from jalapeno.specs.stack_profile import memo_copy

    def make():
        mods = dict(precision.modules)
        for m, (w, c) in CHECKPOINT_MODULES.items():
            mods[m] = ModulePrecision(get_format(w, f"fp4 checkpoint {m}"), c)
        return replace(precision, modules=MappingProxyType(mods))

    return memo_copy(_CACHE, "checkpoint", precision, make)  # one copy per preset object (steps are grouped by it)
