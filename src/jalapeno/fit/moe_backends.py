"""MoE kernel backends: the measured routed-expert latency of one TensorRT-LLM MoE backend per chip.

The chip's calibrated set (fit/calibrate.py) prices the routed-expert block by the *fastest*
kernel per measured configuration (``moe_rows``: "engines autotune the MoE backend"), through a
functional form fitted on other shapes than DeepSeek's (its held-out error there: 15% median, 51%
p90 on B200 NVFP4). TensorRT-LLM does not autotune the backend: a launch config picks one
(``moe_config.backend``), and the published InferenceX Dynamo recipes pick differently per worker
— B200 decode workers with attention DP run ``CUTLASS``, attention-TP (TEP) decode workers
``TRTLLM`` (TRT-LLM-gen), GB200 attention-DP decode workers ``CUTEDSL`` (DEP4/DEP8: ``CUTLASS``)
(benchmarks/multi_node/srt-slurm-recipes/dsr1/trtllm/{b200,gb200}-fp4/1k1k/disagg/*/*.yaml
@792d8aa4b858). At DeepSeek-R1's shape on B200 (NVFP4, EP8, balanced routing; aiconfigurator-core
0.12.0, TRT-LLM 1.3.0rc20 ``moe_perf``) CUTLASS measures 0.307 / 0.278 / 0.287 / 0.299 ms per
layer at 32 / 128 / 512 / 2048 tokens, TRT-LLM-gen 0.136 / 0.182 / 0.212 / 0.332 ms; the
calibrated form gives 0.114 / 0.149 / 0.153 / 0.167 ms, and the form fitted on one backend's rows
alone still misses DeepSeek's curve by 20-25% (median) with errors of either sign along it, so the
measurements themselves are shipped.

:func:`measured_curves` reads, per system and backend (:data:`BACKEND_SOURCES`: aiconfigurator's
collector labels the TRT-LLM-gen min-latency path ``moe_torch_flow_min_latency`` and
``moe_backend == "cutlass"`` ``moe_torch_flow_cutlass``, collector/trtllm/collect_moe.py), the
balanced-routing NVFP4 rows (Blackwell; on Hopper the FP8 block-scale rows, :data:`DTYPES`) at the
routed-expert shapes of the catalog's MoE models (hidden, expert intermediate, experts, top-k), one curve
(tokens → latency) per EP size, with no tensor parallelism inside the experts (:data:`MOE_TP`: the layouts
the recipes naming a backend run; Hopper also at expert TP 2-8, :data:`MOE_TP_OF`). The Hopper curves price
the aiconfigurator TensorRT-LLM rows of FP8 MoE checkpoints, which run TensorRT-LLM's default backend, CUTLASS
(fit/aic_row_engine.ROW_MOE_BACKENDS), and the pools whose recipe names ``CUTLASS`` or ``WIDEEP``.
TensorRT-LLM's ``CUTEDSL`` backend (the CuTe-DSL NVFP4 grouped GEMMs with the token gather
fused into the first and the finalize into the second, TensorRT-LLM PRs #8880, #9288, #9618) is
not in aiconfigurator's TRT-LLM tables. The CuTe-DSL NVFP4 MoE measured on the same chips is
SGLang's ``flashinfer_cutedsl`` path (FlashInfer's CuTe-DSL block-scaled masked grouped GEMMs,
``flashinfer_cutedsl_moe_masked``: kernel_source ``sglang_flashinfer_cutedsl_moe``, SGLang 0.5.10,
collector/sglang/collect_moe.py), in aiconfigurator's source tree (commit 095f58a51c4c, not in the
0.12.0 package: :data:`REPO_TABLES`, read with ``--aic-repo``); it is shipped as the ``cutedsl``
curve. Cross-check (tests/unit/test_moe_backend.py): FlashInfer's own benchmark of TensorRT-LLM's
fused CuTe-DSL MoE ported to FlashInfer (``cute_dsl_fused_moe_nvfp4``, flashinfer-ai/flashinfer
PR #2398; figures in PR #5301, ``benchmarks/bench_moe_deepseek.py``, DeepSeek-V3 shape, EP8, W4A4)
lies within 0.93-1.00x of the B200 EP8 curve at 64-1024 tokens; below 16 tokens the fused path is
8-16 µs slower (routing sort and output memset the masked path leaves to DeepEP). EP1 rows are
left out (:data:`MIN_EP`: the collector ran EP1 NVFP4 through FlashInfer's TRT-LLM BF16xFP4
kernel, ``use_trtllm_bf16_fp4``). scripts/fit_moe_backends.py writes the result to
data/moe_backends.toml (read by specs/moe_backends.py, priced by cost/moe_backend.py).

MXFP4-stored experts (gpt-oss-120b) get curves of their own (:func:`mxfp4_curves`, :data:`MXFP4_TABLES`):
TensorRT-LLM's W4A8 MXFP4 x MXFP8 TRT-LLM-gen rows on B200/GB200 at MoE TP1, written with
``weights = "mxfp4"`` so that they price only ops whose experts are stored in MXFP4.
"""

