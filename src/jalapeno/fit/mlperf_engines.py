"""The TensorRT-LLM engines the MLPerf Inference v5.1 submissions declare (their configs in
mlcommons/inference_results_v5.1 @965182b, ``closed/<submitter>/configs/<system>/<scenario>/<benchmark>.py``; and
AMD's and MangoBoost's vLLM Llama-2-70B Offline engines, ``{closed,open}/AMD/code/llama2-70b-99/harness_llm/
models/``, ``open/AMD_MangoBoost/code/llama2-70b-99/apps/mlperf/vllm_args.json``):
layout, batch and token limits, KV share, CUDA-graph sizes, attention-DP balancing and the engine-build
features that change the pricing (fused GEMM + all-reduce, FP8 context attention). fit/mlperf.py maps the
rows onto them; split from it (module budget). The engine type and the deployment it runs (``SubmittedEngine``,
``submitted_deployment``) live in fit/submitted_engine.py (round 50, module budget) and are re-exported here.
"""

from __future__ import annotations

from jalapeno.fit.mlperf_disagg import (  # noqa: F401  (the disaggregated submission, re-exported)
    MLPERF_DISAGG_ENGINES,
    SubmittedDisagg,
    submitted_disagg_deployment,
)
from jalapeno.fit.mlperf_multi_step import multi_step_spread  # noqa: F401  (re-exported)
from jalapeno.fit.trt_prompt_graphs import TRTLLM_EAGER_CALL_S
from jalapeno.fit.submitted_engine import SubmittedEngine, submitted_deployment  # noqa: F401 (re-exported, round 50)


