"""Kernel-level decomposition of a dense decode step from a serving engine's own measured kernels.

Small-batch tensor parallelism (issue 18 part 4): how much of a TP2 → TP8 decode speed-up the
GPU kernels themselves allow. Each kernel of one decode step of a dense GQA/MHA model is looked up
in the measured kernel tables of the serving engine that ran it, on the system it ran on
(aiconfigurator-core's per-engine tables; needs the ``[calibrate]`` extra; A100 SXM: vLLM 0.14.0's
GEMM, flash-attention decode and custom all-reduce tables, and NCCL 2.27.3), and summed per op
group per step:

    t_group = L · t_kernel(shape at TP t)        (qkv, o, gate_up, down, attention, 2 all-reduces)
    t_lm_head = t_gemm(b, V/t, h)                (one per step)

with the shapes per TP rank ``qkv: n = (H_q + 2·H_kv)·d / t, k = h``; ``o: n = h, k = H_q·d / t``;
``gate_up: n = 2·I / t, k = h``; ``down: n = h, k = I / t``; attention with ``H_q / t`` query and
``max(1, H_kv / t)`` KV heads at the step's context; all-reduce of ``b·h`` BF16 elements.

The tables time single kernel launches (aiconfigurator's collectors): their floors include the
standalone launch that CUDA graphs hide in serving (fit/table_lookup.py), so a table sum is an
upper bound on the GPU time of a graph-captured step; what it leaves out (norms, RoPE, the
activation, residual adds, sampling, host work) is the model's, printed beside it.

Lookups: GEMM latency bilinear in (log n, log k) of log latency at the table's own row count m
(the decode batch; a batch the table lacks is refused), a weight matrix wider than the table's
widest n scaled by n (weight streaming); attention interpolated in log context, linearly in query
heads between the table's head counts; all-reduce in log message size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.kernel_tables import load_table
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model import ModelSpec

#: the engine tables read (backend folder of aiconfigurator-core) and its custom all-reduce source
#: labels: (CUDA-graph replay, eager launch)
ENGINE_ALLREDUCE_SOURCE = {"vllm": ("vLLM_custom_graph", "vLLM_custom_eager")}
#: op groups of the decomposition, in step order
GROUPS = ("qkv", "attention", "o", "all_reduce", "gate_up", "down", "lm_head")
#: the step cost's op names (cost/ops.py) in each group; its all-reduce collectives form ``all_reduce``
MODEL_OPS = {
    "attn.qkv_proj": "qkv",
    "attn.decode_full": "attention",
    "attn.o_proj": "o",
    "dense_ffn.gate_up": "gate_up",
    "dense_ffn.down": "down",
    "lm_head": "lm_head",
}


@dataclass(frozen=True, slots=True)
class EngineKernels:
    """One engine's measured kernel tables on one system (latency in ms, as published).

    Attributes:
        gemm: rows m, n, k, latency (BF16).
        attention: decode rows batch_size, num_heads, num_key_value_heads, step (KV length), latency.
        allreduce: rows num_gpus, message_size (elements), latency.
        label: where they come from, for tables.
    """

    gemm: pd.DataFrame
    attention: pd.DataFrame
    allreduce: pd.DataFrame
    label: str


def load_engine_kernels(system_dir: str, engine: str = "vllm", graph: bool = True) -> EngineKernels:
    """The BF16 GEMM, BF16-KV decode attention and custom all-reduce tables of ``engine`` on
    ``system_dir`` (an aiconfigurator system folder, e.g. ``a100_sxm``); the all-reduce rows of
    CUDA-graph replay (``graph``) or of eager launch (vLLM's eager path copies the input into its
    registered buffer: ~44 us per call on A100 at any size up to 2 MB).

    Raises:
        SpecError: an engine without a graph all-reduce source here, a missing table or package.
    """
    if engine not in ENGINE_ALLREDUCE_SOURCE:
        raise SpecError(
            "engine",
            f"no kernel decomposition for engine {engine!r}",
            f"use one of {', '.join(ENGINE_ALLREDUCE_SOURCE)}",
        )
    g, v = load_table(system_dir, "gemm", "gemm_perf", engine)
    a, _ = load_table(system_dir, "attention", "generation_attention_perf", engine)
    r, _ = load_table(system_dir, "comm", "custom_allreduce_perf", engine)
    g = g[g.gemm_dtype == "bfloat16"]
    a = a[a.kv_cache_dtype == "bfloat16"]
    r = r[r.kernel_source == ENGINE_ALLREDUCE_SOURCE[engine][0 if graph else 1]]
    return EngineKernels(g, a, r, f"{engine} {v} on {system_dir}")


def gemm_s(table: pd.DataFrame, m: int, n: float, k: float) -> float:
    """GEMM latency, s, of an [m, k] x [k, n] product from ``table`` (rows m, n, k, latency ms).

    Raises:
        SpecError: the table has no rows at ``m``.
    """
    t = table[table.m == m]
    if t.empty:
        raise SpecError(
            "batch", f"the GEMM table has no rows at m = {m}", f"use one of its row counts: {sorted(set(table.m))[:12]}"
        )
    grid = t.pivot_table(index="n", columns="k", values="latency", aggfunc="median")
    scale = 1.0
    if n > grid.index.max():  # weight streaming: time grows with the matrix width
        scale, n = n / grid.index.max(), float(grid.index.max())
    ln, lk = np.log(grid.index.to_numpy(float)), np.log(grid.columns.to_numpy(float))
    i = int(np.clip(np.searchsorted(ln, np.log(n)) - 1, 0, len(ln) - 2))
    j = int(np.clip(np.searchsorted(lk, np.log(k)) - 1, 0, len(lk) - 2))
    fx = (np.log(n) - ln[i]) / (ln[i + 1] - ln[i])
    fy = (np.log(k) - lk[j]) / (lk[j + 1] - lk[j])
    c = np.log(grid.to_numpy(float)[i : i + 2, j : j + 2])
    if np.isnan(c).any():  # a hole in the grid: the nearest measured corner
        c = np.where(np.isnan(c), np.nanmean(c), c)
    v = c[0, 0] * (1 - fx) * (1 - fy) + c[1, 0] * fx * (1 - fy) + c[0, 1] * (1 - fx) * fy + c[1, 1] * fx * fy
    return float(np.exp(v)) * 1e-3 * scale


def attention_s(table: pd.DataFrame, batch: int, heads: float, kv_heads: int, ctx: np.ndarray) -> float:
    """Mean decode-attention latency, s, over the contexts ``ctx`` (KV lengths, tokens).

    Raises:
        SpecError: no rows at this batch and KV-head count.
    """
    t = table[(table.batch_size == batch) & (table.num_key_value_heads == kv_heads)]
    if t.empty:
        raise SpecError(
            "attention",
            f"no decode-attention rows at batch {batch} with {kv_heads} KV heads",
            "use a batch and KV-head count the engine's table covers",
        )
    hs = np.array(sorted(set(t.num_heads)), dtype=float)
    lo, hi = hs[hs <= heads].max(initial=hs[0]), hs[hs >= heads].min(initial=hs[-1])

    def at(h):
        s = t[t.num_heads == h].groupby("step").latency.median()
        return np.exp(np.interp(np.log(ctx), np.log(s.index.to_numpy(float)), np.log(s.to_numpy(float))))

    w = 0.0 if hi == lo else (heads - lo) / (hi - lo)
    return float(np.mean((1 - w) * at(lo) + w * at(hi))) * 1e-3


def allreduce_s(table: pd.DataFrame, gpus: int, elems: float) -> float:
    """All-reduce latency, s, of ``elems`` elements over ``gpus`` GPUs (log-log interpolation).

    Raises:
        SpecError: no rows for this group size.
    """
    t = table[table.num_gpus == gpus].groupby("message_size").latency.median()
    if t.empty:
        raise SpecError("tp", f"no all-reduce rows for {gpus} GPUs", "use a group size the table covers")
    return float(np.exp(np.interp(np.log(elems), np.log(t.index.to_numpy(float)), np.log(t.to_numpy(float))))) * 1e-3


def dense_decode_kernels(model: ModelSpec, tp: int, batch: int, ctx: np.ndarray, k: EngineKernels) -> dict:
    """Per-step kernel time, s, of each op group (:data:`GROUPS`) of a dense model's decode step
    at tensor parallelism ``tp`` and ``batch`` sequences, attention averaged over the contexts
    ``ctx`` (module docstring). Per chip; all ranks run the same kernels.

    Raises:
        SpecError: an MoE or MLA model; heads not divisible by ``tp``; a shape the tables lack.
    """
    a = model.attention
    if model.moe is not None or a.kind not in ("gqa", "mha"):
        raise SpecError("model", f"{model.name} is not a dense GQA/MHA model", "decompose a dense model (e.g. qwq-32b)")
    if a.num_heads % tp:
        raise SpecError("tp", f"{a.num_heads} query heads do not split over TP{tp}", "use a TP that divides them")
    h, d, i, L = model.hidden_size, a.head_dim, model.dense_intermediate, model.num_layers
    per = {
        "qkv": gemm_s(k.gemm, batch, (a.num_heads + 2 * a.num_kv_heads) * d / tp, h),
        "attention": attention_s(k.attention, batch, a.num_heads / tp, max(1, a.num_kv_heads // tp), ctx),
        "o": gemm_s(k.gemm, batch, h, a.num_heads * d / tp),
        "all_reduce": 2 * allreduce_s(k.allreduce, tp, batch * h) if tp > 1 else 0.0,
        "gate_up": gemm_s(k.gemm, batch, 2 * i / tp, h),
        "down": gemm_s(k.gemm, batch, h, i / tp),
    }
    out = {g: L * v for g, v in per.items()}
    out["lm_head"] = gemm_s(k.gemm, batch, model.vocab_size / tp, h)
    return out


def model_groups(model: ModelSpec, pricer: Pricer, tp: int, batch: int, ctx_mean: float) -> dict:
    """The model's own per-step time, s, of each op group of :data:`GROUPS` for a BF16 decode step
    at TP ``tp`` (TP-only layout), and ``other``: the rest of its step time (norms, RoPE and KV
    write, activation, residual adds, embedding, other collectives, step and per-TP-rank overhead).

    Raises:
        InfeasibleDeployment, SpecError: as :func:`~jalapeno.cost.step.step_cost`.
    """
    sc = step_cost(
        model, pricer, Layout(tp=tp), get_precision("bf16"), Batch.make(decode_seqs=batch, decode_ctx=ctx_mean)
    )
    out = dict.fromkeys(GROUPS, 0.0)
    for r in sc.op_rows():
        if r["op"] in MODEL_OPS:
            out[MODEL_OPS[r["op"]]] += r["time_s"]
    for r in sc.collective_rows():
        if r["kind"] == "all_reduce":
            out["all_reduce"] += r["time_s"]
    out["other"] = float(sc.step_time_s[0]) - sum(out.values())
    return out


def tp_decomposition(
    model: ModelSpec,
    pricer: Pricer,
    kernels: EngineKernels,
    ctx: np.ndarray,
    tps: tuple[int, ...] = (2, 8),
    batches: tuple[int, ...] = (1, 16),
) -> dict:
    """``{(batch, tp): {"kernels": dense_decode_kernels(...), "model": model_groups(...)}}`` over the
    decode contexts ``ctx`` (the model's step at their mean): both sides of the decomposition.

    Raises:
        SpecError, InfeasibleDeployment: as :func:`dense_decode_kernels` and :func:`model_groups`.
    """
    return {
        (b, tp): {
            "kernels": dense_decode_kernels(model, tp, b, ctx, kernels),
            "model": model_groups(model, pricer, tp, b, float(np.mean(ctx))),
        }
        for b in batches
        for tp in tps
    }


def tp_sweep_rows(
    model_path: str = "Qwen/Qwen3-32B", system_dir: str = "h100_sxm", backend: str = "vllm"
) -> pd.DataFrame:
    """aiconfigurator's end-to-end rows (``silicon_sample.csv``) of one model on one system and
    engine, aggregated serving, run at several TP sizes: columns isl, osl, concurrency (from the
    row id's ``_c<N>_``), tp, tpot_s, version. Default: Qwen3-32B on H100 with vLLM 0.12.0 (TP2/4/8,
    concurrency 8-128, 1k-4k prompts), a small-batch tensor-parallel check no fit reads (the model is
    not mapped into ``validate``).

    Raises:
        SpecError: the package is missing, or no such rows.
    """
    from importlib.resources import files

    try:
        d = pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv")
    except ModuleNotFoundError:
        raise SpecError(
            "aiconfigurator", "the aiconfigurator-core package is not installed", 'pip install -e ".[calibrate]"'
        ) from None
    d = d[(d.model_path == model_path) & (d.system == system_dir) & (d.backend == backend) & (d["mode"] == "agg")]
    c = d.id.str.extract(r"_c(\d+)_")[0].astype(float)
    out = pd.DataFrame(
        {
            "isl": d.isl,
            "osl": d.osl,
            "concurrency": c,
            "tp": d.tp_size,
            "tpot_s": d.silicon_tpot_ms / 1e3,
            "version": d.backend_version.astype(str),
        }
    ).dropna(subset=["concurrency", "tp", "tpot_s"])
    if out.empty:
        raise SpecError(
            "model",
            f"no aggregated {backend} rows of {model_path} on {system_dir}",
            "pick a model, system and engine silicon_sample.csv has",
        )
    return out.astype({"isl": int, "osl": int, "tp": int}).reset_index(drop=True)


def tp_sweep_predictions(model: ModelSpec, pricer: Pricer, rows: pd.DataFrame, precision: str = "bf16") -> pd.DataFrame:
    """``rows`` (:func:`tp_sweep_rows`) with the model's TPOT at each row's TP, workload and
    concurrency (column ``pred_tpot_s``; TP-only layout, serve/point.serve_at_concurrency).

    Raises:
        SpecError, InfeasibleDeployment: a row the model cannot run.
    """
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.workload import Workload

    out = rows.copy()
    out["pred_tpot_s"] = np.nan
    for (isl, osl, tp), g in rows.groupby(["isl", "osl", "tp"]):
        r = serve_at_concurrency(
            model,
            pricer,
            Deployment(get_precision(precision), Pool(Layout(tp=int(tp)))),
            Workload(f"{isl}/{osl}", int(isl), int(osl), 1.0),
            g.concurrency.to_numpy(float),
        )
        out.loc[g.index, "pred_tpot_s"] = np.asarray(r.tpot_s, dtype=float)
    return out
