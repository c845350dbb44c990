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
from jalapeno.fit.aic_recipe_layout import with_recipe_layout
from jalapeno.fit.aic_row_engine import (  # noqa: F401 (re-exported: split from here, round 50)
    BEYOND_CAP_DROPS,
    FP8_CONTEXT_FMHA,
    IX_FRAMEWORK,
    RANK_BUDGET_BACKENDS,
    ROW_ALLREDUCE_RMS_FUSION,
    ROW_ATTENTION_BACKENDS,
    ROW_MOE_BACKEND_SYSTEMS,
    ROW_MOE_BACKENDS,
    row_allreduce_rms_fusion,
    with_rank_budget,
    with_recipe_limits,
    with_row_attention_backend,
    with_row_attention_math,
    with_row_moe_backend,
)
from jalapeno.fit.aic_sgl_recv import with_decode_recv_interval
from jalapeno.fit.skipped import with_systems
from jalapeno.fit.aic_sweep_layouts import (
    with_sweep_config_layouts,
    with_sweep_dp_attention,
    with_sweep_dp_dispatch,
    with_sweep_expert_parallel,
)
from jalapeno.fit.aic_sweep_launch import (
    with_sweep_batch_wait,
    with_sweep_kernels,
    with_sweep_launch,
    with_sweep_limits,
    with_sweep_mtp,
    with_sweep_token_limit,
)
from jalapeno.fit.aic_sweeps import measured_date, release_stated, row_release, sweep_of
from jalapeno.fit.trt_prompt_graphs import with_prompt_graphs
from jalapeno.fit.validate import MeasuredPoint
from jalapeno.fit.ix_points import CHAIN_ACCEPTANCE, VALIDATION_MTP
from jalapeno.deploy.sglang_triton_moe import with_sglang_triton_moe_backend
from jalapeno.deploy.vllm_fp8_moe import with_vllm_fp8_moe_backend
from jalapeno.specs.engine_versions import version_key
from jalapeno.specs.formats import get_precision

AIC_SYSTEMS = {
    "h100_sxm": "h100",
    "h200_sxm": "h200",
    "b200_sxm": "b200",
    "b300_sxm": "b300",
    "gb200": "gb200-nvl72",
    "gb300": "gb300-nvl72",
}
AIC_MODELS = {
    "deepseek-ai/DeepSeek-R1": "deepseek-r1",
    "deepseek-ai/DeepSeek-V3": "deepseek-r1",
    "openai/gpt-oss-120b": "gpt-oss-120b",
    "moonshotai/Kimi-K2.5": "kimi-k2.5",
    "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "meta-llama/Llama-3.1-70B": "llama-3.3-70b",
    "nvidia/DeepSeek-R1-NVFP4": "deepseek-r1",
    "nvidia/DeepSeek-V3.1-NVFP4": "deepseek-r1",
    "MiniMaxAI/MiniMax-M2.5": "minimax-m2.5",
}