from __future__ import annotations

from jalapeno.fit.kernel_tables import load_repo_table, load_table
from jalapeno.fit.vllm_moe_curves import (  # noqa: F401 (re-exported: split for the line budget, round 53)
    VLLM_MOE_TP,
    VLLM_NVFP4_TABLES,
    VLLM_TABLES,
    vllm_curves,
)
from jalapeno.specs.catalog import list_models, load_model

#: backend name (TRT-LLM ``moe_config.backend``, lower case) → aiconfigurator ``kernel_source`` labels
BACKEND_SOURCES: dict[str, tuple[str, ...]] = {
    "trtllm": ("moe_torch_flow_min_latency",),
    "cutlass": ("moe_torch_flow_cutlass",),
    "cutedsl": ("sglang_flashinfer_cutedsl_moe",),
}
#: backends whose rows come from an aiconfigurator source checkout, not the installed package:
#: backend → (aiconfigurator framework folder, its version, the checkout's commit the data were read at)
REPO_TABLES: dict[str, tuple[str, str, str]] = {"cutedsl": ("sglang", "0.5.10", "095f58a51c4c")}
#: smallest expert parallelism shipped per backend (others: 1)
MIN_EP: dict[str, int] = {"cutedsl": 2}
#: systems whose own tables are read: Blackwell's hold both NVFP4 paths (B300/GB300's lack the TRT-LLM-gen rows:
#: fit/kernel_tables.py); Hopper's hold one FP8 block-scale path, CUTLASS (``moe_torch_flow_cutlass``, the only
#: ``fp8_block`` kernel source of the h100_sxm / h200_sxm tables), the backend TensorRT-LLM runs by default
#: (fit/aic_row_engine.ROW_MOE_BACKENDS)
SYSTEM_DIRS: dict[str, str] = {"b200": "b200_sxm", "gb200-nvl72": "gb200", "h100": "h100_sxm", "h200": "h200_sxm"}
#: per system, table formats shipped → the op's compute format (NVFP4: what the Blackwell recipes naming a backend
#: serve; FP8 block scale: the Hopper checkpoints' routed experts, Qwen3-235B-A22B-FP8 and DeepSeek-R1)
DTYPES: dict[str, dict[str, str]] = {
    "b200": {"nvfp4": "fp4"},
    "gb200-nvl72": {"nvfp4": "fp4"},
    "h100": {"fp8_block": "fp8"},
    "h200": {"fp8_block": "fp8"},
}
#: expert-TP sizes shipped (the recipes that name a backend run MoE TP1)
MOE_TP = (1,)
#: per system, expert-TP sizes shipped where they differ from :data:`MOE_TP`: on Hopper the rows that take the
#: CUTLASS default (fit/aic_row_engine.ROW_MOE_BACKENDS) also run expert TP (aiconfigurator's H200 DeepSeek-R1 TP8 rows,
#: MoE TP8 EP1); read from the EP row instead they would lose the narrow slices' penalty (docs/model.md §4)
MOE_TP_OF: dict[str, tuple[int, ...]] = {"h100": (1, 2, 4, 8), "h200": (1, 2, 4, 8)}
#: fewest measured token counts for a curve
MIN_POINTS = 4


