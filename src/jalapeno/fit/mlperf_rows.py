"""What a published MLPerf row names, read onto the catalog: its system, weight format, engine and harness.

A ``published_points.csv`` row (fit/mlperf.py) names its hardware, weight format, framework and result id as the
submitter wrote them. This module reads each onto the catalog (:data:`MLPERF_HARDWARE`, :data:`_PRECISION`,
:data:`MLPERF_ENGINE_OF`, :data:`MLPERF_TRTLLM_RELEASE`), says which serving modes its harness ran
(:func:`serving_of`) and what its harness adds per step (:func:`_harness_step_s`), keeps out the results whose model
is not the catalog's (:data:`MLPERF_SKIPPED`), and refuses a malformed row (:func:`_check_result_fields`). Split out of
fit/mlperf.py (round 48) for the module budget; the public names are re-exported there.
"""

from __future__ import annotations

import math
import re

from jalapeno.errors import SpecError
from jalapeno.fit.mlperf_engines import DSR1_HARNESS_STEP_S
from jalapeno.fit.mlperf_rules import MLPERF_SCENARIOS

MLPERF_HARDWARE = {
    "B200-SXM-180GB": "b200",
    "GB200 NVL72": "gb200-nvl72",
    "H200-SXM-141GB": "h200",
    "MI300X 192GB": "mi300x",
    "MI325X 256GB": "mi325x",
    "MI355X 288GB": "mi355x",
}

#: The rows' ``framework`` as the engine names the stack profiles list (data/stacks.toml ``engines``):
#: priced with that engine's profile (the trtllm one; AMD's vLLM-based harness: vllm-rocm). Before,
#: neither string named an engine and every row took the default profile.
MLPERF_ENGINE_OF = {"TensorRT-LLM": "trt", "AMD ROCm stack (vLLM-based per v5.1 code)": "vllm"}
#: The TensorRT-LLM release the v5.1 TensorRT-LLM rows are priced at: NVIDIA's v5.1 code builds
#: TensorRT-LLM at commit 18c0333e96ea (closed/NVIDIA/Makefile.build ``TRTLLM_HASH``, inference_results_v5.1
#: @965182b, published 2025-09-09), older than 1.2.0rc2 (2025-11-07), the newest release it can
#: behave like; so every data/stacks.toml version rule ``before = "1.2.0rc3"`` applies (the MoE
#: exchange all-gathers at EP <= top-k). An upper bound, not the commit's own release number.
MLPERF_TRTLLM_RELEASE = "1.2.0rc2"

#: Frameworks whose MLPerf v5.1 harness serves aggregated engines only (each instance prefills and decodes its own
#: requests), so a frontier mapping picks among aggregated deployments (MeasuredPoint.serving ``agg``):
#: NVIDIA's TensorRT-LLM harness, which the NVIDIA, Google and Nebius configs run (inference_results_v5.1 @965182b,
#: closed/NVIDIA/code/llmlib/config.py: one ``trtllm-serve`` endpoint per instance of ``tensor_parallelism`` GPUs,
#: whose extra config carries no disaggregation fields; closed/*/configs/*/*/{llama2-70b,llama3_1-405b,deepseek-r1}.py
#: set none), and AMD's vLLM harness (closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/*_mi3*.yaml:
#: one vLLM engine per GPU, ``tensor_parallel_size: 1``). Rows whose id names another harness (the ``Dynamo``
#: Llama-3.1-405B row: closed/NVIDIA/code/llama3_1-405b/tensorrt/run_disagg_405B, disaggregated) keep every mode.
MLPERF_AGGREGATED = frozenset(MLPERF_ENGINE_OF)


def serving_of(key: str, framework: str) -> str:
    """The serving modes a frontier mapping of result ``key`` (run by ``framework``, the row's string) may pick:
    ``agg`` where its harness serves aggregated engines only (:data:`MLPERF_AGGREGATED`), else ``both``.

    >>> serving_of("mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Server", "TensorRT-LLM")
    'agg'
    >>> serving_of("mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_Dynamo_llama3p1-405b_Interactive", "TensorRT-LLM")
    'both'
    """
    return "agg" if framework in MLPERF_AGGREGATED and "_Dynamo_" not in key else "both"


