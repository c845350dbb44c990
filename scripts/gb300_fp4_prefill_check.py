"""GB300 against GB200 on aiconfigurator's disaggregated DeepSeek-R1 TTFT: is the model's Blackwell Ultra FP4 prefill too slow (issue 18)?

At main 1c5b9c1 the GB300 FP4 disaggregated TTFT groups are the only ones biased positive (SGLang 0.5.8.post1 35.6% /
+8.4%, TensorRT-LLM 0.8.1.post2 30.0% / +7.0%) where GB200's FP4 groups are biased negative. One reading: the model
prices GB300's FP4 prefill (NVFP4 GEMMs / MoE on SM103, 15 PF dense against GB200's 10 PF, NVIDIA "Inside
Blackwell Ultra", Aug 2025) too slow relative to GB200. This asks four things, each from data the model did not fit to
these rows:

1. ``kernels``: aiconfigurator's own GB300 and GB200 kernel tables (aiconfigurator-core's installed
   ``systems/data/{gb300,gb200}/{moe,gemm,mla}/<backend>/<version>/*.parquet``, the same collector, backend and
   version on both racks) at prefill shapes: the GB200 / GB300 latency ratio per kernel family, against the two
   chips' peak ratio (catalog ``peak_dense_tflops``: FP4 15,000 / 10,000 = 1.5; FP8 5,000 / 5,000 = 1.0).
2. ``model ops``: the model's own prefill step of one prompt at the rows' prefill layouts, priced on both systems
   with the rows' stack (cost/step.step_cost), GB200 / GB300 time per op group (routed experts, MLA prefill, the other
   GEMMs, collectives, the rest) and for the whole step.
3. ``pairs``: rows that ran the same engine, precision, ISL/OSL, prefill and decode layout and concurrency on both
   racks: the measured GB200 / GB300 TTFT ratio against the predicted one, with each row's engine release.
4. ``bands``: every unflagged disaggregated row of both racks (fit/aic_quality.py rules, as ``jalapeno validate``),
   TTFT median |error| / median error per system, engine, precision and load per prefill GPU (C / prefill GPUs;
   the bands of scripts/aic_gb_disagg_ttft_sign.py), with the engine releases in each group.

A diagnosis: nothing is fitted, no shipped value changes. Flagged rows are left out.
Run: python scripts/gb300_fp4_prefill_check.py [--part kernels|ops|pairs|bands] (about a minute all told)
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import pandas as pd

#: the two racks compared (jalapeno catalog names) and their aiconfigurator-core table directories
SYSTEMS = ("gb200-nvl72", "gb300-nvl72")
AIC_DIRS = {"gb200-nvl72": "gb200", "gb300-nvl72": "gb300", "b200": "b200_sxm", "b300": "b300_sxm"}
#: the (Blackwell Ultra, Blackwell) pairs whose kernel tables part 1 compares: the racks, and the same two chips in
#: 8-GPU HGX boxes (B300 / B200: FP4 13,500 / 9,000 = 1.5 in the catalog, as GB300 / GB200)
CHIP_PAIRS = (("gb300-nvl72", "gb200-nvl72"), ("b300", "b200"))
#: DeepSeek-R1's routed-expert shape (config.json: hidden 7168, moe_intermediate_size 2048, 256 experts, top-8)
DSR1_MOE = {"hidden_size": 7168, "inter_size": 2048, "num_experts": 256, "topk": 8}
#: prompt tokens a step at or above which a table row counts as a prefill shape
PREFILL_TOKENS = 1024
#: upper edges of the load bands, concurrency per prefill GPU (scripts/aic_gb_disagg_ttft_sign.BANDS)
BANDS = (2.0, 16.0, 128.0, np.inf)
#: the kernel tables read: (family, framework directory, version directory, file, shape filter)
TABLES = (
    ("moe", "sglang", "0.5.14", "moe_perf.parquet"),
    ("moe", "trtllm", "1.3.0rc20", "moe_perf.parquet"),
    ("gemm", "sglang", "0.5.14", "gemm_perf.parquet"),
    ("gemm", "trtllm", "1.3.0rc20", "gemm_perf.parquet"),
    ("mla", "sglang", "0.5.14", "context_mla_perf.parquet"),
    ("mla", "trtllm", "1.3.0rc20", "context_mla_perf.parquet"),
)


def peak_ratio(fmt: str, pair: tuple[str, str] = CHIP_PAIRS[0]) -> float:
    """Dense peak of one format of ``pair[0]`` over ``pair[1]``'s, from the catalog (``peak_dense_tflops``).

    >>> peak_ratio("fp4"), peak_ratio("fp8"), peak_ratio("fp4", ("b300", "b200"))
    (1.5, 1.0, 1.5)
    """
    from jalapeno.specs.catalog import load_system

    a, b = (load_system(s).chip.peak_flop_per_s[fmt] for s in pair)
    return round(float(a / b), 6)


def ratio_summary(ratio: pd.Series) -> dict:
    """n, median and the 10th / 90th percentiles of a ratio series (GB200 latency / GB300 latency).

    >>> ratio_summary(pd.Series([1.0, 1.1, 1.2]))
    {'n': 3, 'p10': 1.02, 'median': 1.1, 'p90': 1.18}
    """
    return {
        "n": int(ratio.size),
        "p10": round(float(ratio.quantile(0.1)), 3),
        "median": round(float(ratio.median()), 3),
        "p90": round(float(ratio.quantile(0.9)), 3),
    }


def _table(family: str, fw: str, ver: str, name: str, system: str) -> pd.DataFrame:
    from jalapeno.fit.kernel_tables import _root

    return pd.read_parquet(str(_root() / "data" / AIC_DIRS[system] / family / fw / ver / name))


def table_ratios(gb300: pd.DataFrame, gb200: pd.DataFrame, family: str) -> pd.DataFrame:
    """GB200 / GB300 latency of one aiconfigurator kernel table pair at prefill shapes, per kernel source and dtype
    (n, p10, median, p90 of the ratio over the shapes both racks collected; repeated collections of one shape
    enter once, at their median). ``family``: ``moe`` (DeepSeek-R1's routed-expert shape, balanced routing, at least
    :data:`PREFILL_TOKENS` tokens), ``gemm`` (m ≥ :data:`PREFILL_TOKENS`, every n, k) or ``mla`` (context
    attention, ISL ≥ :data:`PREFILL_TOKENS`; the dtype column is the KV cache's)."""
    key = [c for c in gb300.columns if c not in ("latency", "device", "framework", "version")]
    a, b = (t.groupby(key, as_index=False).latency.median() for t in (gb300, gb200))
    m = a.merge(b, on=key, suffixes=("_300", "_200"))
    if family == "moe":
        m = m[
            np.logical_and.reduce([m[k] == v for k, v in DSR1_MOE.items()])
            & (m.distribution == "balanced")
            & (m.num_tokens >= PREFILL_TOKENS)
        ]
        dtype = "moe_dtype"
    elif family == "gemm":
        m, dtype = m[m.m >= PREFILL_TOKENS], "gemm_dtype"
    else:
        m, dtype = m[m.isl >= PREFILL_TOKENS], "kv_cache_dtype"
    m = m.assign(ratio=m.latency_200 / m.latency_300)
    return pd.DataFrame(
        [{"kernel": src, "dtype": dt, **ratio_summary(g.ratio)} for (src, dt), g in m.groupby(["kernel_source", dtype])]
    )


def gemm_top_decile(gb300: pd.DataFrame, gb200: pd.DataFrame, dtype: str = "nvfp4") -> pd.DataFrame:
    """Achieved PFLOP/s (2·m·n·k / latency) of one GEMM table pair's largest shapes (the top decile by FLOP of
    the shapes both collected), per kernel source: median on each chip, the best on each, and the median ratio."""
    key = ["kernel_source", "gemm_dtype", "m", "n", "k"]
    a, b = (t.groupby(key, as_index=False).latency.median() for t in (gb300, gb200))
    m = a.merge(b, on=key, suffixes=("_300", "_200"))
    m = m[m.gemm_dtype == dtype].assign(flop=lambda d: 2.0 * d.m * d.n * d.k)
    m = m.assign(pf_300=m.flop / (m.latency_300 * 1e-3) / 1e15, pf_200=m.flop / (m.latency_200 * 1e-3) / 1e15)
    out = []
    for src, g in m.groupby("kernel_source"):
        top = g[g.flop >= g.flop.quantile(0.9)]
        out.append(
            {
                "kernel": src,
                "n": len(top),
                "pf_300 median": top.pf_300.median(),
                "pf_300 best": g.pf_300.max(),
                "pf_200 median": top.pf_200.median(),
                "pf_200 best": g.pf_200.max(),
                "ratio median": (top.latency_200 / top.latency_300).median(),
            }
        )
    return pd.DataFrame(out).round(3)


def kernel_ratios(pair: tuple[str, str] = CHIP_PAIRS[0]) -> pd.DataFrame:
    """:func:`table_ratios` of every table in :data:`TABLES` for one chip pair (the Blackwell Ultra system first),
    with the catalog's peak ratio of the kernels' compute format (none for MLA, whose math mixes formats)."""
    out = []
    for family, fw, ver, name in TABLES:
        t = table_ratios(*(_table(family, fw, ver, name, s) for s in pair), family)
        fmt = t.dtype.map(lambda d: "fp4" if "fp4" in d else "fp8" if "fp8" in d else "bf16")
        t.insert(0, "table", f"{fw} {ver}")
        t.insert(0, "family", family)
        out.append(t.assign(peak_ratio=np.nan if family == "mla" else fmt.map(lambda f: peak_ratio(f, pair))))
    return pd.concat(out, ignore_index=True)


#: op groups of the model's step, by op-name prefix (cost/ops.py names)
OP_GROUPS = (
    ("routed experts", ("moe.experts",)),
    ("MLA prefill", ("attn.mla_prefill",)),
    (
        "other GEMMs",
        (
            "attn.qkv_a_proj",
            "attn.q_b_proj",
            "attn.kv_b_proj",
            "attn.o_proj",
            "dense_ffn.gate_up",
            "dense_ffn.down",
            "moe.shared_expert.gate_up",
            "moe.shared_expert.down",
            "lm_head",
        ),
    ),
)


def op_group(name: str) -> str:
    """The op group (:data:`OP_GROUPS`) of one op of the model's step; ``rest`` for the others.

    >>> op_group("moe.experts"), op_group("attn.o_proj"), op_group("layer.elementwise")
    ('routed experts', 'other GEMMs', 'rest')
    """
    for group, names in OP_GROUPS:
        if name in names:
            return group
    return "rest"


def step_groups(p, system: str, tokens: float) -> dict:
    """The model's prefill step of one ``tokens``-token prompt (no prefix) at row ``p``'s prefill layout, priced on
    ``system`` with the row's stack and pool backends: seconds per op group (:data:`OP_GROUPS`, ``collectives``,
    ``rest``) and the step's ``interval``."""
    from jalapeno.cost.batch import Batch
    from jalapeno.cost.pool_backends import with_pool_backends
    from jalapeno.cost.step import step_cost
    from jalapeno.deploy.deployment import pool_overlap
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack
    from jalapeno.specs.catalog import load_model

    q = dataclasses.replace(p, system=system)
    st = point_stack(q)
    dep = with_stack_mtp(q.deployment, st, q.model)
    lay, model = dep.prefill.layout, load_model(q.model)
    pr = with_pool_backends(
        load_any_pricer(system, "calibrated", pricer="roofline", stack=st),
        dep.prefill,
        model,
        lay,
        dep.precision.kv_cache.name,
    )
    toks = np.asarray([tokens], dtype=float)
    # a bare prefill forward (no MTP, no memory fraction or engine profile), not cost/step.pool_step_cost's pool step
    sc = step_cost(
        model,
        pr,
        lay,
        dep.precision,
        Batch.make(prefill_tokens=toks, prefill_seqs=np.ones(1), prefill_ctx=np.zeros(1)),
        overlap=pool_overlap(dep.overlap, model, lay),
    )
    out = {g: 0.0 for g, _ in OP_GROUPS} | {"rest": 0.0}
    for r in sc.op_rows(0):
        out[op_group(r["op"])] += r["time_s"]
    out["collectives"] = float(np.sum(sc.coll_time_s[:, 0])) if np.size(sc.coll_time_s) else 0.0
    out["interval"] = float(sc.interval_s[0])
    return out


def peak_step(gb300: dict, gb200: dict, ratio: float) -> float:
    """GB300's step (s) if its routed experts ran at GB200's time over ``ratio`` (the FP4 peak ratio) and every
    other op as priced: a what-if of pricing Blackwell Ultra's NVFP4 MoE at its spec-sheet gain.

    >>> peak_step({"interval": 0.1, "routed experts": 0.04}, {"routed experts": 0.042}, 1.5)
    0.088
    """
    return round(gb300["interval"] - gb300["routed experts"] + gb200["routed experts"] / ratio, 12)


def _points():
    from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags
    from jalapeno.fit.validate import load_aiconfigurator

    points, _ = load_aiconfigurator()
    flagged = set(aic_ttft_flags(points)) | set(aic_source_flags(points))
    return [
        p
        for p in points
        if p.system in SYSTEMS
        and p.mode == "disagg"
        and p.mapping == "matched"
        and p.model == "deepseek-r1"
        and p.id not in flagged
        and p.deployment is not None
        and p.deployment.prefill is not None
    ]


def _layout(p) -> str:
    lay = p.deployment.prefill.layout
    return f"{p.framework.split()[0]} {p.precision} TP{lay.tp} DP{lay.dp} EP{lay.ep}"


def model_ops(points) -> pd.DataFrame:
    """GB200 / GB300 time of the model's one-prompt prefill step per op group, at each distinct GB300 FP4 and FP8
    prefill layout (engine, precision, TP, DP, EP) and ISL of the rows (prompt 0.9·ISL: InferenceX's lengths are
    uniform in [0.8, 1.0]·ISL), with the share of each group in GB300's step."""
    seen, out = set(), []
    for p in points:
        if p.system != "gb300-nvl72" or (_layout(p), p.isl) in seen:
            continue
        seen.add((_layout(p), p.isl))
        a, b = step_groups(p, "gb300-nvl72", 0.9 * p.isl), step_groups(p, "gb200-nvl72", 0.9 * p.isl)
        row = {"prefill": _layout(p), "isl": p.isl, "gb300_step_ms": 1e3 * a["interval"]}
        if p.precision == "fp4":  # GB300's routed experts at GB200's time over the FP4 peak ratio: the step it gives
            row["step at peak ratio"] = peak_step(a, b, peak_ratio("fp4")) / a["interval"]
        for g in [g for g, _ in OP_GROUPS] + ["collectives", "rest", "interval"]:
            row[f"{g} ratio"] = b[g] / a[g] if a[g] > 0 else np.nan
            if g != "interval":
                row[f"{g} share"] = a[g] / a["interval"]
        out.append(row)
    return pd.DataFrame(out).sort_values(["prefill", "isl"]).round(3)


def _pair_key(p) -> tuple:
    d = p.deployment
    return (p.framework.split()[0], p.precision, p.isl, p.osl, p.concurrency, repr(d.prefill), repr(d.decode))


def pairs(points, pred: pd.DataFrame) -> pd.DataFrame:
    """Rows run on both racks at the same engine, precision, ISL/OSL, concurrency and prefill and decode pools:
    the measured and the predicted GB200 / GB300 TTFT ratio, with the two rows' engine releases."""
    by: dict[tuple, dict] = {}
    for p in points:
        by.setdefault(_pair_key(p), {})[p.system] = p
    out = []
    for key, d in by.items():
        if len(d) < 2:
            continue
        a, b = d["gb300-nvl72"], d["gb200-nvl72"]
        if a.id not in pred.index or b.id not in pred.index:
            continue
        out.append(
            {
                "engine": key[0],
                "precision": key[1],
                "isl": key[2],
                "osl": key[3],
                "c": key[4],
                "prefill": _layout(a).split(" ", 2)[2],
                "release 300": a.framework.split()[-1],
                "release 200": b.framework.split()[-1],
                "measured 300 s": pred.loc[a.id, "measured"],
                "measured 200/300": pred.loc[b.id, "measured"] / pred.loc[a.id, "measured"],
                "predicted 200/300": pred.loc[b.id, "predicted"] / pred.loc[a.id, "predicted"],
                "err 300": pred.loc[a.id, "error"],
                "err 200": pred.loc[b.id, "error"],
            }
        )
    return pd.DataFrame(out).sort_values(["engine", "precision", "isl", "osl", "c"]).round(3)


def same_series(a: str, b: str) -> bool:
    """Whether two engine releases are one release series (the same major.minor.patch; post releases ignored).

    >>> same_series("0.5.8", "0.5.8.post1"), same_series("0.5.5.post2", "0.5.8.post1")
    (True, False)
    """
    return a.split(".")[:3] == b.split(".")[:3]


def pair_summary(t: pd.DataFrame) -> pd.DataFrame:
    """Per engine and precision, over the pairs of one release series and over the others: n, the median measured
    and predicted GB200 / GB300 TTFT ratio, and each rack's median TTFT error (%)."""
    t = t.assign(
        series=[("same" if same_series(a, b) else "different") for a, b in zip(t["release 300"], t["release 200"])]
    )
    return (
        t.groupby(["engine", "precision", "series"])
        .agg(
            n=("c", "size"),
            measured=("measured 200/300", "median"),
            predicted=("predicted 200/300", "median"),
            err_300=("err 300", lambda e: 100 * e.median()),
            err_200=("err 200", lambda e: 100 * e.median()),
        )
        .round(3)
    )


def load_band(concurrency: float, prefill_gpus: int) -> str:
    """The band of C per prefill GPU a row falls in (:data:`BANDS`).

    >>> load_band(4, 4), load_band(64, 4), load_band(8192, 16)
    ('C/gpu <= 2', 'C/gpu 2-16', 'C/gpu > 128')
    """
    per, lo = float(concurrency) / prefill_gpus, 0.0
    for hi in BANDS:
        if per <= hi:
            return f"C/gpu <= {hi:g}" if lo == 0.0 else f"C/gpu > {lo:g}" if np.isinf(hi) else f"C/gpu {lo:g}-{hi:g}"
        lo = hi
    raise AssertionError("unreachable: the last band is open")


def bands(points, pred: pd.DataFrame) -> pd.DataFrame:
    """TTFT median |error| / median error (%) per system, engine, precision and load band, with n and releases."""
    rows = []
    for p in points:
        if p.id not in pred.index or not np.isfinite(pred.loc[p.id, "error"]):
            continue
        lay = p.deployment.prefill.layout
        rows.append(
            {
                "system": p.system,
                "engine": p.framework.split()[0],
                "precision": p.precision,
                "band": load_band(p.concurrency, p.deployment.prefill.workers * lay.tp * lay.dp),
                "release": p.framework.split()[-1],
                "error": pred.loc[p.id, "error"],
            }
        )
    df = pd.DataFrame(rows)
    t = df.groupby(["system", "engine", "precision", "band"]).agg(
        n=("error", "size"),
        med=("error", lambda e: 100 * e.abs().median()),
        bias=("error", lambda e: 100 * e.median()),
        releases=("release", lambda r: ",".join(sorted(set(r)))),
    )
    return t.round(1)


def _ttft(points) -> pd.DataFrame:
    from jalapeno.fit.validate import predict_points

    pr = predict_points(points)
    return pr[pr.metric == "ttft_s"].set_index("id")[["measured", "predicted", "error"]]


def main(part: str) -> None:
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    if part in ("all", "kernels"):
        for pair in CHIP_PAIRS:
            print(
                f"1. aiconfigurator kernel tables, {pair[1]} latency / {pair[0]} latency at prefill shapes "
                "(peak_ratio: catalog):"
            )
            print(kernel_ratios(pair).to_string(index=False))
            for fw, ver in (("sglang", "0.5.14"), ("trtllm", "1.3.0rc20")):
                g = gemm_top_decile(*(_table("gemm", fw, ver, "gemm_perf.parquet", s) for s in pair))
                print(f"   NVFP4 GEMMs, {fw} {ver}, largest decile by FLOP: achieved PFLOP/s ({pair[0]} = _300)")
                print(g.to_string(index=False))
    points = _points() if part != "kernels" else []
    if part in ("all", "ops"):
        print(
            "\n2. The model's one-prompt prefill step, GB200 time / GB300 time per op group (share: of GB300's step):"
        )
        print(model_ops(points).to_string(index=False))
    if part in ("all", "pairs", "bands"):
        pred = _ttft(points)
        if part in ("all", "pairs"):
            print("\n3. Rows run on both racks with the same pools and concurrency (TTFT):")
            pt = pairs(points, pred)
            print(pt.to_string(index=False))
            print("   by release series (medians; err in %):")
            print(pair_summary(pt).to_string())
        if part in ("all", "bands"):
            print("\n4. TTFT error by system, engine, precision and load per prefill GPU (%):")
            print(bands(points, pred).to_string())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", default="all", choices=("all", "kernels", "ops", "pairs", "bands"))
    main(ap.parse_args().part)
