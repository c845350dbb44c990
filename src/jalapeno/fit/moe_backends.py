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
balanced-routing NVFP4 rows at the routed-expert shapes of the catalog's MoE models (hidden,
expert intermediate, experts, top-k), one curve (tokens → latency) per EP size, with no tensor
parallelism inside the experts (:data:`MOE_TP`: the layouts the recipes naming a backend run).
A backend without measured rows (``CUTEDSL``: not collected) ships nothing and keeps the
calibrated set. scripts/fit_moe_backends.py writes the result to data/moe_backends.toml (read by
specs/moe_backends.py, priced by cost/moe_backend.py).
"""

from __future__ import annotations

from jalapeno.fit.kernel_tables import load_table
from jalapeno.specs.catalog import list_models, load_model

#: backend name (TRT-LLM ``moe_config.backend``, lower case) → aiconfigurator ``kernel_source`` labels
BACKEND_SOURCES: dict[str, tuple[str, ...]] = {
    "trtllm": ("moe_torch_flow_min_latency",),
    "cutlass": ("moe_torch_flow_cutlass",),
}
#: systems whose own tables hold both paths (B300/GB300's lack the TRT-LLM-gen rows: fit/kernel_tables.py)
SYSTEM_DIRS: dict[str, str] = {"b200": "b200_sxm", "gb200-nvl72": "gb200"}
#: table formats shipped → the op's compute format (NVFP4: what the recipes naming a backend serve)
DTYPES: dict[str, str] = {"nvfp4": "fp4"}
#: expert-TP sizes shipped (the recipes that name a backend run MoE TP1)
MOE_TP = (1,)
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


def measured_curves(systems=tuple(SYSTEM_DIRS)) -> tuple[list[dict], dict]:
    """(curves, report): one dict per (system, backend, shape, expert TP, EP) with ``tokens`` and
    ``latency_ms`` (ascending tokens; the fastest of repeated rows), and per system and backend
    the table, kernel sources and counts behind them."""
    shapes = catalog_shapes()
    curves, report = [], {}
    for name in systems:
        df, version = load_table(SYSTEM_DIRS[name], "moe", "moe_perf")
        table = f"aiconfigurator {SYSTEM_DIRS[name]} moe_perf {version}"
        for backend, sources in BACKEND_SOURCES.items():
            d = df[df.kernel_source.isin(sources) & df.moe_dtype.isin(list(DTYPES)) & (df.distribution == "balanced")]
            keys = ["moe_dtype", "hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size", "moe_ep_size"]
            n = 0
            for k, g in d.groupby(keys):
                dtype, h, inter, e, top, tp, ep = k
                if (int(h), int(inter), int(e), int(top)) not in shapes or int(tp) not in MOE_TP:
                    continue
                g = g.groupby("num_tokens", as_index=False).latency.min().sort_values("num_tokens")
                if len(g) < MIN_POINTS:
                    continue
                curves.append({"system": name, "backend": backend, "fmt": DTYPES[dtype], "hidden": int(h),
                               "inter": int(inter), "experts": int(e), "top_k": int(top), "moe_tp": int(tp),
                               "ep": int(ep), "table": table, "tokens": [int(x) for x in g.num_tokens],
                               "latency_ms": [float(x) for x in g.latency]})
                n += 1
            if n:
                report.setdefault(name, {})[backend] = {"table": table, "kernel_source": list(sources),
                                                        "distribution": "balanced", "curves": n}
    return curves, report