def catalog_shapes() -> set[tuple[int, int, int, int]]:
    """(hidden, expert intermediate, experts, top-k) of every MoE model in the catalog."""
    out = set()
    for name in list_models():
        m = load_model(name)
        if m.moe:
            out.add((m.hidden_size, m.moe.expert_intermediate, m.moe.num_experts, m.moe.top_k))
    return out


def _tables(name: str, repo: str | None) -> dict[str, tuple]:
    """backend → (table, its label) for one system: the package's TRT-LLM table, and each of
    :data:`REPO_TABLES` from the checkout ``repo`` (left out when ``repo`` is None)."""
    df, version = load_table(SYSTEM_DIRS[name], "moe", "moe_perf")
    out = {
        b: (df, f"aiconfigurator {SYSTEM_DIRS[name]} moe_perf {version}")
        for b in BACKEND_SOURCES
        if b not in REPO_TABLES
    }
    if repo is not None and "nvfp4" in DTYPES[name]:  # the checkout's tables are NVFP4 (Blackwell)
        for b, (framework, ver, commit) in REPO_TABLES.items():
            out[b] = (
                load_repo_table(repo, SYSTEM_DIRS[name], "moe", "moe_perf", framework, ver),
                f"aiconfigurator @{commit} {SYSTEM_DIRS[name]} {framework} {ver} moe_perf",
            )
    return out


def measured_curves(systems=tuple(SYSTEM_DIRS), repo: str | None = None) -> tuple[list[dict], dict]:
    """(curves, report): one dict per (system, backend, shape, expert TP, EP) with ``tokens`` and
    ``latency_ms`` (ascending tokens; the fastest of repeated rows), and per system and backend
    the table, kernel sources and counts behind them. ``repo``: a checkout of
    github.com/ai-dynamo/aiconfigurator holding :data:`REPO_TABLES` (None: those backends are left out).

    Raises:
        SpecError: ``repo`` lacks a table of :data:`REPO_TABLES`.
    """
    shapes = catalog_shapes()
    curves, report = [], {}
    for name in systems:
        for backend, (df, table) in _tables(name, repo).items():
            sources = BACKEND_SOURCES[backend]
            dtypes = DTYPES[name]
            d = df[df.kernel_source.isin(sources) & df.moe_dtype.isin(list(dtypes)) & (df.distribution == "balanced")]
            keys = ["moe_dtype", "hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size", "moe_ep_size"]
            n = 0
            for k, g in d.groupby(keys):
                dtype, h, inter, e, top, tp, ep = k
                if (
                    (int(h), int(inter), int(e), int(top)) not in shapes
                    or int(tp) not in MOE_TP_OF.get(name, MOE_TP)
                    or int(ep) < MIN_EP.get(backend, 1)
                ):
                    continue
                g = g.groupby("num_tokens", as_index=False).latency.min().sort_values("num_tokens")
                if len(g) < MIN_POINTS:
                    continue
                curves.append(
                    {
                        "system": name,
                        "backend": backend,
                        "fmt": dtypes[dtype],
                        "hidden": int(h),
                        "inter": int(inter),
                        "experts": int(e),
                        "top_k": int(top),
                        "moe_tp": int(tp),
                        "ep": int(ep),
                        "table": table,
                        "tokens": [int(x) for x in g.num_tokens],
                        "latency_ms": [float(x) for x in g.latency],
                    }
                )
                n += 1
            if n:
                report.setdefault(name, {})[backend] = {
                    "table": table,
                    "kernel_source": list(sources),
                    "distribution": "balanced",
                    "curves": n,
                }
    for name, backend in MXFP4_TABLES:
        got, rep = mxfp4_curves(name, backend, shapes)
        curves += got
        if got:
            report.setdefault(name, {}).setdefault(backend, {})["mxfp4"] = rep
    for tables, part in ((VLLM_TABLES, None), (VLLM_NVFP4_TABLES, "nvfp4")):  # the FP8 report, its NVFP4 part
        for name, backend in tables:
            got, rep = vllm_curves(name, backend, shapes, tables)
            curves += got
            if got and part is None:
                report.setdefault(name, {})[backend] = rep
            elif got:
                report.setdefault(name, {}).setdefault(backend, {})[part] = rep
    return curves, report


