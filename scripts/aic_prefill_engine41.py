"""The SGLang tensor-parallel prefill step of the GB200/GB300/B200 disaggregated DeepSeek-R1 rows, priced by jalapeno
and by aiconfigurator's own engine on its own SGLang kernel tables, against the rows' measured light-load TTFT
(issue 18, round 41, aicgb41; diagnosis, nothing fitted or shipped).

Round 40 (scripts/aic_ttft_share_isl40.py) found SGLang's 8k prefill priced too slow in FP4 and too fast in FP8 on the
same GB300 TP4 pool, from each deployment's light-load floor. This asks whether the kernels explain it. For every
unflagged disaggregated SGLang DeepSeek-R1 deployment whose prefill pool is attention TP (DP 1) on a system with
aiconfigurator-core's SGLang 0.5.14 tables (gb200, gb300, b200_sxm):

1. ``steps``: the one-prompt prefill step (prompt :data:`PROMPT_FRACTION` × ISL) priced (a) by jalapeno (cost/step,
   the row's stack and pool backends: scripts/gb300_fp4_prefill_check.step_groups) and (b) by aiconfigurator's engine
   (``aiconfigurator_core.sdk.engine.EngineHandle.compile(...).predict_prefill_latency(1, prompt)``, the installed
   0.12.0 package, its SGLang tables: routed experts ``nvfp4`` / ``fp8_block`` under ``sglang_flashinfer_trtllm_moe``,
   the rows' recipes' ``--moe-runner-backend flashinfer_trtllm``; GEMMs ``fp8_block``, jalapeno's FP4 preset's
   attention and dense format; FP8 KV, BF16 MLA math, :data:`AIC_QUANT`), with aiconfigurator's own disaggregated TTFT
   (1.8 × that latency, :data:`AIC_TTFT_FACTOR`), beside the lowest-load row's measured and predicted TTFT.
2. ``increments``: the 1k → 8k increment of each over deployments of one system, precision and prefill pool (the
   rows' floors: the lowest concurrency ≤ :data:`FLOOR_C_MAX` of each deployment).
3. ``ops``: the two kernel families whose formats differ, per layer at the 8k prompt, from aiconfigurator's SGLang
   tables read directly (routed experts at the pool's MoE TP × EP, balanced routing; MLA context at heads / TP)
   against jalapeno's op times.
4. ``decode``: every GB200/GB300 disaggregated DeepSeek-R1 row without MTP whose decode pool is attention TP (DP 1),
   SGLang or TensorRT-LLM: the measured TPOT, jalapeno's, and aiconfigurator's engine's one decode step
   (``predict_decode_latency(batch, ISL + OSL/2, 2)``, batch = C / decode workers, its tables of the row's engine,
   :data:`AIC_DECODE_QUANT`), median error by system, engine and decode pool.
5. ``--budget``: a what-if on the SGLang low-latency rows fit/aic_sgl_recv.DECODE_RECV_INTERVALS matches to their
   recipes: each priced (fit/validate.predict_points) at the shipped prefill budget (8,192 tokens a step) and at its
   recipe's (:data:`RECIPE_PREFILL_BUDGET`), TTFT before / after per row (nothing shipped).

aiconfigurator's engine is called as an outside reference, as scripts/aic_own_error.py calls its estimator; nothing
of it enters the model. A row with no table for its shape prints NaN.
Usage: python scripts/aic_prefill_engine41.py VALIDATE_ALL.csv (VALIDATE_ALL.csv from ``jalapeno validate --json -o
FILE``, every row; about 30 s)
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import numpy as np
import pandas as pd

#: InferenceX/srt-slurm's sa-bench draws each prompt uniformly in [0.8, 1.0] × ISL (NVIDIA/srt-slurm @5063eb43
#: ``src/srtctl/benchmarks/scripts/sa-bench/bench.sh``: RANDOM_RANGE_RATIO default 0.8), mean 0.9 × ISL
PROMPT_FRACTION = 0.9
#: aiconfigurator's disaggregated TTFT factor on its static context latency (ai-dynamo/aiconfigurator @095f58a
#: ``src/aiconfigurator/sdk/picking.py`` ``_AUTOSCALE_TTFT_CORRECTION_FACTOR``; round 40, docs/gap_aic_ttft.md)
AIC_TTFT_FACTOR = 1.8
#: the largest concurrency whose row stands for a deployment's light-load floor (scripts/aic_ttft_share_isl40)
FLOOR_C_MAX = 16
#: catalog system -> aiconfigurator system folder, for the systems with SGLang 0.5.14 MoE/MLA/GEMM tables
AIC_SYSTEMS = {"gb200-nvl72": "gb200", "gb300-nvl72": "gb300", "b200": "b200_sxm"}
#: jalapeno precision -> aiconfigurator quant modes (moe, gemm, kv cache, fmha): the tables' MLA context rows are
#: BF16 math over FP8 or BF16 KV (``mla_dtype`` bfloat16 only), so fmha is bfloat16
AIC_QUANT = {"fp4": ("nvfp4", "fp8_block", "fp8", "bfloat16"), "fp8": ("fp8_block", "fp8_block", "fp8", "bfloat16")}
#: (aiconfigurator backend, jalapeno precision) -> (moe, gemm, kv cache, fmha) for the decode step: TensorRT-LLM's
#: tables time FP8 MLA generation (``fp8`` fmha), SGLang's BF16 math (:data:`AIC_QUANT`)
AIC_DECODE_QUANT = {("sglang", k): v for k, v in AIC_QUANT.items()} | {
    ("trtllm", "fp4"): ("nvfp4", "fp8_block", "fp8", "fp8"),
    ("trtllm", "fp8"): ("fp8_block", "fp8_block", "fp8", "fp8"),
}
#: SGLang's prefill batch of new prompts is bounded by ``--max-prefill-tokens`` (default 16,384: sgl-project/sglang
#: ``python/sglang/srt/server_args.py`` ``ServerArgs.max_prefill_tokens``) and ``--chunked-prefill-size``; per
#: (system, precision, ISL) of the low-latency recipes (NVIDIA/srt-slurm @5063eb43 ``recipes/gb{200,300}-fp{4,8}/
#: {1k1k,8k1k}/[stp/]low[-_]latency.yaml``, prefill worker): the smaller of the two. GB300 FP8 8k sets both 32,768;
#: GB300 FP8 1k both 8,192; the others set chunked 8,192 (1k) / 24,576 (8k) and leave max-prefill-tokens at 16,384
RECIPE_PREFILL_BUDGET = {
    ("gb300-nvl72", "fp4", 1024): 8192,
    ("gb300-nvl72", "fp4", 8192): 16384,
    ("gb300-nvl72", "fp8", 1024): 8192,
    ("gb300-nvl72", "fp8", 8192): 32768,
    ("gb200-nvl72", "fp4", 1024): 8192,
    ("gb200-nvl72", "fp4", 8192): 16384,
    ("gb200-nvl72", "fp8", 1024): 8192,
    ("gb200-nvl72", "fp8", 8192): 16384,
}
#: aiconfigurator's SGLang MoE kernel the recipes run (``--moe-runner-backend flashinfer_trtllm``)
AIC_MOE_KERNEL = "sglang_flashinfer_trtllm_moe"
#: DeepSeek-R1 (config.json): routed-expert shape, attention heads, MoE and all layers
DSR1 = {
    "hidden_size": 7168,
    "inter_size": 2048,
    "num_experts": 256,
    "topk": 8,
    "heads": 128,
    "moe_layers": 58,
    "layers": 61,
}


def loglog(x: float, xs, ys) -> float:
    """Log-log interpolation of ``ys`` over increasing ``xs`` at ``x`` (NaN outside [xs[0], xs[-1]] or with fewer
    than two points).

    >>> round(loglog(2000.0, [1000.0, 8000.0], [1.0, 8.0]), 6)
    2.0
    >>> loglog(9000.0, [1000.0, 8000.0], [1.0, 8.0])
    nan
    """
    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if xs.size < 2 or not xs[0] <= x <= xs[-1]:
        return float("nan")
    return float(np.exp(np.interp(np.log(x), np.log(xs), np.log(ys))))


def moe_tp(tp: int, dp: int, ep: int) -> int:
    """The routed experts' tensor-parallel degree of a pool (its tp · dp ranks split ep ways by expert).

    >>> moe_tp(4, 1, 1), moe_tp(8, 1, 8), moe_tp(1, 8, 8)
    (4, 1, 1)
    """
    return tp * dp // ep


def increments(fl: pd.DataFrame, short: int = 1024, long: int = 8192) -> pd.DataFrame:
    """The ISL ``short`` → ``long`` increment (s) of each column of ``fl`` named in ``cols`` below, over pairs of
    floor rows sharing system, precision and prefill pool; ``ratio_*`` = that increment over the measured one.
    ``fl``: columns system, precision, pool, isl, cfg, measured, predicted, jal_step, aic_step (seconds).

    >>> fl = pd.DataFrame({"system": "s", "precision": "fp4", "pool": "p", "isl": [1024, 8192], "cfg": ["a", "b"],
    ...                    "measured": [0.30, 0.35], "predicted": [0.2, 0.45], "jal_step": [0.03, 0.13],
    ...                    "aic_step": [0.04, 0.14]})
    >>> r = increments(fl).iloc[0]
    >>> [round(float(r[k]), 3) for k in ("d_measured", "d_predicted", "d_jal_step", "ratio_aic_step")]
    [0.05, 0.25, 0.1, 2.0]
    """
    key, cols = ["system", "precision", "pool"], ["measured", "predicted", "jal_step", "aic_step"]
    m = fl[fl.isl == short][[*key, "cfg", *cols]].merge(
        fl[fl.isl == long][[*key, "cfg", *cols]], on=key, suffixes=("_short", "_long")
    )
    for c in cols:
        m[f"d_{c}"] = m[f"{c}_long"] - m[f"{c}_short"]
    for c in cols[1:]:
        m[f"ratio_{c}"] = m[f"d_{c}"] / m.d_measured
    return m[[*key, "cfg_short", "cfg_long", *[f"d_{c}" for c in cols], *[f"ratio_{c}" for c in cols[1:]]]]


@functools.lru_cache(maxsize=64)
def _aic_engine(system: str, backend: str, quant: tuple, tp: int, moe_tp_size: int, ep: int):
    """aiconfigurator's compiled DeepSeek-R1 engine for one configuration (cached: a compile takes about a second)."""
    from aiconfigurator_core.sdk.engine import EngineHandle

    moe, gemm, kv, fmha = quant
    return EngineHandle.compile(
        "deepseek-ai/DeepSeek-R1",
        AIC_SYSTEMS[system],
        backend,
        tp_size=tp,
        moe_tp_size=moe_tp_size,
        moe_ep_size=ep,
        gemm_quant_mode=gemm,
        moe_quant_mode=moe,
        kvcache_quant_mode=kv,
        fmha_quant_mode=fmha,
    )


