"""Where the aiconfigurator gpt-oss-120b TPOT error sits: the modelled step split against the measured TPOT.

Two tables (issue 18; docs/model.md §8.6, "Hopper's Triton MoE"):

1. Every aggregated gpt-oss-120b row of aiconfigurator's ``silicon_sample.csv`` is predicted as validation
   predicts it (fit/validate.predict_points' serving call: serve/point.serve_at_concurrency with the
   row's stack, deployment and MoE backend), and the decode-only step at the modelled decode batch
   (serve/open_loop.decode_pool_step: as served, the pool's MoE and attention backends, graph-padded) is split
   into routed experts (``moe``), attention, the other GEMMs, element-wise/memory ops (each with its
   kernels' launches; a MoE backend's per-layer floor is the routed experts'), collectives and the
   per-step fixed cost (``fixed``: step overhead + per-TP-rank cost, cost/step.step_overhead).
   Printed per (system, engine, attention TP): rows, median signed TPOT error, median measured and
   modelled TPOT and the median of each part, ms.
2. The measured routed-expert block of aiconfigurator's TensorRT-LLM 1.3.0rc20 ``moe_perf`` tables at
   gpt-oss's shape (hidden 2880, intermediate 2880, 128 experts, top-4, balanced routing, MoE TP1) at
   few tokens: Hopper's Triton W4A16 path (``w4a16_mxfp4``, H200/H100) against Blackwell's TRT-LLM-gen
   W4A8 path (``w4a8_mxfp4_mxfp8``, B200), per EP size, µs per layer: the per-layer floor of each.

Nothing is fitted or written. Needs the aiconfigurator-core package (pip install -e ".[calibrate]").
Run: python scripts/aic_gptoss_split.py [--tokens 1,4,16]   (about 15 s)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from jalapeno.cost.step import step_overhead
from jalapeno.fit.kernel_tables import load_table
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.validate import load_aiconfigurator
from jalapeno.serve.limits import decode_step_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model

MODEL = "gpt-oss-120b"
#: (aiconfigurator system folder, table dtype) of the per-layer floor table
FLOOR_TABLES = (("h200_sxm", "w4a16_mxfp4"), ("h100_sxm", "w4a16_mxfp4"), ("b200_sxm", "w4a8_mxfp4_mxfp8"))


def step_split() -> pd.DataFrame:
    """One record per aggregated gpt-oss-120b aiconfigurator row: measured and modelled TPOT and the
    modelled decode-only step's parts (s)."""
    model = load_model(MODEL)
    out = []
    for p in load_aiconfigurator()[0]:
        if p.model != MODEL or p.mode != "agg" or not p.measured.get("tpot_s"):
            continue
        _, pricer, dep, wl = priced_point(p)  # p.model is MODEL
        run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        lay, b = dep.decode.layout, float(run.decode_batch[0])
        sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [b])  # as served: pool backends, graph padding
        parts = {"moe": 0.0, "attention": 0.0, "gemm": 0.0, "memory": 0.0}
        for o in sc.op_rows(0):
            parts[o["kind"] if o["kind"] in parts else "memory"] += o["time_s"]
        out.append(
            {
                "system": p.system,
                "engine": p.framework.split()[0],
                "tp": lay.tp,
                "backend": dep.decode.moe_backend or "-",
                "error": float(run.tpot_s[0]) / p.measured["tpot_s"] - 1,
                "measured": p.measured["tpot_s"],
                "model": float(run.tpot_s[0]),
                "step": float(decode_step_s(sc, pricer.efficiency, dep, np.array([b]), lay)[0]),
                **parts,
                "collectives": float(sum(c["time_s"] for c in sc.collective_rows(0))),
                "fixed": step_overhead(pricer.efficiency, lay),
            }
        )
    return pd.DataFrame(out)


def floor_table(tokens: tuple[int, ...]) -> pd.DataFrame:
    """Measured µs per layer of the gpt-oss routed-expert block at ``tokens``, per (system, dtype, EP)."""
    rows = []
    for sdir, dtype in FLOOR_TABLES:
        df, version = load_table(sdir, "moe", "moe_perf", backend="trtllm")
        d = df[
            (df.hidden_size == 2880)
            & (df.inter_size == 2880)
            & (df.num_experts == 128)
            & (df.topk == 4)
            & (df.moe_tp_size == 1)
            & (df.distribution == "balanced")
            & (df.moe_dtype == dtype)
        ]
        for ep, g in d.groupby("moe_ep_size"):
            lat = g.groupby("num_tokens").latency.min()
            rows.append(
                {
                    "table": f"{sdir} {version}",
                    "dtype": dtype,
                    "ep": int(ep),
                    **{f"T={t}": round(float(lat.get(t, np.nan)) * 1e3, 1) for t in tokens},
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", default="1,4,16", help="token counts of table 2")
    a = ap.parse_args()
    pd.set_option("display.width", 200)
    s = step_split()
    ms = ["measured", "model", "step", "moe", "attention", "gemm", "memory", "collectives", "fixed"]
    g = s.groupby(["system", "engine", "backend", "tp"])
    t = (g[ms].median() * 1e3).round(2)
    t.insert(0, "error", g.error.median().round(3))
    t.insert(0, "n", g.size())
    print("== 1. TPOT (median signed error) and the modelled decode step's parts, median ms")
    print(t.to_string())
    print(
        "\n== 2. Measured routed-expert block, µs per layer (TensorRT-LLM moe_perf, gpt-oss shape, MoE TP1, balanced)"
    )
    print(floor_table(tuple(int(x) for x in a.tokens.split(","))).to_string(index=False))


if __name__ == "__main__":
    main()
