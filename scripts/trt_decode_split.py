"""TensorRT-LLM DeepSeek-R1 disaggregated decode rows: the modelled step op by op against TRT-LLM's own tables.

Question (issue 18, helper trtsplit13): the aiconfigurator silicon rows of DeepSeek-R1 served by Dynamo's
TensorRT-LLM image (0.8.1) in disaggregated mode are predicted too fast on H200 (TPOT -9..-20%) and, at
TP8 NVFP4, too slow on B200 (+10..+21%). Which op does the model misprice, read against the per-op
kernel tables of the same engine on the same chip?

For every such row (default systems H200 and B200) the row is served as validation serves it
(serve/point.serve_at_concurrency with the row's stack and deployment) and the decode-only step at the
modelled decode batch (serve/open_loop.decode_pool_step, as served) is split into its ops. Two of them are read against
aiconfigurator-core's TensorRT-LLM 1.3.0rc20 tables of the system (fit/kernel_tables.load_table):

- the MLA attention block: the sum of the step's ``attn.*`` ops per layer (61 layers) against
  ``mla_generation_module_perf`` (the complete attention module forward: projections, norms, RoPE,
  weight-absorbed MLA, output projection; DeepSeek-V3 shape, FP8 KV cache, FP8 block-scale GEMMs)
  at 128 / attention-TP heads, the sequences one attention rank holds and the row's mean decode
  context, log-log interpolated (:func:`interp_loglog`);
- the routed experts: ``moe.experts`` per MoE layer (58) against ``moe_perf`` (balanced routing, the
  fastest kernel per configuration) at the row's MoE TP / EP and the tokens of the MoE group.

Columns (ms per decode step unless named ``/layer``, µs): measured and modelled TPOT, the signed error,
the modelled step, the attention block per layer (model / table), the routed experts per layer (model /
table), and ``tables_sum``: the step with those two blocks taken from the tables and every other op,
collective and the fixed per-step cost left as modelled; ``residual`` = measured TPOT − tables_sum
(what neither the tables nor the rest of the model account for). Nothing is fitted or written.
Needs the aiconfigurator-core package (pip install -e ".[calibrate]").
Run: python scripts/trt_decode_split.py [--systems h200,b200]   (about 1 min)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
from jalapeno.serve.limits import decode_step_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model

MODEL = "deepseek-r1"
#: DeepSeek-R1's MLA heads, and its layers: all carry MLA attention, 58 of them routed experts
#: (config.json: num_attention_heads 128, num_hidden_layers 61, first_k_dense_replace 3)
HEADS, LAYERS, MOE_LAYERS = 128, 61, 58
#: compute format of the routed experts → aiconfigurator MoE dtype (FP8: the block-scale kernels)
MOE_DTYPE = {"fp8": "fp8_block", "fp4": "nvfp4"}


def _bracket(axis: np.ndarray, v: float) -> tuple[int, float]:
    v = float(np.clip(v, axis[0], axis[-1]))
    i = int(np.clip(np.searchsorted(axis, v) - 1, 0, len(axis) - 2))
    return i, (np.log(v) - np.log(axis[i])) / (np.log(axis[i + 1]) - np.log(axis[i]))


def interp_loglog(grid: pd.DataFrame, x: float, y: float | None = None) -> float:
    """Log-log interpolation of a table of positive values: bilinear in (log index, log column) of
    ``grid`` (a pivot, index and columns ascending) at (x, y), clamped to the grid's edges; with
    ``y`` None ``grid`` is one column (or a Series) read at x.

    Raises:
        ValueError: a grid with fewer than two index values (or columns, when ``y`` is given).
    """
    if isinstance(grid, pd.Series):
        grid = grid.to_frame()
    xs = np.asarray(grid.index, dtype=float)
    if len(xs) < 2 or (y is not None and grid.shape[1] < 2):
        raise ValueError("interp_loglog: grid needs two index values (and two columns with y): check the table slice")
    z = np.log(grid.to_numpy(dtype=float))
    i, wx = _bracket(xs, x)
    if y is None:
        return float(np.exp((1 - wx) * z[i, 0] + wx * z[i + 1, 0]))
    j, wy = _bracket(np.asarray(grid.columns, dtype=float), y)
    return float(
        np.exp(
            (1 - wx) * ((1 - wy) * z[i, j] + wy * z[i, j + 1]) + wx * ((1 - wy) * z[i + 1, j] + wy * z[i + 1, j + 1])
        )
    )


def _tables(system: str, fmt: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    sdir = AIC_SYSTEM_DIRS[system]
    mod, _ = load_table(sdir, "mla", "mla_generation_module_perf")
    mod = mod[(mod.gemm_type == "fp8_block") & (mod.kv_cache_dtype == "fp8")]
    moe, _ = load_table(sdir, "moe", "moe_perf")
    moe = moe[
        (moe.hidden_size == 7168)
        & (moe.inter_size == 2048)
        & (moe.num_experts == 256)
        & (moe.topk == 8)
        & (moe.moe_dtype == MOE_DTYPE[fmt])
        & (moe.distribution == "balanced")
    ]
    return mod, moe


def split_rows(systems: tuple[str, ...]) -> pd.DataFrame:
    """One record per TensorRT-LLM DeepSeek-R1 disaggregated aiconfigurator row of ``systems``."""
    model = load_model(MODEL)
    cache: dict = {}
    out = []
    for p in load_aiconfigurator()[0]:
        if (
            p.model != MODEL
            or p.mode != "disagg"
            or p.system not in systems
            or "trtllm" not in p.framework
            or not p.measured.get("tpot_s")
        ):
            continue
        st = point_stack(p)
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        wl, dep = point_workload(p), with_stack_mtp(p.deployment, st, p.model)
        run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        lay, b = dep.decode.layout, float(run.decode_batch[0])
        sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [b])  # as served: pool backends, graph padding
        step = float(decode_step_s(sc, pricer.efficiency, dep, np.array([b]), lay)[0])
        fmt = dep.precision.modules["routed_experts"].compute
        if (p.system, fmt) not in cache:
            cache[p.system, fmt] = _tables(p.system, fmt)
        mod, moe = cache[p.system, fmt]
        ops = {o["op"]: o["time_s"] for o in sc.op_rows(0)}
        attn_m = sum(v for k, v in ops.items() if k.startswith("attn.")) / LAYERS
        moe_m = ops.get("moe.experts", 0.0) / MOE_LAYERS
        per_rank = b / lay.dp
        grid = (
            mod[mod.num_heads == HEADS // lay.tp].pivot_table(
                index="batch_size", columns="step", values="latency", aggfunc="min"
            )
            * 1e-3
        )
        attn_t = interp_loglog(grid, max(per_rank, 1.0), float(wl.decode_ctx))
        moe_tp = lay.tp * lay.dp // lay.ep  # MoE TP x EP spans the stage's chips
        curve = (
            moe[(moe.moe_tp_size == moe_tp) & (moe.moe_ep_size == lay.ep)].groupby("num_tokens").latency.min() * 1e-3
        )
        moe_t = interp_loglog(curve, max(b, 1.0)) if len(curve) > 1 else np.nan
        tables_sum = step + LAYERS * (attn_t - attn_m) + MOE_LAYERS * (moe_t - moe_m)
        out.append(
            {
                "row": p.id.split("_disagg_")[-1],
                "system": p.system,
                "fmt": fmt,
                "engine": p.framework,
                "attn": f"TP{lay.tp}" if lay.dp == 1 else f"DP{lay.dp}",
                "moe": f"TP{moe_tp}EP{lay.ep}",
                "batch": b,
                "per_rank": per_rank,
                "measured": p.measured["tpot_s"] * 1e3,
                "model": float(run.tpot_s[0]) * 1e3,
                "error": float(run.tpot_s[0]) / p.measured["tpot_s"] - 1,
                "step": step * 1e3,
                "attn_model/layer": attn_m * 1e6,
                "attn_table/layer": attn_t * 1e6,
                "experts_model/layer": moe_m * 1e6,
                "experts_table/layer": moe_t * 1e6,
                "tables_sum": tables_sum * 1e3,
                "residual": (p.measured["tpot_s"] - tables_sum) * 1e3,
            }
        )
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default="h200,b200", help="comma-separated catalog systems")
    a = ap.parse_args()
    pd.set_option("display.width", 250)
    s = split_rows(tuple(a.systems.split(",")))
    if s.empty:
        raise SystemExit(f"no TensorRT-LLM DeepSeek-R1 disaggregated rows on {a.systems}")
    print("== per row (ms per step; /layer in us)")
    print(s.sort_values(["system", "fmt", "attn", "batch"]).round(3).to_string(index=False))
    g = s.groupby(["system", "fmt", "engine", "attn", "moe"])
    cols = [
        "measured",
        "model",
        "error",
        "attn_model/layer",
        "attn_table/layer",
        "experts_model/layer",
        "experts_table/layer",
        "tables_sum",
        "residual",
    ]
    t = g[cols].median().round(3)
    t.insert(0, "n", g.size())
    print("\n== medians per (system, format, engine, attention, MoE layout)")
    print(t.to_string())


if __name__ == "__main__":
    main()
