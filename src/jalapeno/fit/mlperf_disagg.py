"""The disaggregated MLPerf v5.1 submission: its declared prefill and decode pools as a deployment.

NVIDIA's GB200-NVL72 x72 Dynamo Llama-3.1-405B Interactive row ran disaggregated (Dynamo + TensorRT-LLM's PyTorch
backend): :class:`SubmittedDisagg` holds its pools as its scripts declare them (:data:`MLPERF_DISAGG_ENGINES`) and
:func:`submitted_disagg_deployment` builds the deployment fit/mlperf.load_mlperf prices it at (mapping
``matched@limits``, fit/latency_limits.engine_within_limits; since round 37). The aggregated engines are
fit/mlperf_engines.py's. Split out of fit/mlperf_engines.py (round 48) for the module budget; re-exported there.
"""

from __future__ import annotations

from dataclasses import dataclass

from jalapeno.errors import SpecError


@dataclass(frozen=True)
class SubmittedDisagg:
    """A submission's disaggregated deployment (Dynamo + TensorRT-LLM's PyTorch backend): ``prefill_workers``
    prefill instances of TP ``prefill_tp`` with ``prefill_tokens`` (``max_num_tokens``, chunked prefill) per step,
    and ``decode_workers`` decode instances of TP ``decode_tp`` holding at most ``decode_batch``
    (``max_batch_size``) requests each, decode steps replayed as CUDA graphs padded to ``graph_sizes``
    (``cuda_graph_batch_sizes`` with ``cuda_graph_padding_enabled``; None: not read)."""

    prefill_tp: int
    prefill_workers: int
    prefill_tokens: int
    decode_tp: int
    decode_workers: int
    decode_batch: int
    source: str
    graph_sizes: tuple[int, ...] | None = None

    @property
    def chips(self) -> int:
        """GPUs of the whole deployment (both pools)."""
        return self.prefill_tp * self.prefill_workers + self.decode_tp * self.decode_workers


def submitted_disagg_deployment(engine: SubmittedDisagg, precision: str, chips: int):
    """The disaggregated :class:`~jalapeno.deploy.deployment.Deployment` of a :class:`SubmittedDisagg` and its
    concurrency with every decode slot filled (decode_batch x decode_workers). The decode engine's own
    ``max_num_tokens`` is not carried: one ``max_tokens_per_step`` would cap the prefill pool's budget too, and the
    declared one equals the decode ``max_batch_size`` (one token per request per step without MTP).

    >>> dep, conc = submitted_disagg_deployment(MLPERF_DISAGG_ENGINES[
    ...     "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_Dynamo_llama3p1-405b_Interactive"], "nvfp4", 72)
    >>> dep.kind, dep.prefill.workers, dep.decode.workers, dep.token_budget, dep.max_running, conc
    ('disagg', 14, 4, 4096, 512, 2048.0)

    Raises:
        SpecError: ``chips`` not the deployment's GPU count.
    """
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.formats import get_precision

    if chips != engine.chips:
        raise SpecError(
            "num_chips",
            f"{chips} GPUs, but the declared deployment has {engine.chips} "
            f"({engine.prefill_workers} x TP{engine.prefill_tp} prefill + {engine.decode_workers} x "
            f"TP{engine.decode_tp} decode)",
            "give the submission's GPU count",
        )
    dep = Deployment(
        get_precision(precision),
        Pool(Layout(tp=engine.decode_tp), workers=engine.decode_workers),
        prefill=Pool(Layout(tp=engine.prefill_tp), workers=engine.prefill_workers),
        token_budget=engine.prefill_tokens,
        max_running=engine.decode_batch,
        cuda_graph_batch_sizes=engine.graph_sizes,
        cuda_graph_pad_routing="one_token",
    )
    return dep, float(engine.decode_batch * engine.decode_workers)


_DYN405 = "inference_results_v5.1 @965182b closed/NVIDIA/scripts/slurm_llm/dynamo/trtllm/llama3_1-405b/disagg/"
#: Server / Interactive results run disaggregated whose deployment is read from the submission (mapping
#: ``matched@limits`` at it, fit/latency_limits.engine_within_limits, as :data:`MLPERF_LIMIT_ENGINES`). NVIDIA's
#: GB200-NVL72 x72 Dynamo Llama-3.1-405B Interactive (open division; open/NVIDIA/code/llama3.1-405b/tensorrt/
#: README.md points to the closed guide): ``disagg_18node.sbatch`` and its README, "14 Prefill Workers, each TP4" +
#: "4 Decode Workers, each TP4" (``NUM_PREFILL_WORKERS=14``, ``NUM_DECODE_WORKERS=4``, ``tensor_parallel_size: 4``
#: in both engine configs; 72 GPUs; the README's "Total GPU Usage" line, "2 generation servers x 8 GPUs", contradicts
#: its configs and is not used); prefill ``max_num_tokens: 4096`` with ``enable_chunked_prefill``, decode
#: ``max_batch_size: 512`` and its ``cuda_graph_batch_sizes`` with padding. Not modelled: the prefill engine's
#: ``max_batch_size`` 128 (a 4,096-token step holds at most a few of the 9,429-token mean prompts), Dynamo's
#: ``prefill_first`` strategy and the decode engine's overlap scheduler.
MLPERF_DISAGG_ENGINES = {
    "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_Dynamo_llama3p1-405b_Interactive": SubmittedDisagg(
        4,
        14,
        4096,
        4,
        4,
        512,
        _DYN405 + "{README.md,disagg_18node.sbatch}",
        graph_sizes=(1, 2, 4, 8, 16, 32, 64, 96, 128, 150, 180, 192, 224, 256, 288, 352, 416, 480, 512),
    ),
}
