"""H200 aiconfigurator interactivity tail (issue 18, round 36): MiniMax-M2.5 vLLM and Qwen3-235B-A22B SGLang rows.

The figures behind docs/gap_aic_itl.md (round 36, h200tail36); nothing is fitted or written.

Table 1 (MiniMax-M2.5 FP8, vLLM): every H200 aggregated row's measured TPOT and the prediction with the calibrated
MoE form (before round 36) and as shipped (the MoE backend deploy/vllm_fp8_moe.py gives the row), and a line a + b·B
(B = concurrency, the decode batch) fitted per (release, layout) through the measured - predicted differences: an
intercept is a per-step cost the model misses, a slope a per-sequence one.
Table 1b: the model's decode step at batch B with the calibrated MoE form, split into terms.
Table 2: the routed experts of one decode step at batch B: the calibrated form, vLLM's own H200 Triton table at
MiniMax-M2.5's shape (aiconfigurator-core ``h200_sxm/moe/vllm/0.19.0/moe_perf``, ``fp8_block``, balanced routing, B
tokens, times 62 MoE layers), TensorRT-LLM 1.3.0rc20's CUTLASS table (the kernel family of the FlashInfer CUTLASS
experts vLLM 0.16.0 runs), and as shipped. Table 5 compares Qwen3 against SGLang 0.5.10's table (94 MoE layers).
Table 3: the same model on H100 (vLLM 0.18.0, TP4 with MoE EP4) against the H200 TP4 rows (vLLM 0.16.0, MoE
TP4) at the same ISL/OSL and concurrency: H200 is the H100's GH100 die with 1.43x its HBM bandwidth.
Table 4 (Qwen3-235B-A22B-FP8, SGLang 0.5.6.post2): measured and predicted TPOT by ISL and OSL at TP2 and TP4,
TTFT divided by the concurrency (a fixed-length closed loop's users start together: the wave's prompts prefill
back to back, so TTFT / C is one prompt's share), and the most of the TPOT prompt steps can stall
(:func:`stall_bound_ms`).
Run: python scripts/h200_aic_int_tail.py   (seconds; needs the aiconfigurator-core package)
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources

import numpy as np
import pandas as pd

from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import Batch, step_cost
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator, point_release, point_stack, point_workload, predict_points
from jalapeno.specs.catalog import load_model

#: routed-expert shapes (config.json): MiniMax-M2.5 hidden_size 3072, intermediate_size 1536, 256 local experts,
#: top-8, 62 layers, every layer MoE; Qwen3-235B-A22B hidden_size 4096, moe_intermediate_size 1536, 128 experts,
#: top-8, 94 layers, every layer MoE. Value: (table filter, MoE layers).
SHAPES = {
    "minimax-m2.5": ({"hidden_size": 3072, "inter_size": 1536, "num_experts": 256, "topk": 8}, 62),
    "qwen3-235b-a22b": ({"hidden_size": 4096, "inter_size": 1536, "num_experts": 128, "topk": 8}, 94),
}
#: the engine kernel table read per model: the release nearest the rows' that has H200 ``moe_perf`` rows (vLLM
#: 0.19.0 for the 0.16.0 / 0.18.0 rows; SGLang 0.5.10 for the 0.5.6.post2 rows; both time the engine's Triton
#: fused MoE with 128x128-block FP8 weights, kernel_source ``vllm_fused_moe`` / ``sglang_fused_moe_triton``)
TABLES = {
    "minimax-m2.5": ("h200_sxm", "moe", "vllm", "0.19.0", "moe_perf.parquet"),
    "qwen3-235b-a22b": ("h200_sxm", "moe", "sglang", "0.5.10", "moe_perf.parquet"),
}
#: TensorRT-LLM's CUTLASS block-FP8 MoE on H200 (kernel_source ``moe_torch_flow_cutlass``): the kernel family of
#: FlashInfer's CUTLASS experts, which vLLM 0.16.0 runs at every layout and 0.17.0+ at EP > 1 (deploy/vllm_fp8_moe.py)
CUTLASS_TABLE = ("h200_sxm", "moe", "trtllm", "1.3.0rc20", "moe_perf.parquet")


def h200_rows(model: str, engine: str, system: str = "h200"):
    """Aggregated aiconfigurator points of ``model`` on ``system`` served by ``engine`` (fit/aic_rows.py)."""
    return [
        p
        for p in load_aiconfigurator()[0]
        if p.system == system and p.model == model and p.mode == "agg" and p.framework.startswith(engine)
    ]


def layout(p) -> str:
    lay = p.deployment.decode.layout
    return f"TP{lay.tp} · MoE TP{lay.moe_tp} EP{lay.ep}"


def predicted(pts) -> pd.DataFrame:
    """One row per point: measured and predicted TPOT (ms), TTFT (s), release, layout."""
    got = predict_points(pts)
    by = {(r.id, r.metric): r for r in got.itertuples(index=False)}
    out = []
    for p in pts:
        t, f = by.get((p.id, "tpot_s")), by.get((p.id, "ttft_s"))
        if t is None:
            continue
        out.append(
            {
                "id": p.id,
                "release": point_release(p),
                "layout": layout(p),
                "isl": p.isl,
                "osl": p.osl,
                "C": p.concurrency,
                "tpot_meas_ms": 1e3 * t.measured,
                "tpot_pred_ms": 1e3 * t.predicted,
                "ttft_meas_s": f.measured if f is not None else np.nan,
                "ttft_pred_s": f.predicted if f is not None else np.nan,
            }
        )
    df = pd.DataFrame(out)
    df["gap_ms"] = df.tpot_meas_ms - df.tpot_pred_ms
    return df


def intercept_slope(df: pd.DataFrame) -> pd.DataFrame:
    """Table 1's line a + b·B through (B, measured - predicted TPOT) per (release, layout)."""
    out = []
    for (rel, lay), g in df.groupby(["release", "layout"]):
        b, a = np.polyfit(g.C.to_numpy(float), g.gap_ms.to_numpy(float), 1)
        out.append(
            {
                "release": rel,
                "layout": lay,
                "n": len(g),
                "a_ms": a,
                "b_us_per_seq": 1e3 * b,
                "gap_C4_ms": g[g.C == 4].gap_ms.median(),
                "gap_Cmax_ms": g[g.C == g.C.max()].gap_ms.median(),
                "C_max": g.C.max(),
            }
        )
    return pd.DataFrame(out)


