"""One MLPerf submission's declared engine (:class:`SubmittedEngine`: layout, batch and token limits, KV share,
CUDA-graph sizes, attention-DP balancing, eager prompt calls, scheduler steps, prompt scheduling) and the
:class:`~jalapeno.deploy.deployment.Deployment` it runs on a number of GPUs (:func:`submitted_deployment`). The
submissions' engines themselves, each with its config's source, are the tables of fit/mlperf_engines.py.

Split from fit/mlperf_engines.py (round 50, module budget), which re-exports both names.
"""

from __future__ import annotations

from dataclasses import dataclass

from jalapeno.errors import SpecError


@dataclass(frozen=True)
class SubmittedEngine:
    """A submission's TensorRT-LLM engine, from its config in mlcommons/inference_results_v5.1 (or AMD's vLLM
    engine: TP1 per GPU, its scheduler's target decode batch and ``max_num_batched_tokens``).

    One instance spans ``tp`` x ``dp`` GPUs (``tensor_parallelism``; with ``enable_attention_dp``
    the attention runs DP ``dp`` and the MoE EP ``ep`` (``moe_expert_parallelism``), else attention
    TP ``tp``); ``gpu_batch_size`` (or the runtime ``max_batch_size`` where it is lower:
    ``batch_per_rank``) and runtime ``max_num_tokens`` (``tokens_per_step``) bound each attention
    rank (TensorRT-LLM's limits are per rank under attention DP; per instance otherwise).
    ``moe_backend``: the runtime ``moe_backend`` (lower case) of a MoE model, None for a dense one.
    Defaults: DeepSeek-R1's engine (TP8 with attention DP 8, EP 8, WIDEEP, FP8 KV cache, no
    speculative decoding).
    """

    batch_per_rank: int
    tokens_per_step: int
    source: str
    tp: int = 1
    dp: int = 8
    ep: int = 8
    moe_backend: str | None = "wideep"
    #: Offline: the run's ``samples_per_query`` (all GPUs), issued at once; its drain is priced (0: not read)
    queries: int = 0
    #: runtime ``kvcache_free_gpu_mem_frac``: the KV pool's share of the memory left after load (None: not read)
    kv_free_fraction: float | None = None
    #: runtime ``cuda_graph_batch_sizes`` with ``cuda_graph_padding_enabled`` (per attention rank): decode
    #: steps run padded to the next captured size (Deployment.cuda_graph_batch_sizes; None: not read)
    graph_sizes: tuple[int, ...] | None = None
    #: runtime ``adp_balancing_timeout_iters`` with ``adp_balancing_enable`` (attention DP): a rank holds its new
    #: prompts until every rank has one, at most this many steps (Deployment.adp_balance_timeout_iters; None: not set)
    adp_timeout_iters: int | None = None
    #: host seconds per call of a prompt-carrying step run eagerly (Deployment.eager_prompt_call_s; 0: not modelled).
    #: The DeepSeek-R1 configs run TensorRT-LLM's PyTorch backend (closed/NVIDIA/code/llmlib/config.py
    #: ``DEFAULT_RUNTIME_FLAGS`` 'trtllm_backend': 'pytorch') with no ``torch_compile_config`` (``torch_compile_enabled``
    #: None), so piecewise CUDA graphs are off and every step that carries a prompt on any attention-DP rank runs eagerly
    #: (``can_run_cuda_graph`` all-gathered): fit/trt_prompt_graphs.TRTLLM_EAGER_CALL_S, as on the aiconfigurator rows
    eager_prompt_call_s: float = 0.0
    #: vLLM V0 ``num_scheduler_steps`` (multi-step scheduling): decode runs in windows of this many steps and a
    #: sequence that ends inside one is computed to the window's end (fit/mlperf_multi_step.py); 1 = off
    scheduler_steps: int = 1
    #: how the engine schedules prompts beside decode (Deployment.prefill_steps): ``mixed`` (chunked prefill, the
    #: TensorRT-LLM configs' ``enable_chunked_context``) or ``separate`` (vLLM V0 with ``enable_chunked_prefill: False``:
    #: a step with prompts carries only prompts and the decoding sequences wait it out)
    prefill_steps: str = "mixed"

    @property
    def instance_chips(self) -> int:
        """GPUs of one instance (tp x dp)."""
        return self.tp * self.dp


def submitted_deployment(engine: SubmittedEngine, precision: str, chips: int, model=None, system=None):
    """The :class:`~jalapeno.deploy.deployment.Deployment` of a :class:`SubmittedEngine` on
    ``chips`` GPUs (chips / instance_chips instances) and the whole deployment's concurrency with
    every slot filled (batch per rank x attention ranks x instances). With ``model`` and ``system``
    (a ModelSpec and a System) and the engine's ``kv_free_fraction``, its KV pool is sized as
    TensorRT-LLM sizes it (deploy/memory_fit.free_fraction_as_memory_fraction).

    >>> from jalapeno.fit.mlperf_engines import MLPERF_LIMIT_ENGINES
    >>> dep, conc = submitted_deployment(MLPERF_LIMIT_ENGINES[
    ...     "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Server"], "fp8-tensor", 8)
    >>> dep.decode.layout.tp, dep.decode.workers, conc
    (8, 1, 64.0)

    Raises:
        SpecError: ``chips`` not a whole number of instances.
    """
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.formats import get_precision

    n = engine.instance_chips
    if chips % n:
        raise SpecError(
            "num_chips",
            f"{chips} GPUs is not a whole number of {n}-GPU instances",
            f"give the submission's GPU count ({n} per instance)",
        )
    from jalapeno.deploy.memory_fit import free_fraction_as_memory_fraction

    lay = Layout(tp=engine.tp, dp=engine.dp, ep=engine.ep)
    frac = (
        None
        if engine.kv_free_fraction is None or model is None or system is None
        else free_fraction_as_memory_fraction(
            engine.kv_free_fraction,
            model,
            system,
            lay,
            get_precision(precision),
            engine.tokens_per_step,
            engine.batch_per_rank,
        )
    )
    dep = Deployment(
        get_precision(precision),
        Pool(lay, workers=chips // n, moe_backend=engine.moe_backend),
        max_running=engine.batch_per_rank,
        max_tokens_per_step=engine.tokens_per_step,
        budget_per="rank",
        memory_fraction=frac,
        cuda_graph_batch_sizes=engine.graph_sizes,
        cuda_graph_pad_routing="one_token",  # TensorRT-LLM's dummies (deploy/graph_capture.PAD_ROUTING)
        adp_balance_timeout_iters=engine.adp_timeout_iters if engine.dp > 1 else None,
        eager_prompt_call_s=engine.eager_prompt_call_s,
        prefill_steps=engine.prefill_steps,
    )
    return dep, float(engine.batch_per_rank * engine.dp * (chips // n))
