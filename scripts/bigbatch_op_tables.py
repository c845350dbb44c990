"""Large-batch vLLM decode op by op: the modelled step against aiconfigurator's measured vLLM kernel tables.

Question (issue 18, round 26, bigbatch26): MiniMax-M2.5 vLLM 0.19.0 aggregated rows on B200/B300 are priced
too fast at C > 128 (docs/gap_aic_itl.md, rounds 23-25). If every op of the step took the time the engine's
own kernels measure at the exact shapes, how long would the step be: as fast as the model (the gap is
outside the kernels) or as slow as measured (an op is under-priced)?

Per row (aggregated, vLLM, concurrency >= --min-c) the row is served as validation serves it
(serve/point.serve_at_concurrency with its stack and deployment) and the two step kinds the TPOT averages
(serve/analytic.agg_plan: a decode-only step of B sequences, and a step carrying p_big prompt tokens beside
them, weight f = p/p_big) are split into their ops (cost/step.step_cost). Each op a table covers is
re-priced from aiconfigurator-core 0.12.0's vLLM tables of the system (log-log interpolation, fastest kernel
row per shape; scripts/aic_kimi_split.interp_table):

- ``qkv`` / ``o``: ``gemm_perf`` (vLLM 0.24.0) at m = tokens, qkv n = (48 + 2·8)·128/TP, k = 3072; o n = 3072,
  k = 48·128/TP, in the checkpoint's format (FP8: ``fp8_block``, MiniMaxAI/MiniMax-M2.5 config.json
  128x128 blocks; NVFP4: ``bfloat16``, the NVFP4 checkpoint leaves self_attn unquantised, data/engines.toml);
- ``router``: ``gemm_perf`` BF16 at n = 256, k = 3072 (a lower bound: vLLM runs MiniMax-M2's gate in FP32,
  below); ``lm_head``: BF16 at m = sampled rows, n = 200,064/TP (linear in n beyond the table's 65,536);
- ``decode_attn``: ``generation_attention_perf`` (FlashInfer TRT-LLM-gen decode) at 48/TP query and 8/TP KV
  heads, FP8 KV, batch B, context = the row's mean decode context; ``prefill_attn``: ``context_attention_perf``
  (FlashInfer TRT-LLM-gen prefill) at p_big / chunk prompts of ``chunk`` tokens;
- ``experts``: ``moe_perf`` balanced rows (vLLM 0.24.0; FlashInfer TRT-LLM-gen monolithic kernels, NVFP4 /
  FP8 block) at MiniMax's 3072 x 1536, 256 experts, top-8, the row's MoE TP / EP, m = tokens;
- ``allreduce``: ``custom_allreduce_perf`` (vLLM 0.19.0, CUDA-graph custom all-reduce, BF16; message_size
  counts elements) of tokens · 3072 elements, two per layer (attention and MoE outputs); the q/k-norm
  all-reduce of 2 fp32 per token at the same table's small-message time.

Ops no table covers keep the model's time (``rest``: the q/k norm passes, RoPE + KV write, the layer's
norm/residual passes, embedding, LM-head all-gather, the step's fixed costs), and two are estimated
independently here from their FLOPs and bytes (the model had neither before round 26; it prices the FP32 gate
since, cost/ops.py, so on a later tree ``m_router`` is already FP32 and ``whatif`` equals ``model``):

- ``router_fp32``: vLLM's MiniMax-M2 gate is ``ReplicatedLinear(..., params_dtype=torch.float32)`` called on
  ``hidden_states.to(torch.float32)`` (vllm/model_executor/models/minimax_m2.py, MiniMaxM2MoE): an FP32 GEMM
  (no tensor cores; PyTorch's default float32 matmul precision is "highest") of 2·tokens·3072·256 FLOPs per
  layer on every rank, at the FP32 (VFMA) peak: HGX B200 80, HGX B300 75 TFLOP/s (Glenn K. Lockwood,
  glennklockwood.com/garden/processors/B200 and /B300, NVIDIA figures), plus the cast (6 bytes per element);
- ``sampler``: greedy sampling over B x 200,064 logits (the clients send temperature 0): the FP32 cast and
  the argmax, 2 + 4 + 4 bytes per logit at HBM peak.

Columns (ms per TPOT, i.e. (1 − f)·decode-only + f·mixed): ``meas`` measured TPOT, ``model`` validate's
TPOT, ``m_<op>`` / ``t_<op>`` the model's / the table's time of each covered op, ``kernels`` = model TPOT
with every covered op replaced by its table time, ``+fp32`` with the router at the longer of its BF16 table time and ``router_fp32`` and the sampler added,
``rest`` = the model's TPOT less its covered ops (uncovered ops and fixed costs), ``resid`` = meas − (+fp32); ``whatif`` = the model's TPOT with only its router priced at the longer of its modelled time and ``router_fp32``
(the first-order what-if: the decode batch is held, not re-solved). Nothing is fitted or written. Needs aiconfigurator-core (pip install -e
".[calibrate]").
Run: python scripts/bigbatch_op_tables.py [--systems b200,b300] [--min-c 64]   (about 1 min)
"""

