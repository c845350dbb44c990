"""GB200/GB300 SGLang disaggregated DeepSeek-R1 decode: the TPOT gap by decode layout, batch per rank and ISL,
and the DEP32 gap against SGLang's own kernel tables (docs/gap_aic_itl.md, "GB200/GB300 SGLang DEP decode
against SGLang's own kernel tables (round 26, dep26)"). Nothing here is shipped.

Part 1, per aiconfigurator row: the decode layout, the decoding sequences per attention rank (measured: Little's
law on the measured TTFT and TPOT, as scripts/dep32_decode_whatif.py; model: the serve loop's own), the
measured and modelled TPOT and their gap (measured - model, ms: positive = model too fast). Per configuration a
least-squares line gap = a + s·b over b = measured sequences per rank (s in µs per sequence per rank), without the
rows the model holds more than :data:`QUEUE_RATIO` times the measured batch in decode.

Part 2, each DEP32 FP8 row at its measured batch per rank b and mean decode context L = ISL + OSL / 2, per step
(ms; the model's ops from cost/step.step_cost under the row's pricer and stack, the same as ``jalapeno step``):

- ``attn``: SGLang 0.5.10's measured MLA module on the same chip (aiconfigurator-core 0.12.0
  ``systems/data/<gb200|gb300>/mla/sglang/0.5.10/wideep_generation_mla_perf.parquet``: kernel_source
  trtllm_mla, FP8 KV, fp8_block projections, 128 heads per rank = attention DP; latency ms per layer, batch
  1-1024 x context 1-16384, bilinear in (b, L) inside the grid, NaN outside) minus the model's ``attn.*`` ops,
  per layer x 61 layers;
- ``experts``: SGLang 0.5.10's measured routed-expert compute at EP32 (``moe/sglang/0.5.10/
  wideep_generation_moe_perf.parquet``: kernel_source deepepmoe, fp8_block, DeepSeek's 256 x 7168 x 2048 top-8,
  ``num_tokens`` = the EP group's tokens = 32 b, distribution uniform) minus the model's ``moe.experts`` per
  layer, x 58 MoE layers;
- ``skew``: the same table's ``power_law_1.01`` minus its ``uniform`` at the same tokens, x 58: the busiest
  rank's extra expert work under aiconfigurator's own default routing skew for DeepSeek (aiconfigurator
  ``sdk/models/deepseek.py``: ``self._power_law_alpha = 1.01``, ``workload_distribution`` "power_law"
  @095f58a51). An ASSUMPTION about these runs' routing, shown as a what-if, not a measured term.

Usage: python scripts/sglang_dep_decode_split.py   (about 5 s)
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

#: aiconfigurator-core table folders by system (the installed package's systems/data/<dir>)
TABLE_DIRS = {"gb200-nvl72": "gb200", "gb300-nvl72": "gb300"}
#: a row whose modelled decode batch is above this multiple of the measured one decodes fewer sequences than the
#: model holds (a queue ahead of decode, e.g. the c8192 rows of cfg 483 / 576 at 115-124 per rank against the
#: model's 253): listed, left out of the per-configuration line, whose subject is the step cost
QUEUE_RATIO = 1.5
ATTN_LAYERS, MOE_LAYERS = 61, 58  # DeepSeek-R1: 61 decoder layers, the first 3 dense (config.json)


def line_fit(xs, ys) -> tuple[float, float]:
    """Least-squares (intercept, slope) of ys against xs; NaNs below two distinct xs.

    >>> a, s = line_fit([10.0, 20.0, 40.0], [1.5, 2.0, 3.0])
    >>> round(a, 3), round(s, 3)
    (1.0, 0.05)
    """
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    if np.unique(x).size < 2:
        return float("nan"), float("nan")
    s, a = np.polyfit(x, y, 1)
    return float(a), float(s)


def bilinear(grid: pd.DataFrame, b: float, ctx: float) -> float:
    """``grid`` (index batch, columns context, values ms) read at (b, ctx), linear in each between the
    bracketing grid points; NaN outside the grid or where a corner is missing.

    >>> g = pd.DataFrame([[1.0, 2.0], [3.0, 4.0]], index=[10, 20], columns=[100, 200])
    >>> bilinear(g, 15, 150), bilinear(g, 25, 150)
    (2.5, nan)
    """
    bs, cs = np.asarray(grid.index, float), np.asarray(grid.columns, float)
    if not (bs[0] <= b <= bs[-1] and cs[0] <= ctx <= cs[-1]):
        return float("nan")
    i = min(int(np.searchsorted(bs, b, side="right")) - 1, len(bs) - 2)
    j = min(int(np.searchsorted(cs, ctx, side="right")) - 1, len(cs) - 2)
    fb, fc = (b - bs[i]) / (bs[i + 1] - bs[i]), (ctx - cs[j]) / (cs[j + 1] - cs[j])
    v = grid.to_numpy(float)
    corners = [(wb * wc, v[i + di, j + dj]) for di, wb in ((0, 1 - fb), (1, fb)) for dj, wc in ((0, 1 - fc), (1, fc))]
    return float(sum(w * x for w, x in corners if w > 0))  # a missing corner of zero weight does not count


def sglang_tables(system: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(MLA module grid at 128 heads: batch x context, ms per layer; MoE EP32 table: num_tokens x distribution,
    ms per layer) of SGLang 0.5.10 on ``system``."""
    from jalapeno.fit.kernel_tables import load_table

    d = TABLE_DIRS[system]
    mla, _ = load_table(d, "mla", "wideep_generation_mla_perf", backend="sglang")
    mla = mla[mla.num_heads == 128].pivot_table(index="batch_size", columns="isl", values="latency")
    moe, _ = load_table(d, "moe", "wideep_generation_moe_perf", backend="sglang")
    moe = moe[(moe.moe_ep_size == 32) & (moe.moe_dtype == "fp8_block")]
    return mla, moe.pivot_table(index="num_tokens", columns="distribution", values="latency")


