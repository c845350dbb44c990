"""Is GB300 priced slower than its siblings where the measured rows say otherwise? (docs/gap_aic_itl.md,
"round 30, gb300b30"). Nothing here is shipped; nothing is fitted or written.

Part 1 (from a validate CSV, seconds). Twins: every GB300 aiconfigurator TPOT row with a GB200 row of the same
model, precision, engine release (``.postN`` dropped: SGLang 0.5.8 and 0.5.8.post1 are one release line),
ISL/OSL, decode pool (workers × attention TP/DP · MoE TP/EP) and concurrency (the
prefill pools may differ; TPOT is the decode pool's). For each twin the measured ratio m = TPOT(GB300) / TPOT(GB200)
and the modelled one p; ``p/m − 1`` > 0 means the model makes GB300 slower against GB200 than the runs were.
Medians by the decode pool's attention sharding (``ADP``: attention data parallel; ``ATP``: attention tensor
parallel, the sequence set shared by the worker's GPUs).

Part 2 (same CSV). The interactivity error (predicted / measured − 1, positive = the model too fast) of both racks'
aiconfigurator rows by attention sharding, all rows and held-out rows: what the GB300 held-out bias is made of.

Part 3 (``--steps``, about 30 s). Every GB300 DeepSeek-R1 aiconfigurator row priced as validation prices it
(serve/point.serve_at_concurrency with the row's stack and deployment), and the same row with its system swapped
for GB200 and (decode pools of at most 8 GPUs, one HGX node) B300: TPOT and the decode-only step at the modelled
decode batch split into routed experts (``moe``), attention, the other GEMMs, element-wise/memory ops,
collectives and the per-step fixed cost (cost/step.step_overhead), ms; medians per (engine, precision, pool).

Part 4 (``--mla``, seconds; needs aiconfigurator-core). TensorRT-LLM 1.3.0rc20's measured MLA decode kernel
(``mla/trtllm/1.3.0rc20/generation_mla_perf``, FP8 KV cache, every shape timed on all three) on GB300 against GB200
and B300: the median latency ratio per batch band. Blackwell Ultra doubles the SFU's exponential rate for
attention (NVIDIA Technical Blog, "Inside NVIDIA Blackwell Ultra", Aug 2025: "2X attention-layer acceleration");
if the decode kernel used it, GB300 / GB200 would fall below 1 where attention is compute-bound (large batches).

Usage: python scripts/gb300_twin_check.py [VALIDATE_CSV] [--steps] [--mla]   (default CSV: /tmp/s30/base.csv)
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace

import numpy as np
import pandas as pd

_POOL = re.compile(r"D (\d+)x\(attn TP(\d+) DP(\d+) · MoE TP(\d+) EP(\d+)")
SYSTEMS = ("gb300-nvl72", "gb200-nvl72")


def decode_pool(deployment: str) -> str:
    """The decode pool of a disaggregated deployment label, ``""`` for an aggregated one.

    >>> decode_pool("disagg P 1x(attn TP1 DP2 · MoE TP1 EP2) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]")
    '4x TP8 DP1 TP1 EP8'
    """
    m = _POOL.search(str(deployment))
    return "" if not m else "{}x TP{} DP{} TP{} EP{}".format(*m.groups())


def sharding(deployment: str) -> str:
    """``ADP`` when the decode pool runs attention data parallel, ``ATP`` when attention TP, ``agg`` otherwise.

    >>> sharding("disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]")
    'ADP'
    """
    m = _POOL.search(str(deployment))
    return "agg" if not m else ("ADP" if int(m.group(3)) > 1 else "ATP")


def aic_rows(csv: str, metric: str) -> pd.DataFrame:
    """The two racks' unflagged aiconfigurator rows of ``metric`` with their decode pool and sharding."""
    d = pd.read_csv(csv)
    d = d[(d.source == "aiconfigurator") & d.system.isin(SYSTEMS) & (d.metric == metric) & d.quality.isna()]
    return d.assign(
        pool=d.deployment.map(decode_pool),
        attn=d.deployment.map(sharding),
        release=d.framework.str.replace(r"\.post\d+$", "", regex=True),
    )