from __future__ import annotations

import argparse
import sys
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import pool_step_cost
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.validate import load_aiconfigurator
from jalapeno.serve.analytic import agg_plan
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aic_kimi_split import interp_loglog as loglog, interp_table  # noqa: E402

MODEL = "minimax-m2.5"
DATA = files("aiconfigurator_core") / "systems" / "data"
SYS_DIR = {"b200": "b200_sxm", "b300": "b300_sxm"}
#: FP32 (VFMA, non-tensor) peak, FLOP/s: Glenn K. Lockwood's B200 / B300 pages (HGX variants, NVIDIA figures)
FP32_PEAK = {"b200": 80e12, "b300": 75e12}
#: HBM peak, B/s (the catalog's: data/systems/b200.toml, b300.toml)
HBM = {"b200": 8.0e12, "b300": 8.0e12}
#: checkpoint → (attention projections' GEMM table dtype, MoE table dtype)
FORMATS = {"fp8": ("fp8", "fp8_block"), "fp4": ("bfloat16", "nvfp4")}
#: model ops each table re-prices (op names of cost/ops.py and cost/attention.py)
COVERED = {
    "qkv": ["attn.qkv_proj"],
    "o": ["attn.o_proj"],
    "router": ["moe.router"],
    "lm_head": ["lm_head"],
    "decode_attn": ["attn.decode_full"],
    "prefill_attn": ["attn.prefill_full"],
    "experts": ["moe.experts"],
    "allreduce": ["attn.all_reduce", "moe.all_reduce", "attn.qk_norm_all_reduce"],
}


@lru_cache(maxsize=None)
def _table(system: str, kind: str, version: str, name: str) -> pd.DataFrame:
    return pd.read_parquet(str(DATA / SYS_DIR[system] / kind / "vllm" / version / f"{name}.parquet"))


def gemm_s(system: str, dtype: str, m: float, n: float, k: float) -> float:
    """vLLM 0.24.0 GEMM latency (s): log-log in m between measured row counts, in k then n at each; beyond the
    widest n (65,536) linear in n (the LM head's vocabulary slice)."""
    g = _table(system, "gemm", "0.24.0", "gemm_perf")
    g = g[g.gemm_dtype == dtype]
    scale, n_read = (n / 65536.0, 65536.0) if n > 65536 else (1.0, n)
    ms = np.array(sorted(g.m.unique()), float)
    lo, hi = ms[max(np.searchsorted(ms, m) - 1, 0)], ms[min(np.searchsorted(ms, m), len(ms) - 1)]
    ys = [interp_table(g[g.m == mm], "k", k, "n", n_read) for mm in sorted({lo, hi})]
    t = ys[0] if len(ys) == 1 else loglog(m, [lo, hi], ys)
    return t * scale * 1e-3


def allreduce_s(system: str, gpus: int, elements: float) -> float:
    a = _table(system, "comm", "0.19.0", "custom_allreduce_perf")
    a = a[(a.backend == "vllm_graph") & (a.num_gpus == gpus)].groupby("message_size").latency.min().sort_index()
    return loglog(max(elements, a.index[0]), a.index, a.to_numpy(float)) * 1e-3


def decode_attn_s(system: str, kv: str, heads: int, kv_heads: int, batch: float, ctx: float) -> float:
    """Decode attention latency (s). The collector stops at about 2^20 cached tokens per call (batch 512 reaches
    step 1,023 only), so beyond a batch size's last measured context the time is extended along the line through
    its last two measured contexts (the per-token KV stream, the floor kept once); log-log in batch between
    batch sizes."""
    a = _table(system, "attention", "0.24.0", "generation_attention_perf")
    d = a[
        (a.kernel_source == "vllm_flashinfer_trtllmdecode")
        & (a.num_heads == heads)
        & (a.num_key_value_heads == kv_heads)
        & (a.head_dim == 128)
        & (a.kv_cache_dtype == kv)
        & (a.window_size == 0)
    ]
    by_b = []
    for bs, g in d.groupby("batch_size"):
        g = g.groupby("step").latency.min().sort_index()
        s_max = float(g.index[-1])
        if ctx > s_max:
            slope = (g.iloc[-1] - g.iloc[-2]) / (s_max - float(g.index[-2]))
            t = g.iloc[-1] + slope * (ctx - s_max)
        else:
            t = loglog(ctx, g.index, g.to_numpy(float))
        by_b.append((float(bs), t))
    xs, ys = zip(*sorted(by_b))
    return loglog(batch, xs, ys) * 1e-3