#: MXFP4-stored experts (gpt-oss-120b) as TensorRT-LLM runs them, from its own ``moe_perf`` rows
#: (kernel_source ``moe_torch_flow``: aiconfigurator's collector pins gpt-oss's MoE backend as serving's AUTO
#: resolves it, collector/trtllm/collect_moe.py): (system, backend) → (table dtype, the kernel's compute
#: format). Blackwell: ``moe_config.backend: TRTLLM`` (TRTLLMGenFusedMoE), W4A8, MXFP4 weights x MXFP8
#: activations — the backend InferenceX's gptoss_fp4_b200_trt.sh forces; vLLM's
#: ``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1`` (gptoss_fp4_b200.sh) runs FlashInfer's build of the same kernels.
#: Hopper's ``TRITON`` rows (TritonFusedMoE on OpenAI's triton_kernels, W4A16, ``w4a16_mxfp4``; the backend
#: InferenceX's gptoss_fp4_h200_trt.sh forces) are not shipped: priced by them, the aiconfigurator H200 rows of
#: the ``gpt-oss-dev`` image go from TPOT median -0.1% to +28% at TP1 and from -11..-26% to +22..+50% at
#: EP2-EP8 (the 1.3.0rc20 measurement is far slower than the kernels that image ran: 0.079 ms per layer at
#: one token). The tables measure gpt-oss's shape at MoE TP1 only (EP1-EP128): the
#: collector refuses a per-rank intermediate size that is not a multiple of 64 for 4-bit weights (2880/2 =
#: 1440, /4 = 720, /8 = 360), so expert-TP layouts (TP2-TP8, EP1) keep the calibrated set. SGLang's
#: FlashInfer build of the Blackwell kernels is measured there (aiconfigurator sglang 0.5.14 ``moe_perf``,
#: ``sglang_flashinfer_trtllm_moe``; within 6% of TensorRT-LLM's at MoE TP1 EP1-EP8 up to 256 tokens), but
#: priced by those rows the aiconfigurator B200 TP4/TP8 rows move the wrong way (TensorRT-LLM TPOT median
#: +23% -> +33% at TP4, +40% -> +71% at TP8; vLLM TP8 +9% -> +23%): not shipped.
MXFP4_TABLES: dict[tuple[str, str], tuple[str, str]] = {
    ("b200", "trtllm"): ("w4a8_mxfp4_mxfp8", "fp8"),
    ("gb200-nvl72", "trtllm"): ("w4a8_mxfp4_mxfp8", "fp8"),
}
#: the TensorRT-LLM ``moe_perf`` kernel_source of those rows
MXFP4_SOURCE = "moe_torch_flow"