_DSR1_CFG = "inference_results_v5.1 @965182b closed/{}/configs/{}/Offline/deepseek-r1.py"
#: The DeepSeek-R1 configs' attention-DP balancing (``adp_balancing_enable: True``; ``adp_balancing_timeout_iters``
#: 500 Offline on NVIDIA / Google B200 and HPE H200, 50 Offline on NVIDIA GB200-NVL72 x72, 9 Server on all three; the
#: lower bound ``adp_balancing_batching_wait_iters`` 10 Offline / 3 Server is not modelled: serve/queueing prices the
#: wait up to the timeout only) and their ``cuda_graph_batch_sizes`` (``cuda_graph_padding_enabled: True``): NVIDIA, Google and HPE
#: B200 / H200 Offline and Server; NVIDIA GB200-NVL72 x72 captures every power of two below 128 as well
DSR1_GRAPHS = (128, 256, 384, 512)
#: Host seconds per call of the DeepSeek-R1 engines' eager prompt-carrying steps (SubmittedEngine.eager_prompt_call_s;
#: the frontier mappings of the DeepSeek-R1 TensorRT-LLM rows use it too, fit/mlperf.py): every DeepSeek-R1 config
#: runs llmlib's PyTorch path with CUDA graphs (``harness_fields.use_graphs: True``) and no torch.compile, so a step
#: with a prompt on any rank runs eagerly. The Llama configs set ``use_graphs: False`` (every step eager; not read
#: further, not modelled here).
DSR1_EAGER_PROMPT_CALL_S = TRTLLM_EAGER_CALL_S
#: Seconds per iteration of the MLPerf llmlib harness's DeepSeek-R1 engine (TensorRT-LLM PyTorch path, attention DP 8,
#: the 2025-07 1.0 side branch of closed/NVIDIA/Makefile.build) outside what the model prices: a NAMED, FITTED
#: constant (DESIGN rule 1: an engine fixed cost only end-to-end runs reveal), added to the step's
#: ``efficiency.step_overhead_s`` of every MLPerf TensorRT-LLM DeepSeek-R1 row (fit/validate.predict_points). Fit
#: split: the four v5.1 Server runs of this engine's config family that are NOT validation rows (Dell XE9685L B200,
#: the NVIDIA B200 config unchanged; Dell XE9680L B200 and NVIDIA GB300-NVL72 x72, balancing timeout 6; GigaComputing
#: G894 B200, 768 a rank): the term whose model, at each run's own steady decode load (Little's law on its median
#: TPOT), leaves zero mean residual of the measured MEDIAN TPOT (round 42: a Server run starts on an idle engine, so
#: its early queries decode beside fewer requests and pull the mean 0.9-3.4 ms below the median, a left tail the
#: summaries show, min 20-47 ms; the model prices the steady state, whose per-query spread is ~1%). With 19.1 ms the
#: fit runs' residuals are +0.7 / -0.6 / -1.5 / +1.4 ms at 106-192 a rank (round 38 held the model to the runs' mean
#: TPOT: 17.8 ms) — the term reaches the TPOT at ~0.89x, fewer prompt stalls per token at a slower step;
#: ``python scripts/mlperf_peer_runs38.py``; data docs/data/mlperf51_peer_runs.csv, each run's
#: mlperf_log_summary.txt @965182b). Reported on the rest: the three Server rows (median residual with it +1.7 / +2.8 /
#: -3.9 ms) and the four Offline rows (509 a rank, no streaming). Which host or GPU work it is, no source read here
#: times (docs/gap_large_batch_decode.md, rounds 27-42); the Llama engines (the TensorRT engine path) do not carry it.
DSR1_HARNESS_STEP_S = 19.1e-3
#: Seconds per iteration of the MLPerf llmlib harness's Llama engines (Llama-2-70B, Llama-3.1-405B: TensorRT-LLM's
#: C++ executor running a built TensorRT engine, ``use_graphs: False`` in every v5.1 config, one micro-batch) outside
#: what the model prices, by the catalog system whose config family it is: a NAMED, FITTED constant like
#: :data:`DSR1_HARNESS_STEP_S` (round 47, mlperfint47), added to ``efficiency.step_overhead_s`` of the family's rows
#: (the ``_TRT_`` results, Offline / Server / Interactive). Fit split: the v5.1 Server / Interactive peer runs of the
#: family's configs that are NOT validation rows, each priced at the validation row's engine of its scenario (the
#: config it repeats), each (model, scenario) group weighted equally; the term leaves zero mean residual of the runs'
#: median TPOT at their own steady load (Little's law); ``python scripts/mlperf_llama_peers47.py``.
#: - ``h200`` (the Hopper FP8 engines; 14 runs: Llama-2-70B Interactive 4 / Server 8, Llama-3.1-405B Server 2):
#:   7.47 ms. Residuals without it +7.2 / +8.8 / +6.4 ms; on the validation runs (Nebius) with it -0.6 / -1.1 ms
#:   (Llama-2-70B Int / Srv), +1.5 / -0.7 (Llama-3.1-405B Int / Srv). Refitted in round 52 (mlperfint52) with
#:   serve/chunked.MIXED_STEP_ROOM_ON: the Interactive engine's 256-token ``max_num_tokens`` leaves ~149 prompt tokens
#:   beside ~107 decode rows, so its mixed steps are smaller and its group's residual +6.5 -> +7.2 ms (round 47: 7.25 ms;
#:   the other groups unchanged).
#: - ``b200`` / ``gb200-nvl72`` (the Blackwell NVFP4 engines): not fitted. Their groups' residuals disagree in sign
#:   (B200 Llama-2-70B Interactive +8.1, Server -13.0; Llama-3.1-405B +15.4 / +6.6; GB200 x4 Llama-2-70B Server -3.2
#:   ms), so a per-step constant is not what they miss: one fitted over all eight groups (5.25 ms; 5.28 ms with MIXED_STEP_ROOM_ON, round 52) breaks the met
#:   GB200-NVL72 MLPerf median and bias goals (docs/gap_large_batch_decode.md "Round 47 (mlperfint47)").
#: Which host or GPU work it is, no source read here times (round 44: the executor's ``forwardSync``, scheduling and
#: ``setInputShape`` before ``enqueueV3``, trtGptModelInflightBatching.cpp). Carried under :data:`LLAMA_TRT_HARNESS_ON`.
LLAMA_TRT_HARNESS_STEP_S = {"h200": 7.47e-3}
#: the same fit with serve/chunked.MIXED_STEP_ROOM_ON off (round 47's 7.25 ms): what :func:`llama_trt_harness_step_s`
#: gives with that switch off, so switching it off gives the figures before round 52 exactly
LLAMA_TRT_HARNESS_STEP_S_ROOM_OFF = {"h200": 7.25e-3}