def prefill_attn_s(system: str, kv: str, heads: int, kv_heads: int, prompts: float, length: float) -> float:
    a = _table(system, "attention", "0.24.0", "context_attention_perf")
    d = a[
        (a.kernel_source == "vllm_flashinfer_trtllmprefill")
        & (a.num_heads == heads)
        & (a.num_key_value_heads == kv_heads)
        & (a.head_dim == 128)
        & (a.kv_cache_dtype == kv)
        & (a.window_size == 0)
    ]
    if d.empty:
        d = a[(a.num_heads == heads) & (a.num_key_value_heads == kv_heads) & (a.head_dim == 128) & (a.window_size == 0)]
    return interp_table(d, "isl", length, "batch_size", prompts) * 1e-3


def experts_s(system: str, dtype: str, moe_tp: int, ep: int, tokens: float) -> float:
    m = _table(system, "moe", "0.24.0", "moe_perf")
    d = m[
        (m.hidden_size == 3072)
        & (m.inter_size == 1536)
        & (m.num_experts == 256)
        & (m.topk == 8)
        & (m.moe_dtype == dtype)
        & (m.distribution == "balanced")
        & (m.moe_tp_size == moe_tp)
        & (m.moe_ep_size == ep)
        & m.kernel_source.str.contains("flashinfer_trtllm")
    ]
    g = d.groupby("num_tokens").latency.min().sort_index()
    return loglog(tokens, g.index, g.to_numpy(float)) * 1e-3


def step_tables(
    system: str, ckpt: str, kv: str, model, tp: int, moe_tp: int, ep: int, b: float, ctx: float, p: float, chunk: float
) -> dict:
    """Table time (s) of each covered op of one step of ``b`` decoding sequences and ``p`` prompt tokens."""
    a, h, L = model.attention, model.hidden_size, model.num_layers
    attn_dt, moe_dt = FORMATS[ckpt]
    t = b + p
    sampled = b + (p / chunk if p > 0 else 0.0)
    hq, hkv = a.num_heads // tp, max(a.num_kv_heads // tp, 1)
    out = {
        "qkv": L * gemm_s(system, attn_dt, t, (a.num_heads + 2 * a.num_kv_heads) * a.head_dim / tp, h),
        "o": L * gemm_s(system, attn_dt, t, h, a.num_heads * a.head_dim / tp),
        "router": L * gemm_s(system, "bfloat16", t, model.moe.num_experts, h),
        "lm_head": gemm_s(system, "bfloat16", sampled, model.vocab_size / tp, h),
        "decode_attn": L * decode_attn_s(system, kv, hq, hkv, b, ctx) if b > 0 else 0.0,
        "prefill_attn": L * prefill_attn_s(system, kv, hq, hkv, p / chunk, chunk) if p > 0 else 0.0,
        "experts": L * experts_s(system, moe_dt, moe_tp, ep, t),
        "allreduce": L * (2 * allreduce_s(system, tp, t * h) + allreduce_s(system, tp, 4 * t)) if tp > 1 else 0.0,
    }
    fp32 = L * (2 * t * h * model.moe.num_experts / FP32_PEAK[system] + t * h * 6 / HBM[system])
    out["router_fp32"] = fp32
    out["sampler"] = sampled * model.vocab_size * 10 / HBM[system]
    return out