def twins(csv: str) -> pd.DataFrame:
    """One record per (GB300 row, GB200 twin): measured and modelled TPOT ratios GB300 / GB200.

    A GB300 row with two GB200 twins (two GB200 configurations of the same decode pool) gives two records."""
    d = aic_rows(csv, "tpot_s")
    d = d[d.pool != ""]
    key = ["model", "precision", "release", "isl", "osl", "pool", "concurrency"]
    a, b = d[d.system == SYSTEMS[0]], d[d.system == SYSTEMS[1]]
    j = a.merge(b, on=key, suffixes=("_300", "_200"))
    return j.assign(
        m=j.measured_300 / j.measured_200,
        p=j.predicted_300 / j.predicted_200,
        attn=j.attn_300,
        split=j.split_300,
        err_300=j.error_300,
        err_200=j.error_200,
    )[
        key
        + [
            "attn",
            "split",
            "measured_300",
            "predicted_300",
            "measured_200",
            "predicted_200",
            "m",
            "p",
            "err_300",
            "err_200",
        ]
    ]


def twin_summary(t: pd.DataFrame) -> pd.DataFrame:
    """Median measured ratio, modelled ratio and relative excess ``p/m − 1`` per attention sharding and overall."""
    t = t.assign(rel=t.p / t.m - 1)
    g = pd.concat([t, t.assign(attn="all")]).groupby("attn")
    return pd.DataFrame(
        {
            "n": g.size(),
            "measured_ratio": g.m.median(),
            "model_ratio": g.p.median(),
            "model_over_measured": g.rel.median(),
            "tpot_err_300": g.err_300.median(),
            "tpot_err_200": g.err_200.median(),
        }
    ).round(3)


def composition(csv: str) -> pd.DataFrame:
    """Interactivity rows per (system, attention sharding, held out?): n and median signed error, %."""
    d = aic_rows(csv, "interactivity")
    d = d[d.model == "deepseek-r1"]
    rows = []
    for (s, ho), g in d.groupby(["system", d.split == "held_out"]):
        for attn, h in list(g.groupby("attn")) + [("all", g)]:
            rows.append(
                {
                    "system": s,
                    "rows": "held-out" if ho else "fit",
                    "attn": attn,
                    "n": len(h),
                    "bias_pct": round(100 * float(h.error.median()), 1),
                }
            )
    return pd.DataFrame(rows)


def step_split(system: str | None = None) -> pd.DataFrame:
    """Every GB300 DeepSeek-R1 aiconfigurator point priced on ``system`` (None: its own): TPOT and the parts of
    its decode-only step at the modelled decode batch, s (as scripts/aic_gptoss_split.step_split)."""
    from jalapeno.cost.pool_backends import with_moe_backend
    from jalapeno.cost.step import Batch, pool_step_cost, step_overhead
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    model = load_model("deepseek-r1")
    out = []
    for p in load_aiconfigurator()[0]:
        if p.system != SYSTEMS[0] or p.model != "deepseek-r1" or not p.measured.get("tpot_s") or p.deployment is None:
            continue
        q = p if system is None else replace(p, system=system)
        st = point_stack(q)
        dep = with_stack_mtp(q.deployment, st, q.model)
        lay = dep.decode.layout
        if system == "b300" and lay.tp * lay.dp * lay.pp > 8:
            continue
        pricer = load_any_pricer(q.system, "calibrated", pricer="roofline", stack=st)
        wl = point_workload(q)
        run = serve_at_concurrency(model, pricer, dep, wl, [q.concurrency])
        b = float(run.decode_batch[0])
        pr = with_moe_backend(pricer, dep.decode.moe_backend, model, lay)
        sc = pool_step_cost(
            model, pr, dep, lay, Batch.make(decode_seqs=np.array([b / lay.pp]), decode_ctx=wl.decode_ctx)
        )
        parts = {"moe": 0.0, "attention": 0.0, "gemm": 0.0, "memory": 0.0}
        for o in sc.op_rows(0):
            parts[o["kind"] if o["kind"] in parts else "memory"] += o["time_s"]
        out.append(
            {
                "id": p.id,
                "engine": p.framework.split()[0],
                "precision": p.precision,
                "pool": decode_pool(dep.label) or lay.label,
                "attn": "ADP" if lay.dp > 1 else "ATP",
                "measured": p.measured["tpot_s"],
                "tpot": float(run.tpot_s[0]),
                "batch": b,
                **parts,
                "collectives": float(sum(c["time_s"] for c in sc.collective_rows(0))),
                "fixed": step_overhead(pr.efficiency, lay),
            }
        )
    return pd.DataFrame(out)


