"""H200 SGLang DeepSeek-R1 FP8 (TP8, MoE TP8 EP1): the decode step op by op against SGLang's own H200 kernel tables, and the TTFT split.

Question (issue 18, round 27, h200sgl27): the InferenceX and aiconfigurator H200 SGLang DeepSeek-R1 rows are
priced 6-7% too slow in decode (interactivity bias -6.9% / -5.7%). Which op of the modelled step is above what
SGLang's Hopper kernels measure at the same shapes?

At a decode-only step of b sequences (b = 4 .. 64, the rows' concurrencies) and mean context L (1k/1k: 1,536;
8k/1k: 8,704) the model's ops (cost/step.step_cost, stack ``sglang``, roofline pricer, the same as ``jalapeno
step -s h200 -m deepseek-r1 -p fp8 --kv-dtype bf16 --tp 8 --ep 1 --stack sglang``) are set beside
aiconfigurator-core 0.12.0's SGLang H200 tables (``systems/data/h200_sxm/<kind>/sglang/<ver>/``), per step
(ms, 61 layers; 58 MoE, 3 dense):

- ``mla``: ``mla/sglang/0.5.14/generation_mla_perf`` (kernel_source ``flash_attention``: FA3, SGLang's MLA
  default on sm90 with CUDA >= 12.3, aiconfigurator collector/sglang/collect_mla.py
  ``_select_default_mla_backend`` citing SGLang server_args.py), 16 local heads (128 / TP8), BF16 KV,
  log-log in batch and context; against the model's ``attn.mla_decode``;
- GEMMs: ``gemm/sglang/0.5.14/gemm_perf`` ``fp8_block`` (kernel ``sglang_deepgemm_gemm_nt_f8f8bf16``: DeepGEMM),
  fastest row per shape, log-log in m: ``qkv_a`` n 2,112 (q 1,536 + kv 512 + rope 64) k 7,168 (replicated on
  each rank); ``q_b`` n 24,576 / 8, k 1,536; ``o`` n 7,168, k 16,384 / 8; ``shared`` gate_up n 4,096 / 8 k 7,168
  + down n 7,168 k 2,048 / 8; ``dense`` gate_up n 36,864 / 8 k 7,168 + down n 7,168 k 18,432 / 8;
  ``router`` ``bfloat16`` n 256 k 7,168 (DeepSeek-V3 config.json dimensions);
- ``experts``: ``moe/sglang/0.5.10/moe_perf`` (Triton fused_moe, ``fp8_block``, 7,168 x 2,048, 256 experts,
  top-8, MoE TP8 EP1, power-law rows; the 0.5.14 DeepSeek slice is defective, docs/gap_aic_itl.md round 25
  sglrel25) against ``moe.experts``;
- ``allreduce``: ``comm/sglang/0.5.9/custom_allreduce_perf`` (8 GPUs, BF16, b x 7,168 elements), two per layer.

Ops no table covers (the absorbed-weight BMMs, RoPE/KV write, norms and residuals, shared activation, LM head,
the stack's fixed costs: ``rest``) keep the model's time. Printed (part 1): model (``m_``) vs table (``t_``) per op
family and the step with every covered op at its table time (``tables_step``).

Part 2, the MLA module by backend: ``mla/sglang/{0.5.6.post2,0.5.10}/wideep_generation_mla_perf`` (the whole MLA
module with ``fp8_block`` projections, FP8 KV, kernel_source ``fa3`` and ``flashinfer``; the InferenceX H200
recipe runs ``--attention-backend flashinfer``, data/engines.toml ``sglang-h200-dsr1-fp8``) at 16 local heads, µs
per layer, against the model's ``attn.*`` ops per layer at FP8 and BF16 KV.

Part 3, TTFT: each aiconfigurator H200 SGLang DeepSeek-R1 row split into the model's parts
(scripts/aic_ttft_split.predict_parts: ``lone`` one prompt on an idle engine, ``load``, ``front`` the client's
front end, ``burst`` the idle-start wave weighed by the client's share w), with the share the row needs,
w_need = (measured − (full − burst)) / (burst / w), the wave's time per prompt over the decode step y =
(2·excess/C)/TPOT (docs/gap_aic_ttft.md point 3), and the TTFT error at w = 0.55 (shipped), 0.2 and 0.1 (one
wave in W = 10, the closed-loop run's own share). Part 4: measured and modelled TPOT at 1k/1k against 1k/8k.

Nothing is fitted or written. Run: PYTHONPATH=src python scripts/h200_sglang_decode_ops.py   (about 1 min)
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files

import numpy as np
import pandas as pd

DATA = files("aiconfigurator_core") / "systems" / "data" / "h200_sxm"
LAYERS, MOE_LAYERS, DENSE_LAYERS, TP = 61, 58, 3, 8
CONTEXTS = {"1k/1k": 1024 + 512, "8k/1k": 8192 + 512}
BATCHES = (4, 8, 16, 32, 64)
#: model op names (cost/ops.py, cost/attention.py) per table family
FAMILIES = {
    "mla": ["attn.mla_decode"],
    "qkv_a": ["attn.qkv_a_proj"],
    "q_b": ["attn.q_b_proj"],
    "o": ["attn.o_proj"],
    "shared": ["moe.shared_expert.gate_up", "moe.shared_expert.down"],
    "dense": ["dense_ffn.gate_up", "dense_ffn.down"],
    "router": ["moe.router"],
    "experts": ["moe.experts"],
    "allreduce": ["attn.all_reduce", "moe.all_reduce", "dense_ffn.all_reduce"],
}


def loglog(x, xs, ys) -> float:
    """y at x on (xs, ys), linear in log-log, ends held.

    >>> round(loglog(8, [4, 16], [1.0, 4.0]), 6)
    2.0
    """
    return float(np.exp(np.interp(np.log(x), np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)))))


@lru_cache(maxsize=None)
def table(kind: str, ver: str, name: str) -> pd.DataFrame:
    return pd.read_parquet(str(DATA / kind / "sglang" / ver / f"{name}.parquet"))


def gemm_ms(dtype: str, m: float, n: int, k: int) -> float:
    """GEMM latency (ms): the fastest row per (m, n, k), log-log in k, then n, then m between grid points."""
    g = table("gemm", "0.5.14", "gemm_perf")
    g = g[g.gemm_dtype == dtype].groupby(["m", "n", "k"]).latency.min().reset_index()
    ms = np.array(sorted(g.m.unique()), float)
    i = int(np.searchsorted(ms, m))
    near = sorted({ms[max(i - 1, 0)], ms[min(i, len(ms) - 1)]})
    at_m = []
    for mm in near:
        d = g[g.m == mm]
        by_n = [(float(nn), loglog(k, e.k, e.latency)) for nn, e in d.groupby("n")]
        xs, ys = zip(*sorted(by_n))
        at_m.append(loglog(n, xs, ys))
    return at_m[0] if len(near) == 1 else loglog(m, near, at_m)


def mla_ms(b: float, ctx: float, heads: int = 128 // TP) -> float:
    d = table("mla", "0.5.14", "generation_mla_perf")
    d = d[(d.kv_cache_dtype == "bfloat16") & (d.num_heads == heads)]
    pts = []
    for bs, g in d.groupby("batch_size"):
        g = g.groupby("step").latency.min().sort_index()
        pts.append((float(bs), loglog(ctx, g.index, g.to_numpy(float))))
    xs, ys = zip(*sorted(pts))
    return loglog(b, xs, ys)


def experts_ms(tokens: float) -> float:
    m = table("moe", "0.5.10", "moe_perf")
    d = m[
        (m.hidden_size == 7168)
        & (m.inter_size == 2048)
        & (m.num_experts == 256)
        & (m.topk == 8)
        & (m.moe_dtype == "fp8_block")
        & (m.moe_tp_size == TP)
        & (m.moe_ep_size == 1)
        & (m.distribution.str.startswith("power_law"))
    ]
    g = d.groupby("num_tokens").latency.min().sort_index()
    return loglog(tokens, g.index, g.to_numpy(float))


def allreduce_ms(elements: float) -> float:
    a = table("comm", "0.5.9", "custom_allreduce_perf")
    a = a[a.num_gpus == TP].groupby("message_size").latency.min().sort_index()
    return loglog(elements, a.index, a.to_numpy(float))


def table_step(b: float, ctx: float) -> dict:
    """Table time per step (ms) of each family at b decoding sequences, mean context ctx."""
    dense = gemm_ms("fp8_block", b, 36864 // TP, 7168) + gemm_ms("fp8_block", b, 7168, 18432 // TP)
    shared = gemm_ms("fp8_block", b, 4096 // TP, 7168) + gemm_ms("fp8_block", b, 7168, 2048 // TP)
    return {
        "mla": LAYERS * mla_ms(b, ctx),
        "qkv_a": LAYERS * gemm_ms("fp8_block", b, 2112, 7168),
        "q_b": LAYERS * gemm_ms("fp8_block", b, 24576 // TP, 1536),
        "o": LAYERS * gemm_ms("fp8_block", b, 7168, 16384 // TP),
        "shared": MOE_LAYERS * shared,
        "dense": DENSE_LAYERS * dense,
        "router": MOE_LAYERS * gemm_ms("bfloat16", b, 256, 7168),
        "experts": MOE_LAYERS * experts_ms(b),
        "allreduce": LAYERS * 2 * allreduce_ms(b * 7168),
    }


def model_ops(b: int, ctx: float, kv: str = "bf16") -> tuple[dict, float]:
    """The model's op times (ms per step) by op name and its step time (ms), as ``jalapeno step`` prices them."""
    from jalapeno.cli.common import resolve_precision
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.layout import Layout, for_model
    from jalapeno.specs.catalog import load_model

    m = load_model("deepseek-r1")
    pr = system_pricer("h200", "calibrated", [], "sglang", "roofline")
    prec = resolve_precision(m, "fp8", kv)
    sc = step_cost(
        m,
        pr,
        for_model(Layout(tp=TP, dp=1, ep=1), m),
        prec,
        Batch.make(decode_seqs=b, decode_ctx=ctx, prefill_tokens=0, prefill_ctx=0),
    )
    ops = {r["op"]: r["time_s"] * 1e3 for r in sc.op_rows(0)}
    ops.update({r["collective"]: r["time_s"] * 1e3 for r in sc.collective_rows(0)})
    return ops, float(np.atleast_1d(sc.step_time_s)[0]) * 1e3