def split_rows(systems: tuple[str, ...], min_c: float) -> pd.DataFrame:
    model = load_model(MODEL)
    pts = [
        p
        for p in load_aiconfigurator()[0]
        if p.model == MODEL
        and p.system in systems
        and p.mode == "agg"
        and p.framework.startswith("vllm")
        and p.measured.get("tpot_s")
        and p.concurrency >= min_c
    ]
    out = []
    for p in pts:
        _, pricer, dep, wl = priced_point(p)  # p.model is MODEL
        lay = dep.decode.layout
        pr = with_pool_backends(pricer, dep.decode, model, lay, dep.precision.kv_cache.name)
        run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        tpot = float(run.tpot_s[0])
        # the decode batch the closed loop settles at (Little's law, serve/analytic.solve_concurrency), per instance
        plan = agg_plan(model, pr, dep, wl, np.asarray(run.decode_batch, float) / dep.decode.workers)
        b, _, steps, p_mb, chunk, _, p_big, _, _, _, _, batch = plan
        sc = pool_step_cost(model, pr, dep, lay, batch)
        f = float(np.minimum(p_mb / p_big, 1.0)[0])
        bb = float(b[0])
        rec = {
            "system": p.system,
            "ckpt": p.precision,
            "isl": int(p.isl),
            "layout": f"TP{lay.tp} MoE-TP{lay.tp // lay.ep} EP{lay.ep}",
            "C": int(p.concurrency),
            "B": bb,
            "p": float(p_big[0]),
            "f": f,
            "meas": p.measured["tpot_s"] * 1e3,
            "model": tpot * 1e3,
        }
        mixed = {}
        for i, pt in ((0, 0.0), (1, float(p_big[0]))):
            ops = {o["op"]: o["time_s"] for o in sc.op_rows(i)}
            ops.update({c["collective"]: c["time_s"] for c in sc.collective_rows(i)})
            kv = "fp8" if dep.precision.kv_cache.name.startswith("fp8") else "bfloat16"
            tab = step_tables(
                p.system, p.precision, kv, model, lay.tp, lay.tp // lay.ep, lay.ep, bb, wl.decode_ctx, pt, chunk
            )
            w = (1 - f) if i == 0 else f
            for k, names in COVERED.items():
                mixed[f"m_{k}"] = mixed.get(f"m_{k}", 0.0) + w * sum(ops.get(n, 0.0) for n in names)
                mixed[f"t_{k}"] = mixed.get(f"t_{k}", 0.0) + w * tab[k]
            m_router = sum(ops.get(n, 0.0) for n in COVERED["router"])
            extra = {
                "router_fp32": tab["router_fp32"],
                "sampler": tab["sampler"],
                "fp32_over_table": max(tab["router_fp32"] - tab["router"], 0.0),
                "fp32_over_model": max(tab["router_fp32"] - m_router, 0.0),
            }
            for k, v in extra.items():
                mixed[k] = mixed.get(k, 0.0) + w * v
        rec.update({k: v * 1e3 for k, v in mixed.items()})
        delta = sum(rec[f"t_{k}"] - rec[f"m_{k}"] for k in COVERED)
        rec["kernels"] = rec["model"] + delta
        rec["rest"] = rec["model"] - sum(rec[f"m_{k}"] for k in COVERED)
        rec["+fp32"] = rec["kernels"] + rec["fp32_over_table"] + rec["sampler"]
        rec["resid"] = rec["meas"] - rec["+fp32"]
        rec["whatif"] = rec["model"] + rec["fp32_over_model"]
        out.append(rec)
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default="b200,b300", help="comma-separated: b200, b300")
    ap.add_argument("--min-c", type=float, default=64.0, help="smallest concurrency (default 64)")
    ap.add_argument("--rows", action="store_true", help="print every row, not only the medians")
    a = ap.parse_args()
    pd.set_option("display.width", 300)
    pd.set_option("display.max_columns", 60)
    s = split_rows(tuple(a.systems.split(",")), a.min_c)
    if s.empty:
        raise SystemExit(f"no MiniMax-M2.5 vLLM aggregated rows on {a.systems} at C >= {a.min_c}")
    keys = ["system", "ckpt", "isl", "layout", "C"]
    if a.rows:
        print(s.sort_values(keys).round(2).to_string(index=False))
    pairs = [c for k in COVERED for c in (f"m_{k}", f"t_{k}")]
    cols = ["B", "p", "f", "meas", "model", *pairs, "router_fp32", "sampler", "kernels", "+fp32", "resid"]
    g = s.groupby(["system", "ckpt", "isl", "C"])
    t = g[cols].median().round(2)
    t.insert(0, "n", g.size())
    print("== medians per (system, checkpoint, ISL, concurrency) over layouts; ms per TPOT")
    print(t.to_string())
    print("\n== all rows: median ms per TPOT by ISL and concurrency band")
    s["band"] = pd.cut(s.C, [0, 128, 256, 1e9], labels=["C<=128", "C 129-256", "C>256"])
    g = s.groupby(["isl", "band"], observed=True)
    t = (
        g[
            [
                "meas",
                "model",
                "rest",
                "kernels",
                "+fp32",
                "resid",
                *[f"t_{k}" for k in COVERED],
                *[f"m_{k}" for k in COVERED],
                "router_fp32",
                "sampler",
            ]
        ]
        .median()
        .round(2)
    )
    t.insert(0, "n", g.size())
    print(t.T.to_string())
    print(
        "\n== what-if: the model's TPOT with vLLM's FP32 gate priced at the FP32 peak (max(m_router, router_fp32));"
        " signed error = predicted/measured - 1, mean per group, and median |error|"
    )
    s["err"] = s.model / s.meas - 1
    s["err_whatif"] = s.whatif / s.meas - 1
    s["err_tables"] = s["+fp32"] / s.meas - 1
    g = s.groupby(["system", "isl", "band"], observed=True)
    t = g[["err", "err_whatif", "err_tables"]].mean().mul(100).round(1)
    t.insert(0, "n", g.size())
    print(t.to_string())
    for c in ("err", "err_whatif", "err_tables"):
        print(f"{c}: median |error| {s[c].abs().median() * 100:.2f}%, mean {s[c].mean() * 100:+.2f}% (n {len(s)})")


if __name__ == "__main__":
    main()
