"""SGLang's prompt steps by release: eager before piecewise CUDA graphs became its default, graphed from then on.

SGLang replays the decode step as a CUDA graph in every release the rows ran; a step that carries a prompt runs
eagerly unless piecewise CUDA graphs are on. Read from the released wheels (PyPI ``sglang``, no code taken):

- 0.5.9 ``python/sglang/srt/server_args.py``: ``enable_piecewise_cuda_graph: bool = False`` (off unless the launch
  says ``--enable-piecewise-cuda-graph``);
- 0.5.10, 0.5.11, 0.5.12: ``disable_piecewise_cuda_graph: bool = False`` (on by default; sgl-project/sglang PR #16331
  "Piecewise Cuda Graph set default", tracked by issue #18130); ``ServerArgs._handle_piecewise_cuda_graph`` turns it
  off for the architectures of ``configs/model_config.piecewise_cuda_graph_disabled_model_archs`` (DeepSeek-V3.2 / V4,
  Qwen3-Next, ...: not ``DeepseekV3ForCausalLM``, DeepSeek-R1's), attention DP, ``--enable-torch-compile``, PP > 1,
  ROCm and the other non-CUDA platforms (``is_hip()``), an MoE all-to-all backend, LoRA, EPLB, disaggregation and a
  few more; and ``piecewise_cuda_graph_max_tokens`` defaults, under an MLA attention backend, to 2048 ("the
  introduction of piecewise cuda graph will influence the kernel dispatch ... we set the max tokens to 2048"): a
  prompt step of more tokens runs eagerly.

So an aggregated DeepSeek-R1 SGLang run on an NVIDIA GPU (TP, no attention DP, no EP all-to-all) runs its prompt
steps eagerly before :data:`PIECEWISE_SINCE`, and from it graphed when a step's prompt tokens fit in
:data:`MLA_MAX_TOKENS` (taken per row as ISL <= 2048: a 1k prompt is one or two to a step; an 8k prompt is eager in
every release). An eager prompt step costs max(host calls × :data:`EAGER_CALL_S`, GPU) (serve/limits.prompt_floor_s),
the calls of a context-only step: SGLang's scheduler runs a prefill batch on its own, the decodes waiting, unless
``--enable-mixed-chunk`` (no InferenceX SGLang script sets it; ``Deployment.eager_prompt_alone``).

ASSUMPTIONS (named, not measured on SGLang): the host calls are TensorRT-LLM's counted ones for the same layers
(cost/host_calls.py, round 26's eager26: an eager PyTorch decoder layer of the same ops) and the rate is TensorRT-LLM's
fitted one (fit/trt_prompt_graphs.TRTLLM_EAGER_CALL_S, 24 µs, fitted on B200 TensorRT-LLM rows: no SGLang row in its
split). Scope: DeepSeek-R1 (the MLA token cap read above), aggregated, no MTP (speculative decoding's graph rules
not read), NVIDIA systems only, a stated or recipe release (an unstated one keeps the old pricing: no floor).
NOT APPLIED to validation: priced this way the rule helps the v0.5.7 H200 rows and hurts aiconfigurator's 0.5.9
B200 / H200 TTFT, so the rate is not SGLang's; scripts/sglang_pcg_release.py prices it as a what-if and
docs/gap_aic_itl.md (round 32, sglrel32) has the figures.
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.errors import SpecError
from jalapeno.fit.trt_prompt_graphs import TRTLLM_EAGER_CALL_S
from jalapeno.specs.engine_versions import version_key

#: First SGLang release whose server graphs prompt steps by default (the 0.5.9 and 0.5.10 wheels' server_args.py).
PIECEWISE_SINCE = "0.5.10"
#: ``piecewise_cuda_graph_max_tokens`` default under an MLA attention backend, tokens (0.5.10-0.5.12 server_args.py).
MLA_MAX_TOKENS = 2048
#: Host seconds per call of SGLang's eager prompt step: TensorRT-LLM's fitted rate (ASSUMPTION, module docstring).
EAGER_CALL_S = TRTLLM_EAGER_CALL_S
#: models the rule covers (MLA: the 2048-token default)
MODELS = ("deepseek-r1",)


def prompt_steps_eager(release: str, isl: int) -> bool | None:
    """Whether SGLang ``release`` runs a DeepSeek-R1 aggregated prompt step of ``isl`` tokens eagerly (module
    docstring); None when the release is not stated or not a release number (``unstated``: not priced either way).

    >>> prompt_steps_eager("0.5.9", 1024), prompt_steps_eager("0.5.12", 1024), prompt_steps_eager("0.5.12", 8192)
    (True, False, True)
    >>> prompt_steps_eager("0.5.10.post1", 2048), prompt_steps_eager("", 1024), prompt_steps_eager("unstated", 1024)
    (False, None, None)
    """
    try:
        key = version_key(release, "SGLang release")
    except SpecError:
        return None
    if key < version_key(PIECEWISE_SINCE):
        return True
    return int(isl) > MLA_MAX_TOKENS


def with_sglang_prompt_graphs(dep, model: str, release: str, isl: int, rocm: bool = False):
    """(deployment, note) of a measured SGLang row: ``eager_prompt_call_s`` = :data:`EAGER_CALL_S` where its prompt
    steps run eagerly (:func:`prompt_steps_eager`); unchanged (note "") outside the rule's scope (module docstring:
    another model, disaggregated, MTP, attention DP or EP all-to-all, ROCm, no release) and where they are graphed.

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> d = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    >>> with_sglang_prompt_graphs(d, "deepseek-r1", "0.5.7", 1024)[0].eager_prompt_call_s
    2.4e-05
    >>> with_sglang_prompt_graphs(d, "deepseek-r1", "0.5.12", 1024)[0].eager_prompt_call_s
    0.0
    >>> with_sglang_prompt_graphs(d, "deepseek-r1", "0.5.7", 1024, rocm=True)[1]
    ''
    """
    if dep is None or rocm or model not in MODELS or dep.prefill is not None or dep.mtp is not None:
        return dep, ""
    lay = dep.decode.layout
    if lay.dp > 1 or lay.ep > 1:  # attention DP turns piecewise graphs off; EP may run an all-to-all backend
        return dep, ""
    eager = prompt_steps_eager(release, isl)
    if not eager:
        return dep, ""
    why = (
        f"before SGLang {PIECEWISE_SINCE}'s default piecewise CUDA graphs"
        if version_key(release, "SGLang release") < version_key(PIECEWISE_SINCE)
        else f"prompt above the MLA piecewise-graph cap of {MLA_MAX_TOKENS} tokens"
    )
    return (
        replace(dep, eager_prompt_call_s=EAGER_CALL_S, eager_prompt_alone=True),
        f"eager prompt steps ({why}): max(host calls × {EAGER_CALL_S * 1e6:g} µs, GPU) (fit/sglang_prompt_graphs.py)",
    )
