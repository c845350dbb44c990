"""aiconfigurator-core's end-to-end rows (``silicon_sample.csv``) as measured points.

Read through the installed ``aiconfigurator-core`` package (the ``[calibrate]`` extra), or from a frame
in its format. Each row is ``matched`` with the deployment its fields name (aggregated layouts as run:
fit/aic_layout.py; disaggregated rows need their worker counts, and so do the GB200 multi-node runs an
InferenceX export stores as aggregated: fit/aic_layout.multinode_total_gpu_run), at the concurrency its id encodes;
one point per measurement (repeated copies skipped: fit/aic_duplicates.py); rows of an InferenceX
MTP sweep run its MTP, and its attention-DP rows its launch script's context balancing and running cap
(fit/aic_sweeps.py), and its KV-cache dtype and MoE backend where the sweep's script sets them (else the MoE
backend its engine runs the row's expert format on by default: :func:`with_row_moe_backend`; vLLM's block-FP8
experts on Hopper by release: deploy/vllm_fp8_moe.py). Each row
carries the benchmark client that timed it (:func:`aic_client`: a row exported from InferenceX's results
is InferenceX's run, with its length range, mean TTFT and, aggregated, the engine limits of its InferenceX
launch recipe where data/engines.toml has one: :func:`with_recipe_limits`; disaggregated, the decode
max_batch_size of the srt-slurm recipe that ran its layout and load: fit/aic_decode_caps.py). Called through
fit/validate.load_aiconfigurator.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pandas as pd

from jalapeno.deploy.checkpoints import released_precisions
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.aic_decode_caps import with_searched_decode_cap
from jalapeno.fit.aic_duplicates import drop_repeated_runs
from jalapeno.fit.aic_layout import aic_agg_layout, harness_agg_instances, multinode_total_gpu_run
from jalapeno.fit.aic_moe_exchange import with_prefill_moe_exchange
from jalapeno.fit.aic_sgl_recv import with_decode_recv_interval
from jalapeno.fit.skipped import with_systems
from jalapeno.fit.aic_sweep_layouts import (with_sweep_config_layouts, with_sweep_dp_attention, with_sweep_dp_dispatch,
                                            with_sweep_expert_parallel)
from jalapeno.fit.aic_sweep_launch import (with_sweep_batch_wait, with_sweep_kernels, with_sweep_launch,
                                           with_sweep_limits, with_sweep_mtp, with_sweep_token_limit)
from jalapeno.fit.aic_sweeps import measured_date, release_stated, row_release, sweep_of
from jalapeno.fit.trt_prompt_graphs import with_prompt_graphs
from jalapeno.fit.validate import CHAIN_ACCEPTANCE, VALIDATION_MTP, MeasuredPoint
from jalapeno.deploy.vllm_fp8_moe import with_vllm_fp8_moe_backend
from jalapeno.specs.engine_versions import version_key
from jalapeno.specs.formats import get_precision

AIC_SYSTEMS = {"h100_sxm": "h100", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300",
               "gb200": "gb200-nvl72", "gb300": "gb300-nvl72"}
AIC_MODELS = {"deepseek-ai/DeepSeek-R1": "deepseek-r1", "deepseek-ai/DeepSeek-V3": "deepseek-r1",
              "openai/gpt-oss-120b": "gpt-oss-120b", "moonshotai/Kimi-K2.5": "kimi-k2.5",
              "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b", "meta-llama/Llama-3.1-70B": "llama-3.3-70b",
              "nvidia/DeepSeek-R1-NVFP4": "deepseek-r1", "nvidia/DeepSeek-V3.1-NVFP4": "deepseek-r1",
              "MiniMaxAI/MiniMax-M2.5": "minimax-m2.5"}


#: FP8 checkpoints whose weights are 128x128-block scaled whatever a row's ``gemm_quant_mode`` says
#: (aiconfigurator labels its DeepSeek rows ``fp8``): DeepSeek-V3/R1 (config.json ``quantization_config``
#: ``weight_block_size`` [128, 128]) and Qwen3-235B-A22B-FP8 (model card: "fine-grained fp8
#: quantization with block size of 128") and MiniMax-M2.5 (config.json ``quantization_config`` fp8,
#: ``weight_block_size`` [128, 128], as aiconfigurator-core 0.12.0 ships it in
#: model_configs/MiniMaxAI--MiniMax-M2.5_config.json)
BLOCK_FP8_CHECKPOINTS = frozenset({"deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-235B-A22B-FP8",
                                   "MiniMaxAI/MiniMax-M2.5"})


def fp8_precision(model_path: str, gemm_quant_mode: str) -> str:
    """The FP8 preset of an aiconfigurator row: ``fp8`` (128x128-block weights, ``gemm[fp8_block]``)
    for a block-scaled checkpoint or a row timed with ``fp8_block`` GEMMs, else ``fp8-tensor`` (a
    BF16 checkpoint the engine quantises per tensor: aiconfigurator's ``fp8`` GEMM mode, TensorRT-LLM's
    per-tensor FP8 GEMM).

    >>> fp8_precision("meta-llama/Llama-3.1-70B", "fp8"), fp8_precision("deepseek-ai/DeepSeek-R1", "fp8")
    ('fp8-tensor', 'fp8')
    """
    return "fp8" if gemm_quant_mode == "fp8_block" or model_path in BLOCK_FP8_CHECKPOINTS else "fp8-tensor"


#: the TensorRT-LLM release image a row's source names (``nvcr.io/nvidia/...`` or ``nvcr.io#nvidia/...``)
_TRTLLM_RELEASE_IMAGE = re.compile(r"(?:^|;)\s*image=nvcr\.io[/#]nvidia/tensorrt-llm/release:([^;\s]+)")


def trtllm_release(backend: str, source) -> str:
    """The TensorRT-LLM release a row ran when its source names a ``tensorrt-llm/release`` image with a
    release-number tag, else "" (not a TensorRT-LLM row, a Dynamo runtime image, no image, a dev tag).

    >>> trtllm_release("trtllm", "source_file=x.csv; image=nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2")
    '1.1.0rc2.post2'
    >>> trtllm_release("trtllm", "image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc2; dynamo_version=none")
    '1.2.0rc2'
    >>> [trtllm_release("trtllm", s) for s in ("image=nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1",
    ...                                        "image=nvcr.io/nvidia/tensorrt-llm/release:gpt-oss-dev", float("nan"))]
    ['', '', '']
    """
    m = _TRTLLM_RELEASE_IMAGE.search(source) if backend == "trtllm" and isinstance(source, str) else None
    if not m:
        return ""
    try:
        version_key(m.group(1))
    except SpecError:
        return ""
    return m.group(1)


#: ``silicon_data_source`` prefixes of the rows exported from InferenceX's results database, which
#: InferenceX's own serving benchmark timed (vLLM's ``benchmark_serving`` lineage: random prompts with
#: lengths uniform in [0.8 L, L], the run's MEAN TTFT). ``db-dump/<date>``: a dump of InferenceX's
#: database (its ``config_id`` / ``workflow_run_id`` are that database's ``configs`` / ``workflow_runs``
#: keys; NVIDIA's own export of the same database turns a ``benchmark_results`` row into a silicon row
#: with ``silicon_ttft_ms = metrics["mean_ttft"] * 1000`` and replays it with ``random_range_ratio``
#: 0.8: ai-dynamo/aisimulate scripts/e2e_accuracy/run_e2e_accuracy.py @04f9b1bb, which names the dumps
#: ``db-dump__<date>``, scripts/e2e_accuracy/source/README.md @5a89d05a). ``source_file=2026-03-25.csv``,
#: ``source_file=2026-04-06.csv``: exports of InferenceX sweeps (their ``measured=`` times are the
#: InferenceX commits that triggered each sweep: data/validation/aic_sweeps.toml).
INFERENCEX_EXPORTS = ("db-dump/", "source_file=2026-03-25.csv", "source_file=2026-04-06.csv")


def aic_client(source) -> str:
    """The benchmark client that timed an aiconfigurator row, from its ``silicon_data_source``:
    ``inferencex-db`` for a row exported from InferenceX's results (:data:`INFERENCEX_EXPORTS`: its
    serving benchmark, InferenceX's length range, mean TTFT), else ``aiconfigurator`` (NVIDIA's own
    gap-analysis runs through a Dynamo front end, timed by its AIPerf / genai-perf client with fixed
    lengths: fit/stack_front_ends.CLIENT_SOURCES).

    >>> [aic_client(s) for s in ("db-dump/2026-04-27; config_id=733", "source_file=2026-04-06.csv; model=DeepSeek-R1",
    ...                          "source_file=/Users/x/aic-auto-gap-analysis/data/h100_sxm/vllm/0.12.0/q.csv",
    ...                          "source_file=kimi-k2.5-gap-analysis.csv", float("nan"))]
    ['inferencex-db', 'inferencex-db', 'aiconfigurator', 'aiconfigurator', 'aiconfigurator']
    """
    text = source.strip() if isinstance(source, str) else ""
    return "inferencex-db" if text.startswith(INFERENCEX_EXPORTS) else "aiconfigurator"


def row_precision(model: str, precision: str, model_path: str = "", gemm_quant_mode: str = "fp8") -> str:
    """The precision preset a row of ``model`` at aiconfigurator ``precision`` ran (an FP8 row's
    scale granularity from its checkpoint ``model_path`` and ``gemm_quant_mode``: :func:`fp8_precision`).

    gpt-oss ships MXFP4 experts whatever the row says; Kimi K2.5 runs as its INT4 release or as an
    NVFP4 requantisation (the row's precision tells which). An FP4 row of a model whose released FP4
    checkpoint quantises every linear layer (``nvfp4`` in data/engines.toml ``[checkpoints]``, no ``fp4``:
    nvidia/Llama-3.3-70B-Instruct-FP4, whose rows give ``gemm_quant_mode`` nvfp4) runs that checkpoint;
    the ``fp4`` preset is defined by routed experts, which a dense model lacks (specs/formats.check_precision
    refused those rows, so none was predicted).

    >>> [row_precision(m, p) for m, p in (("llama-3.3-70b", "fp4"), ("deepseek-r1", "fp4"), ("kimi-k2.5", "fp4"),
    ...                                   ("gpt-oss-120b", "fp8"))]
    ['nvfp4', 'fp4', 'fp4', 'mxfp4']
    >>> row_precision("llama-3.3-70b", "fp8", "meta-llama/Llama-3.1-70B"), row_precision("deepseek-r1", "fp8", "deepseek-ai/DeepSeek-R1")
    ('fp8-tensor', 'fp8')
    """
    if model == "gpt-oss-120b":
        return "mxfp4"
    prec = {"fp4": "fp4", "bf16": "bf16", "int4": "int4"}.get(precision) or fp8_precision(model_path, gemm_quant_mode)
    released = released_precisions(model, prec)
    return "nvfp4" if prec == "fp4" and "fp4" not in released and "nvfp4" in released else prec


#: InferenceX's ``framework`` name of each aiconfigurator backend (data/engines.toml recipe engines)
IX_FRAMEWORK = {"sglang": "sglang", "trtllm": "trt", "vllm": "vllm"}


def with_recipe_limits(dep, system: str, model: str, backend: str, precision: str, isl: int, osl: int,
                       concurrency: float):
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
    kw, why = launch_limits(system, model, IX_FRAMEWORK[backend], precision, dep.decode.layout.tp, isl, osl,
                            concurrency, mtp=dep.mtp is not None)
    if not kw:
        return dep, ""
    cap = kw.get("max_running")
    if cap is not None and concurrency > cap:
        dropped = {k: kw.pop(k) for k in BEYOND_CAP_DROPS if k in kw}
        dropped.pop("cuda_graph_batch_sizes", None)  # named by its ceiling
        why += (f"; its {', '.join(f'{k} {v}' for k, v in dropped.items())} not applied: concurrency {concurrency:g} "
                "is above the cap the script sets as its sweep's maximum (fit/aic_rows.with_recipe_limits)")
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
    return replace(dep, budget_per="rank"), (f"prefill budget {dep.token_budget} tokens per attention-DP rank ({backend} "
                                             "runs a scheduler per rank: fit/aic_rows.RANK_BUDGET_BACKENDS)")


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


def with_row_moe_backend(dep: Deployment, backend: str, moe_quant_mode: str,
                         system: str | None = None) -> tuple[Deployment, str]:
    """(deployment, note): the pools of a row with no MoE backend of their own (none from a sweep's launch
    script) given the one their engine runs the row's expert format on by default on catalog system
    ``system`` (:data:`ROW_MOE_BACKENDS`, :data:`ROW_MOE_BACKEND_SYSTEMS`; priced by cost/pricer.with_moe_backend
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
    return dep, (f"MoE backend {name}: {backend} runs {moe_quant_mode} experts on it by default "
                 "(fit/aic_rows.ROW_MOE_BACKENDS)")


#: (engine, catalog system) -> the attention backend that engine picks there for a GQA (non-MLA) model, where
#: data/attention_backends.toml has its figures: vLLM tries FLASH_ATTN first on every CUDA chip but compute
#: capability 10.x (vllm/platforms/cuda.py _get_backend_priorities), FlashAttention 3 on SM90 (H100, H200);
#: aiconfigurator's vLLM collector, which lets vLLM select, records that kernel there (vllm_flash_attn_fa3)
ROW_ATTENTION_BACKENDS = {("vllm", "h100"): "flash_attn", ("vllm", "h200"): "flash_attn"}


def with_row_attention_backend(dep: Deployment, backend: str, system: str) -> Deployment:
    """``dep`` with the pools that name no attention backend of their own given the one their engine picks on
    ``system`` by default (:data:`ROW_ATTENTION_BACKENDS`; priced by cost/pricer.with_attention_backend where
    the system and the KV format have figures, MLA decode untouched); ``dep`` otherwise.

    >>> dep = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    >>> [with_row_attention_backend(dep, e, s).decode.attention_backend
    ...  for e, s in (("vllm", "h200"), ("vllm", "b200"), ("trtllm", "h200"))]
    ['flash_attn', None, None]
    """
    name = ROW_ATTENTION_BACKENDS.get((backend, system))
    if name is None or dep.decode.attention_backend is not None:
        return dep
    pre = (None if dep.prefill is None or dep.prefill.attention_backend is not None
           else replace(dep.prefill, attention_backend=name))
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
    if prec.attention_compute == "fp8" or prec.modules["attention"].weight.name not in FP8_CONTEXT_FMHA.get(backend, ()):
        return dep, ""
    return replace(dep, precision=prec.with_options(attention="fp8")), (
        f"attention math FP8: {backend} runs its context FMHA in E4M3 for an FP8 per-tensor o_proj "
        "(fit/aic_rows.FP8_CONTEXT_FMHA)")


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
    ("vllm", "b200", "gpt-oss-120b", "mxfp4"): ("2025-09-21", "gptoss_fp4_b200_docker.sh @27f29acbe (PR #35), "
                                                              "now gptoss_fp4_b200.sh"),
}


def row_allreduce_rms_fusion(backend: str, system: str, model: str, precision: str, date: str,
                             client: str) -> tuple[bool, str]:
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
    return True, (f"all-reduce + RMSNorm fused (vLLM pass_config.fuse_allreduce_rms): InferenceX {entry[1]} "
                  "(fit/aic_rows.ROW_ALLREDUCE_RMS_FUSION)")


def load_aiconfigurator(frame: pd.DataFrame | None = None) -> tuple[list[MeasuredPoint], list[tuple[str, str]]]:
    """Measured points of aiconfigurator's ``silicon_sample.csv`` (or a frame in its format), one per
    measurement (repeats skipped: fit/aic_duplicates.py); MTP as the InferenceX sweep ran it (fit/aic_sweeps.py).

    Raises:
        SpecError: the package is not installed and no frame was given.
    """
    if frame is None:
        try:
            from importlib.resources import files

            frame = pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv")
        except ModuleNotFoundError:
            raise SpecError("aiconfigurator", "the aiconfigurator-core package is not installed",
                            'pip install -e ".[calibrate]"') from None
    points, skipped, system_of = [], [], {}
    for r in frame.itertuples(index=False):
        rid = f"aic:{r.id}"
        system, model = AIC_SYSTEMS.get(r.system), AIC_MODELS.get(r.model_path)
        system_of[rid] = system  # each skip with its system (fit/skipped.py: validate --systems lists only its own)
        if not system or not model:
            skipped.append((rid, f"{r.system}/{r.model_path} not in the catalog"))
            continue
        prec = row_precision(model, str(r.precision), str(r.model_path), str(getattr(r, "gemm_quant_mode", "fp8")))

        def num(v, default=None):  # a blank or a 0 is unset: the sample writes 0 for a parallel size a run did not
            # set (moe_tp/moe_ep of the vLLM Qwen3 disaggregated H100 rows), which was priced as EP0 and refused
            return default if v is None or (isinstance(v, float) and math.isnan(v)) or v == 0 else int(v)

        try:
            notes = []
            if r.mode == "agg":
                why = multinode_total_gpu_run(system, aic_client(getattr(r, "silicon_data_source", None)),
                                              measured_date(getattr(r, "silicon_data_source", "")),
                                              num(r.attention_dp_size), num(r.moe_ep_size))
                if why:
                    skipped.append((rid, why))
                    continue
                tp, dp, ep, note = aic_agg_layout(num(r.tp_size), num(r.attention_dp_size), num(r.moe_tp_size),
                                                  num(r.moe_ep_size), str(r.id))
                notes += [note] if note else []
                dep = Deployment(get_precision(prec), Pool(Layout(tp=tp, dp=dp, ep=ep, pp=num(r.pp_size, 1))))
                conc = float(r.batch_size)
            else:
                if num(r.decode_num_workers) is None or num(r.prefill_num_workers) is None:
                    # the batch each decode worker runs (hence TPOT) depends on how many there were
                    skipped.append((rid, "disaggregated row without prefill/decode worker counts"))
                    continue
                pre = Pool(Layout(tp=num(r.prefill_tp_size), dp=num(r.prefill_attention_dp_size, 1),
                                  ep=num(r.prefill_moe_ep_size, 1)), num(r.prefill_num_workers))
                dec = Pool(Layout(tp=num(r.decode_tp_size), dp=num(r.decode_attention_dp_size, 1),
                                  ep=num(r.decode_moe_ep_size, 1)), num(r.decode_num_workers))
                dep = Deployment(get_precision(prec), dec, prefill=pre)
                bs = num(r.decode_batch_size)
                conc = float(bs * dec.workers) if bs else float("nan")
        except (TypeError, ValueError):
            skipped.append((rid, "deployment fields missing"))
            continue
        m_c = re.search(r"_c(\d+)_", str(r.id))
        if m_c:  # the run's concurrency, as encoded in the row id
            conc = float(m_c.group(1))
        if not conc or math.isnan(conc):
            skipped.append((rid, "no concurrency (neither a batch size nor _c<N>_ in the id)"))
            continue
        if dep.prefill is None:
            inst, why = harness_agg_instances(str(getattr(r, "silicon_data_source", "")), conc, r.batch_size)
            if inst > 1:
                dep = replace(dep, decode=replace(dep.decode, workers=inst))
                notes.append(why)
        meas = {"ttft_s": float(r.silicon_ttft_ms) / 1e3, "tpot_s": float(r.silicon_tpot_ms) / 1e3,
                "throughput_per_chip": None, "interactivity": 1e3 / float(r.silicon_tpot_ms)}
        fw = f"{r.backend} {row_release(r.backend_version)}"
        if not release_stated(fw):
            notes.append(f"release unstated (backend_version blank): '{fw}', priced at its profile's newest behaviour, "
                         "not a launch recipe's release (fit/aic_sweeps.UNSTATED_RELEASE)")
        sweep = sweep_of(system, model, fw, prec, getattr(r, "silicon_data_source", ""))
        dep, moe_ep = with_sweep_expert_parallel(dep, sweep)
        notes += [moe_ep] if moe_ep else []
        dep, adp = with_sweep_dp_attention(dep, sweep, int(r.isl), int(r.osl), conc)
        notes += [adp] if adp else []
        dep, layouts = with_sweep_config_layouts(dep, sweep, int(r.isl), int(r.osl), conc)
        notes += [layouts] if layouts else []
        dep, dispatch = with_sweep_dp_dispatch(dep, sweep)
        notes += [dispatch] if dispatch else []
        dep, spec, note = with_sweep_mtp(dep, sweep, VALIDATION_MTP.acceptance, CHAIN_ACCEPTANCE)
        dep, launch = with_sweep_launch(dep, sweep, conc)
        notes += [launch] if launch else []
        dep, kernels = with_sweep_kernels(dep, sweep)
        notes += [kernels] if kernels else []
        dep, kernels = with_row_moe_backend(dep, str(r.backend), str(getattr(r, "moe_quant_mode", "")), system)
        notes += [kernels] if kernels else []
        dep, kernels = with_vllm_fp8_moe_backend(dep, str(r.backend), row_release(r.backend_version), system)
        notes += [kernels] if kernels else []
        dep = with_row_attention_backend(dep, str(r.backend), system)
        dep, math_note = with_row_attention_math(dep, str(r.backend))
        notes += [math_note] if math_note else []
        dep, per_rank = with_rank_budget(dep, str(r.backend))
        notes += [per_rank] if per_rank else []
        dep, waiting = with_sweep_batch_wait(dep, sweep, int(r.isl), int(r.osl), conc)
        notes += [waiting] if waiting else []
        dep, limits = with_sweep_limits(dep, sweep, int(r.isl))
        notes += [limits] if limits else []
        dep, limits = with_sweep_token_limit(dep, sweep, int(r.isl), conc)
        notes += [limits] if limits else []
        dep, recv = with_decode_recv_interval(dep, str(r.backend), system, prec, int(r.isl), int(r.osl),
                                              row_release(r.backend_version))
        notes += [recv] if recv else []
        dep, exchange = with_prefill_moe_exchange(dep, str(r.backend), system, prec, row_release(r.backend_version))
        notes += [exchange] if exchange else []
        dep, graphs = with_prompt_graphs(dep, fw, model, prec, (fw.split() + [""])[1], int(r.isl), int(r.osl), conc)
        notes += [graphs] if graphs else []
        client = aic_client(getattr(r, "silicon_data_source", None))
        if client == "inferencex-db" and dep.prefill is None:
            dep, why = with_recipe_limits(dep, system, model, str(r.backend), prec, int(r.isl), int(r.osl), conc)
            notes += [why] if why else []
        elif client == "inferencex-db":  # disaggregated: the decode max_batch_size of the recipe that ran it
            dep, why = with_searched_decode_cap(dep, str(r.backend), system, model, prec, int(r.isl), int(r.osl), conc,
                                                measured_date(str(getattr(r, "silicon_data_source", ""))))
            notes += [why] if why else []
        fused, why = row_allreduce_rms_fusion(str(r.backend), system, model, prec,
                                              measured_date(str(getattr(r, "silicon_data_source", ""))), client)
        notes += [why] if why else []
        points.append(MeasuredPoint("aiconfigurator", rid, system, model, prec, fw, int(r.isl), int(r.osl), conc, dep,
                                    meas, "matched", client == "aiconfigurator", notes + [note] * bool(note), spec=spec,
                                    engine_version=trtllm_release(str(r.backend),
                                                                  getattr(r, "silicon_data_source", None)),
                                    client=client, allreduce_rms_fusion=fused))
    points, repeats = drop_repeated_runs(points)
    return points, with_systems(skipped + repeats, system_of)