def interp_tokens(moe: pd.DataFrame, tokens: float, dist: str) -> float:
    """The MoE table's ``dist`` column at ``tokens`` (linear in log tokens between grid points; NaN outside)."""
    col = moe[dist].dropna()
    x = np.log(np.asarray(col.index, float))
    if not x[0] <= np.log(tokens) <= x[-1]:
        return float("nan")
    return float(np.interp(np.log(tokens), x, col.to_numpy(float)))


#: the decode pools' CUDA-graph batch sizes per attention rank (NVIDIA/srt-slurm @5063eb43
#: recipes/gb200-fp8/1k1k/max-tpt.yaml decode ``cuda-graph-bs``; the FP4 recipes add 1024): SGLang pads a
#: decode batch to the next captured size
GRAPH_BS = (1, 2, 4, *range(8, 385, 8), *range(416, 769, 32), 1024)


def padded(b: float) -> int:
    """The captured size a decode batch of ``b`` sequences per rank runs as (:data:`GRAPH_BS`).

    >>> padded(29.7), padded(115.2), padded(3)
    (32, 120, 4)
    """
    return next(g for g in GRAPH_BS if g >= b)


def model_ops_ms(p, dep, st, b: float, ctx: float) -> tuple[float, float, float]:
    """(attention ops, routed-expert op) of the model's decode step at b sequences per rank, ms per layer, and
    the step's extra time (ms) at the CUDA-graph size b pads to (an upper bound: the dummies priced as
    sequences of the same context)."""
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.layout import for_model
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.specs.catalog import load_model

    m = load_model(p.model)
    pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
    lay = dep.decode.layout
    sc = step_cost(
        m,
        pr,
        for_model(lay, m),
        dep.precision,
        Batch.make(decode_seqs=np.array([b * lay.dp, padded(b) * lay.dp]), decode_ctx=int(ctx)),
    )
    ops = {r["op"]: r["time_s"] for r in sc.op_rows(0)}
    attn = sum(v for k, v in ops.items() if k.startswith("attn."))
    return (
        1e3 * attn / ATTN_LAYERS,
        1e3 * ops["moe.experts"] / MOE_LAYERS,
        1e3 * (sc.step_time_s[1] - sc.step_time_s[0]),
    )