def steps_table() -> pd.DataFrame:
    """Part 3: per (engine, precision, decode pool) the median TPOT and step parts on GB300, GB200 and B300, ms."""
    cols = ["tpot", "moe", "attention", "gemm", "memory", "collectives", "fixed"]
    frames = []
    for name, system in (("gb300", None), ("gb200", "gb200-nvl72"), ("b300", "b300")):
        s = step_split(system)
        if len(s):
            frames.append(s.assign(on=name))
    s = pd.concat(frames)
    g = s.groupby(["engine", "precision", "pool", "on"], sort=True)
    t = (g[cols].median() * 1e3).round(2)
    t.insert(0, "measured", (g.measured.median() * 1e3).round(2))
    t.insert(0, "n", g.size())
    return t


def mla_ratios() -> pd.DataFrame:
    """Part 4: median GB300 / GB200 and GB300 / B300 latency of the FP8-KV MLA decode rows timed on all three."""
    from jalapeno.fit.kernel_tables import load_table

    keys = ["mla_dtype", "kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "step"]
    lat = {}
    for name, sdir in (("gb300", "gb300"), ("gb200", "gb200"), ("b300", "b300_sxm")):
        df, _ = load_table(sdir, "mla", "generation_mla_perf", backend="trtllm")
        lat[name] = df.groupby(keys).latency.min()
    j = pd.concat(lat, axis=1).dropna().reset_index()
    j = j[j.kv_cache_dtype.astype(str).str.contains("fp8")]
    j = j.assign(
        vs_gb200=j.gb300 / j.gb200,
        vs_b300=j.gb300 / j.b300,
        batch=pd.cut(j.batch_size, [0, 4, 16, 64, 256, 4096]).astype(str),
    )
    g = pd.concat([j, j.assign(batch="all")]).groupby("batch", sort=False)
    return pd.DataFrame(
        {"rows": g.size(), "gb300_over_gb200": g.vs_gb200.median(), "gb300_over_b300": g.vs_b300.median()}
    ).round(3)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    csv = args[0] if args else "/tmp/s30/base.csv"
    pd.set_option("display.width", 220)
    pd.set_option("display.max_rows", 400)
    t = twins(csv)
    print("== 1. GB300 / GB200 twins (same decode pool and concurrency), TPOT ratios")
    print(twin_summary(t).to_string())
    print()
    show = t.assign(
        **{c: (t[c] * 1e3).round(2) for c in ("measured_300", "predicted_300", "measured_200", "predicted_200")},
        m=t.m.round(3),
        p=t.p.round(3),
        err_300=t.err_300.round(3),
        err_200=t.err_200.round(3),
    )
    print(
        show.sort_values(["attn", "release", "precision", "isl", "osl", "pool", "concurrency"]).to_string(index=False)
    )
    print("\n== 2. DeepSeek-R1 interactivity error by the decode pool's attention sharding, median %")
    print(composition(csv).to_string(index=False))
    if "--steps" in sys.argv:
        print(
            "\n== 3. GB300 rows priced on GB300, GB200 and B300 (decode pools <= 8 GPUs): TPOT and step parts, median ms"
        )
        print(steps_table().to_string())
    if "--mla" in sys.argv:
        print("\n== 4. TensorRT-LLM 1.3.0rc20 MLA decode kernel (FP8 KV), measured latency ratio, median by batch")
        print(mla_ratios().to_string())


if __name__ == "__main__":
    main()
