"""SGLang's fused shared expert: DeepSeek-V3/R1's shared expert run as a 257th expert of the routed MoE kernel.

Source: sgl-project/sglang python/sglang/srt/models/deepseek_v2.py, ``DeepseekV2ForCausalLM.
determine_num_fused_shared_experts`` (0.5.x): ``num_fused_shared_experts = n_shared_experts`` (1) unless
``--disable-shared-experts-fusion``, TBO/SBO, a DeepEP-class MoE (all-to-all), a config other than 256 routed + 1
shared experts (DeepseekV3ForCausalLM), a device below compute capability 8.0 on CUDA, MoE expert parallelism > 1
on CUDA, or W4AFP8 weights. The weight loader then maps ``mlp.shared_experts`` to ``mlp.experts.256`` and the
MoE runs 257 experts at top-k 9 (``top_k_for_moe = num_experts_per_tok + num_fused_shared_experts``): one more
expert every token picks, no separate shared-expert GEMMs (and no second stream: cost/shared_stream.py's
``SGLANG_STREAM`` already leaves these layers out).

Which chips (round 42, fusion42; was a named assumption, now read from the engine): SGLang's
python/sglang/srt/server_args.py turns the fusion off twice over on Blackwell. ``_handle_moe_kernel_config``:
``moe_runner_backend == "flashinfer_trtllm"`` sets ``disable_shared_experts_fusion = True`` ("FlashInfer TRTLLM MoE
is enabled. --disable-shared-experts-fusion is automatically set"), and so does ``moe_a2a_backend == "flashinfer"``
(``_handle_a2a_moe``). ``_handle_model_specific_adjustments``, DeepseekV3ForCausalLM under ``is_sm100_supported()``
(compute capability 10.x: B200, B300, GB200, GB300): with ``moe_a2a_backend == "none"``, ``moe_runner_backend ==
"auto"`` and quantization ``fp8`` / ``modelopt_fp8`` / ``modelopt_fp4`` it picks ``flashinfer_trtllm`` ("Use
flashinfer_trtllm as MoE runner backend on sm100 for DeepseekV3ForCausalLM"). So a Blackwell DeepSeek-R1 at EP 1
fuses only under an explicit runner other than FlashInfer's (Triton, DeepGEMM, CUTLASS), which no recipe here names:
InferenceX's B200 scripts pass ``--moe-runner-backend flashinfer_trtllm`` from PR #204 on (data/engines.toml
sglang-b200-dsr1-*, data/validation/aic_sweeps.toml), the earlier B200 sweep ran ``--enable-ep-moe`` (EP = TP), the
GB200 dynamo-sglang pools are DEP (EP > 1, DeepEP), and an EP 1 pool that names no runner gets the SM100 auto
choice. Hopper (SM90) has no such auto choice: its FP8 MoE runs SGLang's Triton ``fused_moe`` under
``moe_runner_backend=auto`` (the H200 script's parsed arguments, InferenceX PR #3010; the H200 Triton configuration
files named ``E=257``, tuned for "TP=8 EP=1 DeepseekV3", sglang PR #17965). The chips' ``fp4`` compute format marks
the SM100 class here (every chip with it in data/systems is Blackwell, or Vera Rubin: no SGLang row, taken as
Blackwell by assumption).

ROCm (round 46, sgldsr46): sgl-project/sglang PR #12201 ("[FEAT][ROCM] enable fused shared expert for Rocm", merged
November 2025, before every SGLang-ROCm release the data holds: 0.5.9, 0.5.12, 0.5.19) rewrote the device test of
``determine_num_fused_shared_experts`` to ``(not _is_cuda or capability < (8, 0)) and (not _is_hip or capability <
(9, 4))`` ("Only Deepseek V3/R1 on NV-platform with capability >= 80 or AMD-platform with capability >=
gfx942(MI30x) can use shared experts fusion optimization"), and the expert-parallel test to ``moe_ep_size > 1 and
(not _is_hip or capability < (9, 4))``: on gfx942 / gfx950 (MI300X, MI325X, MI355X: every AMD chip in data/systems)
the fusion holds at any EP, into aiter's fused MoE. A DeepEP-class all-to-all still turns it off (the later
``is_deepep()`` test; MoRI pools taken alike, an assumption: the test names DeepEP only). :data:`ROCM_FUSED_SHARED_ON`
switches this half; shipped off: on, it needs the chain's refit (``sglang-rocm`` per-kernel cost 9.5 -> 11.5 us, its
v0.5.9 step rule 6.60 -> 6.57 ms), after which no held-out goal breaks and InferenceX MI355X interactivity p90
25.3 -> 21.6% meets its goal, but MI325X's misses stay (the fused step is 1.68 ms shorter at every batch and the
refit takes it back: the misses are the shape over the batch, not a per-step level): docs/gap_aic_itl.md "round 46,
sgldsr46".

Priced (cost/ops.py, with :data:`FUSED_SHARED_ON` / :data:`ROCM_FUSED_SHARED_ON`): the shared expert's three ops
are dropped, and the routed block gets one more assignment per routed token and one more touched expert at every
step with tokens.

The CUDA half is shipped OFF: docs/gap_aic_itl.md "round 42, h200tpot42" and "round 42, fusion42" have the held-out
figures and why (with the chain's ``sglang`` / ``sglang-rocm`` refit: aiconfigurator GB300 interactivity bias
-4.8 -> -5.4%, InferenceX MI325X TTFT median 18.1 -> 20.0%; the ratchet holds). Round 43 (sglrel43, same doc):
neither a release rule for the H200 MoE retune (PR #17965; no kernel figure, and leaving v0.5.7's rows out of the fit
leaves it unchanged) nor a Hopper/Blackwell split of the ``sglang`` fit (InferenceX H200 TPOT bias +15.0% off,
+11.7% on) decouples it. Round 46 (sgldsr46): both halves on with the pooled refit give round 42's figures again.
"""