def mla_module_table() -> pd.DataFrame:
    """Part 2: SGLang's measured MLA module (µs per layer, 16 local heads, FP8 KV) by release and backend beside the
    model's attention ops per layer (µs) at FP8 and BF16 KV."""
    rows = []
    for ver in ("0.5.6.post2", "0.5.10"):
        d = table("mla", ver, "wideep_generation_mla_perf")
        d = d[d.num_heads.astype(int) == 128 // TP]
        for (ks, b, ctx), g in d.groupby(["kernel_source", "batch_size", "isl"]):
            rows.append({"release": ver, "backend": ks, "b": int(b), "ctx": int(ctx), "us": 1e3 * g.latency.min()})
    t = pd.DataFrame(rows)
    t = t[t.b.isin(BATCHES) & t.ctx.isin((1024, 2048, 4096, 8192))]
    p = t.pivot_table(index=["b", "ctx"], columns=["release", "backend"], values="us")
    for kv in ("fp8", "bf16"):
        p[("model", f"kv {kv}")] = [
            1e3
            * sum(v for k, v in model_ops(b, c, kv)[0].items() if k.startswith("attn.") and "all_reduce" not in k)
            / LAYERS
            for b, c in p.index
        ]
    return p


def ttft_rows() -> pd.DataFrame:
    """Part 3/4: the aiconfigurator H200 SGLang DeepSeek-R1 rows' TTFT parts (s), needed share, y and TPOT (ms)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from aic_ttft_split import parts, predict_parts  # noqa: E402

    from jalapeno.fit.validate import load_aiconfigurator

    pts = [
        p
        for p in load_aiconfigurator()[0]
        if p.system == "h200" and p.model == "deepseek-r1" and p.framework.startswith("sglang")
    ]
    df = predict_parts(pts)
    df = df.assign(**parts(df.full, df.noburst, df.bare, df.lone), m=df.measured_ttft_s)
    excess = df.burst / df.share
    steady = df.full - df.burst
    df = df.assign(
        w_need=(df.m - steady) / excess,
        y=(2 * excess / df.conc) / df.predicted_tpot_s,
        tpot_meas=1e3 * df.measured_tpot_s,
        tpot_model=1e3 * df.predicted_tpot_s,
    )
    for w in (0.55, 0.2, 0.1):
        df[f"err_w{w}"] = (steady + w * excess) / df.m - 1
    return df.sort_values(["mode", "isl", "osl", "conc"])


def main() -> None:
    rows = []
    for shape, ctx in CONTEXTS.items():
        for b in BATCHES:
            ops, step = model_ops(b, ctx)
            tab = table_step(b, ctx)
            rec = {"shape": shape, "b": b, "model_step": step}
            moved = 0.0
            for fam, names in FAMILIES.items():
                mod = sum(ops.get(n, 0.0) for n in names)
                rec[f"m_{fam}"], rec[f"t_{fam}"] = mod, tab[fam]
                moved += tab[fam] - mod
            rec["tables_step"] = step + moved
            rec["rest"] = step - sum(rec[f"m_{f}"] for f in FAMILIES)
            rows.append(rec)
    df = pd.DataFrame(rows)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    print("== Part 1: decode-only step, ms (m_ model, t_ SGLang H200 tables; rest = ops no table covers)")
    print(df.round(3).to_string(index=False))
    print(
        "\n== Part 2: MLA module, us per layer (SGLang wideep tables, 16 heads, FP8 KV) and the model's attention ops"
    )
    print(mla_module_table().round(1).to_string())
    t = ttft_rows()
    print("\n== Part 3: TTFT parts (s), needed share, y, error at share w")
    print(
        t[
            [
                "mode",
                "isl",
                "osl",
                "conc",
                "share",
                "m",
                "full",
                "lone",
                "load",
                "front",
                "burst",
                "w_need",
                "y",
                "err_w0.55",
                "err_w0.2",
                "err_w0.1",
            ]
        ]
        .round(3)
        .to_string(index=False)
    )
    agg = t[(t["mode"] == "agg") & (t.burst > 1e-4)]
    for w in (0.55, 0.2, 0.1):
        e = agg[f"err_w{w}"]
        print(
            f"agg rows with a burst (n {len(e)}), share {w}: median |error| {e.abs().median():.1%}, median {e.median():+.1%}"
        )
    print("\n== Part 4: TPOT (ms), measured and modelled, 1k/1k against 1k/8k")
    a = t[(t["mode"] == "agg") & (t.isl == 1024)]
    print(a.pivot_table(index="conc", columns="osl", values=["tpot_meas", "tpot_model"]).round(2).to_string())


if __name__ == "__main__":
    main()