def _balanced_curves(df, sources, dtype: str, shapes, moe_tp=None) -> dict:
    """(hidden, inter, experts, top-k, moe_tp, ep) → (tokens, latency ms) of the balanced-routing
    ``dtype`` rows of ``sources`` at ``shapes`` (fastest of repeated rows; at least MIN_POINTS)."""
    d = df[df.kernel_source.isin(list(sources)) & (df.moe_dtype == dtype) & (df.distribution == "balanced")]
    out = {}
    for k, g in d.groupby(["hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size", "moe_ep_size"]):
        k = tuple(int(x) for x in k)
        if k[:4] not in shapes or (moe_tp is not None and k[4] not in moe_tp):
            continue
        g = g.groupby("num_tokens", as_index=False).latency.min().sort_values("num_tokens")
        if len(g) >= MIN_POINTS:
            out[k] = ([int(x) for x in g.num_tokens], [float(x) for x in g.latency])
    return out


def mxfp4_curves(name: str, backend: str, shapes) -> tuple[list[dict], dict]:
    """(curves, report) of ``backend``'s MXFP4-expert kernels on system ``name`` (:data:`MXFP4_TABLES`) at
    ``shapes``: every (expert TP, EP) layout of the TensorRT-LLM ``moe_perf`` table, balanced routing (as
    measured), one curve per layout, written with ``weights = "mxfp4"``.

    Raises:
        SpecError: the package lacks the table (``pip install -e ".[calibrate]"``).
    """
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS

    sdir = AIC_SYSTEM_DIRS[name]
    dtype, fmt = MXFP4_TABLES[name, backend]
    df, version = load_table(sdir, "moe", "moe_perf")
    table = f"aiconfigurator {sdir} moe_perf {version}"
    got = _balanced_curves(df, (MXFP4_SOURCE,), dtype, shapes)
    return _balanced_result(got, name, backend, fmt, table, dtype, (MXFP4_SOURCE,), weights="mxfp4")


def _balanced_result(got: dict, name: str, backend: str, fmt: str, table: str, dtype: str, sources, **extra) -> tuple:
    """(curves, report) of :func:`_balanced_curves`'s ``got``: one curve dict per (shape, expert TP, EP) in key order,
    each with ``extra`` (e.g. ``weights``) after its format, and the report of the table they came from."""
    curves = [
        {
            "system": name,
            "backend": backend,
            "fmt": fmt,
            **extra,
            "hidden": h,
            "inter": inter,
            "experts": e,
            "top_k": top,
            "moe_tp": tp,
            "ep": ep,
            "table": table,
            "tokens": tokens,
            "latency_ms": lat,
        }
        for (h, inter, e, top, tp, ep), (tokens, lat) in sorted(got.items())
    ]
    report = {
        "dtype": dtype,
        "table": table,
        "kernel_source": list(sources),
        "curves": len(curves),
        "distribution": "balanced",
    }
    return curves, report


