"""NVIDIA's NVFP4 DeepSeek-R1 checkpoints priced at their own per-module formats (issue 18, round 48, gb300_48;
shipped off: :data:`FP4_CHECKPOINT_FORMATS_ON`).

The ``fp4`` preset (specs/formats.PRESETS) prices a DeepSeek-R1 FP4 deployment's attention projections, dense FFN and
shared experts as FP8 block-scale linears and only the routed experts as NVFP4. NVIDIA's ModelOpt checkpoints
store them otherwise:

- attention projections (q_a, q_b, kv_a_with_mqa, kv_b, o_proj) unquantised, BF16: the tensor listing of
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
  (``deepseek-r1-0528-fp4-v2``), whose exclusion list is not read here.

With the switch on, :func:`checkpoint_precision` gives ``fp4`` on a DeepSeek-R1 model (:data:`CHECKPOINT_MODELS`,
the MTP module included: its name extends the model's) these formats; cost/ops.build_step_ops calls it, so every
priced step (prefill, decode, MTP drafts) reads them; the recorded precision name stays ``fp4``. Off (shipped):
the preset as it is. Figures on against off: docs/gap_fp4_fp8_decode.md §5 (round 48).
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

#: price DeepSeek-R1 ``fp4`` deployments at the NVIDIA checkpoints' own module formats (module docstring); shipped
#: off (round 48): without a stack refit it makes the FP4 rows slower where they are already over-predicted, and
#: the refit with it does not meet the held-out rule (docs/gap_fp4_fp8_decode.md §5)
FP4_CHECKPOINT_FORMATS_ON = False

#: model names (prefixes: the MTP module is ``<model>.mtp``) whose ``fp4`` checkpoint is NVIDIA's ModelOpt DeepSeek one
CHECKPOINT_MODELS = ("deepseek-r1",)

#: module → (weight format, compute format) of those checkpoints where they differ from the ``fp4`` preset
CHECKPOINT_MODULES = {"attention": ("bf16", "bf16"), "dense_ffn": ("nvfp4", "fp4"), "shared_experts": ("nvfp4", "fp4")}

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
    >>> p.name, p.modules["attention"].weight.name, p.modules["shared_experts"].weight.name
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