def llama_trt_harness_step_s() -> dict[str, float]:
    """The Llama TensorRT-engine harness term by system (s a step) fitted with the model as it stands: :data:`
    LLAMA_TRT_HARNESS_STEP_S` with serve/chunked.MIXED_STEP_ROOM_ON on, :data:`LLAMA_TRT_HARNESS_STEP_S_ROOM_OFF` off
    (each read at the call, so a what-if that sets either where it lives moves the rows)."""
    from jalapeno.serve import chunked

    return LLAMA_TRT_HARNESS_STEP_S if chunked.MIXED_STEP_ROOM_ON else LLAMA_TRT_HARNESS_STEP_S_ROOM_OFF


#: Whether the MLPerf TensorRT-engine Llama rows carry :data:`LLAMA_TRT_HARNESS_STEP_S`: on (round 47). `validate
#: --mlperf` (median / p90 / bias %): H200 6.6 / 19.6 / +6.6 -> 2.0 / 8.7 / +0.0, ALL 9.5 / 44.3 / +4.9 -> 8.4 / 44.3 /
#: +0.9; only the six Nebius H200 Llama rows move (docs/gap_large_batch_decode.md "Round 47 (mlperfint47)").
LLAMA_TRT_HARNESS_ON = True
DSR1_GRAPHS_GB200 = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512)
#: ``vllm_engine_config.num_scheduler_steps`` of AMD's Offline configs (inference_results_v5.1 @965182b
#: closed/AMD/.../llama2-70b/offline_mi300x.yaml 11, offline_mi325x.yaml 7, open/AMD/.../offline_mi355x.yaml 19; each
#: V0: ``VLLM_USE_V1: 0`` in its own ``vllm_env_config`` or the harness's common/config.yaml default) and MangoBoost's
#: vllm_args.json ``offline_vllm_args`` (19):
#: V0 multi-step scheduling (fit/mlperf_multi_step.multi_step_spread)
AMD_SCHEDULER_STEPS = {"mi300x": 11, "mi325x": 7, "mi355x": 19, "mangoboost": 19}
#: AMD's Llama-2-70B harness configs (vLLM 0.9.1, V0 ``sync`` engine), by division and chip
_AMD_CFG = "inference_results_v5.1 @965182b {}/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/offline_{}.yaml"
#: MangoBoost's LLMBoost harness (one TP1 vLLM engine per GPU, ``offline_vllm_args``: max_num_seqs, max_num_batched_tokens)
_MB_CFG = "inference_results_v5.1 @965182b open/AMD_MangoBoost/code/llama2-70b-99/apps/mlperf/vllm_args.json"
#: Offline results whose engine is read from the submission's config: mapped ``matched`` at the
#: submission's deployment with every slot filled (Offline issues all samples at once), not at the
#: unbounded frontier peak, over a run of ``queries`` samples whose drain is priced
#: (serve/finite_run.py): the configs' ``min_query_count`` 26,328 (six permutations of the 4,388
#: samples; GB200-NVL72 x72: 26,328 x 8 over nine instances), the logs' ``samples_per_query``
#: (results/*/deepseek-r1/Offline/performance/run_1/mlperf_log_summary.txt, Google B200 and NVIDIA
#: GB200). Keyed by result id (:func:`_result_key`).
MLPERF_ENGINES = {
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline": SubmittedEngine(
        512,
        4608,
        _DSR1_CFG.format("NVIDIA", "B200-SXM-180GBx8"),
        queries=26328,
        kv_free_fraction=0.9,
        graph_sizes=DSR1_GRAPHS,
        adp_timeout_iters=500,
        eager_prompt_call_s=DSR1_EAGER_PROMPT_CALL_S,
    ),
    "mlperf51_Google_B200-SXM-180GBx8_TRT_deepseek-r1_Offline": SubmittedEngine(
        512,
        4608,
        _DSR1_CFG.format("Google", "B200-SXM-180GBx8"),
        queries=26328,
        kv_free_fraction=0.9,
        graph_sizes=DSR1_GRAPHS,
        adp_timeout_iters=500,
        eager_prompt_call_s=DSR1_EAGER_PROMPT_CALL_S,
    ),
    "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Offline": SubmittedEngine(
        512,
        4608,
        _DSR1_CFG.format("NVIDIA", "GB200-NVL72_GB200-186GB_aarch64x72"),
        queries=26328 * 8,
        kv_free_fraction=0.9,
        graph_sizes=DSR1_GRAPHS_GB200,
        adp_timeout_iters=50,
        eager_prompt_call_s=DSR1_EAGER_PROMPT_CALL_S,
    ),
    "mlperf51_HPE_HPE_Cray_XD670_H200_SXM_141GBx8_TRT_deepseek-r1_Offline": SubmittedEngine(
        216,
        4608,
        _DSR1_CFG.format("HPE", "HPE_Cray_XD670_H200_SXM_141GBx8"),
        queries=26328,
        kv_free_fraction=0.6,
        graph_sizes=DSR1_GRAPHS,
        adp_timeout_iters=500,
        eager_prompt_call_s=DSR1_EAGER_PROMPT_CALL_S,
    ),
    # AMD's vLLM harness (one TP1 engine per GPU, no chunked prefill): the decode batch its MLPerf scheduler
    # targets (VLLM_LLAMA2_MLPERF_MAX_TARGET_DECODE_BATCH; MI300X's MIN is 1,280) and max_num_batched_tokens,
    # over the run's generated_samples_per_query (results/*/llama2-70b-99/Offline/performance/run_1/
    # mlperf_log_detail.txt); docs/gap_large_batch_decode.md, round 32
    "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline": SubmittedEngine(
        1536,
        40960,
        _AMD_CFG.format("closed", "mi300x"),
        1,
        1,
        1,
        None,
        queries=245760,
        scheduler_steps=AMD_SCHEDULER_STEPS["mi300x"],
    ),
    "mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Offline": SubmittedEngine(
        2048,
        65536,
        _AMD_CFG.format("closed", "mi325x"),
        1,
        1,
        1,
        None,
        queries=319488,
        scheduler_steps=AMD_SCHEDULER_STEPS["mi325x"],
    ),
    "mlperf51_AMD_8xMI325X_2xEPYC_9575F_2_llama2-70b-99_Offline": SubmittedEngine(
        2048,
        65536,
        _AMD_CFG.format("closed", "mi325x"),
        1,
        1,
        1,
        None,
        queries=319488,
        scheduler_steps=AMD_SCHEDULER_STEPS["mi325x"],
    ),
    "mlperf51_AMD_8xMI355X_2xEPYC_9575F_llama2-70b-99_Offline": SubmittedEngine(
        3072,
        40960,
        _AMD_CFG.format("open", "mi355x"),
        1,
        1,
        1,
        None,
        queries=1327104,
        scheduler_steps=AMD_SCHEDULER_STEPS["mi355x"],
    ),
    "mlperf51_AMD_MangoBoost_32xMI355X-PollaraCluster-EPYC9575F_llama2-70b-99_Offline": SubmittedEngine(
        3450, 65536, _MB_CFG, 1, 1, 1, None, queries=2555904, scheduler_steps=AMD_SCHEDULER_STEPS["mangoboost"]
    ),
    "mlperf51_AMD_MangoBoost_64xMI355X-PollaraCluster-EPYC9575F_llama2-70b-99_Offline": SubmittedEngine(
        3450, 65536, _MB_CFG, 1, 1, 1, None, queries=5087232, scheduler_steps=AMD_SCHEDULER_STEPS["mangoboost"]
    ),
}