#: SGLang's Triton ``fused_moe`` on Hopper (``sglang_triton``; deploy/sglang_triton_moe.py says where SGLang runs it):
#: aiconfigurator-core's SGLang ``moe_perf`` rows of kernel_source ``sglang_fused_moe_triton``, 128x128-block FP8
#: (``fp8_block``: 1 B a weight, the 4-B block scale per 16,384 weights left out; FP8 activations, per-token-group
#: quantised), EP1 rows of every shape and expert TP the table measures, less the rows timed faster than their touched
#: weights' stream at the chip's HBM peak (:data:`PEAK_CHECKED`). Release (stated rule): one form per chip from the
#: newest table of the framework (0.5.14 in aiconfigurator-core 0.12.0; 0.5.10 is the other); the rows it prices run
#: 0.5.6.post2-0.5.12, and SGLang serves one Triton MoE configuration file per shape from 0.5.9 to 0.5.14
#: (docs/gap_aic_itl.md, round 50), so the newest table is the nearest measurement of the kernel as served there.
SGLANG_TRITON = "sglang_triton"
#: Engine MoE backends priced by a fitted form rather than a measured curve: the system's tables hold
#: the backend's kernel, but not at the served model's shape. (system, backend) → (aiconfigurator
#: system folder, framework folder, kernel_source, table dtype → (compute format, weight B/elem,
#: activation B/elem), the expert-parallel size of the rows read). vLLM's Marlin MoE (``marlin``,
#: ``VLLM_MXFP4_USE_MARLIN=1``): MXFP4 weights dequantised in registers into BF16 tensor-core math
#: (W4A16: 4 bits + an E8M0 scale per 32 elements = 0.53125 B/elem, BF16 activations); aiconfigurator
#: measures it on H100 at one shape (compressed-tensors W4A4-MXFP4 checkpoints run as W4A16 by Marlin:
#: hidden 3584, intermediate 3072, 896 experts, top-16), not at gpt-oss-120b's, EP 1 (the layouts the
#: recipe naming it runs: TP only). TensorRT-LLM's Triton MoE on H200 (``triton``: ``moe_config.backend:
#: TRITON``, TritonFusedMoE on OpenAI's triton_kernels, W4A16 MXFP4, the backend every InferenceX
#: gptoss_fp4_h200_trt script forces: data/validation/aic_sweeps.toml): measured at gpt-oss's own shape
#: (TensorRT-LLM 1.3.0rc20 ``moe_perf``, ``moe_torch_flow`` ``w4a16_mxfp4``) but only at MoE TP1, and served
#: mostly at expert TP (TP2-TP8, EP1: the collector refuses 2880/k widths), so the form is fitted on the EP1
#: rows (the rank holds every expert, as at expert TP) and prices every layout; EP2-EP128 rows are not fitted.
#: vLLM's Marlin MoE on H200 and the SM100 family (``marlin``; B300 / GB200 / GB300 since kimiw4a16_41, their own tables
#: of the same 0.24.0 collector: vLLM's default on SM100 / SM103, specs/w4a16_moe.py): INT4 weight-only experts (compressed-tensors WNA16, Kimi K2.5's
#: INT4 release) run vLLM's CompressedTensorsWNA16MarlinMoEMethod wherever Marlin supports the layer
#: (vllm-project/vllm vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors_moe.py:
#: check_moe_marlin_supports_layer, the Triton WNA16 method only as the fallback), the kernel aiconfigurator
#: measures for vLLM's ``int4_wo`` MoE (vLLM 0.24.0 ``moe_perf``, kernel_source
#: ``vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts``, EP1 rows at every expert TP, Kimi K2.5's shape
#: among them); the same W4A16 Marlin kernel family as H100's MXFP4 rows: INT4 values dequantised in registers into
#: BF16 tensor-core math. Stored bytes: 4 bits + a 16-bit scale per 32 weights = 0.5625 B/elem (the catalog's
#: ``int4``, Kimi K2.5's group size 32; a named assumption for the collector's checkpoint, which its table does not
#: state: it moves only the weight-bound, small-load part of the fit).
KERNEL_BACKENDS: dict[tuple[str, str], tuple[str, str, str, dict, int]] = {
    ("h100", "marlin"): (
        "h100_sxm",
        "vllm",
        "vllm_compressedtensorsw4a4mxfp4moe_marlin_marlinexperts_situ_as_silu",
        {"w4a16_mxfp4": ("bf16", 0.53125, 2.0)},
        1,
    ),
    ("h200", "triton"): ("h200_sxm", "trtllm", "moe_torch_flow", {"w4a16_mxfp4": ("bf16", 0.53125, 2.0)}, 1),
    ("h200", "marlin"): (
        "h200_sxm",
        "vllm",
        "vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts",
        {"int4_wo": ("bf16", 0.5625, 2.0)},
        1,
    ),
    **{
        (name, SGLANG_TRITON): (sdir, "sglang", "sglang_fused_moe_triton", {"fp8_block": ("fp8", 1.0, 1.0)}, 1)
        for name, sdir in (("h100", "h100_sxm"), ("h200", "h200_sxm"))
    },
    **{
        (name, "marlin"): (
            sdir,
            "vllm",
            "vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts",
            {"int4_wo": ("bf16", 0.5625, 2.0)},
            1,
        )
        for name, sdir in (
            ("b200", "b200_sxm"),
            ("b300", "b300_sxm"),
            ("gb200-nvl72", "gb200"),
            ("gb300-nvl72", "gb300"),
        )
    },
}
#: backends whose fitted per-layer floor is priced (written ``floor_applied = true``): the measured block
#: has a fixed cost no load removes. Triton on H200: 71-79 µs per layer at 1 token at every EP size
#: (1-128, 1.3.0rc20 and 1.3.0rc10 alike; H100 73-77 µs), i.e. its routing, swizzle/quantise and
#: gather-scatter kernels around the two grouped GEMMs, where Blackwell's fused TRT-LLM-gen block measures
#: 19-25 µs (B200 ``w4a8_mxfp4_mxfp8``, same table). Marlin's INT4 MoE on H200 and B200 (vLLM 0.24.0 ``moe_perf``,
#: Kimi K2.5's shape at MoE TP8, the layout its vLLM runs use): 0.111 / 0.101 ms per layer at 8 tokens, where the
#: fitted form without a floor gives 0.066 / 0.055 ms and with its fitted floor (46 / 49 µs: the routing,
#: block-alignment and reduction kernels around the two Marlin GEMMs) 0.112 / 0.105 ms. H100's MXFP4 Marlin
#: floor (65 µs) is reported, not applied, as for every NVIDIA efficiency set (docs/model.md §8.6). B300 / GB200 / GB300's
#: Marlin floors are their own tables' (47-50 µs, data/moe_backend_kernels.toml), priced as B200's.
FLOOR_APPLIED = frozenset(
    {
        ("h100", SGLANG_TRITON),
        ("h200", SGLANG_TRITON),
        ("h200", "triton"),
        ("h200", "marlin"),
        ("b200", "marlin"),
        ("b300", "marlin"),
        ("gb200-nvl72", "marlin"),
        ("gb300-nvl72", "marlin"),
    }
)