def without_backend(p):
    """``p`` with its pools' MoE backend removed: the routed experts priced by the calibrated form (before round 36
    the MiniMax Hopper rows named none)."""
    d = p.deployment
    return replace(p, deployment=replace(d, decode=replace(d.decode, moe_backend=None)))


def step_terms_ms(p, batch: float) -> dict:
    """One decode-only step of ``batch`` sequences at the point's mean decode context, priced as validate prices
    the point (its stack's pricer with its pool's MoE backend, if any; none: the calibrated ``moe[fp8]`` form),
    split into terms (ms): ``experts`` (``moe.experts``), ``attention`` (the ``attn.*`` ops),
    ``other_ops``, ``launch`` (the per-kernel overhead inside those op times), ``collectives`` and ``fixed``
    (the step's time outside its ops and collectives: the stack's per-step cost), ``step``."""
    model = load_model(p.model)
    pool, lay = p.deployment.decode, p.deployment.decode.layout
    pricer = with_pool_backends(
        load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p)), pool, model, lay
    )
    sc = step_cost(
        model,
        pricer,
        lay,
        p.deployment.precision,
        Batch.make(decode_seqs=np.array([batch]), decode_ctx=point_workload(p).decode_ctx),
    )
    ops = sc.op_rows()
    experts = sum(r["time_s"] for r in ops if r["op"] == "moe.experts")
    attention = sum(r["time_s"] for r in ops if r["op"].startswith("attn."))
    other = sum(r["time_s"] for r in ops) - experts - attention
    coll = sum(r["time_s"] for r in sc.collective_rows())
    step = float(sc.step_time_s[0])
    return {
        k: 1e3 * v
        for k, v in (
            ("experts", experts),
            ("attention", attention),
            ("other_ops", other),
            ("launch", sum(r["overhead_s"] for r in ops)),
            ("collectives", coll),
            ("fixed", step - experts - attention - other - coll),
            ("step", step),
        )
    }


def moe_step_ms(p, batch: float) -> float:
    """Routed-expert time (ms) of one decode step of ``batch`` sequences as validate prices the point."""
    return step_terms_ms(p, batch)["experts"]