_CFG = "inference_results_v5.1 @965182b closed/{}/configs/{}/{}/{}.py"
_B200, _GB72, _H200 = "B200-SXM-180GBx8", "GB200-NVL72_GB200-186GB_aarch64x72", "H200-SXM-141GBx8"
#: Server / Interactive results whose engine is read from the submission's config (the Custom
#: harness entry at accuracy target 0.99, MaxP): mapped ``matched@limits`` — that deployment at the
#: best load within the rules' limits (fit/latency_limits.engine_within_limits), not the best of
#: every enumerated layout. Keyed by result id (:func:`_result_key`). The Llama engines are dense
#: TP (``enable_attention_dp`` unset): gpu_batch_size and max_num_tokens bound the whole instance;
#: Nebius H200 Llama-3.1-405B caps it lower with the runtime ``max_batch_size`` 64. Not here: the
#: AMD rows (vLLM harness; read into :data:`MLPERF_AMD_LIMIT_ENGINES`, used only under its switch) and NVIDIA
#: GB200-NVL72 x4 Llama-2-70B Interactive (no config in the repository): they keep ``frontier@limits``. The Dynamo Llama-3.1-405B row runs disaggregated:
#: :data:`MLPERF_DISAGG_ENGINES`.
MLPERF_LIMIT_ENGINES = {
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server": SubmittedEngine(
        512,
        3456,
        _CFG.format("NVIDIA", _B200, "Server", "deepseek-r1"),
        graph_sizes=DSR1_GRAPHS,
        adp_timeout_iters=9,
        eager_prompt_call_s=DSR1_EAGER_PROMPT_CALL_S,
    ),
    "mlperf51_Google_B200-SXM-180GBx8_TRT_deepseek-r1_Server": SubmittedEngine(
        512,
        3456,
        _CFG.format("Google", _B200, "Server", "deepseek-r1"),
        graph_sizes=DSR1_GRAPHS,
        adp_timeout_iters=9,
        eager_prompt_call_s=DSR1_EAGER_PROMPT_CALL_S,
    ),
    "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Server": SubmittedEngine(
        512,
        3456,
        _CFG.format("NVIDIA", _GB72, "Server", "deepseek-r1"),
        graph_sizes=DSR1_GRAPHS_GB200,
        adp_timeout_iters=9,
        eager_prompt_call_s=DSR1_EAGER_PROMPT_CALL_S,
    ),
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Server": SubmittedEngine(
        2048, 3584, _CFG.format("NVIDIA", _B200, "Server", "llama2-70b"), 1, 1, 1, None
    ),
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Interactive": SubmittedEngine(
        768, 768, _CFG.format("NVIDIA", _B200, "Interactive", "llama2-70b"), 1, 1, 1, None
    ),
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Server": SubmittedEngine(
        256, 2048, _CFG.format("NVIDIA", _B200, "Server", "llama3_1-405b"), 4, 1, 1, None
    ),
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Interactive": SubmittedEngine(
        256, 1536, _CFG.format("NVIDIA", _B200, "Interactive", "llama3_1-405b"), 4, 1, 1, None
    ),
    "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x4_TRT_llama2-70b-99_Server": SubmittedEngine(
        2048, 3584, _CFG.format("NVIDIA", "GB200-NVL72_GB200-186GB_aarch64x4", "Server", "llama2-70b"), 1, 1, 1, None
    ),
    "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_llama3p1-405b_Server": SubmittedEngine(
        256, 2048, _CFG.format("NVIDIA", _GB72, "Server", "llama3_1-405b"), 4, 1, 1, None
    ),
    "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_llama3p1-405b_Interactive": SubmittedEngine(
        2048, 1024, _CFG.format("NVIDIA", _GB72, "Interactive", "llama3_1-405b"), 4, 1, 1, None
    ),
    "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Server": SubmittedEngine(
        2048, 1536, _CFG.format("Nebius", _H200, "Server", "llama2-70b"), 1, 1, 1, None
    ),
    "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Interactive": SubmittedEngine(
        512, 256, _CFG.format("Nebius", _H200, "Interactive", "llama2-70b"), 1, 1, 1, None
    ),
    "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Server": SubmittedEngine(
        64, 2560, _CFG.format("Nebius", _H200, "Server", "llama3_1-405b"), 8, 1, 1, None
    ),
    "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Interactive": SubmittedEngine(
        64, 2560, _CFG.format("Nebius", _H200, "Interactive", "llama3_1-405b"), 8, 1, 1, None
    ),
}


