"""The engine settings an aiconfigurator row ran with that its fields do not state, priced as its engine runs by
default or as its InferenceX launch recipe set them (fit/aic_rows.load_aiconfigurator applies them in turn): the
recipe's limits (:func:`with_recipe_limits`), TensorRT-LLM's prefill budget per attention-DP rank
(:func:`with_rank_budget`), the engine's default MoE backend (:func:`with_row_moe_backend`) and attention backend
(:func:`with_row_attention_backend`), TensorRT-LLM's FP8 context FMHA (:func:`with_row_attention_math`) and vLLM's
all-reduce + RMSNorm fusion where the InferenceX launch script set it (:func:`row_allreduce_rms_fusion`). Each
table's source is at its definition.

Split from fit/aic_rows.py (round 50, module budget), which re-exports every name (the notes these functions
write name them as ``fit/aic_rows.X``).
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.deploy.deployment import Deployment, Pool  # noqa: F401 (Pool: the doctests)
from jalapeno.deploy.layout import Layout  # noqa: F401 (the doctests)
from jalapeno.specs.formats import get_precision  # noqa: F401 (the doctests)


#: InferenceX's ``framework`` name of each aiconfigurator backend (data/engines.toml recipe engines)
IX_FRAMEWORK = {"sglang": "sglang", "trtllm": "trt", "vllm": "vllm"}


def with_recipe_limits(
    dep, system: str, model: str, backend: str, precision: str, isl: int, osl: int, concurrency: float
):
    """(deployment, note): an aggregated row exported from an InferenceX sweep with the engine limits of the
    InferenceX launch recipe that ran it (deploy/engines.launch_limits: token budget, scheduler poll, KV pool),
    as validation gives InferenceX's own points; ``dep`` and "" when no single recipe describes the run or
    the deployment already has limits of its sweep's script (a running cap).

    A row above the recipe's running cap keeps the recipe's other limits but not its running and CUDA-graph
    caps (:data:`BEYOND_CAP_DROPS`, with the captured sizes under that ceiling): InferenceX's scripts set both to the most their sweep runs
    (benchmarks/single_node/dsr1_fp8_b200.sh @64c20b6b5: "Setting these values (passed in to
    --cuda-graph-max-bs and --max-running-requests) as the maximum concurrency"; nvidia-master.yaml
    dsr1-fp8-b200-sglang then swept concurrency 4-64 against the cap 128), so a run at a higher concurrency
    was launched with caps the recipe does not record; the engine's KV pool then bounds the batch and its
    CUDA-graph limit is not modelled (a named assumption).

    >>> d = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    >>> [(x.max_running, x.cuda_graph_max_batch) for c in (64, 256)
    ...  for x in [with_recipe_limits(d, "b200", "deepseek-r1", "sglang", "fp8", 1024, 1024, c)[0]]]
    [(128, 128), (None, None)]
    """
    from jalapeno.deploy.engines import launch_limits, with_launch_kv

    if dep.max_running is not None or backend not in IX_FRAMEWORK:
        return dep, ""
    kw, why = launch_limits(
        system,
        model,
        IX_FRAMEWORK[backend],
        precision,
        dep.decode.layout.tp,
        isl,
        osl,
        concurrency,
        mtp=dep.mtp is not None,
    )
    if not kw:
        return dep, ""
    cap = kw.get("max_running")
    if cap is not None and concurrency > cap:
        dropped = {k: kw.pop(k) for k in BEYOND_CAP_DROPS if k in kw}
        dropped.pop("cuda_graph_batch_sizes", None)  # named by its ceiling
        why += (
            f"; its {', '.join(f'{k} {v}' for k, v in dropped.items())} not applied: concurrency {concurrency:g} "
            "is above the cap the script sets as its sweep's maximum (fit/aic_rows.with_recipe_limits)"
        )
    prec = with_launch_kv(dep.precision, kw)
    return replace(dep, precision=prec, **kw), why


#: the aiconfigurator backends that count a disaggregated row's prefill token budget per attention-DP rank: TensorRT-LLM
#: runs one scheduler per rank, each with its own ``max_num_tokens``, and its default 8192 is likewise per rank
#: (data/engines.toml, recipe dynamo-trt-dsr1-fp4 ``budget_per_source``: tensorrt_llm/_torch/pyexecutor/py_executor.py)
RANK_BUDGET_BACKENDS = ("trtllm",)


def with_rank_budget(dep: Deployment, backend: str) -> tuple[Deployment, str]:
    """(deployment, note): a disaggregated row of a :data:`RANK_BUDGET_BACKENDS` engine with its limits counted per
    attention-DP rank (``budget_per = "rank"``: the prefill pool's budget is the row's token budget on each of its
    ranks); ``dep`` and "" for other engines, aggregated rows and deployments that already count so.

    The rows carry no launch recipe, so the budget is the deployment's default (8192 tokens, TensorRT-LLM's default
    ``max_num_tokens``); counted per instance it was split over a DP4-DP8 prefill worker's ranks, 1-2K tokens each,
    and an 8K prompt took four to eight chunk steps where TensorRT-LLM runs it in one (docs/gap_aic_ttft.md, round 22).

    >>> d = Deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8), 4), prefill=Pool(Layout(dp=4, ep=4)))
    >>> r, note = with_rank_budget(d, "trtllm")
    >>> r.budget_per, r.prompt_budget(r.prefill.layout), d.prompt_budget(d.prefill.layout)
    ('rank', 8192.0, 2048.0)
    >>> with_rank_budget(d, "sglang")[0].budget_per
    'instance'
    """
    if dep.prefill is None or backend not in RANK_BUDGET_BACKENDS or dep.budget_per == "rank":
        return dep, ""
    return replace(dep, budget_per="rank"), (
        f"prefill budget {dep.token_budget} tokens per attention-DP rank ({backend} "
        "runs a scheduler per rank: fit/aic_rows.RANK_BUDGET_BACKENDS)"
    )


#: the recipe limits a row above the recipe's running cap does not take (:func:`with_recipe_limits`)
BEYOND_CAP_DROPS = ("max_running", "cuda_graph_max_batch", "cuda_graph_batch_sizes")


#: (engine, aiconfigurator ``moe_quant_mode``) -> the MoE kernel backend that engine runs those experts on by
#: default, where the system has it measured (specs/moe_backends.py): vLLM runs INT4 weight-only experts
#: (compressed-tensors WNA16, Kimi K2.5's INT4 release) through Marlin (fit/moe_backends.KERNEL_BACKENDS says
#: where in vLLM's source); aiconfigurator's own vLLM ``int4_wo`` MoE rows time that kernel. TensorRT-LLM runs
#: its ``MoeConfig.backend`` default, ``CUTLASS`` (tensorrt_llm/llmapi/llm_args.py ``default='CUTLASS'``; from
#: NVIDIA/TensorRT-LLM PR #11074, 2026-01, the default ``AUTO`` picks TRT-LLM-gen for gpt-oss on Blackwell
#: only), on FP8 block-scale experts (``fp8_block``: Qwen3-235B-A22B-FP8; DeepSeek-R1's rows write ``fp8``)
#: on Hopper, :data:`ROW_MOE_BACKEND_SYSTEMS` (aiconfigurator's H100 / H200 TRT-LLM ``moe_perf`` tables time
#: FP8 block-scale experts through that kernel alone, ``moe_torch_flow_cutlass``: fit/moe_backends.SYSTEM_DIRS).
ROW_MOE_BACKENDS = {("vllm", "int4_wo"): "marlin", ("trtllm", "fp8_block"): "cutlass", ("trtllm", "fp8"): "cutlass"}


#: the catalog systems an entry of :data:`ROW_MOE_BACKENDS` holds on (an entry not listed: every system).
#: Hopper only for TensorRT-LLM's FP8 experts: Blackwell's FP8 block-scale MoE rows in the same tables are
#: DeepGEMM's (docs/model.md §4, MoE width term), and no Blackwell CUTLASS FP8 curve is shipped.
ROW_MOE_BACKEND_SYSTEMS = {("trtllm", "fp8_block"): ("h100", "h200"), ("trtllm", "fp8"): ("h100", "h200")}


def with_row_moe_backend(
    dep: Deployment, backend: str, moe_quant_mode: str, system: str | None = None
) -> tuple[Deployment, str]:
    """(deployment, note): the pools of a row with no MoE backend of their own (none from a sweep's launch
    script) given the one their engine runs the row's expert format on by default on catalog system
    ``system`` (:data:`ROW_MOE_BACKENDS`, :data:`ROW_MOE_BACKEND_SYSTEMS`; priced by cost/pool_backends.with_moe_backend
    where the system measured it at the model's shape; a dense model has no routed experts to price);
    ``dep`` and "" otherwise.

    >>> d, note = with_row_moe_backend(Deployment(get_precision("int4"), Pool(Layout(tp=8))), "vllm", "int4_wo")
    >>> d.decode.moe_backend, with_row_moe_backend(d, "trtllm", "int4_wo")[1]
    ('marlin', '')
    >>> fp8 = Deployment(get_precision("fp8"), Pool(Layout(tp=4, ep=4)))
    >>> with_row_moe_backend(fp8, "trtllm", "fp8_block", "h100")[0].decode.moe_backend
    'cutlass'
    >>> with_row_moe_backend(fp8, "trtllm", "fp8", "b200")[0].decode.moe_backend is None
    True
    """
    name = ROW_MOE_BACKENDS.get((backend, moe_quant_mode))
    on = ROW_MOE_BACKEND_SYSTEMS.get((backend, moe_quant_mode))
    if name is None or dep.decode.moe_backend is not None or (on is not None and system not in on):
        return dep, ""
    pre = None if dep.prefill is None or dep.prefill.moe_backend is not None else replace(dep.prefill, moe_backend=name)
    dep = replace(dep, decode=replace(dep.decode, moe_backend=name), **({"prefill": pre} if pre else {}))
    return dep, (
        f"MoE backend {name}: {backend} runs {moe_quant_mode} experts on it by default (fit/aic_rows.ROW_MOE_BACKENDS)"
    )


#: (engine, catalog system) -> the attention backend that engine picks there for a GQA (non-MLA) model, where
#: data/attention_backends.toml has its figures: vLLM tries FLASH_ATTN first on every CUDA chip but compute
#: capability 10.x (vllm/platforms/cuda.py _get_backend_priorities), FlashAttention 3 on SM90 (H100, H200);
#: aiconfigurator's vLLM collector, which lets vLLM select, records that kernel there (vllm_flash_attn_fa3)
ROW_ATTENTION_BACKENDS = {("vllm", "h100"): "flash_attn", ("vllm", "h200"): "flash_attn"}


def with_row_attention_backend(dep: Deployment, backend: str, system: str) -> Deployment:
    """``dep`` with the pools that name no attention backend of their own given the one their engine picks on
    ``system`` by default (:data:`ROW_ATTENTION_BACKENDS`; priced by cost/pool_backends.with_attention_backend where
    the system and the KV format have figures, MLA decode untouched); ``dep`` otherwise.

    >>> dep = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    >>> [with_row_attention_backend(dep, e, s).decode.attention_backend
    ...  for e, s in (("vllm", "h200"), ("vllm", "b200"), ("trtllm", "h200"))]
    ['flash_attn', None, None]
    """
    name = ROW_ATTENTION_BACKENDS.get((backend, system))
    if name is None or dep.decode.attention_backend is not None:
        return dep
    pre = (
        None
        if dep.prefill is None or dep.prefill.attention_backend is not None
        else replace(dep.prefill, attention_backend=name)
    )
    return replace(dep, decode=replace(dep.decode, attention_backend=name), **({"prefill": pre} if pre else {}))


#: the engine whose context attention runs in FP8 when a layer's attention output projection takes FP8 per-tensor
#: activations (catalog weight format of the attention module): TensorRT-LLM's PyTorch backend quantizes the attention
#: output for an FP8 ``o_proj`` (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/modules/attention.py ``Attention.forward``:
#: ``if self.o_proj.has_fp8_qdq or self.o_proj.has_nvfp4 ...: out_scale = self.o_proj.inv_input_scale``), and its
#: attention op runs the E4M3 context FMHA whenever the output is FP8 or NVFP4
#: (cpp/tensorrt_llm/thop/attentionOp.cpp: ``mFP8ContextFMHA = is_fp8_out || is_fp4_out || (FP8 KV cache &&
#: paged context FMHA)``; the same line in the stored versions before and after SageAttention was added to it).
#: The ``nvfp4`` preset already states FP8 attention math; a per-tensor FP8 checkpoint (``fp8-tensor``: Llama-3.3-70B
#: FP8 on TensorRT-LLM) gets it here. Block-scaled FP8 (DeepSeek's MLA, Qwen3's) is left as its preset states.
FP8_CONTEXT_FMHA = {"trtllm": ("fp8_e4m3",)}


def with_row_attention_math(dep: Deployment, backend: str) -> tuple[Deployment, str]:
    """(deployment, note): ``dep`` with FP8 attention math where its engine runs its context attention in FP8 for
    the deployment's attention projection format (:data:`FP8_CONTEXT_FMHA`); ``dep`` and "" otherwise.

    >>> d, note = with_row_attention_math(Deployment(get_precision("fp8-tensor"), Pool(Layout(tp=8))), "trtllm")
    >>> d.precision.attention_compute, d.precision.name
    ('fp8', 'fp8-tensor,attn=fp8')
    >>> [with_row_attention_math(Deployment(get_precision(p), Pool(Layout(tp=8))), e)[1]
    ...  for p, e in (("fp8-tensor", "vllm"), ("fp8", "trtllm"))]
    ['', '']
    """
    prec = dep.precision
    if prec.attention_compute == "fp8" or prec.modules["attention"].weight.name not in FP8_CONTEXT_FMHA.get(
        backend, ()
    ):
        return dep, ""
    return replace(dep, precision=prec.with_options(attention="fp8")), (
        f"attention math FP8: {backend} runs its context FMHA in E4M3 for an FP8 per-tensor o_proj "
        "(fit/aic_rows.FP8_CONTEXT_FMHA)"
    )


#: (engine, catalog system, catalog model, catalog precision) -> the first run date (and the script) of the InferenceX
#: launch script that passes vLLM's ``--compilation_config.pass_config.fuse_allreduce_rms true`` (the all-reduce +
#: add + RMSNorm fusion, cost/allreduce_rms.py), read from each script's git history in SemiAnalysisAI/InferenceX: every
#: version of these scripts passes it, from the first; no other vLLM single-node script does before 2026-06 (the
#: MiniMax-M2.5, H100/H200 gpt-oss and Llama ones of the sampled dates do not). The GB200 Kimi K2.5 disaggregated rows
#: (vLLM 0.18.0, 2026-04-07) ran recipes not in the repository at that date (its GB200 Kimi vLLM recipes, all with the
#: flag, arrive with PR #1862, 2026-06-21, on v0.21.0): not flagged.
ROW_ALLREDUCE_RMS_FUSION = {
    ("vllm", "b200", "kimi-k2.5", "int4"): ("2026-02-23", "kimik2.5_int4_b200.sh @eb02101ef (PR #735)"),
    ("vllm", "b200", "kimi-k2.5", "fp4"): ("2026-03-11", "kimik2.5_fp4_b200.sh @a58dedd5a (PR #862)"),
    ("vllm", "h200", "kimi-k2.5", "int4"): ("2026-03-01", "kimik2.5_int4_h200.sh @70072ef5b (PR #839, relanded #847)"),
    # the 2026-04-03 rows are PR #1056's sweep, before its merge (a35e53694, 2026-04-17): its script assumed
    ("vllm", "b300", "kimi-k2.5", "fp4"): ("2026-04-03", "kimik2.5_fp4_b300.sh @a35e53694 (PR #1056)"),
    ("vllm", "b200", "gpt-oss-120b", "mxfp4"): (
        "2025-09-21",
        "gptoss_fp4_b200_docker.sh @27f29acbe (PR #35), now gptoss_fp4_b200.sh",
    ),
}


def row_allreduce_rms_fusion(
    backend: str, system: str, model: str, precision: str, date: str, client: str
) -> tuple[bool, str]:
    """(fused, note): whether an aiconfigurator row exported from InferenceX (``client`` inferencex-db) ran a
    launch script that sets vLLM's ``fuse_allreduce_rms`` (:data:`ROW_ALLREDUCE_RMS_FUSION`, from the script's
    first date on).

    >>> row_allreduce_rms_fusion("vllm", "b200", "kimi-k2.5", "fp4", "2026-03-27", "inferencex-db")[0]
    True
    >>> [row_allreduce_rms_fusion("vllm", "b200", "kimi-k2.5", "fp4", d, c)[0]
    ...  for d, c in (("2026-03-10", "inferencex-db"), ("2026-03-27", "aiconfigurator"))]
    [False, False]
    """
    entry = ROW_ALLREDUCE_RMS_FUSION.get((backend, system, model, precision))
    if entry is None or client != "inferencex-db" or not date or date < entry[0]:
        return False, ""
    return True, (
        f"all-reduce + RMSNorm fused (vLLM pass_config.fuse_allreduce_rms): InferenceX {entry[1]} "
        "(fit/aic_rows.ROW_ALLREDUCE_RMS_FUSION)"
    )