#: backends whose rows pass a physical check before the fit: a row timed faster than its touched experts' weights
#: stream at the chip's HBM peak (:func:`beyond_peak`) is a data-quality exclusion, not a fit choice. SGLang's
#: Triton rows (aiconfigurator-core 0.12.0, sglang 0.5.14): 56 H200 and 74 H100 rows, all at DeepSeek-R1's shape
#: (7,168 x 2,048, E 256, top-8), e.g. H200 MoE TP8 at 32 tokens 0.250 ms for 256 experts' 1.41 GB (0.294 ms at 4.8
#: TB/s: 1.18x the peak); 0.5.10's rows of the same collector are 0.39-0.62 of peak there (docs/gap_aic_itl.md,
#: round 53, h200moe53 and h200form53).
PEAK_CHECKED = frozenset({("h100", SGLANG_TRITON), ("h200", SGLANG_TRITON)})


def beyond_peak(d, dtypes: dict, hbm_bytes_per_s: float):
    """Boolean mask over the balanced-routing ``moe_perf`` rows ``d``: latency below the balanced routing's touched experts'
    weight bytes (min(E/ep, T·k/ep) experts of 3 · hidden · inter/moe_tp weights at ``dtypes``' weight B/elem)
    streamed at ``hbm_bytes_per_s``.

    >>> import pandas as pd
    >>> d = pd.DataFrame({"moe_dtype": ["fp8_block"] * 2, "num_tokens": [32, 16], "hidden_size": [7168] * 2,
    ...                   "inter_size": [2048] * 2, "topk": [8] * 2, "num_experts": [256] * 2, "moe_tp_size": [8] * 2,
    ...                   "moe_ep_size": [1] * 2, "latency": [0.2498, 0.1679]})
    >>> beyond_peak(d, {"fp8_block": ("fp8", 1.0, 1.0)}, 4.8e12).tolist()  # 256 / 128 experts: 0.294 / 0.147 ms
    [True, False]
    """
    import numpy as np

    touched = np.minimum(np.ceil(d.num_experts / d.moe_ep_size), d.num_tokens * d.topk / d.moe_ep_size).to_numpy(float)
    w_b = d.moe_dtype.map(lambda x: dtypes[x][1]).to_numpy(float)
    stream_s = touched * 3.0 * d.hidden_size.to_numpy(float) * (d.inter_size / d.moe_tp_size).to_numpy(float) * w_b
    return d.latency.to_numpy(float) * 1e-3 < stream_s / hbm_bytes_per_s