#: FP8 checkpoints whose weights are 128x128-block scaled whatever a row's ``gemm_quant_mode`` says
#: (aiconfigurator labels its DeepSeek rows ``fp8``): DeepSeek-V3/R1 (config.json ``quantization_config``
#: ``weight_block_size`` [128, 128]) and Qwen3-235B-A22B-FP8 (model card: "fine-grained fp8
#: quantization with block size of 128") and MiniMax-M2.5 (config.json ``quantization_config`` fp8,
#: ``weight_block_size`` [128, 128], as aiconfigurator-core 0.12.0 ships it in
#: model_configs/MiniMaxAI--MiniMax-M2.5_config.json)
BLOCK_FP8_CHECKPOINTS = frozenset(
    {"deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-235B-A22B-FP8", "MiniMaxAI/MiniMax-M2.5"}
)


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
    the ``fp4`` preset is defined by routed experts, which a dense model lacks (specs/precision_checks.check_precision
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
            raise SpecError(
                "aiconfigurator", "the aiconfigurator-core package is not installed", 'pip install -e ".[calibrate]"'
            ) from None
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
                why = multinode_total_gpu_run(
                    system,
                    aic_client(getattr(r, "silicon_data_source", None)),
                    measured_date(getattr(r, "silicon_data_source", "")),
                    num(r.attention_dp_size),
                    num(r.moe_ep_size),
                )
                if why:
                    skipped.append((rid, why))
                    continue
                tp, dp, ep, note = aic_agg_layout(
                    num(r.tp_size), num(r.attention_dp_size), num(r.moe_tp_size), num(r.moe_ep_size), str(r.id)
                )
                notes += [note] if note else []
                dep = Deployment(get_precision(prec), Pool(Layout(tp=tp, dp=dp, ep=ep, pp=num(r.pp_size, 1))))
                conc = float(r.batch_size)
            else:
                if num(r.decode_num_workers) is None or num(r.prefill_num_workers) is None:
                    # the batch each decode worker runs (hence TPOT) depends on how many there were
                    skipped.append((rid, "disaggregated row without prefill/decode worker counts"))
                    continue
                pre = Pool(
                    Layout(
                        tp=num(r.prefill_tp_size),
                        dp=num(r.prefill_attention_dp_size, 1),
                        ep=num(r.prefill_moe_ep_size, 1),
                    ),
                    num(r.prefill_num_workers),
                )
                dec = Pool(
                    Layout(
                        tp=num(r.decode_tp_size), dp=num(r.decode_attention_dp_size, 1), ep=num(r.decode_moe_ep_size, 1)
                    ),
                    num(r.decode_num_workers),
                )
                dep = Deployment(get_precision(prec), dec, prefill=pre)
                bs = num(r.decode_batch_size)
                dep, fixed = with_recipe_layout(
                    dep,
                    system,
                    model,
                    str(r.backend),
                    prec,
                    int(r.isl),
                    measured_date(getattr(r, "silicon_data_source", "")),
                    bs,
                )
                notes += [fixed] if fixed else []
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
        meas = {
            "ttft_s": float(r.silicon_ttft_ms) / 1e3,
            "tpot_s": float(r.silicon_tpot_ms) / 1e3,
            "throughput_per_chip": None,
            "interactivity": 1e3 / float(r.silicon_tpot_ms),
        }
        fw = f"{r.backend} {row_release(r.backend_version)}"
        if not release_stated(fw):
            notes.append(
                f"release unstated (backend_version blank): '{fw}', priced at its profile's newest behaviour, "
                "not a launch recipe's release (fit/aic_sweeps.UNSTATED_RELEASE)"
            )
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
        dep, kernels = with_sglang_triton_moe_backend(dep, str(r.backend), system)
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
        dep, recv = with_decode_recv_interval(
            dep, str(r.backend), system, prec, int(r.isl), int(r.osl), row_release(r.backend_version)
        )
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
            dep, why = with_searched_decode_cap(
                dep,
                str(r.backend),
                system,
                model,
                prec,
                int(r.isl),
                int(r.osl),
                conc,
                measured_date(str(getattr(r, "silicon_data_source", ""))),
            )
            notes += [why] if why else []
        fused, why = row_allreduce_rms_fusion(
            str(r.backend), system, model, prec, measured_date(str(getattr(r, "silicon_data_source", ""))), client
        )
        notes += [why] if why else []
        points.append(
            MeasuredPoint(
                "aiconfigurator",
                rid,
                system,
                model,
                prec,
                fw,
                int(r.isl),
                int(r.osl),
                conc,
                dep,
                meas,
                "matched",
                client == "aiconfigurator",
                notes + [note] * bool(note),
                spec=spec,
                engine_version=trtllm_release(str(r.backend), getattr(r, "silicon_data_source", None)),
                client=client,
                allreduce_rms_fusion=fused,
            )
        )
    points, repeats = drop_repeated_runs(points)
    return points, with_systems(skipped + repeats, system_of)