#: Benchmarks left out, with the reason.
MLPERF_SKIPPED = {
    "llama3_1-405b_pruned": "open-division pruned model: not the catalog's Llama-3.1-405B",
    "llama3_1-405b_finetuned": "open-division fine-tuned variant: not the catalog's Llama-3.1-405B weights",
}
#: (model, the row's weight format) → precision preset. The Llama FP8 checkpoints are per-tensor
#: (``fp8-tensor``, priced by the per-tensor FP8 GEMM): AMD's is AMD-Quark ``--quant_scheme w_fp8_a_fp8``
#: (closed/AMD/setup/dataset_and_model/quantize_llama2_70b.sh), NVIDIA's (which the H200 TensorRT-LLM
#: submissions run) TensorRT Model Optimizer at Precision.FP8 (closed/NVIDIA/code/llama2-70b/tensorrt/
#: builder.py: ``fp8-quantized-modelopt``; ModelOpt's FP8 format scales per tensor); DeepSeek-R1's is
#: its release checkpoint, 128x128-block (``fp8``; config.json ``weight_block_size``).
_PRECISION = {
    ("llama-2-70b", "weights fp8"): "fp8-tensor",
    ("llama-2-70b", "weights fp4"): "nvfp4",
    ("llama-2-70b", "weights mxfp4"): "w4a4-mxfp4",
    ("deepseek-r1", "weights fp8"): "fp8",
    ("deepseek-r1", "weights fp4"): "fp4",
    ("llama-3.1-405b", "weights fp8"): "fp8-tensor",
    ("llama-3.1-405b", "weights fp4"): "nvfp4",
}


def _result_key(rid: str) -> str:
    return re.sub(r"_(tput|TTFT_mean|TTFT_p99|TPOT_mean|TPOT_p99)$", "", rid)


def _harness_step_s(key: str, engine: str, model: str, system: str, llama_on: bool | None = None) -> float:
    """Seconds a step the row's harness adds (MeasuredPoint.harness_step_s): DeepSeek-R1 TensorRT-LLM rows
    :data:`DSR1_HARNESS_STEP_S`; the Llama rows of the TensorRT-engine harness (``_TRT_`` in the result id: not the
    Dynamo row) their system's term, fit/mlperf_engines.llama_trt_harness_step_s (0 for a system without one) where ``llama_on``
    (None: fit/mlperf_engines.LLAMA_TRT_HARNESS_ON, read at the call, so a test or what-if that sets the switch where
    it lives moves the rows; a copy imported here would not); else 0."""
    from jalapeno.fit import mlperf_engines

    if engine != "trt":
        return 0.0
    if model == "deepseek-r1":
        return DSR1_HARNESS_STEP_S
    on = mlperf_engines.LLAMA_TRT_HARNESS_ON if llama_on is None else llama_on
    llama_trt = on and model.startswith("llama") and "_TRT_" in key
    return mlperf_engines.llama_trt_harness_step_s().get(system, 0.0) if llama_trt else 0.0


def _check_result_fields(r: dict, notes: str, where: str) -> None:
    """Refuse a result whose scenario, chip count or run-log output mean is malformed (each was priced as something
    else: a misspelt scenario as a Server run without a TPOT, 2.5 chips as 2, a mean of 0 tokens deep in the workload).

    Raises:
        SpecError: naming ``where``'s column and the fix.
    """
    from jalapeno.errors import choice_hint

    scenario = r["concurrency_or_batch"].strip()
    if scenario not in MLPERF_SCENARIOS:
        raise SpecError(
            f"{where} concurrency_or_batch",
            f"scenario {scenario!r} is not one of "
            f"{', '.join(MLPERF_SCENARIOS)}{choice_hint(scenario, MLPERF_SCENARIOS)}",
            "write the MLPerf scenario the result ran, spelt as LoadGen spells it",
        )
    chips = _num(r["num_chips"])
    if chips is not None and not chips.is_integer():
        raise SpecError(
            f"{where} num_chips",
            f"{r['num_chips']!r} is not a whole number of chips",
            "give the system's accelerator count, e.g. 8",
        )
    m = re.search(r"mean output tok/sample ~(\d+)", notes)
    if m and int(m.group(1)) < 2:
        raise SpecError(
            f"{where} notes",
            f"'mean output tok/sample ~{m.group(1)}' is below 2 tokens",
            "give the run's mean output tokens per sample from its log (e.g. ~301), or drop the phrase "
            "to take the reference run's",
        )


def _num(s) -> float | None:
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None