def fit_backend_kernels(backends=tuple(KERNEL_BACKENDS)) -> list[dict]:
    """One fitted routed-expert form per (system, backend) of :data:`KERNEL_BACKENDS`.

    fit/kernels.fit_moe on the backend's balanced-routing rows of the newest ``moe_perf`` table of
    its framework (``touched_rule="balanced"``: aiconfigurator's ``balanced_logits`` reach every
    expert the load can, fit/kernels.MOE_TOUCHED_RULES), alternate token counts held out
    (``split="tokens"``: one shape). Each dict: system, backend, fmt (the kernel's compute format),
    the fitted ``peak_fraction``, ``half_rows``, ``hbm_fraction``, ``floor_s`` (per layer), whether that
    floor is priced (``floor_applied``, :data:`FLOOR_APPLIED`), the
    table, kernel source and the fit's median/p90 error on the fitted and held-out rows.

    Raises:
        SpecError: the package lacks the table (``pip install -e ".[calibrate]"``).
    """
    from jalapeno.fit.kernels import fit_moe, moe_rows
    from jalapeno.fit.moe_backend_width import WIDTH_MIN_TP_SIZES, fit_width_form
    from jalapeno.specs.catalog import load_system

    out = []
    for key in backends:
        sdir, framework, source, dtypes, ep = KERNEL_BACKENDS[key]
        df, version = load_table(sdir, "moe", "moe_perf", backend=framework)
        d = df[(df.kernel_source == source) & df.moe_dtype.isin(list(dtypes)) & (df.moe_ep_size == ep)]
        system = load_system(key[0])
        excluded = 0
        if key in PEAK_CHECKED:
            d = d[d.distribution == "balanced"]  # the rows the fit reads (fit/moe_kernels.moe_rows), routing known
            bad = beyond_peak(d, dtypes, system.chip.hbm_bandwidth_bytes_per_s)
            excluded, d = int(bad.sum()), d[~bad]
        params, rep = fit_moe(d, system, split="tokens", touched_rule="balanced", dtypes=dtypes)
        all_rows = moe_rows(d, "balanced", dtypes)
        for fmt, p in params.get("moe", {}).items():
            r = rep["formats"][fmt]
            row = {
                "system": key[0],
                "backend": key[1],
                "fmt": fmt,
                "peak_fraction": p["peak_fraction"],
                "half_rows": p["half_rows"],
                "hbm_fraction": p["hbm_fraction"],
                "floor_s": rep["kernel_floor_s"],
                "floor_applied": key in FLOOR_APPLIED,
                "table": f"aiconfigurator {sdir} {framework} {version} moe_perf",
                "kernel_source": source,
                "ep": ep,
                "rows": int(r["fit"]["n"] + r["held_out_tokens"]["n"]),
                "fit_median_ape": r["fit"]["median_ape"],
                "fit_p90_ape": r["fit"]["p90_ape"],
                "held_out_median_ape": r["held_out_tokens"]["median_ape"],
                "held_out_p90_ape": r["held_out_tokens"]["p90_ape"],
                **({"excluded_beyond_peak": excluded} if key in PEAK_CHECKED else {}),
            }
            rows = all_rows[all_rows.fmt == fmt]
            if rows.moe_tp_size.nunique() >= WIDTH_MIN_TP_SIZES:
                row.update(fit_width_form(system, rows, fmt, row))
            out.append(row)
    return out
