"""Kimi K2.5 and DeepSeek-R1 on the same GB200 TensorRT-LLM decode pools: the modelled step op by op.

Question (issue 18, round 27, kimitrt27): the aiconfigurator GB200 rows of Kimi K2.5 NVFP4 served by Dynamo's
TensorRT-LLM runtime 1.1.0-dev.2 (disaggregated, attention-TP decode pools TEP8 / TEP4, no MTP) are priced
~14% too slow, while the DeepSeek-R1 FP4 rows of the same recipe family (Dynamo 0.8.1.post2, TensorRT-LLM
1.2.0rc6.post2; NVIDIA/srt-slurm recipes with ``moe_config.backend: TRTLLM``, ``allreduce_strategy: MNNVL``,
``TRTLLM_ENABLE_PDL=1``, FP8 KV) are ~8% too slow on their FP4 attention-TP pools and the 2025 ones
(0.5.1-rc0.pre3) within a few percent.
Where in the step does Kimi's excess sit, and is it Kimi's (64 heads, 384 experts, its checkpoint) or the run's?

For every TensorRT-LLM disaggregated aiconfigurator row of the two models on GB200 whose decode pool runs
attention tensor-parallel (the row served as validation serves it: serve/point.serve_at_concurrency), the
decode-only step at the modelled decode batch (serve/open_loop.decode_pool_step) is split into parts, per layer (µs):
the MLA block (``attn.*`` ops), the shared expert (``moe.shared_expert.*``), the router, the routed experts and
the collectives, beside the whole step (ms). Read against aiconfigurator-core's TensorRT-LLM 1.3.0rc20
GB200 tables (fit/kernel_tables.load_table), log-log interpolated (trt_decode_split.interp_loglog):

- ``attn_bf16`` / ``attn_fp8``: ``mla_generation_module_perf`` (the whole attention module: projections, norms,
  RoPE, absorbed MLA, output projection; DeepSeek-V3 MLA dimensions, which Kimi K2.5 shares: hidden 7168,
  q/kv LoRA 1536/512, head dims 128/64/128; FP8 KV) at heads / attention TP, with BF16 or FP8 block-scale
  GEMMs. NVIDIA's Kimi-K2.5-NVFP4 leaves every ``self_attn`` Linear BF16 (its config.json ``ignore``);
- ``exp_cutlass`` / ``exp_trtgen``: ``moe_perf`` balanced NVFP4 rows at the model's expert shape, MoE EP = the
  pool's, tokens = the decode batch: CUTLASS (``moe_torch_flow_cutlass``, the only kernel measured at Kimi's
  384 experts) and TRT-LLM-gen (``moe_torch_flow_min_latency``, DeepSeek's 256 experts only);
- ``hidden_se``: what TensorRT-LLM's shared-expert aux stream would hide (cost/shared_stream.TRTLLM_STREAM,
  sourced, not priced): min(Σ shared-expert op time beyond its HBM time, routed-expert time), per layer;
- ``implied_hbm``: the share of datasheet HBM bandwidth (8 TB/s on GB200) at which the busiest EP rank's routed
  expert weights under uniform routing (``exp_GB`` per step, the model's) must stream for the measured TPOT to
  hold them beside everything else the model prices (:func:`implied_hbm_fraction`); ``implied_hbm_se`` the same
  with the shared expert hidden as above. Above ~0.9 no measured NVFP4 MoE kernel reaches it (FlashInfer's build
  of the TRT-LLM-gen kernels at Kimi's shape, aiconfigurator's GB200 vLLM 0.24.0 ``moe_perf``, balanced rows with
  every local expert touched: 0.79 at EP8, 128 tokens; 0.87 at EP4, 48 tokens).

Then per model, the measured and modelled TPOT at the fewest sequences per worker, and the growth per
sequence (least squares over each pool's rows). Nothing is fitted or written.
Needs the aiconfigurator-core package (pip install -e ".[calibrate]").
Run: python scripts/kimi_trt_decode_split.py   (seconds)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.validate import load_aiconfigurator
from jalapeno.serve.limits import decode_step_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trt_decode_split import interp_loglog  # noqa: E402

MODELS = ("kimi-k2.5", "deepseek-r1")
SYSTEM = "gb200-nvl72"


def per_layer_parts(ops: list[dict], layers: int, moe_layers: int) -> dict[str, float]:
    """Per-layer seconds of the step's parts from its op records (StepCost.op_rows): the MLA block over
    ``layers``, the shared expert, router and routed experts over ``moe_layers``; ``hidden_se``: the
    shared expert's time beyond its HBM time, capped at the routed experts' (cost/shared_stream.py's rule).

    >>> ops = [{"op": "attn.o_proj", "time_s": 6e-6, "memory_s": 1e-6}, {"op": "attn.mla_decode", "time_s": 4e-6, "memory_s": 0.0},
    ...        {"op": "moe.shared_expert.down", "time_s": 8e-6, "memory_s": 2e-6}, {"op": "moe.experts", "time_s": 4e-6, "memory_s": 3e-6},
    ...        {"op": "moe.router", "time_s": 2e-6, "memory_s": 1e-6}]
    >>> {k: round(v * 1e6, 6) for k, v in per_layer_parts(ops, 2, 1).items()}
    {'attn': 5.0, 'shared': 8.0, 'router': 2.0, 'experts': 4.0, 'hidden_se': 4.0}
    """

    def tot(pred) -> float:
        return sum(o["time_s"] for o in ops if pred(o["op"]))

    shared = [o for o in ops if o["op"].startswith("moe.shared_expert.")]
    experts = tot(lambda n: n == "moe.experts")
    beyond = sum(max(o["time_s"] - o["memory_s"], 0.0) for o in shared)
    return {
        "attn": tot(lambda n: n.startswith("attn.")) / layers,
        "shared": sum(o["time_s"] for o in shared) / moe_layers,
        "router": tot(lambda n: n == "moe.router") / moe_layers,
        "experts": experts / moe_layers,
        "hidden_se": min(beyond, experts) / moe_layers,
    }


def implied_hbm_fraction(expert_bytes: float, measured_s: float, other_s: float, hbm_bytes_per_s: float) -> float:
    """The share of datasheet HBM bandwidth at which the routed experts' weights (``expert_bytes`` per step, the
    busiest EP rank's) must stream for the measured step (``measured_s``) to hold them beside everything else the
    model prices in it (``other_s``); inf where the rest alone exceeds the measured step.

    >>> implied_hbm_fraction(40e9, 10e-3, 5e-3, 8e12)  # 40 GB in the 5 ms left: 8 TB/s, all of the datasheet
    1.0
    >>> implied_hbm_fraction(40e9, 5e-3, 6e-3, 8e12)
    inf
    """
    budget = measured_s - other_s
    return expert_bytes / budget / hbm_bytes_per_s if budget > 0 else float("inf")


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    sdir = AIC_SYSTEM_DIRS[SYSTEM]
    mod, _ = load_table(sdir, "mla", "mla_generation_module_perf")
    mod = mod[mod.kv_cache_dtype == "fp8"]
    moe, _ = load_table(sdir, "moe", "moe_perf")
    moe = moe[(moe.moe_dtype == "nvfp4") & (moe.distribution == "balanced") & (moe.moe_tp_size == 1)]
    return mod, moe


def split_rows() -> pd.DataFrame:
    """One record per attention-TP TensorRT-LLM disaggregated row of :data:`MODELS` on :data:`SYSTEM`."""
    mod, moe = _tables()
    out = []
    for p in load_aiconfigurator()[0]:
        if (
            p.model not in MODELS
            or p.mode != "disagg"
            or p.system != SYSTEM
            or "trtllm" not in p.framework
            or not p.measured.get("tpot_s")
        ):
            continue
        model, pricer, dep, wl = priced_point(p)
        lay = dep.decode.layout
        if lay.dp != 1 or dep.mtp is not None or dep.precision.modules["routed_experts"].compute != "fp4":
            continue
        run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        b = float(run.decode_batch[0])
        sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [b])  # as served: pool backends, graph padding
        step = float(decode_step_s(sc, pricer.efficiency, dep, np.array([b]), lay)[0])
        layers, moe_layers = model.num_layers, model.num_layers - len(model.dense_layers)
        parts = per_layer_parts(sc.op_rows(0), layers, moe_layers)
        coll = sum(c["time_s"] for c in sc.collective_rows(0))
        ops = sc.op_rows(0)
        exp_bytes = sum(o["weight_bytes"] for o in ops if o["op"] == "moe.experts")  # the busiest EP rank's, per step
        other = step - parts["experts"] * moe_layers  # everything the model prices beside the routed experts
        bw = pricer.system.chip.hbm_bandwidth_bytes_per_s
        heads = model.attention.num_heads // lay.tp
        rec = {
            "model": p.model,
            "engine": p.framework.split()[-1],
            "isl": wl.isl,
            "pool": f"TEP{lay.tp}",
            "workers": dep.decode.workers,
            "batch": b,
            "measured": p.measured["tpot_s"] * 1e3,
            "model_tpot": float(run.tpot_s[0]) * 1e3,
            "error": float(run.tpot_s[0]) / p.measured["tpot_s"] - 1,
            "step": step * 1e3,
            **{k: v * 1e6 for k, v in parts.items()},
            "coll/layer": coll / layers * 1e6,
            "exp_GB": exp_bytes / 1e9,
            "implied_hbm": implied_hbm_fraction(exp_bytes, p.measured["tpot_s"], other, bw),
            "implied_hbm_se": implied_hbm_fraction(
                exp_bytes, p.measured["tpot_s"], other - parts["hidden_se"] * moe_layers, bw
            ),
        }
        for g, name in (("bfloat16", "attn_bf16"), ("fp8_block", "attn_fp8")):
            grid = mod[(mod.num_heads == heads) & (mod.gemm_type == g)].pivot_table(
                index="batch_size", columns="step", values="latency", aggfunc="min"
            )
            rec[name] = interp_loglog(grid, max(b, 1.0), float(wl.decode_ctx)) * 1e3
        shape = moe[
            (moe.hidden_size == model.hidden_size)
            & (moe.inter_size == model.moe.expert_intermediate)
            & (moe.num_experts == model.moe.num_experts)
            & (moe.topk == model.moe.top_k)
            & (moe.moe_ep_size == lay.ep)
        ]
        for src, name in (("moe_torch_flow_cutlass", "exp_cutlass"), ("moe_torch_flow_min_latency", "exp_trtgen")):
            curve = shape[shape.kernel_source == src].groupby("num_tokens").latency.min()
            rec[name] = interp_loglog(curve, max(b, 1.0)) * 1e3 if len(curve) > 1 else np.nan
        out.append(rec)
    return pd.DataFrame(out)


def growth(s: pd.DataFrame) -> pd.DataFrame:
    """Per (model, engine, pool): the fewest-sequence row's measured / modelled TPOT and the least-squares
    growth of each per decoding sequence (ms per sequence per worker) over the pool's rows."""
    out = []
    for key, g in s.groupby(["model", "engine", "pool"]):
        g = g.sort_values("batch")
        lo = g.iloc[0]
        rec = dict(
            zip(("model", "engine", "pool"), key),
            n=len(g),
            batch_lo=lo.batch,
            measured_lo=lo.measured,
            model_lo=lo.model_tpot,
        )
        if g.batch.nunique() > 1:
            rec["slope_measured"] = float(np.polyfit(g.batch, g.measured, 1)[0])
            rec["slope_model"] = float(np.polyfit(g.batch, g.model_tpot, 1)[0])
        out.append(rec)
    return pd.DataFrame(out)


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    s = split_rows()
    if s.empty:
        raise SystemExit(f"no attention-TP TensorRT-LLM disaggregated rows of {MODELS} on {SYSTEM}")
    print("== per row (TPOT and step in ms; per-layer parts and tables in us)")
    print(s.sort_values(["model", "engine", "pool", "batch"]).round(3).to_string(index=False))
    print("\n== medians per (model, engine, pool)")
    g = s.groupby(["model", "engine", "pool"])
    t = (
        g[
            [
                "error",
                "attn",
                "attn_bf16",
                "attn_fp8",
                "shared",
                "hidden_se",
                "router",
                "experts",
                "exp_cutlass",
                "exp_trtgen",
                "coll/layer",
                "implied_hbm",
                "implied_hbm_se",
            ]
        ]
        .median()
        .round(3)
    )
    t.insert(0, "n", g.size())
    print(t.to_string())
    print("\n== fewest sequences per worker, and growth per sequence (ms)")
    print(growth(s).round(4).to_string(index=False))


if __name__ == "__main__":
    main()