def main() -> None:
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    pts, _ = load_aiconfigurator()
    rows = []
    for p in pts:
        if p.system not in TABLE_DIRS or p.mode != "disagg" or p.model != "deepseek-r1" or "sglang" not in p.framework:
            continue
        st = point_stack(p)
        pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        dep, wl = with_stack_mtp(p.deployment, st, p.model), point_workload(p)
        r = serve_at_concurrency(load_model(p.model), pr, dep, wl, [p.concurrency])
        if not r.feasible[0]:
            continue
        lay, t, ttft = dep.decode.layout, p.measured["tpot_s"], p.measured["ttft_s"]
        steps = (wl.mean_osl - 1) * t
        ranks = lay.dp * dep.decode.workers
        rows.append(
            dict(
                p=p,
                dep=dep,
                st=st,
                sys=p.system[:5],
                rel=p.framework.split()[-1],
                prec=p.precision,
                isl=p.isl,
                osl=p.osl,
                cfg=p.id.rsplit("_", 1)[-1],
                lay=f"{dep.decode.workers}x{lay.label}",
                dp=lay.dp,
                c=int(p.concurrency),
                b_meas=p.concurrency * steps / (ttft + steps) / ranks,
                b_mod=r.decode_batch[0] / ranks,
                meas=1e3 * t,
                model=1e3 * r.tpot_s[0],
            )
        )
    rows.sort(key=lambda x: (x["sys"], x["rel"], x["prec"], x["isl"], x["cfg"], x["c"]))
    print("Part 1: TPOT by decode pool; gap = measured - model (ms; > 0: model too fast)")
    fits = defaultdict(list)
    for x in rows:
        gap = x["meas"] - x["model"]
        queued = x["b_mod"] > QUEUE_RATIO * x["b_meas"]
        if not queued:
            fits[(x["sys"], x["rel"], x["prec"], x["isl"], x["cfg"], x["lay"])].append((x["b_meas"], gap))
        print(
            f"{x['sys']} {x['rel']:11s} {x['prec']} {x['isl']:5d} {x['cfg']:7s} {x['lay']:42s} c{x['c']:6d} "
            f"b/rank {x['b_meas']:6.1f} (model {x['b_mod']:6.1f})  TPOT {x['meas']:6.2f} model {x['model']:6.2f} "
            f"gap {gap:+6.2f} ({x['model'] / x['meas'] - 1:+.1%}){'  queued: not in the line' if queued else ''}"
        )
    print("\nPer configuration: gap = a + s * b (b measured per rank)")
    for k, v in fits.items():
        a, s = line_fit(*zip(*v))
        b = [q for q, _ in v]
        print(
            f"{' '.join(map(str, k)):78s} b {min(b):6.1f}-{max(b):6.1f}  a {a:+6.2f} ms  s {1e3 * s:+6.1f} us/seq"
            if np.isfinite(s)
            else f"{' '.join(map(str, k)):78s} b {b[0]:6.1f}  (one batch)"
        )

    print(
        "\nPart 2: DEP32 FP8 rows (balanced dispatch) at the measured batch per rank: the gap against SGLang "
        "0.5.10's own tables (table - model, ms per step); pad<=: the CUDA-graph padding's upper bound; left: gap - "
        "attn - experts - skew; what-if error: TPOT with the three added (predicted / measured - 1)"
    )
    tabs = {s: sglang_tables(s) for s in TABLE_DIRS}
    for x in rows:
        if x["dp"] != 32 or x["prec"] != "fp8" or x["dep"].decode.layout.dp_dispatch != "balanced":
            continue  # the tables are one rank's; the random-dispatch rows' busiest rank is not the mean
        mla, moe = tabs[x["p"].system]
        b, ctx = x["b_meas"], x["isl"] + x["osl"] / 2
        attn_m, exp_m, pad = model_ops_ms(x["p"], x["dep"], x["st"], b, ctx)
        attn = (bilinear(mla, b, ctx) - attn_m) * ATTN_LAYERS
        uni, skew = interp_tokens(moe, 32 * b, "uniform"), interp_tokens(moe, 32 * b, "power_law_1.01")
        exp, sk = (uni - exp_m) * MOE_LAYERS, (skew - uni) * MOE_LAYERS
        gap = x["meas"] - x["model"]
        print(
            f"{x['sys']} {x['rel']:11s} {x['isl']:5d} {x['cfg']:7s} c{x['c']:6d} b {b:6.1f} L {ctx:6.0f}  gap {gap:+6.2f}  "
            f"attn {attn:+6.2f} (model {attn_m * 1e3:5.1f} us/layer)  experts {exp:+6.2f} (model {exp_m * 1e3:5.1f} "
            f"us/layer, table {uni * 1e3:5.1f})  attn+experts {attn + exp:+6.2f}  skew a=1.01 {sk:+6.2f}  pad<= {pad:+5.2f}  "
            f"left {gap - attn - exp - sk:+6.2f}  what-if error {(x['model'] + attn + exp + sk) / x['meas'] - 1:+.1%}"
        )


if __name__ == "__main__":
    main()