_AMD_SRV = "inference_results_v5.1 @965182b closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/{}_{}.yaml"
#: AMD's Llama-2-70B Server / Interactive engines, read from the configs each result's README runs
#: (closed/AMD/measurements/<system>/llama2-70b-99/<scenario>/README.md ``--config-name``): one TP1 vLLM engine per GPU
#: (``tensor_parallel_size: 1``, ``device_count: 8``), its running cap the custom scheduler's
#: ``VLLM_LLAMA2_MLPERF_MAX_TARGET_DECODE_BATCH`` where ``VLLM_LLAMA2_MLPERF_SCHED: 1`` sets one, else ``max_num_seqs``
#: (MI300X Interactive 600; MI300X Server 608 of 650; MI325X Server 832 of 1,024; MI325X Interactive 2,048 of 3,840),
#: ``max_num_batched_tokens`` a step (40,960; MI325X Interactive 43,008) and ``enable_chunked_prefill`` (False on the
#: three V0 ``sync`` engines: ``prefill_steps`` ``separate``; True on MI325X Interactive, ``VLLM_USE_V1: 1``,
#: ``engine_version: async``: ``mixed``). Not priced: V0 multi-step scheduling (``num_scheduler_steps`` 8 / 9 / 9;
#: prompts admitted only between windows), the harness's ``shortest_queue_with_tokens`` dispatch (a Poisson split,
#: as Server's load balancing) and MI325X's tuned hipBLASLt files. Used only under :data:`AMD_LIMIT_ENGINES_ON`.
MLPERF_AMD_LIMIT_ENGINES = {
    "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Interactive": SubmittedEngine(
        600, 40960, _AMD_SRV.format("interactive", "mi300x"), 1, 1, 1, None, scheduler_steps=8, prefill_steps="separate"
    ),
    "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server": SubmittedEngine(
        608, 40960, _AMD_SRV.format("server", "mi300x"), 1, 1, 1, None, scheduler_steps=9, prefill_steps="separate"
    ),
    "mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Server": SubmittedEngine(
        832, 40960, _AMD_SRV.format("server", "mi325x"), 1, 1, 1, None, scheduler_steps=9, prefill_steps="separate"
    ),
    "mlperf51_AMD_8xMI325X_2xEPYC_9575F_2_llama2-70b-99_Interactive": SubmittedEngine(
        2048, 43008, _AMD_SRV.format("interactive", "mi325x"), 1, 1, 1, None
    ),
}
#: Whether the AMD Server / Interactive rows are priced at :data:`MLPERF_AMD_LIMIT_ENGINES` (``matched@limits``)
#: rather than the best swept deployment within the limits (``frontier@limits``): OFF (round 48, mlperf48). On, the
#: four rows (signed error of throughput per chip %) MI300X Interactive +46.5 -> -63.7, Server +21.4 -> +13.2; MI325X
#: Server -5.6 -> -11.0, Interactive -28.8 -> -68.6; `validate --mlperf` MI300X 21.4 / 41.5 / +21.4 -> 13.7 / 53.7 /
#: +13.2, MI325X 5.9 / 21.9 / -5.9 -> 8.5 / 51.3 / -8.5, ALL 8.4 / 44.3 / +0.9 -> 9.5 / 66.1 / -0.6. At the submitted
#: TP1 engine the model's gfx942 decode step is 6-8 ms slow at the Interactive runs' own load (closed loop at 35 / 81
#: running a GPU: MI300X 40.6 ms against the run's 32.1 mean TPOT, MI325X 41.3 against 35.3), which the frontier hid
#: behind layouts the runs did not use (docs/gap_large_batch_decode.md, "Round 48 (mlperf48)";
#: ``python scripts/mlperf_amd_engines48.py``).
AMD_LIMIT_ENGINES_ON = False


