"""Kimi K2.5 decode on B200 (vLLM): the measured TPOT against the sum of the engine's own measured kernels.

docs/gap_aic_itl.md (Kimi section) splits the aiconfigurator Kimi K2.5 rows into routed experts, the MLA
module and "the rest"; this script splits the rest too, op by op, with aiconfigurator-core's measured
per-kernel tables of vLLM on B200, and prints, per B200 vLLM row (aggregated, decode batch = concurrency):

    kernels = 61 · (MLA module + 2 · all-reduce) + 60 · (routed experts + shared expert + router) + dense FFN
              + LM head                                                          (ms per decode step)
    exposed = measured TPOT − kernels                  what the step spends outside those kernels

against the model's own per-step fixed cost (the vLLM stack's step_overhead_s + (TP − 1) · tp_rank_step_s,
cost/step.step_overhead) and its TPOT. Tables (each interpolated log-log where the point falls between rows):

- MLA module: ``mla_generation_module_perf`` (vLLM 0.24.0, FLASHINFER_MLA; q_a/kv_a/q_b/o_proj GEMMs, norms,
  RoPE, attention) at 64/TP heads per rank, BF16 projections (both checkpoints leave ``self_attn*``
  unquantised: aiconfigurator-core ``model_configs/nvidia--Kimi-K2.5-NVFP4_config.json`` ``ignore``), the
  row's KV dtype, batch and mean decode context.
- Routed experts: ``moe_perf`` balanced rows at Kimi's shape (hidden 7168, intermediate 2048, 384 experts,
  top-8) of the kernel each checkpoint ran (scripts/aic_kimi_split.MOE_KERNELS: vLLM 0.19.0 FlashInfer
  TRT-LLM-gen NVFP4; SGLang 0.5.14 FlashInfer TRT-LLM-gen W4A16 for the INT4 release).
- Shared expert and layer-0 FFN: ``gemm_perf`` (vLLM 0.24.0) in the checkpoint's format (NVFP4 in NVIDIA's
  checkpoint, FlashInfer CuTe-DSL; BF16 in the INT4 release, whose quantisation covers the routed experts
  only), gate/up then down, at the TP-sharded width. Router: the BF16 GEMM 7168 → 384. LM head: BF16
  7168 → 163,840 / TP.
- All-reduce: ``custom_allreduce_perf`` (vLLM 0.19.0, CUDA-graph custom all-reduce) of batch · 7168 · 2 bytes;
  the scripts set ``fuse_allreduce_rms``, so the residual RMSNorms are counted inside it.
``experts_uniform`` / ``exposed_uniform``: the routed-expert table read at the experts uniform top-k routing
touches instead of the collector's balanced spread (cost/moe_backend.MoeCurve.routed, docs/model.md §8.6).
Left out (so ``kernels`` is a lower bound): the SiLU-and-multiply and activation-quantisation kernels, top-k,
the LM head's all-gather and sampling.

Needs aiconfigurator-core (pip install -e ".[calibrate]"). Nothing is fitted or written.
Run: python scripts/aic_kimi_ops.py   (about 20 s)
"""

from __future__ import annotations

import sys
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.cost.moe_backend import MoeCurve
from jalapeno.cost.step import step_overhead
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, predict_points, with_stack_mtp
from jalapeno.specs.catalog import load_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aic_kimi_split import _moe_curve, interp_loglog as loglog, interp_table, mla_module_s  # noqa: E402

B200 = files("aiconfigurator_core") / "systems" / "data" / "b200_sxm"
#: GEMM table format of the shared expert and dense FFN of each checkpoint
FFN_GEMM = {"fp4": "nvfp4", "int4": "bfloat16"}


class Tables:
    """The B200 vLLM GEMM and all-reduce tables, read once; every method returns seconds (the MLA module and
    the routed experts are read by scripts/aic_kimi_split.py's look-ups)."""

    def __init__(self):
        self.gemm = pd.read_parquet(str(B200 / "gemm" / "vllm" / "0.24.0" / "gemm_perf.parquet"))
        ar = pd.read_parquet(str(B200 / "comm" / "vllm" / "0.19.0" / "custom_allreduce_perf.parquet"))
        self.ar = ar[ar.backend == "vllm_graph"]

    def gemm_s(self, dtype: str, m: int, n: float, k: float) -> float:
        """GEMM latency at exactly ``m`` rows, log-log in n then k between the measured widths."""
        return interp_table(self.gemm[(self.gemm.gemm_dtype == dtype) & (self.gemm.m == m)], "k", k, "n", n) * 1e-3

    def allreduce_s(self, gpus: int, message_bytes: float) -> float:
        g = self.ar[self.ar.num_gpus == gpus].groupby("message_size").latency.min().sort_index()
        return loglog(message_bytes, g.index, g.to_numpy(float)) * 1e-3