from __future__ import annotations

import re

from jalapeno.errors import check_bool

#: price SGLang's fused shared expert (module docstring); False: the shared expert's own GEMMs, as before round 42
FUSED_SHARED_ON = False
#: price the ROCm half (SGLang-ROCm on gfx942+, sglang PR #12201; module docstring); shipped off (round 46, sgldsr46)
ROCM_FUSED_SHARED_ON = False
#: stack profiles (base names, specs/stacks.py) whose engine fuses: SGLang on CUDA
FUSING_STACKS = frozenset({"sglang"})
#: stack profiles of SGLang on ROCm (gfx942 and newer: every AMD chip in data/systems), fusing at any EP
ROCM_FUSING_STACKS = frozenset({"sglang-rocm"})
#: routed and shared expert counts the engine's allow-list fuses (DeepSeek-V3/R1; Kimi K2.5 only as Quark MXFP4)
FUSED_ROUTED, FUSED_SHARED = 256, 1


def fuses_shared_expert(
    stack_base: str,
    chip_formats: frozenset[str] | set[str],
    routed_experts: int,
    shared_width_ratio: float,
    ep: int,
    all_to_all: bool,
    on: bool | None = None,
) -> bool:
    """Whether the step's engine runs the shared expert inside the routed MoE kernel (module docstring).

    ``stack_base``: the pricer's stack profile without ``@VERSION`` / ``+switch``; ``chip_formats``: the chip's
    compute formats (no ``fp4``: Hopper or older, where the FP8 MoE runs SGLang's Triton kernel; with it:
    SM100-class, FlashInfer TRT-LLM runner);
    ``routed_experts``: the model's routed experts; ``shared_width_ratio``: the shared FFN's width over one routed
    expert's (1.0: one shared expert of the routed width); ``ep``: expert parallelism; ``all_to_all``: the MoE
    exchanges tokens by all-to-all (DeepEP); ``on``: the switch (None: :data:`FUSED_SHARED_ON`, or
    :data:`ROCM_FUSED_SHARED_ON` for a stack of :data:`ROCM_FUSING_STACKS`). A chip with ``fp4`` is SM100-class
    under ``sglang``, where SGLang's auto MoE runner for DeepSeek-V3/R1 is FlashInfer TRT-LLM, which forces the
    fusion off; under ``sglang-rocm`` (gfx942 / gfx950) neither the chip's formats nor EP turn it off (module
    docstring, sglang PR #12201).

    >>> fuses_shared_expert("sglang", {"fp8", "bf16"}, 256, 1.0, 1, False, on=True)
    True
    >>> [fuses_shared_expert("sglang", {"fp8", "fp4"}, 256, 1.0, 1, False, on=True),
    ...  fuses_shared_expert("sglang", {"fp8"}, 256, 1.0, 8, False, on=True),
    ...  fuses_shared_expert("sglang", {"fp8"}, 384, 1.0, 1, False, on=True),
    ...  fuses_shared_expert("vllm", {"fp8"}, 256, 1.0, 1, False, on=True),
    ...  fuses_shared_expert("sglang", {"fp8"}, 256, 1.0, 1, True, on=True),
    ...  fuses_shared_expert("sglang", {"fp8"}, 256, 1.0, 1, False, on=False)]
    [False, False, False, False, False, False]
    >>> [fuses_shared_expert("sglang-rocm", {"fp8", "fp4"}, 256, 1.0, 8, False, on=True),
    ...  fuses_shared_expert("sglang-rocm", {"fp8"}, 256, 1.0, 1, True, on=True)]
    [True, False]

    Raises:
        SpecError: ``on`` given but not True/False (``'no'`` would read as on).
    """
    if on is not None:
        check_bool("on", on, "pass on=True or False (None: the module's FUSED_SHARED_ON / ROCM_FUSED_SHARED_ON)")
    config = routed_experts == FUSED_ROUTED and shared_width_ratio == float(FUSED_SHARED) and not all_to_all
    if stack_base in ROCM_FUSING_STACKS:
        return bool(ROCM_FUSED_SHARED_ON if on is None else on) and config
    if not (FUSED_SHARED_ON if on is None else on):
        return False
    return (
        stack_base in FUSING_STACKS
        and "fp4" not in chip_formats
        and routed_experts == FUSED_ROUTED
        and shared_width_ratio == float(FUSED_SHARED)
        and ep == 1
        and not all_to_all
    )


def stack_base(efficiency_source: str) -> str:
    """The stack profile an efficiency set was priced with, without ``@VERSION`` / ``+switch`` (``... + stack NAME``
    as Stack.apply writes it); "" where the source names none.

    >>> stack_base("calibrated h200 + stack sglang@0.5.12+ar_rms"), stack_base("calibrated h200")
    ('sglang', '')
    """
    m = re.search(r" \+ stack (\S+)", efficiency_source)
    return m.group(1).split("@")[0].split("+")[0] if m else ""