def limit_engine(key: str, amd_on: bool | None = None) -> SubmittedEngine | None:
    """The declared Server / Interactive engine of result ``key``: :data:`MLPERF_LIMIT_ENGINES`, else
    :data:`MLPERF_AMD_LIMIT_ENGINES` where ``amd_on`` (None: :data:`AMD_LIMIT_ENGINES_ON`, read at the call); None
    for a result without one.

    >>> limit_engine("mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server", amd_on=False) is None
    True
    >>> limit_engine("mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server", amd_on=True).prefill_steps
    'separate'
    """
    on = AMD_LIMIT_ENGINES_ON if amd_on is None else amd_on
    return MLPERF_LIMIT_ENGINES.get(key) or (MLPERF_AMD_LIMIT_ENGINES.get(key) if on else None)


#: Scenarios in which the harness of every :data:`MLPERF_LIMIT_ENGINES` row (NVIDIA's llmlib, which the Google and
#: Nebius submissions carry too) deals its queries over the engine's instances in turn: inference_results_v5.1
#: @965182b closed/{NVIDIA,Google,Nebius}/code/llmlib/config.py sets ``traffic_distribution_policy`` to
#: ``load_balancing`` for Server, ``round_robin`` for Offline and every other scenario (``case _``), Interactive
#: included; factory.py ``_create_scheduler`` deals each query to the next core (one per instance, or per
#: ``--trtllm_server_urls`` endpoint on the multi-node x72 systems, closed/NVIDIA/README.md). Server's
#: join-the-least-pending dispatch is not priced (a Poisson split, as before).
MLPERF_ROUND_ROBIN_SCENARIOS = frozenset({"Interactive"})