def row_split(
    tab: Tables, model, precision: str, tp: int, moe_tp: int, ep: int, batch: int, context: float, kv: str
) -> dict:
    """Per-step kernel times (s) of one decode step from the tables (module docstring)."""
    m, h, moe = int(batch), model.hidden_size, model.moe
    f = FFN_GEMM[precision]
    si, dense_i = moe.shared_intermediate / tp, model.dense_intermediate / tp
    tokens, lat = _moe_curve("b200", precision, h, moe.expert_intermediate, moe.num_experts, moe_tp, ep)
    parts = {
        "mla": model.num_layers * mla_module_s("b200", "bfloat16", kv, model.attention.num_heads // tp, batch, context),
        "allreduce": 2 * model.num_layers * tab.allreduce_s(tp, batch * h * 2),
        "experts": model.num_moe_layers * loglog(batch, tokens, lat),
        "shared": model.num_moe_layers * (tab.gemm_s(f, m, 2 * si, h) + tab.gemm_s(f, m, h, si)),
        "router": model.num_moe_layers * tab.gemm_s("bfloat16", m, moe.num_experts, h),
        "dense_ffn": (model.num_layers - model.num_moe_layers)
        * (tab.gemm_s(f, m, 2 * dense_i, h) + tab.gemm_s(f, m, h, dense_i)),
        "lm_head": tab.gemm_s("bfloat16", m, model.vocab_size / tp, h),
    }
    parts["kernels"] = sum(parts.values())
    # the same experts' table read at the experts uniform top-k routing touches (cost/moe_backend.MoeCurve.routed)
    k, n = moe.top_k, moe.num_experts / ep
    curve = MoeCurve(
        float(h),
        float(moe.expert_intermediate / moe_tp),
        "fp4",
        np.asarray(tokens) * k / ep,
        np.asarray(lat),
        experts_on_rank=n,
    )
    touched = n * (1.0 - (1.0 - k / moe.num_experts) ** batch)
    parts["experts_uniform"] = model.num_moe_layers * float(
        curve.routed(np.array([batch * k / ep]), np.array([touched]))[0]
    )
    return parts


def main() -> None:
    pd.set_option("display.width", 250)
    model = load_model("kimi-k2.5")
    pts = [
        p
        for p in load_aiconfigurator()[0]
        if p.model == "kimi-k2.5"
        and p.system == "b200"
        and p.framework.startswith("vllm")
        and p.deployment is not None
        and p.deployment.prefill is None
    ]
    pred = predict_points(pts)
    pred = pred[pred.metric == "tpot_s"].set_index("id")
    tab, out = Tables(), []
    for p in pts:
        if p.id not in pred.index or p.concurrency not in (4, 8, 16, 32, 64):
            continue
        st = point_stack(p)
        dep = with_stack_mtp(p.deployment, st, p.model)
        lay = dep.decode.layout
        kv = "fp8" if dep.precision.kv_cache.name.startswith("fp8") else "bfloat16"
        parts = row_split(
            tab, model, p.precision, lay.tp, lay.moe_tp, lay.ep, int(p.concurrency), point_workload(p).decode_ctx, kv
        )
        eff = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st).efficiency
        meas = float(p.measured["tpot_s"])
        out.append(
            {
                "checkpoint": p.precision,
                "engine": p.framework,
                "layout": f"TP{lay.tp} MoE-TP{lay.moe_tp} EP{lay.ep}",
                "batch": int(p.concurrency),
                **{k: v * 1e3 for k, v in parts.items()},
                "measured": meas * 1e3,
                "exposed": (meas - parts["kernels"]) * 1e3,
                "exposed_uniform": (meas - parts["kernels"] + parts["experts"] - parts["experts_uniform"]) * 1e3,
                "model_fixed": step_overhead(eff, lay) * 1e3,
                "model": float(pred.loc[p.id, "predicted"]) * 1e3,
            }
        )
    df = pd.DataFrame(out)
    cols = [
        "mla",
        "experts",
        "shared",
        "router",
        "allreduce",
        "dense_ffn",
        "lm_head",
        "kernels",
        "measured",
        "exposed",
        "experts_uniform",
        "exposed_uniform",
        "model_fixed",
        "model",
    ]
    print(
        "== Kimi K2.5 on B200 (vLLM, aggregated): measured TPOT vs the sum of vLLM's measured kernels, ms per step"
        " (medians)"
    )
    g = df.groupby(["checkpoint", "engine", "layout", "batch"])
    t = g[cols].median().round(2)
    t.insert(0, "n", g.size())
    print(t.to_string())


if __name__ == "__main__":
    main()