def aic_prefill_s(system: str, precision: str, tp: int, dp: int, ep: int, tokens: int) -> float:
    """aiconfigurator's engine's static prefill latency (s) of one ``tokens``-token prompt of DeepSeek-R1 under SGLang
    on ``system`` (a key of :data:`AIC_SYSTEMS`) at attention TP ``tp`` (DP ``dp`` must be 1), its own tables
    (:data:`AIC_QUANT`); NaN where its database lacks a table the step needs.

    Raises:
        ValueError: ``dp`` is not 1 or ``precision`` has no entry in :data:`AIC_QUANT` (fix: pass a TP pool and
            fp4/fp8).
    """
    if dp != 1 or precision not in AIC_QUANT:
        raise ValueError(
            f"dp={dp}, precision={precision!r}: only attention-TP (dp 1) pools in {sorted(AIC_QUANT)}; "
            "fix: filter the rows"
        )
    from aiconfigurator_core.sdk.errors import PerfDataNotAvailableError

    try:
        h = _aic_engine(system, "sglang", AIC_QUANT[precision], tp, moe_tp(tp, dp, ep), ep)
        return 1e-3 * h.predict_prefill_latency(1, int(tokens))
    except PerfDataNotAvailableError:
        return float("nan")


def aic_decode_step_s(system: str, backend: str, precision: str, tp: int, ep: int, batch: int, ctx: int) -> float:
    """aiconfigurator's engine's one decode step (s) of ``batch`` DeepSeek-R1 sequences at ``ctx`` tokens of context,
    attention TP ``tp`` (DP 1), MoE EP ``ep`` (MoE TP tp/ep), ``backend`` ``sglang`` or ``trtllm`` on ``system`` (a
    key of :data:`AIC_SYSTEMS`); NaN where its database lacks a table the step needs.

    Raises:
        KeyError: (backend, precision) has no entry in :data:`AIC_DECODE_QUANT`.
    """
    from aiconfigurator_core.sdk.errors import PerfDataNotAvailableError

    quant = AIC_DECODE_QUANT[(backend, precision)]
    try:
        h = _aic_engine(system, backend, quant, tp, tp // ep, ep)
        return 1e-3 * h.predict_decode_latency(max(1, round(batch)), int(ctx), 2)
    except PerfDataNotAvailableError:
        return float("nan")


def decode_pool(deployment: str) -> tuple[int, int, int, int]:
    """(workers, attention TP, DP, MoE EP) of a validate table's decode pool (``... + D 4x(attn TP8 DP1 · MoE TP1
    EP8) ...``).

    >>> decode_pool("disagg P 1x(attn TP1 DP2 · MoE TP1 EP2) + D 7x(attn TP8 DP1 · MoE TP1 EP8) [fp4]")
    (7, 8, 1, 8)

    Raises:
        ValueError: no decode pool in the string (fix: pass disaggregated rows).
    """
    import re

    m = re.search(r"D (\d+)x\(attn TP(\d+) DP(\d+) · MoE TP\d+ EP(\d+)[^)]*\)", deployment)
    if m is None:
        raise ValueError(
            f"deployment {deployment!r} has no decode pool 'D Nx(attn TPa DPb · MoE TPc EPd)'; "
            "fix: pass disaggregated rows"
        )
    return tuple(int(v) for v in m.groups())


def decode_table(path: str) -> pd.DataFrame:
    """Part 4's rows: measured, jalapeno's and aiconfigurator's TPOT (s) with their errors."""
    d = pd.read_csv(path)
    d = d[
        (d.source == "aiconfigurator")
        & (d["mode"] == "disagg")
        & (d.metric == "tpot_s")
        & d.system.isin(["gb200-nvl72", "gb300-nvl72"])
        & (d.model == "deepseek-r1")
        & ~d.deployment.str.contains("MTP", regex=False)
    ]
    out = []
    for _, r in d.iterrows():
        w, tp, dp, ep = decode_pool(r.deployment)
        if dp != 1:
            continue
        be = "sglang" if r.framework.startswith("sglang") else "trtllm"
        aic = aic_decode_step_s(r.system, be, r.precision, tp, ep, r.concurrency / w, int(r.isl + r.osl / 2))
        out.append(
            {
                "system": r.system,
                "engine": be,
                "precision": r.precision,
                "pool": f"TP{tp} EP{ep}",
                "split": r.split,
                "measured": r.measured,
                "jal_err": r.predicted / r.measured - 1,
                "aic_err": aic / r.measured - 1,
            }
        )
    return pd.DataFrame(out)


def table_ops(system: str, precision: str, tp: int, dp: int, ep: int, tokens: float) -> dict:
    """Per-layer ms of the routed experts and the MLA context at ``tokens`` from aiconfigurator's SGLang 0.5.14 tables
    read directly (balanced routing, :data:`AIC_MOE_KERNEL`; MLA at heads/tp, batch 1, FP8 KV), log-log in tokens."""
    from jalapeno.fit.kernel_tables import load_table

    sd = AIC_SYSTEMS[system]
    moe, _ = load_table(sd, "moe", "moe_perf", backend="sglang")
    s = moe[
        (moe.kernel_source == AIC_MOE_KERNEL)
        & (moe.moe_dtype == AIC_QUANT[precision][0])
        & (moe.distribution == "balanced")
        & (moe.moe_tp_size == moe_tp(tp, dp, ep))
        & (moe.moe_ep_size == ep)
        & (moe.hidden_size == DSR1["hidden_size"])
        & (moe.inter_size == DSR1["inter_size"])
        & (moe.num_experts == DSR1["num_experts"])
        & (moe.topk == DSR1["topk"])
    ]
    s = s.groupby("num_tokens").latency.min()
    mla, _ = load_table(sd, "mla", "context_mla_perf", backend="sglang")
    m = mla[(mla.num_heads == DSR1["heads"] // tp) & (mla.batch_size == 1) & (mla.kv_cache_dtype == "fp8")]
    m = m.groupby("isl").latency.min()
    return {"aic_moe_ms": loglog(tokens, s.index, s.values), "aic_mla_ms": loglog(tokens, m.index, m.values)}


def _rows(path: str) -> pd.DataFrame:
    d = pd.read_csv(path)
    d = d[
        (d.source == "aiconfigurator")
        & (d["mode"] == "disagg")
        & (d.metric == "ttft_s")
        & d.system.isin(list(AIC_SYSTEMS))
        & (d.model == "deepseek-r1")
        & d.framework.str.startswith("sglang")
    ]
    d = d.assign(
        pool=d.deployment.str.extract(r"P (\d+x\([^)]*\))", expand=False),
        cfg=d.id.str.extract(r"(cfg\d+)$", expand=False),
    )
    return d[d.pool.str.contains("DP1 ", regex=False)]


def _points(ids) -> dict:
    from jalapeno.fit.validate import load_aiconfigurator

    points, _ = load_aiconfigurator()
    return {p.id: p for p in points if p.id in set(ids)}


def floor_rows(d: pd.DataFrame, c_max: float = FLOOR_C_MAX) -> pd.DataFrame:
    """Each deployment's (system, precision, cfg, isl) lowest-concurrency row at C ≤ ``c_max``.

    >>> d = pd.DataFrame({"system": "s", "precision": "fp4", "cfg": ["a", "a", "b"], "isl": 1024,
    ...                   "concurrency": [8, 4, 32]})
    >>> floor_rows(d)[["cfg", "concurrency"]].values.tolist()
    [['a', 4]]
    """
    lo = d[d.concurrency <= c_max].sort_values("concurrency")
    return lo.groupby(["system", "precision", "cfg", "isl"]).head(1)


def budget_whatif() -> pd.DataFrame:
    """Part 5: TTFT of the recipe-matched SGLang low-latency rows at the shipped and at the recipe's prefill budget."""
    import dataclasses

    from jalapeno.fit.aic_sgl_recv import DECODE_RECV_INTERVALS, _key
    from jalapeno.fit.validate import load_aiconfigurator, predict_points

    points, _ = load_aiconfigurator()
    sel = []
    for p in points:
        d = p.deployment
        if d is None or d.prefill is None or not p.framework.startswith("sglang"):
            continue
        e = DECODE_RECV_INTERVALS.get((p.system, p.precision, p.isl, p.osl, _key(d.prefill), _key(d.decode)))
        if (
            e is not None
            and p.framework.split()[-1] in e[0]
            and (p.system, p.precision, p.isl) in RECIPE_PREFILL_BUDGET
        ):
            sel.append(p)
    new = [
        dataclasses.replace(
            p,
            deployment=dataclasses.replace(
                p.deployment, token_budget=RECIPE_PREFILL_BUDGET[(p.system, p.precision, p.isl)]
            ),
        )
        for p in sel
    ]
    a, b = predict_points(sel), predict_points(new)
    m = a.merge(b[["id", "metric", "predicted"]], on=["id", "metric"], suffixes=("", "_recipe"))
    m = m[m.metric == "ttft_s"].copy()
    m["error_recipe"] = m.predicted_recipe / m.measured - 1
    return m


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gb300_fp4_prefill_check as g

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--budget", action="store_true", help="part 5: the recipes' prefill budgets, a what-if")
    a = ap.parse_args()
    if a.budget:
        split = pd.read_csv(a.csv).drop_duplicates("id").set_index("id").split
        m = budget_whatif()
        m = m.assign(split=m.id.map(split), cfg=m.id.str.extract(r"(c\d+_cfg\d+)$", expand=False))
        cols = ["system", "precision", "isl", "cfg", "split", "measured", "predicted", "predicted_recipe", "error"]
        print("5. TTFT at the shipped prefill budget and at the recipe's (what-if), s:")
        print(
            m.sort_values(["system", "precision", "isl", "cfg"])[[*cols, "error_recipe"]]
            .round(3)
            .to_string(index=False)
        )
        return
    fl = floor_rows(_rows(a.csv))
    pts = _points(fl.id)
    out = []
    for _, r in fl.iterrows():
        p = pts[r.id]
        lay = p.deployment.prefill.layout
        tok = PROMPT_FRACTION * r.isl
        grp = g.step_groups(p, r.system, tok)
        jal_moe = 1e3 * grp["routed experts"] / DSR1["moe_layers"]
        jal_mla = 1e3 * grp["MLA prefill"] / DSR1["layers"]
        aic = aic_prefill_s(r.system, r.precision, lay.tp, lay.dp, lay.ep, round(tok))
        out.append(
            {
                "system": r.system,
                "precision": r.precision,
                "pool": r.pool,
                "isl": int(r.isl),
                "cfg": r.cfg,
                "C": r.concurrency,
                "measured": r.measured,
                "predicted": r.predicted,
                "jal_step": grp["interval"],
                "aic_step": aic,
                "aic_ttft": AIC_TTFT_FACTOR * aic,
                "jal_moe_ms": jal_moe,
                "jal_mla_ms": jal_mla,
                **table_ops(r.system, r.precision, lay.tp, lay.dp, lay.ep, tok),
            }
        )
    t = pd.DataFrame(out).sort_values(["system", "precision", "pool", "isl"])
    pd.set_option("display.width", 250)
    print(
        f"1. one-prompt prefill step (prompt {PROMPT_FRACTION} x ISL), jalapeno vs aiconfigurator's engine, s; "
        f"aic_ttft = {AIC_TTFT_FACTOR} x aic_step; floor rows (lowest C <= {FLOOR_C_MAX}):"
    )
    cols = [
        "system",
        "precision",
        "pool",
        "isl",
        "cfg",
        "C",
        "measured",
        "predicted",
        "jal_step",
        "aic_step",
        "aic_ttft",
    ]
    print(t[cols].round(3).to_string(index=False))
    print("\n2. 1k -> 8k increments (s) and each over the measured one:")
    print(increments(t).round(3).to_string(index=False))
    print("\n3. per layer, ms: routed experts and MLA context, jalapeno vs aiconfigurator's SGLang tables:")
    print(
        t[["system", "precision", "pool", "isl", "jal_moe_ms", "aic_moe_ms", "jal_mla_ms", "aic_mla_ms"]]
        .drop_duplicates(["system", "precision", "pool", "isl"])
        .round(3)
        .to_string(index=False)
    )
    dt = decode_table(a.csv)
    print("\n4. attention-TP decode pools (no MTP), TPOT error: jalapeno vs aiconfigurator's engine step, median (n):")
    print(
        dt.groupby(["system", "engine", "precision", "pool"])
        .agg(n=("jal_err", "size"), jal=("jal_err", "median"), aic=("aic_err", "median"))
        .round(3)
        .to_string()
    )
    print("   held out only, by system:")
    print(
        dt[dt.split == "held_out"]
        .groupby(["system"])
        .agg(n=("jal_err", "size"), jal=("jal_err", "median"), aic=("aic_err", "median"))
        .round(3)
        .to_string()
    )


if __name__ == "__main__":
    main()