#: Results whose engine build declares TensorRT-LLM's fused GEMM + all-reduce (``trtllm_build_flags``
#: ``'gemm_allreduce_plugin': 'float16'`` in the Custom-harness, accuracy-0.99, MaxP entry of
#: inference_results_v5.1 @965182b closed/<submitter>/configs/<system>/<scenario>/llama3_1-405b.py):
#: priced with the o_proj and down-projection all-reduces fused into their GEMMs (cost/ops.py;
#: MeasuredPoint.gemm_allreduce_fusion) unless :func:`load_mlperf` is told not to (``declared_fusion=False``). Every NVIDIA, Google and Nebius Llama-3.1-405B config of the
#: rows declares it but GB200-NVL72 x72 Interactive (its build flags set ``norm_quant_fusion`` and
#: ``gemm_plugin: 'fp4'`` instead); the Llama-2-70B (TP1: no all-reduce) and DeepSeek-R1 configs do
#: not; the Dynamo Llama-3.1-405B row has no config in the repository.
MLPERF_GEMM_ALLREDUCE = frozenset(
    f"mlperf51_{who}_{system}_TRT_llama3p1-405b_{scenario}"
    for who, system, scenarios in (
        ("NVIDIA", _B200, ("Offline", "Server", "Interactive")),
        ("NVIDIA", _GB72, ("Offline", "Server")),
        ("Nebius", _H200, ("Offline", "Server", "Interactive")),
    )
    for scenario in scenarios
)


#: Results whose engine build enables FP8 context attention (``trtllm_build_flags`` ``'use_fp8_context_fmha':
#: 'enable'`` in the Custom-harness, accuracy-0.99, MaxP entry of inference_results_v5.1 @965182b
#: closed/Nebius/configs/H200-SXM-141GBx8/{Offline,Server,Interactive}/{llama2-70b,llama3_1-405b}.py, beside
#: ``kv_cache_dtype: 'fp8'``): the TensorRT-LLM rows of per-tensor FP8 checkpoints (``fp8-tensor``), priced with FP8
#: attention math as fit/aic_row_engine.FP8_CONTEXT_FMHA prices aiconfigurator's. The FP4 Llama rows' preset (``nvfp4``)
#: states FP8 attention already; the AMD rows (vLLM harness) have no such flag.
MLPERF_FP8_CONTEXT_FMHA = frozenset(
    f"mlperf51_Nebius_H200-SXM-141GBx8_TRT_{bench}_{scenario}"
    for bench in ("llama2-70b-99", "llama3p1-405b")
    for scenario in ("Offline", "Server", "Interactive")
)


def with_declared_attention_math(precision: str, key: str) -> tuple[str, str]:
    """(precision, note): a row's precision preset with FP8 attention math (``,attn=fp8``) where its engine build
    declares FP8 context attention (:data:`MLPERF_FP8_CONTEXT_FMHA`) for a per-tensor FP8 attention projection
    (fit/aic_row_engine.FP8_CONTEXT_FMHA, TensorRT-LLM's); ``precision`` and "" otherwise.

    >>> with_declared_attention_math("fp8-tensor", "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Server")[0]
    'fp8-tensor,attn=fp8'
    >>> with_declared_attention_math("fp8-tensor", "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server")
    ('fp8-tensor', '')
    """
    from jalapeno.fit.aic_row_engine import FP8_CONTEXT_FMHA
    from jalapeno.specs.formats import get_precision

    prec = get_precision(precision)
    if (
        key not in MLPERF_FP8_CONTEXT_FMHA
        or prec.attention_compute == "fp8"
        or prec.modules["attention"].weight.name not in FP8_CONTEXT_FMHA["trtllm"]
    ):
        return precision, ""
    return f"{precision},attn=fp8", (
        "engine built with use_fp8_context_fmha (its config): attention math FP8 "
        "(fit/mlperf_engines.MLPERF_FP8_CONTEXT_FMHA)"
    )