def terms_table(pts, pred: pd.DataFrame) -> pd.DataFrame:
    """Table 1b: the model's decode step at batch C split into terms (ms) with the calibrated MoE form (before
    round 36), and the predicted TPOT (``pred``: the same pricing) less that step (what the served point adds:
    prompt steps between decode steps, the step-to-step host gap)."""
    tpot = pred.set_index("id").tpot_pred_ms
    out, seen = [], set()
    for p in sorted(pts, key=lambda q: (layout(q), q.concurrency)):
        key = (layout(p), p.concurrency)
        if p.isl != 1024 or p.osl != 1024 or key in seen or p.id not in tpot.index:
            continue
        seen.add(key)
        t = step_terms_ms(without_backend(p), p.concurrency)
        out.append(
            {
                "release": point_release(p),
                "layout": key[0],
                "C": p.concurrency,
                **t,
                "tpot_pred": float(tpot[p.id]),
                "tpot_minus_step": float(tpot[p.id]) - t["step"],
            }
        )
    return pd.DataFrame(out)


def table_moe_ms(model: str, moe_tp: int, ep: int, tokens: float, table: tuple | None = None) -> float:
    """The measured fused-MoE latency (ms per step: one layer's times the model's MoE layers) at the model's shape
    (:data:`SHAPES`) from ``table`` (default the engine's, :data:`TABLES`), FP8 128x128 blocks, balanced routing,
    the fastest row per token count, ``tokens`` interpolated linearly between the measured counts."""
    shape, layers = SHAPES[model]
    df = pd.read_parquet(resources.files("aiconfigurator_core").joinpath("systems", "data", *(table or TABLES[model])))
    s = df[
        (df.moe_dtype == "fp8_block")
        & (df.distribution == "balanced")
        & (df.moe_tp_size == moe_tp)
        & (df.moe_ep_size == ep)
    ]
    if table == CUTLASS_TABLE:
        s = s[s.kernel_source == "moe_torch_flow_cutlass"]
    for k, v in shape.items():
        s = s[s[k] == v]
    s = s.groupby("num_tokens").latency.min()
    return float(np.interp(tokens, s.index.to_numpy(float), s.to_numpy(float))) * layers


def moe_table(pts, isl: int) -> pd.DataFrame:
    """Table 2 / 5: the routed-expert time per decode step: the calibrated form, the engine's table, and for the
    MiniMax rows TensorRT-LLM's CUTLASS table and the shipped pricing (the row's pool backend: deploy/vllm_fp8_moe.py),
    per layout and batch (the rows at ``isl`` with the shortest OSL of each layout and concurrency)."""
    out, seen = [], set()
    for p in sorted(pts, key=lambda q: (layout(q), q.concurrency, q.osl)):
        lay = p.deployment.decode.layout
        key = (layout(p), p.concurrency)
        if p.isl != isl or key in seen:
            continue
        seen.add(key)
        model_ms = moe_step_ms(without_backend(p), p.concurrency)
        row = {
            "release": point_release(p),
            "layout": key[0],
            "C": p.concurrency,
            "calibrated_ms": model_ms,
            "engine_table_ms": table_moe_ms(p.model, lay.moe_tp, lay.ep, p.concurrency),
        }
        if p.model == "minimax-m2.5":
            row["cutlass_table_ms"] = table_moe_ms(p.model, lay.moe_tp, lay.ep, p.concurrency, CUTLASS_TABLE)
            row["shipped_ms"] = moe_step_ms(p, p.concurrency)
            row["backend"] = p.deployment.decode.moe_backend or "-"
        out.append(row)
    return pd.DataFrame(out)


def sibling_table(h200: pd.DataFrame, h100: pd.DataFrame) -> pd.DataFrame:
    """Table 3: H100 (0.18.0, TP4 EP4) and H200 (0.16.0, TP4 MoE TP4) measured TPOT at the same workload and C."""
    a = h200[h200.layout == "TP4 · MoE TP4 EP1"].groupby(["isl", "osl", "C"]).tpot_meas_ms.median()
    b = h100.groupby(["isl", "osl", "C"]).tpot_meas_ms.median()
    j = pd.concat({"h200_0.16_tp4_moetp4": a, "h100_0.18_tp4_ep4": b}, axis=1).dropna()
    j["h200_over_h100"] = j.iloc[:, 0] / j.iloc[:, 1]
    return j.reset_index()


def qwen_table(df: pd.DataFrame) -> pd.DataFrame:
    """Table 4: Qwen3 SGLang TPOT (measured / predicted) and TTFT / C by layout, ISL, OSL."""
    d = df.assign(
        ttft_per_prompt_s=df.ttft_meas_s / df.C,
        error_pct=100 * (df.tpot_pred_ms / df.tpot_meas_ms - 1),
        stall_bound_ms=stall_bound_ms(df.tpot_meas_ms, df.ttft_meas_s, df.osl),
    )
    return d[
        [
            "layout",
            "isl",
            "osl",
            "C",
            "tpot_meas_ms",
            "tpot_pred_ms",
            "error_pct",
            "ttft_meas_s",
            "ttft_pred_s",
            "ttft_per_prompt_s",
            "stall_bound_ms",
        ]
    ].sort_values(["layout", "isl", "osl"])


def stall_bound_ms(tpot_ms, ttft_s, osl):
    """The most of a measured TPOT (ms) that prompt steps stalling decode can be: in a closed loop of C users each
    request arrives once per E2E = TTFT + (OSL - 1)·TPOT, so prompts arrive at λ = C / E2E; if each costs at most
    its TTFT / C of engine time (TTFT holding nothing but prompt steps, the C prompts of a wave back to back), the
    engine spends at most λ·TTFT/C = TTFT / E2E of its time on prompts, and TPOT carries at most that share.

    >>> round(float(stall_bound_ms(20.0, 2.0, 1001)), 3)   # 2 s of 22 s: 20 ms x 2 / 22
    1.818
    """
    e2e_s = ttft_s + (osl - 1) * tpot_ms / 1e3
    return tpot_ms * ttft_s / e2e_s


def main() -> None:
    pd.set_option("display.width", 200)
    mm = h200_rows("minimax-m2.5", "vllm")
    df = predicted(mm)
    before = predicted([without_backend(p) for p in mm])
    print(
        "== Table 1: MiniMax-M2.5 FP8 vLLM on H200, measured - predicted TPOT (ms) = a + b·B;"
        " calibrated MoE form (before round 36), then as shipped"
    )
    for name, d in (("calibrated", before), ("shipped", df)):
        print(name)
        print(intercept_slope(d).round(2).to_string(index=False))
    print(
        before.assign(shipped=df.tpot_pred_ms)
        .groupby(["release", "layout", "C"])
        .agg(
            n=("gap_ms", "size"),
            meas=("tpot_meas_ms", "median"),
            calibrated=("tpot_pred_ms", "median"),
            shipped=("shipped", "median"),
        )
        .round(2)
        .to_string()
    )
    print("\n== Table 1b: the model's decode step at batch C by term (ms), 1k/1k")
    print(terms_table(mm, before).round(2).to_string(index=False))
    print(
        "\n== Table 2: routed experts per decode step (ms), 1k/1k: the calibrated form, vLLM 0.19.0's H200 Triton"
        " table, TensorRT-LLM 1.3.0rc20's CUTLASS table, as shipped"
    )
    print(moe_table(mm, 1024).round(2).to_string(index=False))
    h100 = predicted(h200_rows("minimax-m2.5", "vllm", system="h100"))
    print("\n== Table 3: measured TPOT (ms), H200 vLLM 0.16.0 TP4 MoE-TP4 vs H100 vLLM 0.18.0 TP4 MoE-EP4")
    print(sibling_table(before, h100).round(2).to_string(index=False))
    qw = predicted(h200_rows("qwen3-235b-a22b", "sglang"))
    print("\n== Table 4: Qwen3-235B-A22B-FP8 SGLang 0.5.6.post2 on H200")
    print(qwen_table(qw).round(3).to_string(index=False))
    print(
        "\n== Table 5: Qwen3 routed experts per decode step (ms), model vs SGLang 0.5.10's H200 fp8_block table (ISL 1000)"
    )
    print(moe_table(h200_rows("qwen3-235b-a22b", "sglang"), 1000).round(2).to_string(index=False))


if __name__ == "__main__":
    main()
